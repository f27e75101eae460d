/*
 * py/args.c: what a public call means.  The one owner of the call rules, with
 * reductions.c (the reduction names, where a reduction is defined) and
 * indices.c (the index array and its values): include_self, the conversion of
 * every argument to an array (lists, scalars, 0-d arrays, NEP 50's weak Python
 * scalars), the axis, the shape updates must have and its broadcast, the
 * same_kind cast and out= -- all before anything is written.  The result is an
 * so_args that the layers below trust; a wrong call raises through so_fail
 * (errors.c) with the fields of its message.
 */
#include "py/py.h"


/* ---- arrays ---------------------------------------------------------------- */

static int
check_include_self(const char *func, PyObject *v)
{
    if (v == Py_True || v == Py_False) return v == Py_True;
    if (PyArray_IsScalar(v, Bool)) return PyObject_IsTrue(v);
    return so_fail("include_self_type", func, "{sO}", "got", (PyObject *)Py_TYPE(v));
}

/* axis: an int, or a 0-d / 1-element integer array; in [-r, r); returns it in
 * [0, r) or -1 with the error raised. */
static int
parse_axis(const char *func, PyObject *axis, int r)
{
    PyObject *v = axis, *item = NULL;
    Py_ssize_t a;
    if (axis == NULL) return 0;
    if (PyLong_CheckExact(axis)) {
        /* the usual spelling: a Python int */
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(axis, &overflow);
        if (!overflow && v >= -r && v < r) return (int)(v < 0 ? v + r : v);
    }
    if (PyArray_Check(axis)) {
        PyArrayObject *arr = (PyArrayObject *)axis;
        if (PyArray_SIZE(arr) != 1 || PyArray_NDIM(arr) > 1 ||
                !PyTypeNum_ISINTEGER(PyArray_TYPE(arr))) {
            PyObject *shape = SHAPE(arr);
            if (shape == NULL) return -1;
            return so_fail("axis_array", func, "{sOsN}", "dtype", (PyObject *)PyArray_DESCR(arr),
                           "shape", shape);
        }
        item = PyArray_GETITEM(arr, PyArray_BYTES(arr));
        if (item == NULL) return -1;
        v = item;
    }
    if (PyBool_Check(v) || PyArray_IsScalar(v, Bool)) {
        Py_XDECREF(item);
        return so_fail("axis_bool", func, NULL);
    }
    a = PyNumber_AsSsize_t(v, PyExc_OverflowError);
    if (a == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            Py_XDECREF(item);
            return so_fail("axis_type", func, "{sO}", "got", (PyObject *)Py_TYPE(axis));
        }
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
            Py_XDECREF(item);
            return -1;
        }
        PyErr_Clear();
        a = PY_SSIZE_T_MAX;               /* out of range whatever r is */
    }
    if (a < -r || a >= r) {
        PyObject *shown = item != NULL ? item : v;
        int rc;
        Py_INCREF(shown);
        rc = so_fail("axis_range", func, "{sNsi}", "axis", shown, "ndim", r);
        Py_XDECREF(item);
        return rc;
    }
    Py_XDECREF(item);
    return (int)(a < 0 ? a + r : a);
}

/* The update index space has size 0: indices of size 0 (scatter_nd: its
 * shape[:-1] of size 0; k = 0 alone is one tuple that addresses everything). */
static int
index_space_empty(int kind, PyArrayObject *idx)
{
    int n = PyArray_NDIM(idx) - (kind == SO_ND), d;
    for (d = 0; d < n; d++) {
        if (PyArray_DIM(idx, d) == 0) return 1;
    }
    return 0;
}

/* The shape updates must have (docs/contract.md, "What a call writes"), into
 * req; its rank, or -1 with the error raised.  With an empty update index
 * space the rules that relate indices' shape to data's do not apply: nothing
 * is addressed (asked only where a rule would refuse: the usual call pays
 * nothing for it). */
static int
required_shape(const char *func, int kind, PyArrayObject *data, PyArrayObject *idx, int axis,
               npy_intp *req)
{
    int r = PyArray_NDIM(data), q = PyArray_NDIM(idx), d, ur;
    const npy_intp *ds = PyArray_DIMS(data), *is = PyArray_DIMS(idx);
    if (kind == SO_ND) {
        npy_intp k;
        if (q < 1) return so_fail("nd_indices_rank", func, NULL);
        k = is[q - 1];
        if (k > r) {
            if (!index_space_empty(kind, idx)) {
                return so_fail("nd_k", func, "{snsNsisN}", "k", (Py_ssize_t)k,
                               "indices_shape", SHAPE(idx), "r", r, "data_shape", SHAPE(data));
            }
            k = r;                        /* data.shape[k:] is () */
        }
        ur = q - 1 + r - (int)k;
        if (ur > SO_MAXDIMS) goto too_many;
        for (d = 0; d < q - 1; d++) req[d] = is[d];
        for (d = (int)k; d < r; d++) req[q - 1 + d - k] = ds[d];
        return ur;
    }
    if (kind == SO_UPDATE) {
        ur = r - 1 + q;
        if (ur > SO_MAXDIMS) goto too_many;
        for (d = 0; d < axis; d++) req[d] = ds[d];
        for (d = 0; d < q; d++) req[axis + d] = is[d];
        for (d = axis + 1; d < r; d++) req[d - 1 + q] = ds[d];
        return ur;
    }
    if (q != r && !index_space_empty(kind, idx)) {
        return so_fail("elements_rank", func, "{sisNsisN}", "r", r, "data_shape", SHAPE(data),
                       "q", q, "indices_shape", SHAPE(idx));
    }
    for (d = 0; d < q; d++) {
        if (d != axis && q == r && is[d] > ds[d] && !index_space_empty(kind, idx)) {
            return so_fail("elements_shape", func, "{sisnsnsNsNsi}", "d", d, "n", (Py_ssize_t)is[d],
                           "size", (Py_ssize_t)ds[d], "indices_shape", SHAPE(idx),
                           "data_shape", SHAPE(data), "axis", axis);
        }
        req[d] = is[d];
    }
    return q;
too_many:
    return so_fail("updates_rank", func, "{sNsNsi}", "data_shape", SHAPE(data),
                   "indices_shape", SHAPE(idx), "maxdims", SO_MAXDIMS);
}

/* NEP 50: a Python bool, int, float or complex is "weak": it takes data's dtype
 * where its kind fits (as np.add(a, 5, out=a, casting="same_kind") does). */
static int
weak_scalar(PyObject *u, char kind)
{
    const char *kinds;
    if (PyArray_Check(u)) return 0;
    kinds = Py_IS_TYPE(u, &PyBool_Type) ? "biufc"
                        : PyLong_CheckExact(u) ? "iufc"
                        : PyFloat_CheckExact(u) ? "fc"
                        : PyComplex_CheckExact(u) ? "c" : "";
    return kind != '\0' && strchr(kinds, kind) != NULL;
}

/* A Python int fits an integer dtype of itemsize bytes: 1, 0, or -1 (error). */
static int
int_fits(PyObject *u, PyArray_Descr *d)
{
    int ovf, bits = (int)PyDataType_ELSIZE(d) * 8;
    long long v = PyLong_AsLongLongAndOverflow(u, &ovf);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (d->kind == 'i') {
        if (ovf) return 0;
        return bits >= 64 || (v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1)));
    }
    if (ovf < 0 || (!ovf && v < 0)) return 0;
    if (ovf > 0) {
        unsigned long long w = PyLong_AsUnsignedLongLong(u);
        if (w == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
            return 0;
        }
        return bits >= 64;
    }
    return bits >= 64 || v < (1LL << bits);
}

/* An empty updates as data's dtype d: it has no value to cast (`[]` is float64). */
static PyArrayObject *
empty_as(PyArrayObject *u, PyArray_Descr *d)
{
    Py_INCREF(d);
    return (PyArrayObject *)PyArray_Empty(PyArray_NDIM(u), PyArray_DIMS(u), d, 0);
}

/* updates u cast to data's dtype d under "same_kind", or NULL raised. */
static PyArrayObject *
cast_updates(const char *func, PyArrayObject *u, PyArray_Descr *d)
{
    PyArrayObject *v;
    if (!PyArray_CanCastTypeTo(PyArray_DESCR(u), d, NPY_SAME_KIND_CASTING)) {
        so_fail("updates_cast", func, "{sOsO}", "from", (PyObject *)PyArray_DESCR(u),
                "to", (PyObject *)d);
        return NULL;
    }
    Py_INCREF(d);
    v = (PyArrayObject *)PyArray_CastToType(u, d, 0);
    if (v == NULL && PyErr_ExceptionMatches(PyExc_UnicodeError)) {
        PyObject *t, *e, *tb;
        PyErr_Fetch(&t, &e, &tb);
        PyErr_NormalizeException(&t, &e, &tb);
        so_fail("updates_unicode", func, "{sOsOsO}", "from", (PyObject *)PyArray_DESCR(u),
                "to", (PyObject *)d, "exc", e ? e : Py_None);
        Py_XDECREF(t); Py_XDECREF(e); Py_XDECREF(tb);
    }
    return v;
}

/* updates as data's dtype, broadcast to the required shape req (rank ur).  An
 * updates of size 0 is not cast (it has no value); with an empty update index
 * space it is taken whatever its shape (`[]` against (0, 2)): there is nothing
 * to write.  A non-empty updates must broadcast all the same. */
static PyArrayObject *
parse_updates(const char *func, int kind, PyObject *updates, PyArrayObject *data,
              PyArrayObject *idx, int axis, const npy_intp *req, int ur)
{
    PyArray_Descr *dd = PyArray_DESCR(data);
    PyArrayObject *u, *v;
    npy_intp strides[SO_MAXDIMS];
    int d, un, same = 1;
    if (weak_scalar(updates, dd->kind)) {
        if (PyLong_CheckExact(updates) && (dd->kind == 'i' || dd->kind == 'u')) {
            int fits = int_fits(updates, dd);
            if (fits < 0) return NULL;
            if (!fits) {
                so_fail("updates_int_range", func, "{sOsO}", "value", updates, "dtype", (PyObject *)dd);
                return NULL;
            }
        }
        Py_INCREF(dd);
        u = (PyArrayObject *)PyArray_FromAny(updates, dd, 0, 0, 0, NULL);
        if (u == NULL) {
            so_fail_converting(func, "updates");
            return NULL;
        }
    }
    else {
        u = so_as_array(func, "updates", updates);
        if (u == NULL) return NULL;
    }
    if (!PyArray_EquivTypes(PyArray_DESCR(u), dd)) {
        v = so_size(u) == 0 ? empty_as(u, dd) : cast_updates(func, u, dd);
        Py_DECREF(u);
        if (v == NULL) return NULL;
        u = v;
    }
    /* broadcast: a view with stride 0 along the dims updates lacks or has as 1 */
    un = PyArray_NDIM(u);
    if (un == ur) {
        for (d = 0; d < ur && same; d++) same = PyArray_DIM(u, d) == req[d];
        if (same) return u;
    }
    if (so_size(u) == 0 && index_space_empty(kind, idx)) {
        un = 0;                           /* nothing to write: taken as a scalar would be */
    }
    for (d = 0; d < ur && un <= ur; d++) {
        int e = d - (ur - un);
        if (e < 0) strides[d] = 0;
        else if (PyArray_DIM(u, e) == req[d]) strides[d] = PyArray_STRIDE(u, e);
        else if (PyArray_DIM(u, e) == 1) strides[d] = 0;
        else break;
    }
    if (un > ur || d < ur) {
        PyObject *got = SHAPE(u), *want = so_shape_tuple(ur, req);
        Py_DECREF(u);
        if (got == NULL || want == NULL) {
            Py_XDECREF(got);
            Py_XDECREF(want);
            return NULL;
        }
        so_fail("updates_shape", func, "{sNsNsisNsNsi}", "got", got, "want", want, "kind", kind,
                "data_shape", SHAPE(data), "indices_shape", SHAPE(idx), "axis", axis);
        return NULL;
    }
    Py_INCREF(dd);
    v = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, ur, req, strides,
                                              PyArray_BYTES(u), 0, NULL);
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            /* "array is too big": the required shape overflows intp */
            PyObject *t, *e, *tb;
            PyErr_Fetch(&t, &e, &tb);
            PyErr_NormalizeException(&t, &e, &tb);
            so_fail("updates_size", func, "{sNsO}", "want", so_shape_tuple(ur, req), "exc", e ? e : Py_None);
            Py_XDECREF(t); Py_XDECREF(e); Py_XDECREF(tb);
        }
        Py_DECREF(u);
        return NULL;
    }
    if (PyArray_SetBaseObject(v, (PyObject *)u) < 0) {    /* steals u, even on failure */
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* out, checked against data (given: data as the user passed it, for the
 * in-place form).  A subclass is written through a plain view of its memory;
 * public.c returns the user's own out. */
static PyArrayObject *
parse_out(const char *func, PyObject *out, PyObject *given, PyArrayObject *data)
{
    PyArrayObject *o;
    if (out == NULL || out == Py_None) return NULL;
    if (!PyArray_Check(out)) {
        so_fail("out_type", func, "{sO}", "got", (PyObject *)Py_TYPE(out));
        return NULL;
    }
    if (out == given) {
        /* in place: shape and dtype are data's own, and so is its plain view */
        if (!PyArray_ISWRITEABLE(data)) {
            so_fail("out_readonly", func, NULL);
            return NULL;
        }
        Py_INCREF(data);
        return data;
    }
    o = so_plain_array(func, "out", (PyArrayObject *)out);
    if (o == NULL) return NULL;
    if (!PyArray_SAMESHAPE(o, data)) {
        so_fail("out_shape", func, "{sNsN}", "got", SHAPE(o), "want", SHAPE(data));
    }
    else if (!PyArray_EquivTypes(PyArray_DESCR(o), PyArray_DESCR(data))) {
        so_fail("out_dtype", func, "{sOsO}", "got", (PyObject *)PyArray_DESCR(o),
                "want", (PyObject *)PyArray_DESCR(data));
    }
    else if (!PyArray_ISWRITEABLE(o)) {
        so_fail("out_readonly", func, NULL);
    }
    else {
        return o;
    }
    Py_DECREF(o);
    return NULL;
}

/* ---- the whole call -------------------------------------------------------- */

void
so_args_clear(so_args *a)
{
    Py_CLEAR(a->data);
    Py_CLEAR(a->idx);
    Py_CLEAR(a->given_idx);
    Py_CLEAR(a->upd);
    Py_CLEAR(a->out);
}

int
so_args_parse(so_args *a, int kind, PyObject *data, PyObject *indices, PyObject *updates,
              PyObject *axis, PyObject *reduction, PyObject *include_self, PyObject *mode,
              PyObject *out)
{
    const char *func = so_func_names[kind];
    npy_intp req[SO_MAXDIMS];
    PyArrayObject *orig = NULL, *c;
    int entry, ur;

    /* field by field, not a memset of the whole struct (rep stos: its start-up
     * is costly for a tiny call; docs/design.md, "The cost of a small call") */
    a->data = a->idx = a->given_idx = a->upd = a->out = NULL;
    a->c.axis = 0;
    a->c.typed = 0;
    a->c.nupd = a->c.nidx = 0;
    a->c.kind = kind;
    entry = so_parse_reduction(func, reduction);
    if (entry < 0) return -1;
    so_reduction_info(entry, &a->reduction, &a->c.op, &a->c.mean);
    a->c.include_self = check_include_self(func, include_self);
    if (a->c.include_self < 0) return -1;
    a->c.mode = so_parse_mode(func, mode);
    if (a->c.mode < 0) return -1;
    a->data = so_as_array(func, "data", data);
    if (a->data == NULL) goto fail;
    if (PyArray_NDIM(a->data) == 0) {
        so_fail("data_0d", func, NULL);
        goto fail;
    }
    if (kind == SO_ND && PyTuple_Check(indices) && so_check_nd_tuple(func, indices) < 0) goto fail;
    orig = so_parse_indices(func, indices);
    if (orig == NULL) goto fail;
    if (kind != SO_ND) {
        a->c.axis = parse_axis(func, axis, PyArray_NDIM(a->data));
        if (a->c.axis < 0) goto fail;
    }
    ur = required_shape(func, kind, a->data, orig, a->c.axis, req);
    if (ur < 0) goto fail;
    a->upd = parse_updates(func, kind, updates, a->data, orig, a->c.axis, req, ur);
    if (a->upd == NULL) goto fail;
    a->out = parse_out(func, out, data, a->data);
    if (a->out == NULL && PyErr_Occurred()) goto fail;
    a->c.typed = so_check_reduction(func, entry, reduction, PyArray_DESCR(a->data), &a->c.kn);
    if (a->c.typed < 0) goto fail;
    /* native-order integers stay as given (the direct form reads them so); the
     * others become intp now */
    if (so_index_type(PyArray_DESCR(orig)) >= 0) {
        Py_INCREF(orig);
        a->idx = orig;
    }
    else {
        a->idx = so_as_intp(func, orig);
    }
    if (a->idx == NULL) goto fail;
    a->given_idx = orig;
    orig = NULL;
    a->c.nupd = so_size(a->upd);
    a->c.nidx = so_size(a->idx);
    if (a->out != NULL) {
        /* as if updates and indices were copied first (indices may be a view of data) */
        if (so_may_overlap(a->out, a->upd)) {
            c = (PyArrayObject *)PyArray_NewCopy(a->upd, NPY_CORDER);
            if (c == NULL) goto fail;
            Py_SETREF(a->upd, c);
        }
        if (so_may_overlap(a->out, a->idx)) {
            c = (PyArrayObject *)PyArray_NewCopy(a->idx, NPY_CORDER);
            if (c == NULL) goto fail;
            Py_SETREF(a->idx, c);
        }
    }
    return 0;
fail:
    Py_XDECREF(orig);
    so_args_clear(a);
    return -1;
}

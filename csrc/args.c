/*
 * args.c: what a public call means.  The one owner of the call rules: the
 * reduction names, include_self, the conversion of every argument to an array
 * (lists, scalars, 0-d arrays, NEP 50's weak Python scalars), the axis, the
 * shape updates must have and its broadcast, the same_kind cast, out=, where a
 * reduction is defined, and the check of every index value -- all before
 * anything is written.  The result is an so_args that the layers below trust;
 * a wrong call raises through so_fail (errors.c) with the fields of its message.
 */
#include "call.h"

const char *const so_func_names[3] = {"scatter_update", "scatter_nd", "scatter_elements"};

/* ---- reductions ------------------------------------------------------------ */

#define SO_MEAN_OP (-2)

static const struct {
    const char *name, *canonical;
    int op;
} reduction_names[] = {
    {"none", "none", SO_NONE}, {"add", "add", SO_ADD}, {"sum", "add", SO_ADD},
    {"sub", "sub", SO_SUB}, {"mul", "mul", SO_MUL}, {"prod", "mul", SO_MUL},
    {"multiply", "mul", SO_MUL}, {"max", "max", SO_MAX}, {"amax", "max", SO_MAX},
    {"min", "min", SO_MIN}, {"amin", "min", SO_MIN}, {"mean", "mean", SO_MEAN_OP},
};
#define N_REDUCTIONS ((int)(sizeof reduction_names / sizeof reduction_names[0]))

/* interned names and canonical names, and NumPy's ufunc for each op */
static PyObject *names[N_REDUCTIONS], *canonicals[N_REDUCTIONS];
static PyObject *ufuncs[SO_NOPS];
static PyObject *str_casting, *str_no;

int
so_args_init(void)
{
    static const char *const ufunc_names[SO_NOPS] = {
        NULL, "add", "subtract", "multiply", "maximum", "minimum", NULL};
    PyObject *np;
    int i;
    if (names[0] != NULL) return 0;
    for (i = 0; i < N_REDUCTIONS; i++) {
        names[i] = PyUnicode_InternFromString(reduction_names[i].name);
        canonicals[i] = PyUnicode_InternFromString(reduction_names[i].canonical);
        if (names[i] == NULL || canonicals[i] == NULL) return -1;
    }
    str_casting = PyUnicode_InternFromString("casting");
    str_no = PyUnicode_InternFromString("no");
    if (str_casting == NULL || str_no == NULL) return -1;
    np = PyImport_ImportModule("numpy");
    if (np == NULL) return -1;
    for (i = 0; i < SO_NOPS; i++) {
        if (ufunc_names[i] == NULL) continue;
        ufuncs[i] = PyObject_GetAttrString(np, ufunc_names[i]);
        if (ufuncs[i] == NULL) {
            Py_DECREF(np);
            return -1;
        }
    }
    Py_DECREF(np);
    return 0;
}

PyObject *
so_reduction_table(void)
{
    PyObject *d = PyDict_New();
    int i;
    if (d == NULL) return NULL;
    for (i = 0; i < N_REDUCTIONS; i++) {
        if (PyDict_SetItem(d, names[i], canonicals[i]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* The entry of reduction_names, or -1 with the error raised. */
static int
parse_reduction(const char *func, PyObject *r)
{
    const char *s;
    int i;
    for (i = 0; i < N_REDUCTIONS; i++) {
        if (r == names[i]) return i;         /* interned: string literals in user code */
    }
    if (!PyUnicode_Check(r)) {
        return so_fail("reduction_type", func, "{sO}", "got", (PyObject *)Py_TYPE(r));
    }
    s = PyUnicode_AsUTF8(r);
    if (s == NULL) PyErr_Clear();
    for (i = 0; s != NULL && i < N_REDUCTIONS; i++) {
        if (strcmp(s, reduction_names[i].name) == 0) return i;
    }
    return so_fail("reduction_value", func, "{sO}", "got", r);
}

/* Whether NumPy's ufunc has the loop (d, d) -> d for this op: asked of NumPy
 * itself, for the dtypes without a C loop (1 yes, 0 no, -1 error). */
static int
numpy_has_loop(int op, PyArray_Descr *d)
{
    PyArray_Descr *native;
    PyObject *types, *kw, *res;
    int ok = 1;
    Py_ssize_t j;
    native = PyArray_ISNBO(d->byteorder) ? (Py_INCREF(d), d) : PyArray_DescrNewByteorder(d, NPY_NATIVE);
    if (native == NULL) return -1;
    types = PyTuple_Pack(3, (PyObject *)native, (PyObject *)native, (PyObject *)native);
    kw = Py_BuildValue("{OO}", str_casting, str_no);
    if (types == NULL || kw == NULL) {
        Py_XDECREF(types);
        Py_XDECREF(kw);
        Py_DECREF(native);
        return -1;
    }
    {
        PyObject *meth = PyObject_GetAttrString(ufuncs[op], "resolve_dtypes");
        PyObject *args = meth ? PyTuple_Pack(1, types) : NULL;
        res = args ? PyObject_Call(meth, args, kw) : NULL;
        Py_XDECREF(meth);
        Py_XDECREF(args);
    }
    Py_DECREF(types);
    Py_DECREF(kw);
    if (res == NULL) {
        Py_DECREF(native);
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    for (j = 0; j < PyTuple_GET_SIZE(res) && ok; j++) {
        PyObject *t = PyTuple_GET_ITEM(res, j);
        ok = PyArray_DescrCheck(t) && PyArray_EquivTypes((PyArray_Descr *)t, native);
    }
    Py_DECREF(res);
    Py_DECREF(native);
    return ok;
}

/* API: a reduction is defined where NumPy's ufunc has the (dtype, dtype) -> dtype
 * loop; mean also needs a division rule (kinds i, u, f, c, m, O). */
static int
check_reduction(const char *func, int entry, PyObject *given, PyArray_Descr *d)
{
    int op = reduction_names[entry].op, mean = op == SO_MEAN_OP, has;
    so_kernel kn;
    if (op == SO_NONE) return 0;
    if (mean) op = SO_ADD;
    has = so_reduce_kernel(&kn, d, op) ? 1 : numpy_has_loop(op, d);
    if (has < 0) return -1;
    if (has && (!mean || strchr("iufcmO", d->kind) != NULL)) return 0;
    return so_fail("reduction_dtype", func, "{sOsOsOsO}", "reduction", canonicals[entry],
                   "given", given, "dtype", (PyObject *)d, "mean", mean ? Py_True : Py_False);
}

/* ---- arrays ---------------------------------------------------------------- */

static PyObject *
shape_of(int nd, const npy_intp *dims)
{
    PyObject *t = PyTuple_New(nd);
    int d;
    if (t == NULL) return NULL;
    for (d = 0; d < nd; d++) {
        PyObject *n = PyLong_FromSsize_t(dims[d]);
        if (n == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, d, n);
    }
    return t;
}
#define SHAPE(a) shape_of(PyArray_NDIM(a), PyArray_DIMS(a))

/* numpy.asarray, an ndarray (subclasses too) as it is. */
static PyArrayObject *
as_array(const char *func, const char *name, PyObject *o)
{
    PyObject *a;
    if (PyArray_Check(o)) {
        Py_INCREF(o);
        return (PyArrayObject *)o;
    }
    a = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (a == NULL) so_fail_converting(func, name);
    return (PyArrayObject *)a;
}

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

/* indices: an integer array; an empty array of another dtype (`[]` is float64)
 * is empty indices. */
static PyArrayObject *
parse_indices(const char *func, PyObject *indices)
{
    PyArrayObject *i = as_array(func, "indices", indices), *z;
    PyArray_Descr *d;
    if (i == NULL) return NULL;
    d = PyArray_DESCR(i);
    if (d->kind == 'i' || d->kind == 'u') return i;
    if (PyArray_SIZE(i) == 0 && d->kind != 'V') {
        z = (PyArrayObject *)PyArray_ZEROS(PyArray_NDIM(i), PyArray_DIMS(i), NPY_INTP, 0);
        Py_DECREF(i);
        return z;
    }
    so_fail("indices_dtype", func, "{sO}", "dtype", (PyObject *)d);
    Py_DECREF(i);
    return NULL;
}

/* The shape updates must have (API: "What each operation writes"), into req;
 * its rank, or -1 with the error raised. */
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
            return so_fail("nd_k", func, "{snsNsisN}", "k", (Py_ssize_t)k, "indices_shape", SHAPE(idx),
                           "r", r, "data_shape", SHAPE(data));
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
    if (q != r) {
        return so_fail("elements_rank", func, "{sisNsisN}", "r", r, "data_shape", SHAPE(data),
                       "q", q, "indices_shape", SHAPE(idx));
    }
    for (d = 0; d < r; d++) {
        if (d != axis && is[d] > ds[d]) {
            return so_fail("elements_shape", func, "{sisnsnsNsNsi}", "d", d, "n", (Py_ssize_t)is[d],
                           "size", (Py_ssize_t)ds[d], "indices_shape", SHAPE(idx),
                           "data_shape", SHAPE(data), "axis", axis);
        }
        req[d] = is[d];
    }
    return r;
too_many:
    return so_fail("updates_rank", func, "{sNsNsi}", "data_shape", SHAPE(data),
                   "indices_shape", SHAPE(idx), "maxdims", SO_MAXDIMS);
}

/* NEP 50: a Python bool, int, float or complex is "weak": it takes data's dtype
 * where its kind fits (as np.add(a, 5, out=a, casting="same_kind") does). */
static int
weak_scalar(PyObject *u, char kind)
{
    const char *kinds = Py_IS_TYPE(u, &PyBool_Type) ? "biufc"
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

/* updates as data's dtype, broadcast to the required shape req (rank ur). */
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
        u = as_array(func, "updates", updates);
        if (u == NULL) return NULL;
    }
    if (!PyArray_EquivTypes(PyArray_DESCR(u), dd)) {
        /* an empty updates (`[]` is float64) has no value to cast */
        if (PyArray_SIZE(u) && !PyArray_CanCastTypeTo(PyArray_DESCR(u), dd, NPY_SAME_KIND_CASTING)) {
            so_fail("updates_cast", func, "{sOsO}", "from", (PyObject *)PyArray_DESCR(u),
                    "to", (PyObject *)dd);
            Py_DECREF(u);
            return NULL;
        }
        Py_INCREF(dd);
        v = (PyArrayObject *)PyArray_CastToType(u, dd, 0);
        if (v == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeError)) {
                PyObject *t, *e, *tb;
                PyErr_Fetch(&t, &e, &tb);
                PyErr_NormalizeException(&t, &e, &tb);
                so_fail("updates_unicode", func, "{sOsOsO}", "from", (PyObject *)PyArray_DESCR(u),
                        "to", (PyObject *)dd, "exc", e ? e : Py_None);
                Py_XDECREF(t); Py_XDECREF(e); Py_XDECREF(tb);
            }
            Py_DECREF(u);
            return NULL;
        }
        Py_DECREF(u);
        u = v;
    }
    /* broadcast: a view with stride 0 along the dims updates lacks or has as 1 */
    un = PyArray_NDIM(u);
    if (un == ur) {
        for (d = 0; d < ur && same; d++) same = PyArray_DIM(u, d) == req[d];
        if (same) return u;
    }
    for (d = 0; d < ur && un <= ur; d++) {
        int e = d - (ur - un);
        if (e < 0) strides[d] = 0;
        else if (PyArray_DIM(u, e) == req[d]) strides[d] = PyArray_STRIDE(u, e);
        else if (PyArray_DIM(u, e) == 1) strides[d] = 0;
        else break;
    }
    if (un > ur || d < ur) {
        PyObject *got = SHAPE(u), *want = shape_of(ur, req);
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
            so_fail("updates_size", func, "{sNsO}", "want", shape_of(ur, req), "exc", e ? e : Py_None);
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

static PyArrayObject *
parse_out(const char *func, PyObject *out, PyArrayObject *data)
{
    PyArrayObject *o;
    if (out == NULL || out == Py_None) return NULL;
    if (!PyArray_Check(out)) {
        so_fail("out_type", func, "{sO}", "got", (PyObject *)Py_TYPE(out));
        return NULL;
    }
    o = (PyArrayObject *)out;
    if (!PyArray_SAMESHAPE(o, data)) {
        so_fail("out_shape", func, "{sNsN}", "got", SHAPE(o), "want", SHAPE(data));
        return NULL;
    }
    if (!PyArray_EquivTypes(PyArray_DESCR(o), PyArray_DESCR(data))) {
        so_fail("out_dtype", func, "{sOsO}", "got", (PyObject *)PyArray_DESCR(o),
                "want", (PyObject *)PyArray_DESCR(data));
        return NULL;
    }
    if (!PyArray_ISWRITEABLE(o)) {
        so_fail("out_readonly", func, NULL);
        return NULL;
    }
    Py_INCREF(o);
    return o;
}

/* ---- index values ---------------------------------------------------------- */

/* indices as native intp; uint64 values above intp's range become intp's max
 * (still out of range for every axis, so the check below reports them). */
static PyArrayObject *
as_intp(const char *func, PyArrayObject *i)
{
    PyArray_Descr *d = PyArray_DESCR(i);
    PyArrayObject *c;
    if (PyArray_ISNBO(d->byteorder) && PyTypeNum_ISSIGNED(d->type_num) &&
            PyDataType_ELSIZE(d) == (npy_intp)sizeof(npy_intp)) {
        Py_INCREF(i);
        return i;
    }
    if (PyTypeNum_ISUNSIGNED(d->type_num) && PyDataType_ELSIZE(d) >= (npy_intp)sizeof(npy_intp)) {
        npy_intp n, j;
        npy_uint64 *v;
        c = (PyArrayObject *)PyArray_FromAny((PyObject *)i, PyArray_DescrFromType(NPY_UINT64), 0, 0,
                                             NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY, NULL);
        if (c == NULL) goto fail;
        n = PyArray_SIZE(c);
        v = (npy_uint64 *)PyArray_DATA(c);
        for (j = 0; j < n; j++) {
            if (v[j] > (npy_uint64)NPY_MAX_INTP) v[j] = (npy_uint64)NPY_MAX_INTP;
        }
        i = (PyArrayObject *)PyArray_View(c, PyArray_DescrFromType(NPY_INTP), NULL);
        Py_DECREF(c);
        return i;
    }
    c = (PyArrayObject *)PyArray_CastToType(i, PyArray_DescrFromType(NPY_INTP), 0);
    if (c != NULL) return c;
fail:
    if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_MemoryError)) {
        /* a broadcast view of narrow indices can hold more elements than an intp copy can */
        PyObject *t, *e, *tb;
        PyErr_Fetch(&t, &e, &tb);
        PyErr_NormalizeException(&t, &e, &tb);
        so_fail("indices_intp", func, "{sOsNsnsO}", "dtype", (PyObject *)d, "shape", SHAPE(i),
                "size", (Py_ssize_t)PyArray_SIZE(i), "exc", e ? e : Py_None);
        Py_XDECREF(t); Py_XDECREF(e); Py_XDECREF(tb);
    }
    return NULL;
}

/* The IndexError for the value at flat C-order position pos of the original
 * indices (its value as the user gave it). */
static int
bad_index(const char *func, int kind, PyArrayObject *orig, npy_intp pos, PyArrayObject *data,
          int axis)
{
    npy_intp coord[SO_MAXDIMS];
    int q = PyArray_NDIM(orig), d;
    char *p = PyArray_BYTES(orig);
    PyObject *where, *value;
    for (d = q - 1; d >= 0; d--) {
        coord[d] = pos % PyArray_DIM(orig, d);
        pos /= PyArray_DIM(orig, d);
        p += coord[d] * PyArray_STRIDE(orig, d);
    }
    if (kind == SO_ND) axis = (int)coord[q - 1];
    value = PyArray_GETITEM(orig, p);
    where = shape_of(q, coord);
    if (value == NULL || where == NULL) {
        Py_XDECREF(value);
        Py_XDECREF(where);
        return -1;
    }
    return so_fail("index_range", func, "{sNsNsisn}", "where", where, "value", value, "axis", axis,
                   "size", (Py_ssize_t)PyArray_DIM(data, axis));
}

int
so_args_bounds(const so_args *a, npy_intp *bounds)
{
    int nbounds = 1, d;
    if (a->kind == SO_ND) {
        nbounds = (int)PyArray_DIM(a->idx, PyArray_NDIM(a->idx) - 1);
        for (d = 0; d < nbounds; d++) bounds[d] = PyArray_DIM(a->data, d);
    }
    else {
        bounds[0] = PyArray_DIM(a->data, a->axis);
    }
    return nbounds;
}

int
so_args_check_indices(const so_args *a, int nthreads)
{
    npy_intp bounds[SO_MAXDIMS], pos;
    int nbounds;
    if (PyArray_SIZE(a->idx) == 0) return 0;
    nbounds = so_args_bounds(a, bounds);
    (void)nthreads;
    if (PyArray_SIZE(a->idx) >= SO_GIL_RELEASE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        pos = so_find_bad_index(a->idx, bounds, nbounds);
        Py_END_ALLOW_THREADS
    }
    else {
        pos = so_find_bad_index(a->idx, bounds, nbounds);
    }
    return pos < 0 ? 0 : bad_index(so_func_names[a->kind], a->kind, a->given_idx, pos, a->data,
                                   a->axis);
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
              PyObject *axis, PyObject *reduction, PyObject *include_self, PyObject *out,
              int nthreads)
{
    const char *func = so_func_names[kind];
    npy_intp req[SO_MAXDIMS];
    PyArrayObject *orig = NULL, *c;
    int entry, ur;

    memset(a, 0, sizeof *a);
    a->kind = kind;
    entry = parse_reduction(func, reduction);
    if (entry < 0) return -1;
    a->reduction = canonicals[entry];
    a->mean = reduction_names[entry].op == SO_MEAN_OP;
    a->op = a->mean ? SO_ADD : reduction_names[entry].op;
    a->include_self = check_include_self(func, include_self);
    if (a->include_self < 0) return -1;
    a->data = as_array(func, "data", data);
    if (a->data == NULL) goto fail;
    if (PyArray_NDIM(a->data) == 0) {
        so_fail("data_0d", func, NULL);
        goto fail;
    }
    orig = parse_indices(func, indices);
    if (orig == NULL) goto fail;
    if (kind != SO_ND) {
        a->axis = parse_axis(func, axis, PyArray_NDIM(a->data));
        if (a->axis < 0) goto fail;
    }
    ur = required_shape(func, kind, a->data, orig, a->axis, req);
    if (ur < 0) goto fail;
    a->upd = parse_updates(func, kind, updates, a->data, orig, a->axis, req, ur);
    if (a->upd == NULL) goto fail;
    a->out = parse_out(func, out, a->data);
    if (a->out == NULL && PyErr_Occurred()) goto fail;
    if (check_reduction(func, entry, reduction, PyArray_DESCR(a->data)) < 0) goto fail;
    a->idx = as_intp(func, orig);
    if (a->idx == NULL) goto fail;
    a->given_idx = orig;
    orig = NULL;
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

/* ---- overlap ---------------------------------------------------------------- */

static void
extent(PyArrayObject *a, char **lo, char **hi)
{
    char *l = PyArray_BYTES(a), *h = PyArray_BYTES(a);
    int d;
    for (d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp span = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (span < 0) l += span; else h += span;
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

int
so_may_overlap(PyArrayObject *a, PyArrayObject *b)
{
    char *al, *ah, *bl, *bh;
    if (PyArray_SIZE(a) == 0 || PyArray_SIZE(b) == 0) return 0;
    extent(a, &al, &ah);
    extent(b, &bl, &bh);
    return al < bh && bl < ah;
}

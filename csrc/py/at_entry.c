/*
 * py/at_entry.c: _core.at(ufunc, a, indices, b), scatterops.at's commonest
 * calls read and run in C: ufunc one of _core.UFUNC_REDUCTIONS, a a plain,
 * writeable, aligned, contiguous native ndarray of a dtype in
 * _core.TYPED_DTYPES for that reduction, the index an integer array or a list
 * of Python ints (an array along axis 0), a tuple of full slices `:` and one
 * integer array (along its axis), or a tuple of integer arrays of one shape,
 * one per axis of a (element tuples); b an array of a's dtype, a NumPy scalar
 * of it, or a Python scalar that ufunc.at would add in a's dtype (it converts b
 * with numpy.asarray: an int is int64, a float float64), broadcast to
 * a[indices]'s shape as NumPy broadcasts it.  Such a call runs in place through
 * the public functions' own path (so_args_parse, so_call_run, out = a).  Every
 * other call (and large element tuples: AT_SMALL) returns NotImplemented,
 * decided before anything is written, and scatterops/_at.py reads it.  An index
 * out of range raises NumPy's IndexError, with its text, and writes nothing.
 */
#include "py/py.h"

/* Calls of at most this many updates: element tuples run here as their flat
 * offsets (larger ones go to _at.py, whose at_apply makes no array of
 * offsets, and there the planning costs little), and a b that
 * broadcasts is written out to a[indices]'s shape first (the core's loops over
 * updates with a stride-0 axis are slower than the copy); docs/design.md,
 * "scatterops.at in C". */
#define AT_SMALL ((npy_intp)1 << 12)

/* the forms of index this file runs */
enum { AT_ALONG, AT_ELEMENT_TUPLES };

typedef struct {
    int form;
    int axis;                          /* AT_ALONG: the axis the array indexes */
    PyArrayObject *idx;                /* AT_ALONG: owned, the index array */
    PyArrayObject *arrays[SO_MAXDIMS]; /* AT_ELEMENT_TUPLES: borrowed, one per axis of a */
    int nd;                            /* the shape of a[indices] */
    npy_intp dims[SO_MAXDIMS];
} at_index;

/* _core.UFUNC_REDUCTIONS, _core.TYPED_DTYPES (read once from the module);
 * NumPy's context variable holding the floating-point error modes (NULL on
 * NumPy 1.x: those calls go to _at.py), numpy.geterr, and the last error-mode
 * object seen whose modes are all "ignore" or "warn" (the object is immutable:
 * np.errstate and np.seterr replace it).  All owned. */
static PyObject *ufunc_reductions, *typed_dtypes, *errstate_var, *geterr, *quiet_state;

static int
load_tables(PyObject *module)
{
    PyObject *config;
    if (typed_dtypes != NULL) return 0;
    ufunc_reductions = PyObject_GetAttrString(module, "UFUNC_REDUCTIONS");
    if (ufunc_reductions == NULL) return -1;
    config = PyImport_ImportModule("numpy._core._ufunc_config");
    if (config != NULL) {
        errstate_var = PyObject_GetAttrString(config, "_extobj_contextvar");
        geterr = PyObject_GetAttrString(config, "geterr");
        Py_DECREF(config);
    }
    if (errstate_var == NULL || geterr == NULL || !PyContextVar_CheckExact(errstate_var)) {
        PyErr_Clear();
        Py_CLEAR(errstate_var);
        Py_CLEAR(geterr);
    }
    typed_dtypes = PyObject_GetAttrString(module, "TYPED_DTYPES");
    return typed_dtypes == NULL ? -1 : 0;
}

/* 1 if the error modes for overflow, invalid and divide are each "ignore" or
 * "warn" (the C kernels raise and warn nothing, as _at.py documents), 0 if one
 * raises, calls, prints or logs (NumPy's ufunc.at runs the call), -1 raised. */
static int
fp_modes_quiet(void)
{
    static const char *const keys[] = {"over", "invalid", "divide"};
    PyObject *state, *err, *v;
    int quiet = 1, k;
    if (errstate_var == NULL) return 0;
    if (PyContextVar_Get(errstate_var, NULL, &state) < 0) return -1;
    if (state == NULL) return 0;
    if (state == quiet_state) {
        Py_DECREF(state);
        return 1;
    }
    err = PyObject_CallNoArgs(geterr);
    if (err == NULL) {
        Py_DECREF(state);
        return -1;
    }
    for (k = 0; k < 3 && quiet; k++) {
        v = PyDict_Check(err) ? PyDict_GetItemString(err, keys[k]) : NULL;
        quiet = v != NULL && PyUnicode_Check(v) &&
                (PyUnicode_CompareWithASCIIString(v, "ignore") == 0 ||
                 PyUnicode_CompareWithASCIIString(v, "warn") == 0);
    }
    Py_DECREF(err);
    if (quiet) Py_XSETREF(quiet_state, state);
    else Py_DECREF(state);
    return quiet;
}

/* a takes the C path: plain, writeable, aligned, contiguous (no two elements
 * share memory), native, of a dtype with the reduction's C loop. */
static int
plain_typed(PyObject *o, PyObject *name)
{
    PyArrayObject *a = (PyArrayObject *)o;
    PyArray_Descr *d;
    PyObject *chars;
    const char *s;
    if (!PyArray_CheckExact(o) || PyArray_NDIM(a) < 1 || !PyArray_ISWRITEABLE(a) ||
            !PyArray_ISALIGNED(a) || !(PyArray_IS_C_CONTIGUOUS(a) || PyArray_IS_F_CONTIGUOUS(a))) {
        return 0;
    }
    d = PyArray_DESCR(a);
    if (!PyArray_ISNBO(d->byteorder)) return 0;
    chars = PyDict_GetItemWithError(typed_dtypes, name);
    if (chars == NULL || !PyUnicode_Check(chars)) return PyErr_Occurred() ? -1 : 0;
    s = PyUnicode_AsUTF8(chars);
    if (s == NULL) return -1;
    return d->type != '\0' && strchr(s, d->type) != NULL;
}

/* ufunc.at computes b with a in a's dtype (numpy.asarray(b) promotes with a to
 * it, or for a Python int in range, to a wider integer of the same result):
 * 1 with *nd b's rank, 0 if not (NumPy's promotion or a conversion decides),
 * -1 raised. */
static int
b_in_a_dtype(PyObject *b, PyArrayObject *a, int *nd)
{
    const int t = PyArray_TYPE(a);
    PyArray_Descr *d = PyArray_DESCR(a);
    *nd = 0;
    if (PyArray_CheckExact(b)) {
        *nd = PyArray_NDIM((PyArrayObject *)b);
        return PyArray_TYPE((PyArrayObject *)b) == t &&
               PyArray_ISNBO(PyArray_DESCR((PyArrayObject *)b)->byteorder);
    }
    if (PyFloat_CheckExact(b)) return t == NPY_DOUBLE || t == NPY_CDOUBLE;
    if (PyComplex_CheckExact(b)) return t == NPY_CDOUBLE;
    if (PyLong_CheckExact(b)) {
        /* as int64: exact in an integer a whose range holds the value (the
         * result, computed wider, casts back to the same), float64 rounds it */
        int ovf, bits = (int)PyDataType_ELSIZE(d) * 8;
        long long v = PyLong_AsLongLongAndOverflow(b, &ovf);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (ovf) return 0;
        if (t == NPY_DOUBLE || t == NPY_CDOUBLE) return 1;
        if (d->kind == 'i') {
            return bits >= 64 || (v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1)));
        }
        /* uint64 with int64 promotes to float64 */
        return d->kind == 'u' && bits < 64 && v >= 0 && v < (1LL << bits);
    }
    if (PyArray_IsScalar(b, Generic)) {
        PyArray_Descr *bd = PyArray_DescrFromScalar(b);
        const int same = bd != NULL && bd->type_num == t && PyArray_ISNBO(bd->byteorder);
        Py_XDECREF(bd);
        return bd == NULL ? -1 : same;
    }
    return 0;
}

/* x is an index array this file takes: an integer ndarray of rank >= 1, not
 * empty, not uint64 (NumPy's indexing wraps values past intp's range). */
static int
int_array(PyObject *x)
{
    PyArray_Descr *d;
    if (!PyArray_CheckExact(x) || PyArray_NDIM((PyArrayObject *)x) < 1 ||
            so_size((PyArrayObject *)x) == 0) {
        return 0;
    }
    d = PyArray_DESCR((PyArrayObject *)x);
    return d->kind == 'i' || (d->kind == 'u' && PyDataType_ELSIZE(d) < 8);
}

/* A non-empty list of Python ints (not bools) that fit in intp as a new intp
 * array; NULL with nothing raised if the list is not one, NULL raised on failure. */
static PyArrayObject *
int_list(PyObject *list)
{
    const Py_ssize_t n = PyList_GET_SIZE(list);
    npy_intp dim = n, *v;
    PyArrayObject *arr;
    Py_ssize_t j;
    int ovf;
    if (n == 0) return NULL;
    for (j = 0; j < n; j++) {
        if (!PyLong_CheckExact(PyList_GET_ITEM(list, j))) return NULL;
    }
    arr = (PyArrayObject *)PyArray_SimpleNew(1, &dim, NPY_INTP);
    if (arr == NULL) return NULL;
    v = (npy_intp *)PyArray_DATA(arr);
    for (j = 0; j < n; j++) {
        long long x = PyLong_AsLongLongAndOverflow(PyList_GET_ITEM(list, j), &ovf);
        if (ovf || x < NPY_MIN_INTP || x > NPY_MAX_INTP) {
            Py_DECREF(arr);
            return NULL;
        }
        v[j] = (npy_intp)x;
    }
    return arr;
}

static int
full_slice(PyObject *x)
{
    PySliceObject *s = (PySliceObject *)x;
    return PySlice_Check(x) && s->start == Py_None && s->stop == Py_None && s->step == Py_None;
}

/* indices read as one of the forms of the file comment into *ix: 1, or 0 when it
 * is not one, -1 raised. */
static int
read_index(PyArrayObject *a, PyObject *indices, at_index *ix)
{
    const int a_nd = PyArray_NDIM(a);
    const npy_intp *ad = PyArray_DIMS(a);
    PyObject *x = NULL;
    Py_ssize_t n, j;
    int d, xnd, axis = 0;
    ix->idx = NULL;
    if (PyTuple_CheckExact(indices)) {
        n = PyTuple_GET_SIZE(indices);
        if (n < 1 || n > a_nd) return 0;
        for (j = 0; j < n; j++) {
            PyObject *item = PyTuple_GET_ITEM(indices, j);
            if (full_slice(item)) continue;
            if (x != NULL || !int_array(item)) break;
            x = item;
            axis = (int)j;
        }
        if (j < n || x == NULL) {
            /* not `:`s and one array: element tuples, or another form */
            const PyArrayObject *first = (PyArrayObject *)PyTuple_GET_ITEM(indices, 0);
            if (n != a_nd || n < 2) return 0;
            for (j = 0; j < n; j++) {
                PyArrayObject *item = (PyArrayObject *)PyTuple_GET_ITEM(indices, j);
                if (!int_array((PyObject *)item) || PyArray_NDIM(item) != PyArray_NDIM(first)) {
                    return 0;
                }
                for (d = 0; d < PyArray_NDIM(item); d++) {
                    if (PyArray_DIM(item, d) != PyArray_DIM(first, d)) return 0;
                }
                ix->arrays[j] = item;
            }
            ix->form = AT_ELEMENT_TUPLES;
            ix->nd = PyArray_NDIM(first);
            for (d = 0; d < ix->nd; d++) ix->dims[d] = PyArray_DIM(first, d);
            return 1;
        }
        Py_INCREF(x);
        ix->idx = (PyArrayObject *)x;
    }
    else if (int_array(indices)) {
        Py_INCREF(indices);
        ix->idx = (PyArrayObject *)indices;
    }
    else if (PyList_CheckExact(indices)) {
        ix->idx = int_list(indices);
        if (ix->idx == NULL) return PyErr_Occurred() ? -1 : 0;
    }
    else {
        return 0;
    }
    /* a[indices]'s shape: the array's shape in place of the indexed axis */
    xnd = PyArray_NDIM(ix->idx);
    if (a_nd - 1 + xnd > SO_MAXDIMS) {
        Py_CLEAR(ix->idx);
        return 0;
    }
    ix->form = AT_ALONG;
    ix->axis = axis;
    ix->nd = 0;
    for (d = 0; d < a_nd; d++) {
        if (d != axis) {
            ix->dims[ix->nd++] = ad[d];
            continue;
        }
        memcpy(ix->dims + ix->nd, PyArray_DIMS(ix->idx), xnd * sizeof(npy_intp));
        ix->nd += xnd;
    }
    return 1;
}

/* b (rank bnd; shape read from it if an array) broadcasts to a[indices]'s shape,
 * which is not empty. */
static int
b_broadcasts(PyObject *b, int bnd, const at_index *ix)
{
    npy_intp size = 1;
    int d;
    for (d = 0; d < ix->nd; d++) size *= ix->dims[d];
    if (size == 0 || bnd > ix->nd) return 0;
    for (d = 0; d < bnd; d++) {
        npy_intp have = PyArray_DIM((PyArrayObject *)b, d), want = ix->dims[ix->nd - bnd + d];
        if (have != want && have != 1) return 0;
    }
    return 1;
}

/* NumPy's IndexError for the first value out of range of index array x on an
 * axis of size n (-1), or 0 if every value is in range. */
static int
raise_first_bad(PyArrayObject *x, npy_intp n, int axis)
{
    PyArrayObject *v = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)x, PyArray_DescrFromType(NPY_INTP), 0, 0, NPY_ARRAY_CARRAY_RO, NULL);
    const npy_intp *p;
    npy_intp i, size;
    if (v == NULL) return -1;
    p = (const npy_intp *)PyArray_DATA(v);
    size = so_size(v);
    for (i = 0; i < size && so_index_inside(p[i], n); i++) continue;
    if (i < size) {
        PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis %d with size %zd",
                     (Py_ssize_t)p[i], axis, (Py_ssize_t)n);
    }
    Py_DECREF(v);
    return i < size ? -1 : 0;
}

/* The run of an array along an axis raised: an IndexError (nothing written)
 * gets NumPy's text (element tuples raise it while their offsets are made). */
static void
index_error_text(PyArrayObject *a, const at_index *ix)
{
    PyObject *t, *e, *tb;
    if (ix->form != AT_ALONG || !PyErr_ExceptionMatches(PyExc_IndexError)) return;
    PyErr_Fetch(&t, &e, &tb);
    if (raise_first_bad(ix->idx, PyArray_DIM(a, ix->axis), ix->axis) == 0) {
        PyErr_Restore(t, e, tb);
        return;
    }
    Py_XDECREF(t); Py_XDECREF(e); Py_XDECREF(tb);
}

/* b written out to a[indices]'s shape (a new array of a's dtype) when it
 * broadcasts to it and the call is small, else b itself (a new reference);
 * NULL raised. */
static PyObject *
written_out(PyArrayObject *a, const at_index *ix, PyObject *b, npy_intp size)
{
    PyArrayObject *u;
    int d, full = PyArray_CheckExact(b) && PyArray_NDIM((PyArrayObject *)b) == ix->nd;
    for (d = 0; full && d < ix->nd; d++) full = PyArray_DIM((PyArrayObject *)b, d) == ix->dims[d];
    if (full || size > AT_SMALL) {
        Py_INCREF(b);
        return b;
    }
    Py_INCREF(PyArray_DESCR(a));
    u = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(a), ix->nd, ix->dims,
                                              NULL, NULL, 0, NULL);
    if (u != NULL && (PyArray_Check(b) ? PyArray_CopyInto(u, (PyArrayObject *)b)
                                        : PyArray_FillWithScalar(u, b)) < 0) {
        Py_CLEAR(u);
    }
    return (PyObject *)u;
}

/* Element tuples as flat offsets in elements into a's memory (contiguous: its
 * lowest element first), a new intp array of a[indices]'s shape, every value
 * checked on its axis; NULL raised (NumPy's IndexError for a value outside). */
static PyArrayObject *
flat_offsets(PyArrayObject *a, const at_index *ix, npy_intp size)
{
    PyArrayObject *t = (PyArrayObject *)PyArray_ZEROS(ix->nd, ix->dims, NPY_INTP, 0), *v;
    npy_intp *out, i;
    int j, bad = 0;
    if (t == NULL) return NULL;
    out = (npy_intp *)PyArray_DATA(t);
    for (j = 0; j < PyArray_NDIM(a) && !bad; j++) {
        const npy_intp n = PyArray_DIM(a, j);
        const npy_intp step = n == 1 ? 0 : PyArray_STRIDE(a, j) / PyArray_ITEMSIZE(a), *p;
        v = (PyArrayObject *)PyArray_FromAny((PyObject *)ix->arrays[j],
                                             PyArray_DescrFromType(NPY_INTP), 0, 0,
                                             NPY_ARRAY_CARRAY_RO, NULL);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        p = (const npy_intp *)PyArray_DATA(v);
        for (i = 0; i < size; i++) {
            const npy_intp x = p[i];
            const int inside = so_index_inside(x, n);
            bad |= !inside;
            out[i] += inside ? so_wrap(x, n) * step : 0;
        }
        Py_DECREF(v);
    }
    if (!bad) return t;
    Py_DECREF(t);
    for (j = 0; j < PyArray_NDIM(a); j++) {
        if (raise_first_bad(ix->arrays[j], PyArray_DIM(a, j), j) < 0) return NULL;
    }
    PyErr_SetString(PyExc_IndexError, "at: an index is out of range");
    return NULL;
}

/* A writeable 1-d view of a's memory (a contiguous), NULL raised. */
static PyObject *
memory_of(PyArrayObject *a)
{
    npy_intp span = so_size(a), item = PyArray_ITEMSIZE(a);
    PyObject *m;
    Py_INCREF(PyArray_DESCR(a));
    m = PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(a), 1, &span, &item, PyArray_DATA(a),
                             NPY_ARRAY_CARRAY, NULL);
    if (m != NULL) {
        Py_INCREF(a);
        if (PyArray_SetBaseObject((PyArrayObject *)m, (PyObject *)a) < 0) Py_CLEAR(m);
    }
    return m;
}

/* The call through the public functions' path, in place: an array along an
 * axis as scatter_elements (1-d a and index) or scatter_update; element
 * tuples as their flat offsets into a's memory, the same way.  0, or -1 raised. */
static int
run_public(PyArrayObject *a, const at_index *ix, PyObject *b, PyObject *name, npy_intp size,
           int nthreads)
{
    PyObject *data = (PyObject *)a, *axis = NULL, *res = NULL, *upd;
    PyArrayObject *idx = ix->idx;
    int kind;
    so_args sa;
    if (ix->form == AT_ELEMENT_TUPLES) {
        idx = flat_offsets(a, ix, size);
        data = idx == NULL ? NULL : memory_of(a);
        if (data == NULL) {
            Py_XDECREF(idx);
            return -1;
        }
    }
    else {
        Py_INCREF(idx);
        Py_INCREF(data);
    }
    kind = PyArray_NDIM((PyArrayObject *)data) == 1 && PyArray_NDIM(idx) == 1 ? SO_ELEMENTS
                                                                               : SO_UPDATE;
    if (kind == SO_UPDATE) axis = PyLong_FromLong(ix->form == AT_ALONG ? ix->axis : 0);
    upd = written_out(a, ix, b, size);
    if (upd != NULL && (kind != SO_UPDATE || axis != NULL) &&
            so_args_parse(&sa, kind, data, (PyObject *)idx, upd, axis, name, Py_True, NULL,
                          data) == 0) {
        res = so_call_run(&sa, nthreads);
        so_args_clear(&sa);
    }
    Py_XDECREF(idx);
    Py_XDECREF(data);
    Py_XDECREF(axis);
    Py_XDECREF(upd);
    Py_XDECREF(res);
    return res == NULL ? -1 : 0;
}

/* _core.at(ufunc, a, indices, b): None when done, NotImplemented when the
 * call is not one of this file's (nothing read or written), NULL raised. */
PyObject *
so_py_at(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *ufunc, *b, *name;
    PyArrayObject *a;
    at_index ix;
    npy_intp size = 1;
    int ok, bnd, rc, d;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "at(ufunc, a, indices, b) takes 4 arguments");
        return NULL;
    }
    if (load_tables(module) < 0) return NULL;
    ufunc = args[0];
    a = (PyArrayObject *)args[1];
    b = args[3];
    if (Py_TYPE(ufunc)->tp_hash == PyObject_HashNotImplemented) Py_RETURN_NOTIMPLEMENTED;
    name = PyDict_GetItemWithError(ufunc_reductions, ufunc);
    if (name == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    ok = plain_typed((PyObject *)a, name);
    if (ok > 0) ok = b_in_a_dtype(b, a, &bnd);
    if (ok > 0 && strchr("fc", PyArray_DESCR(a)->kind) != NULL) ok = fp_modes_quiet();
    if (ok > 0) ok = read_index(a, args[2], &ix);
    if (ok < 0) return NULL;
    if (ok == 0) Py_RETURN_NOTIMPLEMENTED;
    if (!b_broadcasts(b, bnd, &ix)) {
        Py_XDECREF(ix.idx);
        Py_RETURN_NOTIMPLEMENTED;
    }
    for (d = 0; d < ix.nd; d++) size *= ix.dims[d];
    if (ix.form == AT_ELEMENT_TUPLES && size > AT_SMALL) Py_RETURN_NOTIMPLEMENTED;
    Py_INCREF(name);
    rc = run_public(a, &ix, b, name, size, so_settings_threads());
    Py_DECREF(name);
    if (rc < 0) index_error_text(a, &ix);
    Py_XDECREF(ix.idx);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

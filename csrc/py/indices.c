/*
 * py/indices.c: the index array of a call -- an integer array (an empty one of
 * any dtype is empty indices; scatter_nd refuses np.add.at's tuple of index
 * arrays, which it would misread), its conversion to native intp, and the check of
 * every value against its axis, whose IndexError names the value as the user
 * gave it, its position, the axis and its size.
 */
#include "py/py.h"

/* An item of a tuple given as scatter_nd's indices holds several values (an
 * array of rank >= 1, a list, a tuple, anything numpy.asarray makes rank >= 1
 * of): 1; a scalar: 0; -1 raised. */
static int
item_has_dims(const char *func, PyObject *item)
{
    PyObject *a;
    int nd;
    if (PyArray_Check(item)) return PyArray_NDIM((PyArrayObject *)item) > 0;
    if (PyList_Check(item) || PyTuple_Check(item)) return 1;
    if (PyArray_IsAnyScalar(item)) return 0;
    a = PyArray_FromAny(item, NULL, 0, 0, 0, NULL);
    if (a == NULL) return so_fail_converting(func, "indices");
    nd = PyArray_NDIM((PyArrayObject *)a);
    Py_DECREF(a);
    return nd > 0;
}

int
so_check_nd_tuple(const char *func, PyObject *indices)
{
    Py_ssize_t n = PyTuple_GET_SIZE(indices), j;
    for (j = 0; j < n; j++) {
        int dims = item_has_dims(func, PyTuple_GET_ITEM(indices, j));
        if (dims < 0) return -1;
        if (dims) return so_fail("nd_tuple", func, "{sn}", "n", n);
    }
    return 0;
}

/* indices: an integer array; an empty array of any other dtype (`[]` is
 * float64) is empty indices. */
PyArrayObject *
so_parse_indices(const char *func, PyObject *indices)
{
    PyArrayObject *i = so_as_array(func, "indices", indices), *z;
    PyArray_Descr *d;
    if (i == NULL) return NULL;
    d = PyArray_DESCR(i);
    if (d->kind == 'i' || d->kind == 'u') return i;
    if (so_size(i) == 0) {
        z = (PyArrayObject *)PyArray_ZEROS(PyArray_NDIM(i), PyArray_DIMS(i), NPY_INTP, 0);
        Py_DECREF(i);
        return z;
    }
    so_fail("indices_dtype", func, "{sO}", "dtype", (PyObject *)d);
    Py_DECREF(i);
    return NULL;
}

PyArrayObject *
so_view_of(PyArrayObject *a, PyArray_Descr *descr, const npy_intp *dims,
           const npy_intp *strides)
{
    PyArrayObject *v = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, descr, PyArray_NDIM(a), (npy_intp *)dims, (npy_intp *)strides,
        PyArray_BYTES(a), 0, NULL);
    if (v == NULL) return NULL;
    Py_INCREF(a);
    if (PyArray_SetBaseObject(v, (PyObject *)a) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* i with dims of stride 0 (a broadcast or folded index) converted once: the
 * values of one copy of those dims, viewed again with stride 0 -- a (1e6, 64)
 * int32 index broadcast from a column costs 8 MB, not 512 MB -- or NULL with
 * *done = 0 if i has no such dim. */
static PyArrayObject *
as_intp_repeated(const char *func, PyArrayObject *i, int *done)
{
    const int nd = PyArray_NDIM(i);
    npy_intp dims[SO_MAXDIMS], strides[SO_MAXDIMS];
    PyArrayObject *core, *c, *v;
    int d, repeated = 0;
    *done = 0;
    for (d = 0; d < nd; d++) {
        repeated |= PyArray_STRIDE(i, d) == 0 && PyArray_DIM(i, d) > 1;
        dims[d] = PyArray_STRIDE(i, d) == 0 ? 1 : PyArray_DIM(i, d);
    }
    if (!repeated) return NULL;
    *done = 1;
    Py_INCREF(PyArray_DESCR(i));
    core = so_view_of(i, PyArray_DESCR(i), dims, PyArray_STRIDES(i));
    if (core == NULL) return NULL;
    c = so_as_intp(func, core);
    Py_DECREF(core);
    if (c == NULL) return NULL;
    for (d = 0; d < nd; d++) strides[d] = PyArray_STRIDE(i, d) == 0 ? 0 : PyArray_STRIDE(c, d);
    Py_INCREF(PyArray_DESCR(c));
    v = so_view_of(c, PyArray_DESCR(c), PyArray_DIMS(i), strides);
    Py_DECREF(c);
    return v;
}

/* indices as native intp; uint64 values above intp's range become intp's max
 * (still out of range for every axis, so the check below reports them). */
PyArrayObject *
so_as_intp(const char *func, PyArrayObject *i)
{
    PyArray_Descr *d = PyArray_DESCR(i);
    PyArrayObject *c;
    int repeated;
    if (PyArray_ISNBO(d->byteorder) && PyTypeNum_ISSIGNED(d->type_num) &&
            PyDataType_ELSIZE(d) == (npy_intp)sizeof(npy_intp)) {
        Py_INCREF(i);
        return i;
    }
    c = as_intp_repeated(func, i, &repeated);
    if (repeated) {
        /* its view fails only when even intp's byte count of i overflows */
        if (c != NULL) return c;
        goto fail;
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
        so_fail("indices_intp", func, "{sOsNsnsO}", "dtype", (PyObject *)d, "shape", so_shape_tuple(PyArray_NDIM(i), PyArray_DIMS(i)),
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
    where = so_shape_tuple(q, coord);
    if (value == NULL || where == NULL) {
        Py_XDECREF(value);
        Py_XDECREF(where);
        return -1;
    }
    return so_fail("index_range", func, "{sNsNsisn}", "where", where, "value", value, "axis", axis,
                   "size", (Py_ssize_t)PyArray_DIM(data, axis));
}

int
so_args_intp_indices(so_args *a)
{
    PyArrayObject *i;
    if (so_index_type(PyArray_DESCR(a->idx)) == SO_IX_i64) return 0;
    i = so_as_intp(so_func_names[a->c.kind], a->idx);
    if (i == NULL) return -1;
    Py_SETREF(a->idx, i);
    return 0;
}

int
so_args_index_error(const so_args *a, npy_intp pos)
{
    return bad_index(so_func_names[a->c.kind], a->c.kind, a->given_idx, pos, a->data, a->c.axis);
}

int
so_args_out_of_range(const so_args *a, npy_intp pos)
{
    return a->c.mode == SO_MODE_RAISE ? so_args_index_error(a, pos) : SO_OUT_OF_RANGE;
}

int
so_args_bounds(const so_args *a, npy_intp *bounds)
{
    return so_index_bounds(a->c.kind, a->c.axis, PyArray_NDIM(a->idx), PyArray_DIMS(a->idx),
                           PyArray_NDIM(a->data), PyArray_DIMS(a->data), bounds);
}

int
so_args_check_indices(const so_args *a, int nthreads)
{
    npy_intp bounds[SO_MAXDIMS], pos;
    so_array idx;
    int nbounds;
    if (a->c.nidx == 0) return 0;
    nbounds = so_args_bounds(a, bounds);
    so_array_of(a->idx, &idx);
    if (a->c.nidx >= SO_GIL_RELEASE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        pos = so_find_bad_index(&idx, bounds, nbounds, nthreads);
        Py_END_ALLOW_THREADS
    }
    else {
        pos = so_find_bad_index(&idx, bounds, nbounds, 1);
    }
    return pos < 0 ? 0 : so_args_out_of_range(a, pos);
}

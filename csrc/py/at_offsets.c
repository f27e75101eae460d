/*
 * py/at_offsets.c: _core.at_offsets, the element offsets that a tuple of index
 * arrays addresses in a view of an array (scatterops.at, a[i, j, ...] with an
 * index array on every axis of the view), in one pass.
 *
 * NumPy's indexing reads each index array as intp (an unsafe cast: a uint64
 * value past intp's range wraps) and broadcasts the arrays together; a value v
 * on an axis of size n is valid when -n <= v < n and counts from the end when
 * negative.  The offset of a tuple of values is base + sum_j wrap(v_j) * step_j,
 * with step_j the axis' stride in elements; base is what the negative steps
 * would take below the view's first element, so that offsets count from the
 * view's lowest element and are all >= 0.  The offsets are written in C order
 * of the broadcast shape, into an array from the output cache.
 */
#include "py/py.h"

/* the largest number of index arrays (one operand is the result) */
#define SO_AT_MAX_ARRAYS (NPY_MAXARGS - 1)

/* One inner run of n tuples: out = base + sum_j wrap(in_j) * step_j, component by
 * component (a contiguous run is a plain loop the compiler vectorises); returns
 * nonzero if a value is out of range. */
static int
fill_run(char **data, const npy_intp *strides, npy_intp n, int k, const npy_intp *size,
         const npy_intp *step, npy_intp base)
{
    const npy_intp os = strides[k];
    npy_uintp bad = 0;
    npy_intp i;
    int j;
    for (j = 0; j < k; j++) {
        const npy_intp s = size[j], st = step[j], is = strides[j];
        const npy_uintp lim = 2 * (npy_uintp)s;
        const npy_intp add = j == 0 ? base : 0;
        const char *in = data[j];
        char *out = data[k];
        if (is == (npy_intp)sizeof(npy_intp) && os == (npy_intp)sizeof(npy_intp)) {
            const npy_intp *restrict vin = (const npy_intp *)in;
            npy_intp *restrict vout = (npy_intp *)out;
            for (i = 0; i < n; i++) {
                npy_intp v = vin[i];
                /* -s <= v < s, in unsigned arithmetic (no overflow) */
                bad |= (npy_uintp)v + (npy_uintp)s >= lim;
                v += v < 0 ? s : 0;
                vout[i] = (j == 0 ? add : vout[i]) + v * st;
            }
        }
        else {
            for (i = 0; i < n; i++) {
                npy_intp v, o;
                memcpy(&v, in + i * is, sizeof v);
                bad |= (npy_uintp)v + (npy_uintp)s >= lim;
                v += v < 0 ? s : 0;
                if (j == 0) o = add;
                else memcpy(&o, out + i * os, sizeof o);
                o += v * st;
                memcpy(out + i * os, &o, sizeof o);
            }
        }
    }
    return bad != 0;
}

/* Fills out from the iterator; returns 0, or -1 if a value is out of range. */
static int
fill_offsets(NpyIter *it, int k, const npy_intp *size, const npy_intp *step, npy_intp base)
{
    NpyIter_IterNextFunc *next = NpyIter_GetIterNext(it, NULL);
    char **data = NpyIter_GetDataPtrArray(it);
    npy_intp *strides = NpyIter_GetInnerStrideArray(it);
    npy_intp *count = NpyIter_GetInnerLoopSizePtr(it);
    if (next == NULL) return -1;
    do {
        if (fill_run(data, strides, *count, k, size, step, base)) return -1;
    } while (next(it));
    return 0;
}

/* _core.at_offsets(arrays, sizes, steps, shape): see the file comment.  arrays: a
 * tuple of integer ndarrays broadcasting to shape; sizes, steps: the size and
 * the stride in elements of the axis each addresses.  An IndexError if a value
 * is out of range. */
PyObject *
so_py_at_offsets(PyObject *self, PyObject *args)
{
    PyObject *arrays, *sizes, *steps, *shape;
    PyArrayObject *ops[SO_AT_MAX_ARRAYS + 1];
    PyArray_Descr *dtypes[SO_AT_MAX_ARRAYS + 1];
    npy_uint32 flags[SO_AT_MAX_ARRAYS + 1];
    npy_intp size[SO_AT_MAX_ARRAYS], step[SO_AT_MAX_ARRAYS], dims[SO_MAXDIMS], base = 0;
    Py_ssize_t k, nd, j;
    PyArrayObject *out;
    NpyIter *it;
    int rc, needs_api;
    (void)self;

    if (!PyArg_ParseTuple(args, "O!O!O!O!:at_offsets", &PyTuple_Type, &arrays, &PyTuple_Type,
                          &sizes, &PyTuple_Type, &steps, &PyTuple_Type, &shape)) {
        return NULL;
    }
    k = PyTuple_GET_SIZE(arrays);
    nd = PyTuple_GET_SIZE(shape);
    if (k < 1 || k > SO_AT_MAX_ARRAYS || PyTuple_GET_SIZE(sizes) != k ||
            PyTuple_GET_SIZE(steps) != k || nd > SO_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "at_offsets: arrays, sizes and steps must be "
                        "tuples of one length (1 to 63), shape a tuple of at most 64 sizes");
        return NULL;
    }
    for (j = 0; j < nd; j++) {
        dims[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, j));
        if (dims[j] < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "at_offsets: negative size");
            return NULL;
        }
    }
    for (j = 0; j < k; j++) {
        PyObject *a = PyTuple_GET_ITEM(arrays, j);
        if (!PyArray_Check(a) || !PyArray_ISINTEGER((PyArrayObject *)a)) {
            PyErr_SetString(PyExc_TypeError, "at_offsets: arrays must hold integer ndarrays");
            return NULL;
        }
        size[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, j));
        step[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(steps, j));
        if (PyErr_Occurred()) return NULL;
        if (size[j] < 1) {
            PyErr_SetString(PyExc_ValueError, "at_offsets: every size must be >= 1");
            return NULL;
        }
        if (step[j] < 0) base -= (size[j] - 1) * step[j];
        ops[j] = (PyArrayObject *)a;
        dtypes[j] = PyArray_DescrFromType(NPY_INTP);
        flags[j] = NPY_ITER_READONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED;
    }
    out = so_output_cache_new_array(PyArray_DescrFromType(NPY_INTP), (int)nd, dims);
    if (out == NULL) {
        for (j = 0; j < k; j++) Py_DECREF(dtypes[j]);
        return NULL;
    }
    ops[k] = out;
    dtypes[k] = PyArray_DescrFromType(NPY_INTP);
    flags[k] = NPY_ITER_WRITEONLY;
    /* the index arrays broadcast against out, which has the broadcast shape */
    it = NpyIter_MultiNew((int)k + 1, ops,
                          NPY_ITER_EXTERNAL_LOOP | NPY_ITER_BUFFERED | NPY_ITER_GROWINNER |
                          NPY_ITER_ZEROSIZE_OK | NPY_ITER_DELAY_BUFALLOC,
                          NPY_CORDER, NPY_UNSAFE_CASTING, flags, dtypes);
    for (j = 0; j <= k; j++) Py_DECREF(dtypes[j]);
    if (it == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    if (NpyIter_GetIterSize(it) == 0) {
        NpyIter_Deallocate(it);
        return (PyObject *)out;
    }
    if (NpyIter_Reset(it, NULL) != NPY_SUCCEED) {
        NpyIter_Deallocate(it);
        Py_DECREF(out);
        return NULL;
    }
    needs_api = NpyIter_IterationNeedsAPI(it);
    if (needs_api) {
        rc = fill_offsets(it, (int)k, size, step, base);
    }
    else {
        Py_BEGIN_ALLOW_THREADS
        rc = fill_offsets(it, (int)k, size, step, base);
        Py_END_ALLOW_THREADS
    }
    if (NpyIter_Deallocate(it) != NPY_SUCCEED) rc = -1;
    if (rc < 0) {
        Py_DECREF(out);
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_IndexError, "at_offsets: an index is out of range");
        }
        return NULL;
    }
    return (PyObject *)out;
}

/*
 * py/route.c: _core.route, the routing of one chunk of updates to the blocks of
 * a chunked data (scatterops.dask): the arguments read and checked into an
 * so_route, the outputs made, the call layer's two passes run
 * (call/route_blocks.c: each value placed by mode=, its block and local
 * index, the rows grouped by block, without the GIL), and the outcome turned
 * into the result or the first value that raises.
 */
#include "py/py.h"

/* an intp array from o: 1-d, contiguous, of length n (n < 0: any), or NULL
 * raised naming what */
static PyArrayObject *
intp_vector(PyObject *o, npy_intp n, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_ContiguousFromAny(o, NPY_INTP, 1, 1);
    if (a != NULL && n >= 0 && PyArray_DIM(a, 0) != n) {
        PyErr_Format(PyExc_ValueError, "route: %s must have %zd values, not %zd", what,
                     (Py_ssize_t)n, (Py_ssize_t)PyArray_DIM(a, 0));
        Py_CLEAR(a);
    }
    return a;
}

/* starts (a tuple of k block-start vectors, 0 .. size, non-decreasing) into r;
 * the vectors are kept alive in keep[] */
static int
read_axes(so_route *r, PyObject *sizes, PyObject *starts, PyArrayObject **keep,
          npy_intp *ntargets)
{
    int j;
    *ntargets = 1;
    for (j = 0; j < r->k; j++) {
        npy_intp size = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, j));
        if (PyErr_Occurred()) return -1;
        keep[j] = intp_vector(PyTuple_GET_ITEM(starts, j), -1, "starts");
        if (keep[j] == NULL) return -1;
        switch (so_route_axis(r, j, size, (const npy_intp *)PyArray_DATA(keep[j]),
                              PyArray_DIM(keep[j], 0), ntargets)) {
        case 0:
            break;
        case SO_ROUTE_BAD_ENDS:
            PyErr_SetString(PyExc_ValueError, "route: starts[j] must run from 0 to sizes[j] "
                            "over at least one block");
            return -1;
        case SO_ROUTE_DECREASING:
            PyErr_SetString(PyExc_ValueError, "route: starts[j] must not decrease");
            return -1;
        default:
            PyErr_SetString(PyExc_ValueError, "route: more than 2**31 blocks");
            return -1;
        }
    }
    return 0;
}

/* elements = (pre_map, naxis, post_map, axis_len, block_post) into r */
static int
read_elements(so_route *r, PyObject *elements, PyArrayObject **keep)
{
    npy_intp pre, post;
    if (!PyTuple_Check(elements) || PyTuple_GET_SIZE(elements) != 5 || r->k != 1) {
        PyErr_SetString(PyExc_ValueError, "route: elements must be (pre_map, naxis, post_map, "
                        "axis_len, block_post), with one index component");
        return -1;
    }
    keep[0] = intp_vector(PyTuple_GET_ITEM(elements, 0), -1, "pre_map");
    keep[1] = keep[0] ? intp_vector(PyTuple_GET_ITEM(elements, 2), -1, "post_map") : NULL;
    keep[2] = keep[1] ? intp_vector(PyTuple_GET_ITEM(elements, 3), r->nblocks[0],
                                    "axis_len") : NULL;
    if (keep[2] == NULL) return -1;
    r->naxis = PyLong_AsSsize_t(PyTuple_GET_ITEM(elements, 1));
    r->block_post = PyLong_AsSsize_t(PyTuple_GET_ITEM(elements, 4));
    if (PyErr_Occurred()) return -1;
    pre = PyArray_DIM(keep[0], 0);
    post = PyArray_DIM(keep[1], 0);
    if (r->naxis < 0 || pre * r->naxis * post != r->n) {
        PyErr_SetString(PyExc_ValueError, "route: len(pre_map) * naxis * len(post_map) must be "
                        "the number of rows");
        return -1;
    }
    r->pre_map = (const npy_intp *)PyArray_DATA(keep[0]);
    r->post_map = (const npy_intp *)PyArray_DATA(keep[1]);
    r->axis_len = (const npy_intp *)PyArray_DATA(keep[2]);
    r->npost = post;
    r->elements = 1;
    return 0;
}

/* the payloads (3-d arrays pre x n x post) into pay[], their grouped copies
 * into outs[] (a tuple, made here, once kept is known) */
static int
make_payloads(PyObject *payloads, npy_intp kept, so_payload *pay, PyObject *outs)
{
    Py_ssize_t m;
    for (m = 0; m < PyTuple_GET_SIZE(payloads); m++) {
        PyArrayObject *in = (PyArrayObject *)PyTuple_GET_ITEM(payloads, m), *out;
        npy_intp dims[3];
        PyArray_Descr *descr = PyArray_DESCR(in);
        dims[0] = PyArray_DIM(in, 0);
        dims[1] = kept;
        dims[2] = PyArray_DIM(in, 2);
        Py_INCREF(descr);
        out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, 3, dims, NULL, NULL,
                                                    0, NULL);
        if (out == NULL) return -1;
        PyTuple_SET_ITEM(outs, m, (PyObject *)out);
        pay[m] = (so_payload){PyArray_BYTES(in), PyArray_BYTES(out), dims[0], dims[2],
                              PyArray_ITEMSIZE(in), PyArray_STRIDE(in, 0),
                              PyArray_STRIDE(in, 1), PyArray_STRIDE(in, 2)};
    }
    return 0;
}

/* _core.route(indices, sizes, starts, mode, local_dtype, payloads, elements):
 * see the file comment.  indices: an (n, k) integer ndarray of native byte
 * order; sizes, starts: each routed axis' size and its block starts; mode: an
 * SO_MODE_*; local_dtype: int32 or intp, or None to count only; payloads: a
 * tuple of (pre, n, post) ndarrays; elements: None, or scatter_elements'
 * (pre_map, naxis, post_map, axis_len, block_post).  Returns (None, counts,
 * local, grouped payloads), counts[t] the rows of block t; or ((row, j,
 * value), None, None, None) for the first value in C order that raises. */
PyObject *
so_py_route(PyObject *self, PyObject *args)
{
    PyObject *indices, *sizes, *starts, *local_dtype, *payloads, *elements, *outs = NULL;
    PyObject *result = NULL;
    PyArrayObject *idx, *keep[SO_MAXDIMS + 3] = {NULL}, *counts = NULL, *local = NULL;
    so_route r;
    so_payload *pay = NULL;
    so_py_host host;
    npy_intp ntargets, kept, bad_row = 0, ldims[2];
    int mode, narrow = 0, bad_j = 0, j, npay, placed;
    (void)self;

    if (!PyArg_ParseTuple(args, "O!O!O!iOO!O:route", &PyArray_Type, &indices, &PyTuple_Type,
                          &sizes, &PyTuple_Type, &starts, &mode, &local_dtype, &PyTuple_Type,
                          &payloads, &elements)) {
        return NULL;
    }
    idx = (PyArrayObject *)indices;
    memset(&r, 0, sizeof r);
    if (PyArray_NDIM(idx) != 2 || !PyArray_ISINTEGER(idx) || !PyArray_ISNOTSWAPPED(idx) ||
            PyArray_DIM(idx, 1) > SO_MAXDIMS || PyTuple_GET_SIZE(sizes) != PyArray_DIM(idx, 1) ||
            PyTuple_GET_SIZE(starts) != PyArray_DIM(idx, 1) ||
            mode < SO_MODE_RAISE || mode > SO_MODE_DROP) {
        PyErr_SetString(PyExc_ValueError, "route: indices must be an (n, k) integer ndarray of "
                        "native byte order, k <= 64, with k sizes and k starts; mode 0 to 3");
        return NULL;
    }
    if (local_dtype != Py_None) {
        PyArray_Descr *ld = NULL;
        if (!PyArray_DescrConverter(local_dtype, &ld)) return NULL;
        narrow = PyArray_EquivTypenums(ld->type_num, NPY_INT32);
        j = narrow || PyArray_EquivTypenums(ld->type_num, NPY_INTP);
        Py_DECREF(ld);
        if (!j) {
            PyErr_SetString(PyExc_ValueError, "route: local_dtype must be int32, intp or None");
            return NULL;
        }
    }
    r.idx = PyArray_BYTES(idx);
    r.n = PyArray_DIM(idx, 0);
    r.row_stride = PyArray_STRIDE(idx, 0);
    r.col_stride = PyArray_STRIDE(idx, 1);
    r.item = (int)PyArray_ITEMSIZE(idx);
    r.is_unsigned = PyArray_ISUNSIGNED(idx);
    r.k = (int)PyArray_DIM(idx, 1);
    r.mode = mode;
    npay = (int)PyTuple_GET_SIZE(payloads);
    for (j = 0; j < npay; j++) {
        PyArrayObject *y = (PyArrayObject *)PyTuple_GET_ITEM(payloads, j);
        if (!PyArray_Check(y) || PyArray_NDIM(y) != 3 || PyArray_DIM(y, 1) != r.n) {
            PyErr_SetString(PyExc_ValueError, "route: payloads must be (pre, n, post) ndarrays");
            return NULL;
        }
    }
    if (read_axes(&r, sizes, starts, keep, &ntargets) < 0) goto done;
    if (elements != Py_None && local_dtype != Py_None &&
            read_elements(&r, elements, keep + r.k) < 0) goto done;
    counts = (PyArrayObject *)PyArray_ZEROS(1, &ntargets, NPY_INTP, 0);
    if (counts == NULL) goto done;

    so_py_host_init(&host, 1);
    kept = so_route_count(&r, (npy_intp *)PyArray_DATA(counts), &bad_row, &bad_j, &host.h);
    if (kept == -2) goto done;
    if (kept == -1) {
        const npy_uint64 raw = so_route_value(&r, bad_row, bad_j);
        PyObject *value = r.is_unsigned ? PyLong_FromUnsignedLongLong(raw)
                                        : PyLong_FromLongLong((long long)raw);
        if (value != NULL) {
            result = Py_BuildValue("((niN)OOO)", (Py_ssize_t)bad_row, bad_j, value, Py_None,
                                   Py_None, Py_None);
        }
        goto done;
    }
    if (local_dtype == Py_None) {           /* count only */
        result = Py_BuildValue("(OOOO)", Py_None, counts, Py_None, Py_None);
        goto done;
    }

    ldims[0] = kept;
    ldims[1] = r.k;
    local = (PyArrayObject *)PyArray_EMPTY(r.elements ? 1 : 2, ldims,
                                           narrow ? NPY_INT32 : NPY_INTP, 0);
    outs = PyTuple_New(npay);
    pay = PyMem_Malloc((size_t)(npay ? npay : 1) * sizeof(so_payload));
    if (local == NULL || outs == NULL || pay == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    if (make_payloads(payloads, kept, pay, outs) < 0) goto done;
    placed = so_route_place(&r, (const npy_intp *)PyArray_DATA(counts), ntargets,
                            PyArray_BYTES(local), narrow, pay, npay, kept, &host.h);
    if (placed == -1) PyErr_NoMemory();
    /* the object references copied without the GIL become the outputs' own, or
     * are forgotten if the pass stopped part way */
    for (j = 0; j < npay; j++) {
        PyArrayObject *out = (PyArrayObject *)PyTuple_GET_ITEM(outs, j);
        if (!PyDataType_REFCHK(PyArray_DESCR(out))) continue;
        if (placed < 0) memset(PyArray_BYTES(out), 0, (size_t)PyArray_NBYTES(out));
        else PyArray_INCREF(out);
    }
    if (placed == 0) result = Py_BuildValue("(OOOO)", Py_None, counts, local, outs);
done:
    for (j = 0; j < SO_MAXDIMS + 3; j++) Py_XDECREF(keep[j]);
    Py_XDECREF(counts);
    Py_XDECREF(local);
    Py_XDECREF(outs);
    PyMem_Free(pay);
    return result;
}

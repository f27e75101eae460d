/*
 * py/route.c: _core.route, the routing of one chunk of updates to the blocks of
 * a chunked data (scatterops.dask): each index value checked, mode= applied as
 * the top-level call applies it, turned into a block and an index local to the
 * block, and the chunk's rows grouped by block.  The grouping is a stable
 * counting sort in two passes over the chunk -- count the rows of each block,
 * then write each row at its block's next place -- so that within a block the
 * rows keep the chunk's C order.  The index values are read in their own dtype
 * (no converted copy); the rows of the payloads (the updates, the global
 * positions) are copied byte for byte, whatever their dtype.  The passes run
 * without the GIL (the Dask worker's other threads run meanwhile).
 */
#include "py/py.h"

/* a function inlined into each of its callers, so that the arguments they give
 * as constants (the common call's) make a loop of its own */
#if defined(__GNUC__)
#define SO_ROUTE_INLINE static inline __attribute__((always_inline))
#else
#define SO_ROUTE_INLINE static inline
#endif

/* What the passes read: n rows of k index components, and how each component
 * maps to a block of its axis.  scatter_elements (elements != 0) has k == 1
 * and writes, instead of the local component, the flat offset in the block. */
typedef struct {
    const char *idx;
    npy_intp n, row_stride, col_stride;
    int item, is_unsigned;          /* the index dtype: item size, signedness */
    int k, mode;
    npy_intp size[SO_MAXDIMS], nblocks[SO_MAXDIMS];
    npy_uint64 recip[SO_MAXDIMS];   /* equal chunks: 2^64 / width, rounded up; 0: search */
    const npy_intp *starts[SO_MAXDIMS];     /* nblocks + 1 block starts */
    int elements;
    const npy_intp *pre_map, *post_map, *axis_len;
    npy_intp naxis, npost, block_post;
} so_route;

/* A payload: pre x n x post items of item bytes, any strides, copied into a
 * C-ordered pre x nkept x post array with the rows grouped as the indices. */
typedef struct {
    const char *in;
    char *out;
    npy_intp pre, post, item, spre, srow, spost;
} so_payload;

/* the raw 64 bits of one index value (sign-extended for a signed dtype) */
#define SO_LOAD_INDEX(U, S)                                                        \
    {                                                                              \
        U v;                                                                       \
        memcpy(&v, p, sizeof v);                                                   \
        return is_unsigned ? (npy_uint64)v : (npy_uint64)(npy_int64)(S)v;         \
    }
static inline npy_uint64
load_index(const char *p, int item, int is_unsigned)
{
    switch (item) {
    case 1: SO_LOAD_INDEX(npy_uint8, npy_int8)
    case 2: SO_LOAD_INDEX(npy_uint16, npy_int16)
    case 4: SO_LOAD_INDEX(npy_uint32, npy_int32)
    default: SO_LOAD_INDEX(npy_uint64, npy_int64)
    }
}
#undef SO_LOAD_INDEX

/* the block of axis j that holds pos: the last b with starts[b] <= pos */
static inline npy_intp
block_of(const so_route *r, int j, npy_intp pos)
{
    const npy_intp *st = r->starts[j];
    npy_intp lo = 0, hi = r->nblocks[j] - 1;
#ifdef __SIZEOF_INT128__
    if (r->recip[j]) {              /* pos / width, exact while pos * width < 2^64 */
        npy_intp b = (npy_intp)(((unsigned __int128)(npy_uint64)pos * r->recip[j]) >> 64);
        return b < hi ? b : hi;
    }
#endif
    while (lo < hi) {
        npy_intp mid = lo + (hi - lo + 1) / 2;
        if (st[mid] <= pos) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Row i: 0 with *t its block (flat over the k routed axes) and local[] its
 * local components; 1 if its update is dropped; -1 if a value raises, *bad the
 * component.  k and item are r's, as constants where the caller knows them. */
SO_ROUTE_INLINE int
locate(const so_route *r, npy_intp i, npy_intp *t, npy_intp *local, int *bad, int k, int item)
{
    const char *row = r->idx + i * r->row_stride;
    npy_intp target = 0;
    int j, dropped = 0;
    for (j = 0; j < k; j++) {
        npy_intp pos, b;
        int st = so_mode_position(load_index(row + j * r->col_stride, item, r->is_unsigned),
                          r->is_unsigned, r->size[j], r->mode, &pos);
        if (st < 0) {
            *bad = j;
            return -1;
        }
        if (st > 0) {
            dropped = 1;
            continue;
        }
        b = block_of(r, j, pos);
        local[j] = pos - r->starts[j][b];
        target = target * r->nblocks[j] + b;
    }
    *t = target;
    return dropped;
}

/* Pass 1: count[t] = the rows of block t.  Returns the rows kept, -1 at the
 * first value that raises (*bad_row, *bad_j), -2 if the poll stopped it. */
SO_ROUTE_INLINE npy_intp
count_rows(const so_route *r, npy_intp *count, npy_intp *bad_row, int *bad_j, so_poll *poll,
           int k, int item)
{
    npy_intp local[SO_MAXDIMS], kept = 0, i0, i, t;
    for (i0 = 0; i0 < r->n; i0 += SO_PIECE) {
        const npy_intp end = i0 + SO_PIECE < r->n ? i0 + SO_PIECE : r->n;
        if (so_stopped(poll)) return -2;
        for (i = i0; i < end; i++) {
            int st = locate(r, i, &t, local, bad_j, k, item);
            if (st < 0) {
                *bad_row = i;
                return -1;
            }
            if (st == 0) {
                count[t]++;
                kept++;
            }
        }
    }
    return kept;
}

static inline void
copy_item(char *dst, const char *src, npy_intp item)
{
    switch (item) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, (size_t)item);
    }
}

/* Pass 2: each kept row i at next[t]++ of its block t: its local index (k
 * components, or the flat offset in the block) into local_out (int32 if
 * narrow, else intp), its rows of each payload into that payload's out.
 * Returns 0, or -2 if the poll stopped it. */
SO_ROUTE_INLINE int
place_rows(const so_route *r, npy_intp *next, char *local_out, int narrow,
           const so_payload *pay, int npay, npy_intp kept, so_poll *poll, int k, int item,
           int elements)
{
    npy_intp local[SO_MAXDIMS], i0, i, t, p = 0, a = 0, q = 0;
    const npy_intp lrow = elements ? 1 : k;
    int bad, m, j;
    for (i0 = 0; i0 < r->n; i0 += SO_PIECE) {
        const npy_intp end = i0 + SO_PIECE < r->n ? i0 + SO_PIECE : r->n;
        if (so_stopped(poll)) return -2;
        for (i = i0; i < end; i++) {
            npy_intp d, e, pp, qq;
            int st = locate(r, i, &t, local, &bad, k, item);
            npy_intp ep = p, eq = q;        /* scatter_elements: (p, a, q) is row i */
            if (elements && ++q == r->npost) {
                q = 0;
                if (++a == r->naxis) {
                    a = 0;
                    p++;
                }
            }
            if (st != 0) continue;          /* dropped (none raise: pass 1 saw them) */
            d = next[t]++;
            if (elements) {
                local[0] = (r->pre_map[ep] * r->axis_len[t] + local[0]) * r->block_post +
                           r->post_map[eq];
            }
            for (j = 0; j < lrow; j++) {    /* (local_out is fresh, aligned) */
                if (narrow) ((npy_int32 *)local_out)[d * lrow + j] = (npy_int32)local[j];
                else ((npy_intp *)local_out)[d * lrow + j] = local[j];
            }
            for (m = 0; m < npay; m++) {
                const so_payload *y = &pay[m];
                if (y->pre == 1 && y->post == 1) {
                    copy_item(y->out + d * y->item, y->in + i * y->srow, y->item);
                    continue;
                }
                for (pp = 0; pp < y->pre; pp++) {
                    for (qq = 0; qq < y->post; qq++) {
                        e = (pp * kept + d) * y->post + qq;
                        copy_item(y->out + e * y->item,
                                  y->in + pp * y->spre + i * y->srow + qq * y->spost, y->item);
                    }
                }
            }
        }
    }
    return 0;
}

/* The passes for any call, and for the common one (one 8-byte index component,
 * one payload of single items, int32 local indices) a loop of their own. */
static npy_intp
count_any(const so_route *r, npy_intp *count, npy_intp *bad_row, int *bad_j, so_poll *poll)
{
    if (r->k == 1 && r->item == 8) return count_rows(r, count, bad_row, bad_j, poll, 1, 8);
    return count_rows(r, count, bad_row, bad_j, poll, r->k, r->item);
}

static int
place_any(const so_route *r, npy_intp *next, char *local_out, int narrow,
          const so_payload *pay, int npay, npy_intp kept, so_poll *poll)
{
    if (r->k == 1 && r->item == 8 && !r->elements && narrow && npay == 1 &&
            pay[0].pre == 1 && pay[0].post == 1) {
        return place_rows(r, next, local_out, 1, pay, 1, kept, poll, 1, 8, 0);
    }
    return place_rows(r, next, local_out, narrow, pay, npay, kept, poll, r->k, r->item,
                      r->elements);
}

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
        npy_intp b, nb, w;
        const npy_intp *st;
        r->size[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, j));
        if (PyErr_Occurred()) return -1;
        keep[j] = intp_vector(PyTuple_GET_ITEM(starts, j), -1, "starts");
        if (keep[j] == NULL) return -1;
        st = (const npy_intp *)PyArray_DATA(keep[j]);
        nb = PyArray_DIM(keep[j], 0) - 1;
        if (nb < 1 || st[0] != 0 || st[nb] != r->size[j]) {
            PyErr_SetString(PyExc_ValueError, "route: starts[j] must run from 0 to sizes[j] "
                            "over at least one block");
            return -1;
        }
        w = st[1];
        for (b = 0; b < nb; b++) {
            if (st[b + 1] < st[b]) {
                PyErr_SetString(PyExc_ValueError, "route: starts[j] must not decrease");
                return -1;
            }
            if ((b < nb - 1 && st[b + 1] - st[b] != w) || st[b + 1] - st[b] > w) w = 0;
        }
        r->starts[j] = st;
        r->nblocks[j] = nb;
        r->recip[j] = w > 1 && (npy_uint64)r->size[j] <= NPY_MAX_UINT64 / (npy_uint64)w
                          ? NPY_MAX_UINT64 / (npy_uint64)w + 1 : 0;
        if (*ntargets > NPY_MAX_INT32 / nb) {
            PyErr_SetString(PyExc_ValueError, "route: more than 2**31 blocks");
            return -1;
        }
        *ntargets *= nb;
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
    so_unlocked u;
    npy_intp ntargets, kept, bad_row = 0, t, *next = NULL, ldims[2];
    int mode, narrow = 0, bad_j = 0, j, npay, stopped;
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

    (void)so_unlock(&u);
    kept = count_any(&r, (npy_intp *)PyArray_DATA(counts), &bad_row, &bad_j, &u.poll);
    if (so_relock(&u) < 0) goto done;
    if (kept == -1) {
        const npy_uint64 raw = load_index(r.idx + bad_row * r.row_stride + bad_j * r.col_stride,
                                          r.item, r.is_unsigned);
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
    next = PyMem_Malloc((size_t)(ntargets ? ntargets : 1) * sizeof(npy_intp));
    pay = PyMem_Malloc((size_t)(npay ? npay : 1) * sizeof(so_payload));
    if (local == NULL || outs == NULL || next == NULL || pay == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    if (make_payloads(payloads, kept, pay, outs) < 0) goto done;
    /* each block's rows start after those of the blocks before it */
    for (t = 0, ldims[0] = 0; t < ntargets; t++) {
        next[t] = ldims[0];
        ldims[0] += ((npy_intp *)PyArray_DATA(counts))[t];
    }
    (void)so_unlock(&u);
    stopped = place_any(&r, next, PyArray_BYTES(local), narrow, pay, npay, kept, &u.poll);
    stopped = so_relock(&u) < 0 || stopped;
    /* the object references copied without the GIL become the outputs' own, or
     * are forgotten if the pass stopped part way */
    for (j = 0; j < npay; j++) {
        PyArrayObject *out = (PyArrayObject *)PyTuple_GET_ITEM(outs, j);
        if (!PyDataType_REFCHK(PyArray_DESCR(out))) continue;
        if (stopped) memset(PyArray_BYTES(out), 0, (size_t)PyArray_NBYTES(out));
        else PyArray_INCREF(out);
    }
    if (!stopped) result = Py_BuildValue("(OOOO)", Py_None, counts, local, outs);
done:
    for (j = 0; j < SO_MAXDIMS + 3; j++) Py_XDECREF(keep[j]);
    Py_XDECREF(counts);
    Py_XDECREF(local);
    Py_XDECREF(outs);
    PyMem_Free(next);
    PyMem_Free(pay);
    return result;
}

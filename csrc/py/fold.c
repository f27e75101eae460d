/*
 * py/fold.c: an expanded index written out in full, recognised.
 *
 * Graph message passing calls scatter_elements with the row index of each
 * message repeated across the message's features: indices of shape (E, F)
 * whose every row holds one value.  Given as a stride-0 view
 * (np.broadcast_to) the walk sees one destination row per message and applies
 * it as a block; given materialised, the walk would visit E*F scattered
 * elements instead.  Here one pass over the index (it reads no more than the
 * bounds check) finds out whether every row along the last dim is constant;
 * if so the call goes on with a stride-0 view of a compact copy of the first
 * column (made in the same pass), so the materialised index runs the block
 * walk and its bounds check reads each row's value once.  The values are the
 * same, so are the bits (docs/design.md, "Folding an expanded index").
 */
#include "py/py.h"
#include "base/nditer.h"

unsigned long so_folded_calls;

/* whether the n items of type T at r all equal the first (n >= 1), which is
 * stored at keep */
#define ROW_EQUAL(T)                                                                  \
static int                                                                            \
row_equal_##T(const char *r, npy_intp n, char *keep)                                  \
{                                                                                     \
    const T *v = (const T *)r;                                                        \
    const T first = v[0];                                                             \
    T diff = 0;                                                                       \
    npy_intp j;                                                                       \
    for (j = 1; j < n; j++) diff |= (T)(v[j] ^ first);                                \
    memcpy(keep, &first, sizeof(T));                                                  \
    return diff == 0;                                                                 \
}
ROW_EQUAL(npy_uint8)
ROW_EQUAL(npy_uint16)
ROW_EQUAL(npy_uint32)
ROW_EQUAL(npy_uint64)

typedef int (*row_equal_fn)(const char *r, npy_intp n, char *keep);

/* A share of a 2-d index's rows for one thread: rows from base, stride apart,
 * of n values; equal is whether each was constant (stops at the first not) */
typedef struct {
    const char *base;
    char *keep;
    npy_intp rows, stride, n, isz;
    row_equal_fn eq;
    int equal;
} so_fold_task;

static void *
fold_task_main(void *arg)
{
    so_fold_task *t = (so_fold_task *)arg;
    npy_intp i;
    t->equal = 1;
    for (i = 0; i < t->rows && t->equal; i++) {
        t->equal = t->eq(t->base + i * t->stride, t->n, t->keep + i * t->isz);
    }
    return NULL;
}

/* rows_constant of a 2-d idx on up to nthreads threads (a share each of at
 * least SO_FOLD_PER_THREAD values, call/cost.h): a large index is a
 * memory-bound pass */
static int
rows_constant_2d(PyArrayObject *idx, row_equal_fn eq, char *keep, int nthreads)
{
    so_fold_task one, *tasks;
    const npy_intp rows = PyArray_DIM(idx, 0), isz = PyArray_ITEMSIZE(idx);
    int t, n = nthreads, equal = 1;
    if ((npy_intp)n > PyArray_SIZE(idx) / SO_FOLD_PER_THREAD) {
        n = (int)(PyArray_SIZE(idx) / SO_FOLD_PER_THREAD);
    }
    if (n > rows) n = (int)rows;
    tasks = so_task_array(&one, sizeof *tasks, &n);
    for (t = 0; t < n; t++) {
        const npy_intp lo = rows * t / n, hi = rows * (t + 1) / n;
        tasks[t].base = PyArray_BYTES(idx) + lo * PyArray_STRIDE(idx, 0);
        tasks[t].keep = keep + lo * isz;
        tasks[t].rows = hi - lo;
        tasks[t].stride = PyArray_STRIDE(idx, 0);
        tasks[t].n = PyArray_DIM(idx, 1);
        tasks[t].isz = isz;
        tasks[t].eq = eq;
    }
    so_run_tasks_kind(fold_task_main, tasks, sizeof *tasks, n, NULL,
                      SO_JOB_KIND_FOLD + so_log2(PyArray_SIZE(idx)));
    for (t = 0; t < n; t++) equal &= tasks[t].equal;
    so_task_array_free(tasks, &one);
    return equal;
}

/* every row (last dim, contiguous) of idx constant; each row's value stored
 * in C order at keep */
static int
rows_constant(PyArrayObject *idx, row_equal_fn eq, char *keep)
{
    const int nd = PyArray_NDIM(idx);
    const npy_intp n = PyArray_DIM(idx, nd - 1);
    const char *base = PyArray_BYTES(idx);
    npy_intp shape[SO_MAXDIMS], stride[SO_MAXDIMS];
    npy_intp *strides[1] = {stride};
    so_nditer it;
    int d, outer = 0;
    for (d = 0; d < nd - 1; d++) {
        outer = so_nd_push(outer, shape, strides, 1, PyArray_DIM(idx, d), &PyArray_STRIDES(idx)[d],
                           0);
    }
    so_nd_init(&it, outer, shape, 1, (const npy_intp *const[]){stride});
    do {
        if (!eq(base + it.off[0], n, keep)) return 0;
        keep += PyArray_ITEMSIZE(idx);
    } while (so_nd_next(&it));
    return 1;
}

int
so_fold_equal_rows(so_args *a, int nthreads)
{
    PyArrayObject *idx = a->idx, *view, *kept;
    const int nd = PyArray_NDIM(idx);
    const npy_intp isz = PyArray_ITEMSIZE(idx);
    npy_intp strides[SO_MAXDIMS], dims[SO_MAXDIMS];
    npy_uint64 first;
    row_equal_fn eq;
    int d, equal;

    if (a->c.kind != SO_ELEMENTS || nd < 2 || a->c.axis == nd - 1 || a->c.nidx < SO_FOLD_MIN ||
            PyArray_DIM(idx, nd - 1) < 2 || PyArray_STRIDE(idx, nd - 1) != isz) {
        return 0;
    }
    for (d = 0; d < nd - 1; d++) {
        if (PyArray_DIM(idx, d) == 0) return 0;
    }
    switch (isz) {
        case 1: eq = row_equal_npy_uint8; break;
        case 2: eq = row_equal_npy_uint16; break;
        case 4: eq = row_equal_npy_uint32; break;
        case 8: eq = row_equal_npy_uint64; break;
        default: return 0;
    }
    /* most indices differ along the row at once: only then the whole pass */
    if (!eq(PyArray_BYTES(idx), PyArray_DIM(idx, nd - 1), (char *)&first)) return 0;
    /* the rows' values, kept as the pass reads them: the check and the walk
     * then read them contiguous, not one a row of the full index (one value
     * where a cache line of the full index would be read) */
    memcpy(dims, PyArray_DIMS(idx), sizeof(npy_intp) * (size_t)nd);
    dims[nd - 1] = 1;
    Py_INCREF(PyArray_DESCR(idx));
    kept = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(idx), nd, dims,
                                                 NULL, NULL, 0, NULL);
    if (kept == NULL) return -1;
    if (a->c.nidx >= SO_GIL_RELEASE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        equal = nd == 2 && nthreads > 1
                ? rows_constant_2d(idx, eq, PyArray_BYTES(kept), nthreads)
                : rows_constant(idx, eq, PyArray_BYTES(kept));
        Py_END_ALLOW_THREADS
    }
    else {
        equal = rows_constant(idx, eq, PyArray_BYTES(kept));
    }
    if (!equal) {
        Py_DECREF(kept);
        return 0;
    }
    memcpy(strides, PyArray_STRIDES(kept), sizeof(npy_intp) * (size_t)nd);
    strides[nd - 1] = 0;
    Py_INCREF(PyArray_DESCR(kept));
    view = so_view_of(kept, PyArray_DESCR(kept), PyArray_DIMS(idx), strides);
    Py_DECREF(kept);
    if (view == NULL) return -1;
    a->idx = view;
    Py_DECREF(idx);
    so_folded_calls++;
    return 1;
}

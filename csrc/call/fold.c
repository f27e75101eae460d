/*
 * call/fold.c: an expanded index written out in full, recognised.
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
 * same, so are the bits (docs/design.md, "Folding an expanded index").  The
 * binding makes the arrays (so_host's new_array and index_view); below
 * SO_FOLD_MIN index values the pass is not tried (call/cost.h).
 */
#include "call/call.h"
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
rows_constant_2d(const so_array *idx, row_equal_fn eq, char *keep, int nthreads)
{
    so_fold_task one, *tasks;
    const npy_intp rows = idx->dims[0], isz = idx->itemsize, size = so_array_size(idx);
    int t, n = nthreads, equal = 1;
    if ((npy_intp)n > size / SO_FOLD_PER_THREAD) n = (int)(size / SO_FOLD_PER_THREAD);
    if (n > rows) n = (int)rows;
    tasks = so_task_array(&one, sizeof *tasks, &n);
    for (t = 0; t < n; t++) {
        const npy_intp lo = rows * t / n, hi = rows * (t + 1) / n;
        tasks[t].base = idx->bytes + lo * idx->strides[0];
        tasks[t].keep = keep + lo * isz;
        tasks[t].rows = hi - lo;
        tasks[t].stride = idx->strides[0];
        tasks[t].n = idx->dims[1];
        tasks[t].isz = isz;
        tasks[t].eq = eq;
    }
    so_run_tasks_kind(fold_task_main, tasks, sizeof *tasks, n, NULL,
                      SO_JOB_KIND_FOLD + so_log2(size));
    for (t = 0; t < n; t++) equal &= tasks[t].equal;
    so_task_array_free(tasks, &one);
    return equal;
}

/* every row (last dim, contiguous) of idx constant; each row's value stored
 * in C order at keep */
static int
rows_constant(const so_array *idx, row_equal_fn eq, char *keep)
{
    const int nd = idx->ndim;
    const npy_intp n = idx->dims[nd - 1];
    const char *base = idx->bytes;
    npy_intp shape[SO_MAXDIMS], stride[SO_MAXDIMS];
    npy_intp *strides[1] = {stride};
    so_nditer it;
    int d, outer = 0;
    for (d = 0; d < nd - 1; d++) {
        outer = so_nd_push(outer, shape, strides, 1, idx->dims[d], &idx->strides[d], 0);
    }
    so_nd_init(&it, outer, shape, 1, (const npy_intp *const[]){stride});
    do {
        if (!eq(base + it.off[0], n, keep)) return 0;
        keep += idx->itemsize;
    } while (so_nd_next(&it));
    return 1;
}

int
so_call_fold(so_call *c, so_host *h)
{
    const so_array *idx = &c->idx;
    const int nd = idx->ndim;
    const npy_intp isz = idx->itemsize;
    npy_intp strides[SO_MAXDIMS], dims[SO_MAXDIMS];
    npy_uint64 first;
    so_array like, kept;
    row_equal_fn eq;
    int d, equal;

    if (c->kind != SO_ELEMENTS || nd < 2 || c->axis == nd - 1 || c->nidx < SO_FOLD_MIN ||
            idx->dims[nd - 1] < 2 || idx->strides[nd - 1] != isz) {
        return 0;
    }
    for (d = 0; d < nd - 1; d++) {
        if (idx->dims[d] == 0) return 0;
    }
    switch (isz) {
        case 1: eq = row_equal_npy_uint8; break;
        case 2: eq = row_equal_npy_uint16; break;
        case 4: eq = row_equal_npy_uint32; break;
        case 8: eq = row_equal_npy_uint64; break;
        default: return 0;
    }
    /* most indices differ along the row at once: only then the whole pass */
    if (!eq(idx->bytes, idx->dims[nd - 1], (char *)&first)) return 0;
    /* the rows' values, kept as the pass reads them: the check and the walk
     * then read them contiguous, not one a row of the full index (one value
     * where a cache line of the full index would be read) */
    memcpy(dims, idx->dims, sizeof(npy_intp) * (size_t)nd);
    dims[nd - 1] = 1;
    like = *idx;
    like.dims = dims;
    if (h->new_array(h, &like, 0, &kept) < 0) return -1;
    if (c->nidx >= SO_GIL_RELEASE_MIN) {
        (void)h->unlock(h);         /* not stoppable: one pass at memory bandwidth */
        equal = nd == 2 && c->nthreads > 1 ? rows_constant_2d(idx, eq, kept.bytes, c->nthreads)
                                           : rows_constant(idx, eq, kept.bytes);
        (void)h->relock(h);
    }
    else {
        equal = rows_constant(idx, eq, kept.bytes);
    }
    if (!equal) {
        h->release(h, &kept);
        return 0;
    }
    memcpy(strides, kept.strides, sizeof(npy_intp) * (size_t)nd);
    strides[nd - 1] = 0;
    if (h->index_view(h, &kept, strides, &c->idx) < 0) return -1;
    so_folded_calls++;
    return 1;
}

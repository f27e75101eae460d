/*
 * plan/validate.c: the one pass that checks every index value before anything is
 * written.  It finds the first value (in C order of indices) outside
 * [-size, size); the Python layer turns that position into the IndexError.
 * After this pass the kernels trust every index.  A long pass asks its poll
 * every SO_PIECE values (base.h) and, stopped, returns SO_CHECK_STOPPED.
 */
#include "plan/plan.h"
#include "base/nditer.h"

#include <stdlib.h>

/* v outside [-b, b) (base.h's rule) */
static inline int
out_of_range(npy_intp v, npy_intp b)
{
    return !so_index_inside(v, b);
}

/* A contiguous run: an aligned one by the vectorised check of check_run.c. */
static npy_intp
first_bad_contiguous(const npy_intp *v, npy_intp n, npy_intp b, int aligned, so_poll *poll)
{
    npy_intp i;
    if (!aligned) {
        for (i = 0; i < n; i++) {
            if (out_of_range(so_load_intp((const char *)(v + i)), b)) return i;
            if ((i & (SO_PIECE - 1)) == SO_PIECE - 1 && so_stopped(poll)) return SO_CHECK_STOPPED;
        }
        return -1;
    }
    return so_first_bad_run((const char *)v, SO_IX_i64, n, b, poll);
}

/* A long aligned run is checked by several threads, each its own part; the
 * first bad position is the one in the earliest part that has one. */
#define SO_CHECK_PER_THREAD ((npy_intp)1 << 18)

typedef struct {
    const npy_intp *v;
    npy_intp n, b, found;
    so_poll *poll;
} so_check_task;

static void *
check_main(void *arg)
{
    so_check_task *t = (so_check_task *)arg;
    t->found = first_bad_contiguous(t->v, t->n, t->b, 1, t->poll);
    return NULL;
}

static npy_intp
first_bad_threaded(const npy_intp *v, npy_intp n, npy_intp b, int aligned, int nt, so_poll *poll)
{
    so_check_task *tasks;
    int t;
    if (nt > n / SO_CHECK_PER_THREAD) nt = (int)(n / SO_CHECK_PER_THREAD);
    tasks = nt > 1 && aligned ? malloc(sizeof *tasks * (size_t)nt) : NULL;
    if (tasks == NULL) {
        return first_bad_contiguous(v, n, b, aligned, poll);
    }
    for (t = 0; t < nt; t++) {
        npy_intp lo = n * t / nt, hi = n * (t + 1) / nt;
        tasks[t].v = v + lo;
        tasks[t].n = hi - lo;
        tasks[t].b = b;
        tasks[t].found = -1;
        tasks[t].poll = poll;
    }
    so_run_tasks_kind(check_main, tasks, sizeof *tasks, nt, poll, SO_JOB_KIND_CHECK + so_log2(n));
    if (so_stopped(poll)) {
        free(tasks);
        return SO_CHECK_STOPPED;
    }
    for (t = 0; t < nt; t++) {
        if (tasks[t].found >= 0) {
            npy_intp at = n * t / nt + tasks[t].found;
            free(tasks);
            return at;
        }
    }
    free(tasks);
    return -1;
}

/*
 * idx: native npy_intp, any shape and strides.  With one bound, every value is
 * checked against it; with nbounds > 1 the last dim of idx has nbounds entries
 * and entry j is checked against bounds[j] (scatter_nd's index tuples).
 */
static npy_intp find_bad(const so_array *idx, const npy_intp *eff, const npy_intp *bounds,
                         int nbounds, int nthreads, so_poll *poll);

npy_intp
so_find_bad_index(const so_array *idx, const npy_intp *bounds, int nbounds, int nthreads)
{
    return so_find_bad_index_polled(idx, bounds, nbounds, nthreads, NULL);
}

/* A dim with stride 0 (an expanded index) repeats the same values: check them
 * once, then map the position found back to the full index space. */
npy_intp
so_find_bad_index_polled(const so_array *idx, const npy_intp *bounds, int nbounds, int nthreads,
                         so_poll *poll)
{
    npy_intp eff[SO_MAXDIMS], pos, full = 0;
    int d, nd = idx->ndim, itype = so_index_type(idx->dtype);
    if (itype >= 0 && itype != SO_IX_i64 && nd == 1 && nbounds == 1 &&
            (idx->dims[0] < 2 || idx->strides[0] == so_index_size(itype))) {
        /* a contiguous run of another integer dtype (kept by call/general_way.c for the
         * owned split, which reads it as it is), checked as the direct form does */
        return so_first_bad_run(idx->bytes, itype, idx->dims[0], bounds[0], poll);
    }
    if (nd == 1 && nbounds == 1 && idx->strides[0] == (npy_intp)sizeof(npy_intp) &&
            idx->dims[0] < SO_CHECK_PER_THREAD) {
        /* a short contiguous run, the common small call: straight to the loop */
        const char *p = idx->bytes;
        return first_bad_contiguous((const npy_intp *)(const void *)p, idx->dims[0],
                                    bounds[0], ((npy_uintp)p % sizeof(npy_intp)) == 0, NULL);
    }
    for (d = 0; d < nd; d++) {
        int keep_apart = nbounds > 1 && d == nd - 1;
        eff[d] = (idx->strides[d] == 0 && !keep_apart && idx->dims[d] > 0)
                 ? 1 : idx->dims[d];
    }
    pos = find_bad(idx, eff, bounds, nbounds, nthreads, poll);
    if (pos <= 0) {
        return pos;
    }
    {
        npy_intp coord[SO_MAXDIMS], mult = 1;
        for (d = nd - 1; d >= 0; d--) {
            coord[d] = pos % eff[d];
            pos /= eff[d];
        }
        for (d = nd - 1; d >= 0; d--) {
            full += coord[d] * mult;
            mult *= idx->dims[d];
        }
    }
    return full;
}

/* The first bad position in C order of the shape eff (idx's shape with
 * expanded dims cut to 1). */
static npy_intp
find_bad(const so_array *idx, const npy_intp *eff, const npy_intp *bounds, int nbounds,
         int nthreads, so_poll *poll)
{
    npy_intp shape[SO_MAXDIMS], st[SO_MAXDIMS];
    npy_intp *const strides[1] = {st};
    npy_intp n, s, pos = 0, i, since = 0;
    const char *p0 = idx->bytes, *p;
    int d, nd = 0, last;
    so_nditer it;

    /* Coalesce dims that step as one (C order is kept, so flat positions are
     * unchanged); with per-component bounds the last dim stays apart. */
    for (d = 0; d < idx->ndim; d++) {
        npy_intp s_d = idx->strides[d];
        int keep_apart = nbounds > 1 && d == idx->ndim - 1;
        nd = so_nd_push(nd, shape, strides, 1, eff[d], &s_d, keep_apart ? SO_ND_KEEP : 0);
    }
    last = nd - 1;
    if (so_array_size(idx) == 0) {
        return -1;
    }
    if (nd == 0) {
        return out_of_range(so_load_intp(p0), bounds[0]) ? 0 : -1;
    }
    n = shape[last];
    s = st[last];
    so_nd_init(&it, last, shape, 1, (const npy_intp *const *)strides);
    do {
        p = p0 + it.off[0];
        if (nbounds == 1 && s == (npy_intp)sizeof(npy_intp)) {
            npy_intp i0 = first_bad_threaded((const npy_intp *)(const void *)p, n, bounds[0],
                                             ((npy_uintp)p % sizeof(npy_intp)) == 0, nthreads,
                                             poll);
            if (i0 == SO_CHECK_STOPPED) return i0;
            if (i0 >= 0) {
                return pos + i0;
            }
        }
        else if (nbounds == 1) {
            const npy_intp b = bounds[0];
            for (i = 0; i < n; i++) {
                if (out_of_range(so_load_intp(p + i * s), b)) {
                    return pos + i;
                }
                if ((i & (SO_PIECE - 1)) == SO_PIECE - 1 && so_stopped(poll)) {
                    return SO_CHECK_STOPPED;
                }
            }
        }
        else {
            for (i = 0; i < n; i++) {
                if (out_of_range(so_load_intp(p + i * s), bounds[i])) {
                    return pos + i;
                }
            }
        }
        pos += n;
        since += n;
        if (since >= SO_PIECE) {
            since = 0;
            if (so_stopped(poll)) return SO_CHECK_STOPPED;
        }
    } while (so_nd_next(&it));
    return -1;
}

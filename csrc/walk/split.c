/*
 * walk/split.c: a walk split over threads by output ownership.
 *
 * A call is split along a group dim whose coordinate is part of the destination
 * (scatter_update's leading dims, scatter_elements' non-axis dims) or along a
 * block dim, or else by the values of the first index component (owned.c).
 * Every output element then belongs to one thread, which applies its updates
 * in the same order as one thread would: the result is bit-identical for every
 * thread count.  Calls with no such split and small calls run on the calling
 * thread.
 */
#include "walk/block.h"

#include <stdlib.h>

#define SO_MIN_WORK_PER_THREAD ((npy_intp)1 << 15)

typedef struct {
    so_walk walk;
    const so_kernel *kn;
} so_task;

/* A thread's walk; an owner of a mean then divides its own blocks (the hook). */
static void *
task_main(void *arg)
{
    so_task *t = (so_task *)arg;
    so_walk_run(&t->walk, t->kn);
    return NULL;
}

/* The dim to split: 0..gnd-1 a group dim, gnd+b a block dim, -1 none.  A
 * group dim that addresses out directly is best: each thread reads its own
 * updates and writes its own part of out.  A block dim is split only when each
 * thread gets long runs of it.  Walks with neither (element-wise scatters, an
 * expanded-row index) split the index values instead (SO_SPLIT_OWNED, below; owned.c):
 * each thread reads every index but only its own updates and destinations.
 * Measured on this project's 2-core Intel machine, C loop, two threads against
 * one: a random scatter-add of 1e7 float32 into 1e7, 75 -> 40 ms; 1e6 rows of
 * 64 float32 added into 1e5 rows, 34 -> 20 ms.  (An earlier AMD machine gave
 * no gain for a branchy version that tested ownership update by update.) */
#define SO_MIN_BLOCK_RUN 256
/* split_dim found none: split the values of the first index component, when
 * the part of out they address is too large for the cache, or when the
 * compaction is vectorised (into an out that stays in cache, 1e6 updates into
 * 1e5 float16 or int64 elements, every thread reading every index with the
 * scalar compaction made two threads slower than one: 2.0 -> 2.2-2.4 ms; on the
 * AMD EPYC with AVX2, against a walk on one thread beside the index check:
 * float16 add 3.3-3.5 -> 2.5-3.0 ms, int64 max 3.5-3.6 -> 2.6-3.5 ms) */
#define SO_SPLIT_OWNED (-2)
#define SO_MIN_OWNED_BYTES ((npy_intp)4 << 20)

static int
split_dim(const so_plan *p, int nthreads)
{
    int d;
    for (d = 0; d < p->gnd; d++) {
        if (p->gs_out[d] != 0 && p->gshape[d] >= nthreads) {
            return d;
        }
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] != 0 && p->bshape[d] >= nthreads * SO_MIN_BLOCK_RUN) {
            return p->gnd + d;
        }
    }
    return -1;
}

/* The threads a call may use, and the dim to split (-1: none). */
static int
choose_split(const so_plan *p, const so_kernel *kn, int *nthreads_io)
{
    npy_intp work = 1;
    int d, dim, nthreads = *nthreads_io;

    for (d = 0; d < p->gnd; d++) work *= p->gshape[d];
    for (d = 0; d < p->bnd; d++) work *= p->bshape[d];
    if (kn->needs_gil || work == 0 || p->out_overlaps) {
        nthreads = 1;
    }
    if (nthreads > 1 && work / nthreads < SO_MIN_WORK_PER_THREAD) {
        nthreads = (int)(work / SO_MIN_WORK_PER_THREAD);
    }
    dim = nthreads > 1 ? split_dim(p, nthreads) : -1;
    if (dim == -1 && nthreads > 1 && p->nwin < 0 && p->k >= 1 && p->isize[0] >= nthreads &&
            (so_vector_compaction(p) ||
             p->isize[0] * (p->is_out[0] < 0 ? -p->is_out[0] : p->is_out[0]) >= SO_MIN_OWNED_BYTES)) {
        dim = SO_SPLIT_OWNED;
    }
    *nthreads_io = nthreads;
    return dim;
}

int
so_owned_split_applies(const so_plan *p, const so_kernel *kn, int nthreads)
{
    return choose_split(p, kn, &nthreads) == SO_SPLIT_OWNED;
}

/* What an owner does besides its walk: check indices, count hits, finish. */
typedef struct {
    int check;
    npy_intp *hits;
    so_walk_hook finish;
    void *finish_ctx;
    so_poll *poll;
} so_owner_extra;

static const so_owner_extra no_extra = {0, NULL, NULL, NULL, NULL};

static int run_split(const so_plan *p, const so_kernel *kn, int nthreads, int dim,
                     const so_owner_extra *x);

int
so_run_owned_checked(const so_plan *p, const so_kernel *kn, int nthreads, so_poll *poll)
{
    int dim = choose_split(p, kn, &nthreads);
    if (dim != SO_SPLIT_OWNED || p->k != 1 || p->mask != NULL) {
        return -1;          /* not this walk: the caller checks the indices first */
    }
    so_owner_extra x = no_extra;
    x.check = 1;
    x.poll = poll;
    return run_split(p, kn, nthreads, dim, &x);
}

int
so_run_owned_counting(const so_plan *p, const so_kernel *kn, int nthreads, npy_intp *hits,
                      so_walk_hook finish, void *ctx, so_poll *poll)
{
    int dim = choose_split(p, kn, &nthreads);
    so_owner_extra x = no_extra;
    if (dim != SO_SPLIT_OWNED) {
        return 0;
    }
    x.hits = hits;
    x.finish = finish;
    x.finish_ctx = ctx;
    x.poll = poll;
    run_split(p, kn, nthreads, dim, &x);
    return 1;
}

int
so_run_threaded(const so_plan *p, const so_kernel *kn, int nthreads, so_poll *poll)
{
    int dim = choose_split(p, kn, &nthreads);
    so_owner_extra x = no_extra;
    if (dim == -1) {
        so_run_polled(p, kn, poll);
        return 1;
    }
    x.poll = poll;
    return run_split(p, kn, nthreads, dim, &x);
}

/* An owner of [lo, hi) of the values of the first index component. */
static void
make_owner(so_walk *w, const so_plan *p, npy_intp lo, npy_intp hi, int *bad,
           const so_owner_extra *x)
{
    w->plan = *p;
    w->owned = 1;
    w->own_lo = lo;
    w->own_hi = hi;
    w->bad = x->check ? bad : NULL;
    w->hits = x->hits;
    w->finish = x->finish;
    w->finish_ctx = x->finish_ctx;
    w->poll = x->poll;
}

/* The walk split along dim on nthreads threads.  With x->check (SO_SPLIT_OWNED
 * only), returns 0 if a thread saw a bad index, else 1; without, the threads
 * that ran. */
static int
run_split(const so_plan *p, const so_kernel *kn, int nthreads, int dim, const so_owner_extra *x)
{
    const int check = x->check;
    npy_intp extent;
    so_task *tasks;
    int *bad;
    int t, used, ok = 1;

    if (nthreads < 1) nthreads = 1;
    extent = dim == SO_SPLIT_OWNED ? p->isize[0]
             : dim < p->gnd ? p->gshape[dim] : p->bshape[dim - p->gnd];
    tasks = malloc(sizeof *tasks * (size_t)nthreads);
    bad = calloc((size_t)nthreads, sizeof *bad);
    if (tasks == NULL || bad == NULL) {
        free(tasks); free(bad);
        if (check || x->hits != NULL) {
            /* one owner of everything, still checking (counting) */
            so_walk one;
            int b = 0;
            make_owner(&one, p, 0, p->isize[0], &b, x);
            so_walk_run(&one, kn);
            return check ? !b : 1;
        }
        so_run_polled(p, kn, x->poll);
        return 1;
    }
    for (t = 0; t < nthreads; t++) {
        npy_intp lo = extent * t / nthreads, hi = extent * (t + 1) / nthreads;
        tasks[t].kn = kn;
        if (dim == SO_SPLIT_OWNED) {
            make_owner(&tasks[t].walk, p, lo, hi, &bad[t], x);
        }
        else {
            tasks[t].walk.plan = *p;
            tasks[t].walk.owned = 0;
            tasks[t].walk.own_lo = tasks[t].walk.own_hi = 0;
            tasks[t].walk.bad = NULL;
            tasks[t].walk.hits = NULL;
            tasks[t].walk.finish = NULL;
            tasks[t].walk.finish_ctx = NULL;
            tasks[t].walk.poll = x->poll;
            so_narrow(&tasks[t].walk.plan, dim, lo, hi);
        }
    }
    used = so_run_tasks_polled(task_main, tasks, sizeof *tasks, nthreads, x->poll);
    for (t = 0; t < nthreads; t++) {
        if (bad[t]) ok = 0;
    }
    free(tasks); free(bad);
    return check ? ok : used;
}

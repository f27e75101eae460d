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
 * each thread reads every index but only its own updates and destinations,
 * compacted without a branch rather than tested update by update
 * (docs/design.md, "Splitting a walk over threads").  A block dim is split
 * when each thread gets c->min_block_run elements of it. */
/* split_dim found none: split the values of the first index component
 * (SO_SPLIT_OWNED).  Every owner reads every index, so this wins only where
 * applying an update costs more than reading an index: see choose_split. */
#define SO_SPLIT_OWNED (-2)

static int
split_dim(const so_plan *p, int nthreads, const so_walk_costs *c)
{
    int d;
    for (d = 0; d < p->gnd; d++) {
        if (p->gs_out[d] != 0 && p->gshape[d] >= nthreads) {
            return d;
        }
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] != 0 && p->bshape[d] >= nthreads * c->min_block_run) {
            return p->gnd + d;
        }
    }
    return -1;
}

/* ---- the cost model --------------------------------------------------------
 *
 * What a call costs on one thread and what threads save, from the bytes it
 * touches and where out lives:
 *  - a split along a dim (each thread its own updates and its own part of out)
 *    saves nearly all of a thread's share once each has SO_MIN_WORK_PER_THREAD
 *    elements (less does not pay for a worker's wake-up);
 *  - the owned split makes every thread read every index: it saves only the
 *    update's own cost.  Into an out beyond one core's L2 an update is a cache
 *    miss and dwarfs the index: split as a dim split is, where the compaction
 *    is AVX-512's or the blocks are wider than one element.  With AVX2's
 *    compaction, single elements split only into an out beyond half of L3 (at
 *    most SO_OWNED_FAR_BYTES): below it the out stays in L3 between calls, and
 *    one thread's loop there costs less than an owner's compaction of every
 *    index plus its half of the updates (so_owned_far_pays).
 *    Into an out in L2 (the vectorised compaction only), an update costs about
 *    what reading and compacting its index does: split from SO_OWNED_MIN_NEAR
 *    groups a thread, and never into an out in L1.  Without the vectorised
 *    compaction, only an out of SO_MIN_OWNED_BYTES or more (scalar
 *    compaction, in cache: two threads slower than one);
 *  - a 1-D call with the direct form (call/direct.c: indices checked in their own
 *    dtype, one typed loop, one thread) runs it unless a split beats it
 *    (so_direct_form_pays): into an out in L1 or L2 nothing does (the owned
 *    split is slower on two threads; out of place the direct form reads its
 *    indices once, where the check beside the walk on a second thread reads
 *    them twice); beyond L2 the owned split does where it pays
 *    (so_owned_far_pays).
 * That is the static part, in choose_split.  Whether the workers are there is
 * the other part: on a busy machine a worker is descheduled, or several
 * callers share the pool, and a thread's share then waits for it.  So each
 * split remembers, per kind of call (its strategy, the power of two of its
 * work and where out lives), whether its workers came late last time
 * (so_run_tasks_report, base/threads.c); a late call runs the next calls of
 * its kind on one thread, 2, 4, ... up to SO_LATE_BACKOFF_MAX of them, then
 * tries threads again (one on time halves the count).  The measurements, and
 * the command that repeats them: docs/design.md, "Splitting a walk over
 * threads".  The thread count never changes the result.  The numbers
 * (SO_MIN_WORK_PER_THREAD as c->min_work_per_thread, and the others) are the
 * call layer's (call/cost.h), passed down with the thread count; the rules
 * that read them are here. */

/* where out lives: 0 in L1, 1 in L2, 2 beyond */
int
so_out_place(npy_intp bytes)
{
    return bytes <= so_cache_bytes(1) ? 0 : bytes <= so_cache_bytes(2) ? 1 : 2;
}

static npy_intp
span(npy_intp n, npy_intp stride)
{
    return (n - 1) * (stride < 0 ? -stride : stride);
}

/* The bytes of out a plan addresses (its extent over every dim that moves in
 * out), an upper bound. */
static npy_intp
out_bytes(const so_plan *p)
{
    npy_intp b = 1;
    int d;
    for (d = 0; d < p->k; d++) b += span(p->isize[d], p->is_out[d]);
    for (d = 0; d < p->gnd; d++) b += span(p->gshape[d], p->gs_out[d]);
    for (d = 0; d < p->bnd; d++) b += span(p->bshape[d], p->bs_out[d]);
    return b;
}

/* Into an out of `bytes` beyond L2, whether the owned split of single elements
 * pays (c->owned_far_bytes: SO_OWNED_FAR_BYTES).  With AVX-512 the compaction
 * is one instruction, and the split pays as soon as out is beyond L2.  With
 * AVX2's compaction it pays only once out no longer stays in L3 between calls:
 * beyond half of L3 or SO_OWNED_FAR_BYTES, whichever is less (docs/design.md,
 * "Splitting a walk over threads"). */
int
so_owned_far_pays(npy_intp bytes, const so_walk_costs *c)
{
    const npy_intp half_l3 = so_cache_bytes(3) / 2;
    if (so_cpu_has(SO_CPU_AVX512)) return 1;
    return bytes > (half_l3 < c->owned_far_bytes ? half_l3 : c->owned_far_bytes);
}

/* Whether the owned split pays on nthreads threads (the static part). */
static int
owned_pays(const so_plan *p, int nthreads, npy_intp groups, const so_walk_costs *c)
{
    npy_intp bytes;
    int place, vector;
    if (p->nwin >= 0 || p->k < 1 || p->isize[0] < nthreads) return 0;
    vector = so_vector_compaction(p);
    bytes = vector && so_cost_model_on() ? out_bytes(p)
            : p->isize[0] * (p->is_out[0] < 0 ? -p->is_out[0] : p->is_out[0]);
    if (!vector || !so_cost_model_on()) return vector || bytes >= c->min_owned_bytes;
    place = so_out_place(bytes);
    if (place == 2) return p->bnd > 0 || so_owned_far_pays(bytes, c);
    return place == 1 && groups / nthreads >= c->owned_min_near;
}

/* The threads a call may use, and the dim to split (-1: none). */
static int
choose_split(const so_plan *p, const so_kernel *kn, int *nthreads_io, const so_walk_costs *c)
{
    npy_intp work = 1, groups = 1;
    int d, dim, nthreads = *nthreads_io;

    for (d = 0; d < p->gnd; d++) groups *= p->gshape[d];
    work = groups;
    for (d = 0; d < p->bnd; d++) work *= p->bshape[d];
    if (kn->needs_gil || work == 0 || p->out_overlaps) {
        nthreads = 1;
    }
    if (nthreads > 1 && work / nthreads < c->min_work_per_thread) {
        nthreads = (int)(work / c->min_work_per_thread);
    }
    dim = nthreads > 1 ? split_dim(p, nthreads, c) : -1;
    if (dim == -1 && nthreads > 1 && owned_pays(p, nthreads, groups, c)) {
        dim = SO_SPLIT_OWNED;
    }
    *nthreads_io = nthreads;
    return dim;
}

/* The kind of job (so_run_tasks_report) of a split: its strategy, where out
 * lives (the bytes it spans) and the power of two of its work. */
static int
job_kind(int owned, npy_intp bytes, npy_intp work)
{
    return (owned * 3 + so_out_place(bytes)) * 64 + so_log2(work);
}

static int
kind_of_call(const so_plan *p, int dim)
{
    npy_intp work = 1;
    int d;
    for (d = 0; d < p->gnd; d++) work *= p->gshape[d];
    for (d = 0; d < p->bnd; d++) work *= p->bshape[d];
    return job_kind(dim == SO_SPLIT_OWNED, out_bytes(p), work);
}

int
so_direct_form_backs_off(npy_intp size, npy_intp stride, npy_intp nupd)
{
    /* the owned split of such a call: out spans (size - 1) strides (as
     * out_bytes counts it), its work is nupd single elements */
    return so_backing_off(job_kind(1, 1 + span(size, stride), nupd));
}

int
so_split_runs(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c)
{
    int dim = choose_split(p, kn, &nthreads, c);
    if (nthreads <= 1 || dim == -1) return 0;
    return !so_backing_off(kind_of_call(p, dim));
}

int
so_owned_split_runs(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c)
{
    int dim = choose_split(p, kn, &nthreads, c);
    return dim == SO_SPLIT_OWNED && !so_backing_off(kind_of_call(p, dim));
}

int
so_owned_split_applies(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c)
{
    return choose_split(p, kn, &nthreads, c) == SO_SPLIT_OWNED;
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
so_run_owned_checked(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c,
                     so_poll *poll)
{
    int dim = choose_split(p, kn, &nthreads, c);
    if (dim != SO_SPLIT_OWNED || p->k != 1 || p->mask != NULL) {
        return -1;          /* not this walk: the caller checks the indices first */
    }
    so_owner_extra x = no_extra;
    x.check = 1;
    x.poll = poll;
    return run_split(p, kn, nthreads, dim, &x);
}

int
so_run_owned_counting(const so_plan *p, const so_kernel *kn, int nthreads,
                      const so_walk_costs *c, npy_intp *hits, so_walk_hook finish, void *ctx,
                      so_poll *poll)
{
    int dim = choose_split(p, kn, &nthreads, c);
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
so_run_threaded(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c,
                so_poll *poll)
{
    int dim = choose_split(p, kn, &nthreads, c);
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

/* The call on this thread alone: one owner of everything when the owners
 * check or count, else the plain walk; as run_split returns. */
static int
run_alone(const so_plan *p, const so_kernel *kn, const so_owner_extra *x)
{
    if (x->check || x->hits != NULL) {
        so_walk one;
        int b = 0;
        make_owner(&one, p, 0, p->isize[0], &b, x);
        so_walk_run(&one, kn);
        return x->check ? !b : 1;
    }
    so_run_polled(p, kn, x->poll);
    return 1;
}

/* The walk split along dim on nthreads threads, or on this one while the cost
 * model says so (or another call has the pool).  With x->check
 * (SO_SPLIT_OWNED only), returns 0 if a thread saw a bad index, else 1;
 * without, the threads that ran. */
static int
run_split(const so_plan *p, const so_kernel *kn, int nthreads, int dim, const so_owner_extra *x)
{
    const int check = x->check;
    npy_intp extent;
    so_task *tasks;
    int *bad;
    int t, used, ok = 1;

    if (nthreads <= 1) return run_alone(p, kn, x);
    extent = dim == SO_SPLIT_OWNED ? p->isize[0]
             : dim < p->gnd ? p->gshape[dim] : p->bshape[dim - p->gnd];
    tasks = malloc(sizeof *tasks * (size_t)nthreads);
    bad = calloc((size_t)nthreads, sizeof *bad);
    if (tasks == NULL || bad == NULL) {
        free(tasks); free(bad);
        return run_alone(p, kn, x);
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
    used = so_run_tasks_report(task_main, tasks, sizeof *tasks, nthreads, x->poll,
                               kind_of_call(p, dim));
    for (t = 0; t < nthreads; t++) {
        if (bad[t]) ok = 0;
    }
    free(tasks); free(bad);
    if (used == 0) return run_alone(p, kn, x);      /* nothing ran: alone, in one piece */
    return check ? ok : used;
}

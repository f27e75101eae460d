/*
 * walk/mean_walk.c: the walk of reduction="mean" on a plan, for the typed
 * dtypes with a division loop: count the hits of each destination, add the
 * updates, and divide each hit element by count + include_self with the
 * division loops of kernels/mean.c.  (The direct form's mean, with no plan,
 * is kernels/mean_indexed.c, chosen by call/direct.c.)
 *
 * Three ways, tried in this order by so_mean_run: the owners of an index-value
 * split count and divide their own values (owners_mean); or the hits are
 * counted per destination slice first (plan/dedup.c: so_count_hits), the add is
 * walked, and the hit blocks divided (so_mean_finish_hits); or, when neither
 * fits, the caller counts per element (so_mean_counted) and calls
 * so_mean_finish.
 *
 * Stopped (a poll, base.h) in place, no element may keep an undivided sum:
 * the owners count the hits of what they applied and divide those; the count
 * per element goes in step with the add, piece by piece (so_mean_counted), so
 * the counts are those of the pieces applied.  The hits per slice are counted
 * for the whole call before the add, so that way is taken out of place only
 * (a stopped result is dropped).  The division, once begun, runs to its end.
 */
#include "walk/walk.h"
#include "base/nditer.h"

#include <stdlib.h>

/* out: any strides; counts: npy_intp of out's shape. */
void
so_mean_finish(const so_array *out, const so_array *counts, int include_self)
{
    so_mean_fn fn = so_mean_kernel(out->dtype);
    npy_intp shape[SO_MAXDIMS], so_[SO_MAXDIMS], sc[SO_MAXDIMS];
    npy_intp *const strides[2] = {so_, sc};
    char *o = out->bytes;
    const char *c = counts->bytes;
    int d, nd = 0;
    so_nditer it;

    if (fn == NULL || so_array_size(out) == 0) {
        return;
    }
    for (d = 0; d < out->ndim; d++) {
        const npy_intp s[2] = {out->strides[d], counts->strides[d]};
        nd = so_nd_push(nd, shape, strides, 2, out->dims[d], s, 0);
    }
    if (nd == 0) {
        fn(o, 0, c, 0, 1, include_self);
        return;
    }
    so_nd_init(&it, nd - 1, shape, 2, (const npy_intp *const *)strides);
    do {
        fn(o + it.off[0], so_[nd - 1], c + it.off[1], sc[nd - 1], shape[nd - 1], include_self);
    } while (so_nd_next(&it));
}

/* Apply fn to every row of the block at o, with one count for all of it. */
static void
finish_block(const so_plan *p, so_mean_fn fn, char *o, npy_intp k, int include_self)
{
    int last = p->bnd - 1;
    so_nditer it;
    if (p->bnd == 0) {
        fn(o, 0, (const char *)&k, 0, 1, include_self);
        return;
    }
    so_nd_init(&it, last, p->bshape, 1, (const npy_intp *const[]){p->bs_out});
    do {
        fn(o + it.off[0], p->bs_out[last], (const char *)&k, 0, p->bshape[last], include_self);
    } while (so_nd_next(&it));
}

/* The destinations in hits are distinct: with no lead dims, threads take
 * ranges of them, c->mean_finish_per_thread elements each at least. */

typedef struct {
    const so_plan *p;
    so_mean_fn fn;
    const npy_intp *hits;
    npy_intp nhits;
    int include_self;
} so_finish_task;

static void *
finish_main(void *arg)
{
    so_finish_task *t = (so_finish_task *)arg;
    npy_intp w;
    for (w = 0; w < t->nhits; w++) {
        finish_block(t->p, t->fn, t->p->out + t->hits[2 * w], t->hits[2 * w + 1], t->include_self);
    }
    return NULL;
}

static int
finish_threaded(const so_plan *p, so_mean_fn fn, const npy_intp *hits, npy_intp nhits,
                int include_self, int nt, const so_walk_costs *c)
{
    so_finish_task *tasks;
    npy_intp block = 1;
    int t, d;
    for (d = 0; d < p->bnd; d++) block *= p->bshape[d];
    if (nt > nhits * block / c->mean_finish_per_thread) {
        nt = (int)(nhits * block / c->mean_finish_per_thread);
    }
    if (nt > nhits) nt = (int)nhits;
    if (nt <= 1) return 0;
    tasks = malloc(sizeof *tasks * (size_t)nt);
    if (tasks == NULL) return 0;
    for (t = 0; t < nt; t++) {
        npy_intp lo = nhits * t / nt, hi = nhits * (t + 1) / nt;
        tasks[t].p = p;
        tasks[t].fn = fn;
        tasks[t].hits = hits + 2 * lo;
        tasks[t].nhits = hi - lo;
        tasks[t].include_self = include_self;
    }
    so_run_tasks(finish_main, tasks, sizeof *tasks, nt);
    free(tasks);
    return 1;
}

void
so_mean_finish_hits(const so_plan *p, PyArray_Descr *descr, int lead, const npy_intp *hits,
                    npy_intp nhits, int include_self, int nthreads,
                    const so_walk_costs *c)
{
    so_mean_fn fn = so_mean_kernel(descr);
    npy_intp w;
    so_nditer it;
    int d;

    if (fn == NULL) return;
    if (lead == 0 && !p->out_overlaps &&
            finish_threaded(p, fn, hits, nhits, include_self, nthreads, c)) return;
    for (d = 0; d < lead; d++) {
        if (p->gshape[d] == 0) return;
    }
    so_nd_init(&it, lead, p->gshape, 1, (const npy_intp *const[]){p->gs_out});
    do {
        char *o = p->out + it.off[0];
        for (w = 0; w < nhits; w++) {
            finish_block(p, fn, o + hits[2 * w], hits[2 * w + 1], include_self);
        }
    } while (so_nd_next(&it));
}

/* ---- the owners' mean ------------------------------------------------------- */

typedef struct {
    so_mean_fn fn;
    int include_self;
} so_owner_mean;

/* An owner's finish (the walk's hook): divide the block of each value v in
 * [own_lo, own_hi) with hits[v] > 0.  No GIL needed. */
static void
owner_finish(const so_walk *w, void *ctx)
{
    const so_owner_mean *m = (const so_owner_mean *)ctx;
    const so_plan *p = &w->plan;
    npy_intp v;
    if (m->fn == NULL || w->hits == NULL) return;
    for (v = w->own_lo; v < w->own_hi; v++) {
        if (w->hits[v] > 0) {
            finish_block(p, m->fn, p->out + v * p->is_out[0], w->hits[v], m->include_self);
        }
    }
}

/* Mean when the add is split by index value over threads (owned.c) and the
 * value alone names the destination (one component, no group dim addresses
 * out, no mask): the owners count the hits of each value as they add, instead
 * of a walk over the indices on one thread first, and then divide their own
 * blocks, still in their caches, with no pass over the counts on one thread and
 * no second set of threads (docs/design.md, "The mean on the owned split").
 * Returns 1 having done the whole mean, or 0 having done nothing. */
static int
owners_mean(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c,
            PyArray_Descr *descr, int include_self, so_poll *poll)
{
    npy_intp *counts, groups = 1;
    so_owner_mean m;
    int d, done;
    if (p->k != 1 || p->mask != NULL || p->gnd < 1 || p->gs_idx[p->gnd - 1] == 0 ||
            !so_owned_split_applies(p, kn, nthreads, c)) {
        return 0;
    }
    for (d = 0; d < p->gnd; d++) {
        if (p->gs_out[d] != 0) return 0;
        groups *= p->gshape[d];
    }
    /* the cost model: a count per index value, zeroed and scanned, costs more
     * than counting the hits of a few updates (docs/design.md, "The mean on
     * the owned split") */
    if (so_cost_model_on() && p->isize[0] > c->mean_owners_ratio * groups) return 0;
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] == 0) return 0;        /* a block that hits one element twice */
    }
    /* its kind backed off (a busy machine): as on one thread, where one owner
     * of everything counting its hits is slower than the way below
     * (docs/design.md, "The mean on the owned split") */
    if (!so_split_runs(p, kn, nthreads, c)) return 0;
    counts = calloc((size_t)p->isize[0], sizeof *counts);
    if (counts == NULL) {
        return 0;
    }
    /* so_owned_split_applies: the walk below is split by index value, and every
     * owner (or the one owner, when memory for tasks is short) finishes its own */
    m.fn = so_mean_kernel(descr);
    m.include_self = include_self;
    done = so_run_owned_counting(p, kn, nthreads, c, counts, owner_finish, &m, poll);
    free(counts);
    return done;
}

int
so_mean_run(const so_plan *p, const so_kernel *add, PyArray_Descr *d, int include_self,
            int nthreads, const so_walk_costs *c, so_poll *poll, int in_place)
{
    npy_intp *hits, nhits = 0;
    int lead = 0;
    if (owners_mean(p, add, nthreads, c, d, include_self, poll)) {
        return 1;
    }
    if (in_place && poll != NULL) {
        return 0;
    }
    hits = so_count_hits(p, &lead, &nhits, poll);
    if (hits == NULL) {
        return so_stopped(poll);
    }
    /* out of place: a stopped result is dropped undivided */
    so_run_threaded(p, add, nthreads, c, poll);
    if (!so_stopped(poll)) {
        so_mean_finish_hits(p, d, lead, hits, nhits, include_self, nthreads, c);
    }
    free(hits);
    return 1;
}

/* ---- the count per element, in step with the add ---------------------------- */

typedef struct {
    const so_kernel *add, *count;
    int nthreads;
    const so_walk_costs *costs;
} so_counted;

static void
count_and_add(so_plan *const *piece, void *ctx)
{
    const so_counted *c = (const so_counted *)ctx;
    /* a piece is done whole: the counts stay those of the updates applied */
    so_run_threaded(piece[1], c->count, c->nthreads, c->costs, NULL);
    so_run_threaded(piece[0], c->add, c->nthreads, c->costs, NULL);
}

/* Lockstep pieces cost a start of the threads each: a few times longer. */
#define SO_COUNTED_PIECE (4 * SO_PIECE)

int
so_mean_counted(const so_plan *p, const so_plan *cp, const so_kernel *add,
                const so_kernel *count, int nthreads, const so_walk_costs *costs,
                so_poll *poll, int in_place)
{
    if (in_place && poll != NULL && p->gnd == cp->gnd && p->nwin < 0 && cp->nwin < 0) {
        so_plan sums = *p, counts = *cp;
        so_plan *const plans[2] = {&sums, &counts};
        so_counted c = {add, count, nthreads, costs};
        /* the blocks are cut too (a long run of updates into one slice, from
         * an index with stride 0) when both plans have the same block dims:
         * each element's sum and count still go in the same pieces */
        int same_blocks = p->bnd == cp->bnd, d;
        for (d = 0; d < p->bnd && same_blocks; d++) same_blocks = p->bshape[d] == cp->bshape[d];
        return so_for_pieces(plans, 2, SO_COUNTED_PIECE, !same_blocks, poll, count_and_add, &c);
    }
    so_run_threaded(cp, count, nthreads, costs, poll);
    so_run_threaded(p, add, nthreads, costs, poll);
    return so_stopped(poll);
}

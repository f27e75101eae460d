/*
 * call/general_way.c: the general way to run a checked typed call -- its plan
 * (plan/) and the walk of it (walk/) into an output that already holds data:
 * on this thread with the interpreter's lock for a small call, else on up to
 * the call's threads without it; under "none" the earlier writes of slices
 * that a later one overwrites dropped first (plan/dedup); the mean's counts
 * and division; out of place, the copy of a large data fused into the walk.
 * Every strategy gives the bits of the plain C-order walk.
 */
#include "call/call.h"

#include <stdlib.h>

int
so_scratch_zeros(so_scratch *s, const so_array *like, npy_intp itemsize)
{
    npy_intp step = itemsize, n = so_array_size(like);
    int d;
    for (d = like->ndim - 1; d >= 0; d--) {
        s->strides[d] = step;
        step *= like->dims[d];
    }
    s->a.bytes = calloc((size_t)(n > 0 ? n : 1), (size_t)itemsize);
    s->a.ndim = like->ndim;
    s->a.dims = like->dims;
    s->a.strides = s->strides;
    s->a.itemsize = itemsize;
    s->a.aligned = 1;
    s->a.c_contiguous = 1;
    s->a.dtype = NULL;
    s->a.handle = NULL;
    return s->a.bytes == NULL ? -1 : 0;
}

/* The walk of plan with kn: on this thread with the lock for a small call or a
 * kernel that needs it, else on up to nthreads threads without it.  0, or -1
 * stopped. */
static int
run_plan(so_plan *plan, const so_kernel *kn, int op, npy_intp work, int nthreads, so_host *h)
{
    so_poll *poll;
    if (kn->needs_gil || work < SO_GIL_RELEASE_MIN) {
        if (work < SO_GIL_RELEASE_MIN) {
            if (op == SO_NONE && kn->needs_gil) so_dedup(plan, kn->itemsize, NULL);
            so_run(plan, kn);
            return 0;
        }
        poll = h->poll(h);
        if (op == SO_NONE) so_dedup(plan, kn->itemsize, poll);
        so_run_polled(plan, kn, poll);
        return h->relock(h);
    }
    poll = h->unlock(h);
    if (op == SO_NONE) so_dedup(plan, kn->itemsize, poll);
    so_run_threaded(plan, kn, nthreads, &so_walk_cost_model, poll);
    return h->relock(h);
}

/* reduction="mean" on out, for the dtypes whose division is in C: the sums,
 * then each element that updates hit divided by its count (+1 with
 * include_self). */
static so_status
apply_mean(const so_call *c, so_host *h, int small, const so_array *out, const so_array *mask,
           int in_place)
{
    const so_kernel *kn = &c->kn;
    so_scratch counts;
    so_plan plan, cplan;
    so_kernel ck;
    so_poll *poll;
    int rc = 0;
    /* small (choose.c): a small call into a small out counts per element, no
     * threads, no lock dance (4 to 1000 updates: the hits per slice cost more
     * to set up) */
    int done = 0;

    if (so_make_plan(&plan, c->kind, out, &c->idx, &c->upd, c->axis, mask) < 0) return SO_FAILED;
    if (!small) {
        poll = h->unlock(h);
        done = so_mean_run(&plan, kn, out->dtype, c->include_self, c->nthreads,
                           &so_walk_cost_model, poll, in_place);
        if (h->relock(h) < 0) return SO_FAILED;
    }
    if (done) return SO_DONE;
    /* hits counted element by element */
    if (so_scratch_zeros(&counts, out, sizeof(npy_intp)) < 0) return SO_NO_MEMORY;
    if (so_make_plan(&cplan, c->kind, &counts.a, &c->idx, &c->upd, c->axis, NULL) < 0) {
        free(counts.a.bytes);
        return SO_FAILED;
    }
    so_count_kernel(&ck);
    if (small) {
        so_run(&cplan, &ck);
        so_run(&plan, kn);
        so_mean_finish(out, &counts.a, c->include_self);
    }
    else {
        /* stopped, in place: each element holds the mean of what was applied */
        poll = h->unlock(h);
        if (!so_mean_counted(&plan, &cplan, kn, &ck, c->nthreads, &so_walk_cost_model, poll,
                             in_place) || in_place) {
            so_mean_finish(out, &counts.a, c->include_self);
        }
        rc = h->relock(h);
    }
    free(counts.a.bytes);
    return rc < 0 ? SO_FAILED : SO_DONE;
}

so_status
so_call_apply(const so_call *c, so_host *h, const so_choice *ch, const so_array *out)
{
    so_scratch mask;
    so_plan plan;
    so_status st;
    const int masked = c->op != SO_NONE && !c->include_self;
    if (masked && so_scratch_zeros(&mask, out, 1) < 0) return SO_NO_MEMORY;
    /* which elements were hit: their first update is assigned, not combined */
    if (c->mean) {
        st = apply_mean(c, h, ch->mean_counts_small, out, masked ? &mask.a : NULL,
                        so_call_has_out(c) && out->handle == c->out.handle);
    }
    else if (so_make_plan(&plan, c->kind, out, &c->idx, &c->upd, c->axis,
                          masked ? &mask.a : NULL) == 0) {
        st = run_plan(&plan, &c->kn, c->op, c->nupd, c->nthreads, h) < 0 ? SO_FAILED : SO_DONE;
        so_plan_release(&plan);
    }
    else {
        st = SO_FAILED;
    }
    if (masked) free(mask.a.bytes);
    return st;
}

so_status
so_call_fresh_fused(const so_call *c, so_host *h, so_array *result)
{
    const so_array *data = &c->data;
    const npy_intp nbytes = so_array_nbytes(data);
    so_plan plan;
    so_poll *poll;
    int done, rc;
    if (h->new_array(h, data, 1, result) < 0) return SO_FAILED;
    if (so_make_plan(&plan, c->kind, result, &c->idx, &c->upd, c->axis, NULL) < 0) {
        h->release(h, result);
        return SO_FAILED;
    }
    poll = h->unlock(h);
    if (c->op == SO_NONE) so_dedup(&plan, c->kn.itemsize, poll);
    done = so_run_copying(&plan, &c->kn, c->nthreads, &so_walk_cost_model, data->bytes, nbytes,
                          poll);
    if (!done && !so_parallel_copy(result->bytes, data->bytes, (size_t)nbytes, c->nthreads,
                                   poll)) {
        so_run_threaded(&plan, &c->kn, c->nthreads, &so_walk_cost_model, poll);
    }
    so_plan_release(&plan);
    rc = h->relock(h);
    if (rc < 0) {
        h->release(h, result);
        return SO_FAILED;
    }
    return SO_DONE;
}

/*
 * call/checked_walk.c: out of place, the index check fused with the walk.
 *
 * The walk writes a fresh result nobody else can see, its kernels clamp every
 * index into its axis (a bad index writes element 0, not outside), and if the
 * check finds a bad index the result is dropped unseen and the binding's
 * check reports the first one as usual.  Two forms:
 *  - split by index value over threads (walk/split): each thread reads every
 *    index anyway, so it checks them as it goes, and the separate pass over
 *    the indices is saved;
 *  - element by element into a small out, one thread: the check runs beside it
 *    as a second task of the pool, which the calling thread also runs when no
 *    worker took it, so the check overlaps the walk.
 * docs/design.md ("Checking while walking") has the measurements.
 */
#include "call/call.h"

typedef struct {
    so_array idx;
    const npy_intp *bounds;
    int nbounds;
    npy_intp bad;
    so_poll *poll;
} so_check_job;

/* the two tasks of checked_while_walking: the copy and the walk (task 0, which
 * the calling thread claims first), the check (task 1, the caller's too when
 * no worker took it) */
typedef struct {
    so_check_job *check;
    const so_plan *plan;
    const so_kernel *kn;
    char *dst;
    const char *src;
    size_t nbytes;
} so_side_task;

static void *
check_job_main(void *arg)
{
    so_check_job *j = (so_check_job *)arg;
    j->bad = so_find_bad_index_polled(&j->idx, j->bounds, j->nbounds, 1, j->poll);
    return NULL;
}

static void *
side_task_main(void *arg)
{
    so_side_task *t = (so_side_task *)arg;
    if (t->plan == NULL) return check_job_main(t->check);
    memcpy(t->dst, t->src, t->nbytes);
    so_run_polled(t->plan, t->kn, t->check->poll);
    return NULL;
}

static so_status
checked_by_owners(const so_call *c, so_host *h, int cached, so_array *result)
{
    const so_array *data = &c->data;
    const so_kernel *kn = &c->kn;
    const npy_intp nbytes = so_array_nbytes(data);
    so_plan plan;
    so_poll *poll;
    int ok, bnd;

    if (h->new_array(h, data, cached, result) < 0) return SO_FAILED;
    if (so_make_plan(&plan, c->kind, result, &c->idx, &c->upd, c->axis, NULL) < 0) {
        h->release(h, result);
        return SO_FAILED;
    }
    /* choose.c took this plan's form: one group dim stepping through indices,
     * one component, run_row_owned's checking loop the only reader of an index.
     * A plan of another form (it cannot be) leaves the decision to the check */
    if (!so_plan_one_index_run(&plan, &bnd)) {
        h->release(h, result);
        return SO_BAD_INDEX;
    }
    poll = h->unlock(h);
    so_parallel_copy(result->bytes, data->bytes, (size_t)nbytes, c->nthreads, poll);
    ok = so_run_owned_checked(&plan, kn, c->nthreads, &so_walk_cost_model, poll);
    if (h->relock(h) < 0) {
        h->release(h, result);
        return SO_FAILED;
    }
    if (ok != 1) {
        /* 0: an index was bad; -1 cannot happen (applies was checked) but would
         * mean nothing was checked: either way, the separate check decides */
        h->release(h, result);
        return SO_BAD_INDEX;
    }
    return SO_DONE;
}

static so_status
checked_while_walking(const so_call *c, so_host *h, so_array *result)
{
    const so_array *data = &c->data;
    const so_kernel *kn = &c->kn;
    npy_intp bounds[SO_MAXDIMS];
    so_plan plan;
    so_check_job job;
    int bnd;

    if (h->new_array(h, data, 0, result) < 0) return SO_FAILED;
    if (so_make_plan(&plan, c->kind, result, &c->idx, &c->upd, c->axis, NULL) < 0) {
        h->release(h, result);
        return SO_FAILED;
    }
    /* choose.c took exactly the walk that so_run gives to the element kernel:
     * one group dim that steps through indices, element blocks, one component.
     * A plan of another form (it cannot be) leaves the decision to the check */
    if (!so_plan_one_index_run(&plan, &bnd) || bnd != 0) {
        h->release(h, result);
        return SO_BAD_INDEX;
    }
    job.idx = c->idx;
    job.bounds = bounds;
    job.nbounds = so_call_bounds(c, bounds);
    job.bad = -1;
    job.poll = h->unlock(h);
    {
        so_side_task tasks[2] = {{&job, &plan, kn, result->bytes, data->bytes,
                                  (size_t)so_array_nbytes(data)},
                                 {&job, NULL, NULL, NULL, NULL, 0}};
        if (so_run_tasks_report(side_task_main, tasks, sizeof tasks[0], 2, job.poll,
                                SO_JOB_KIND_SIDE_CHECK) == 0) {
            side_task_main(&tasks[0]);      /* on this thread: threads do not pay now */
            side_task_main(&tasks[1]);
        }
    }
    if (h->relock(h) < 0) {
        h->release(h, result);
        return SO_FAILED;
    }
    if (job.bad >= 0) {
        h->release(h, result);
        return SO_BAD_INDEX;
    }
    return SO_DONE;
}

so_status
so_call_fresh_checked(const so_call *c, so_host *h, const so_choice *ch, so_array *result)
{
    if (ch->strategy == SO_RUN_CHECKED_BY_OWNERS) {
        return checked_by_owners(c, h, ch->cached_result, result);
    }
    return checked_while_walking(c, h, result);
}

/*
 * call.c: how a checked call runs.  It picks the kernel (a typed reduction, the
 * assignment kernel of the item size, or -- for dtypes with no C loop -- the
 * NumPy fallback), makes the output (a fresh C-ordered copy of data, out, or
 * data itself), chooses the strategy (the index check fused with the walk into
 * a fresh result, the copy of data fused with the walk, threads, the mean's
 * finish) and runs the walk.  Every strategy gives the bits of the plain C-order
 * walk.
 */
#include "py/py.h"

/* The thresholds that choose a strategy here (SO_FUSED_MIN_BYTES,
 * SO_OVERLAP_MIN, SO_SIDE_CHECK_MIN, the mean's) are call/cost.h's. */

unsigned long so_generic_calls;

/* ---- the output ------------------------------------------------------------- */

/* ---- out of place, the index check fused with the walk ----------------------
 *
 * The walk writes a fresh result nobody else can see, its kernels clamp every
 * index into its axis (a bad index writes element 0, not outside), and if the
 * check finds a bad index the result is dropped unseen and the IndexError is
 * raised as usual.  Two forms:
 *  - split by index value over threads (walk/split): each thread reads every
 *    index anyway, so it checks them as it goes, and the separate pass over
 *    the indices is saved;
 *  - element by element into a small out, one thread: the check runs beside it
 *    as a second task of the pool, which the calling thread also runs when no
 *    worker took it, so the check overlaps the walk.
 * docs/design.md ("Checking while walking") has the measurements.
 */
typedef struct {
    PyArrayObject *idx;
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
    j->bad = so_find_bad_index_polled(j->idx, j->bounds, j->nbounds, 1, j->poll);
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

/* The result, or NULL: with an exception set on an error, with *bad set when
 * an index is bad, with neither when the call is not of this shape. */
static PyArrayObject *
checked_by_owners(const so_args *a, const so_kernel *kn, int nthreads, int *bad)
{
    PyArrayObject *data = a->data, *result;
    PyArray_Descr *dd = PyArray_DESCR(data);
    so_plan plan;
    so_unlocked u;
    so_poll *poll;
    int ok;

    Py_INCREF(dd);
    result = PyArray_NBYTES(data) >= SO_FUSED_MIN_BYTES
             ? so_output_cache_new_array(dd, PyArray_NDIM(data), PyArray_DIMS(data))
             : (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, PyArray_NDIM(data),
                                                     PyArray_DIMS(data), NULL, NULL, 0, NULL);
    if (result == NULL) return NULL;
    if (so_make_plan(&plan, a->kind, result, a->idx, a->upd, a->axis, NULL) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    /* one group dim stepping through indices, one component: run_row_owned's
     * checking loop is the only one that reads an index.  Blocks of elements
     * go in lists, rows (an expanded index folded into the block, graph message
     * passing) one by one.  Not while the split's kind is backed off (a busy
     * machine): one owner of everything, checking, is slower than the check
     * and then the plain walk, which one thread runs (docs/design.md,
     * "Checking while walking") */
    if (plan.gnd != 1 || plan.gs_out[0] != 0 || plan.gs_idx[0] == 0 ||
            (plan.bnd == 0 && kn->list == NULL) || plan.k != 1 || plan.out_overlaps ||
            !so_owned_split_runs(&plan, kn, nthreads, &so_walk_cost_model)) {
        Py_DECREF(result);
        return NULL;
    }
    poll = so_unlock(&u);
    so_parallel_copy(PyArray_BYTES(result), PyArray_BYTES(data), (size_t)PyArray_NBYTES(data),
                     nthreads, poll);
    ok = so_run_owned_checked(&plan, kn, nthreads, &so_walk_cost_model, poll);
    if (so_relock(&u) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    if (ok != 1) {
        /* 0: an index was bad; -1 cannot happen (applies was checked) but would
         * mean nothing was checked: either way, the separate check decides */
        Py_DECREF(result);
        *bad = 1;
        return NULL;
    }
    return result;
}

static PyArrayObject *
checked_while_walking(const so_args *a, const so_kernel *kn, int *bad)
{
    PyArrayObject *data = a->data, *result;
    PyArray_Descr *dd = PyArray_DESCR(data);
    npy_intp bounds[SO_MAXDIMS];
    so_plan plan;
    so_check_job job;
    so_unlocked u;

    if (kn->elem == NULL || kn->needs_gil) return NULL;
    Py_INCREF(dd);
    result = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, PyArray_NDIM(data),
                                                   PyArray_DIMS(data), NULL, NULL, 0, NULL);
    if (result == NULL) return NULL;
    if (so_make_plan(&plan, a->kind, result, a->idx, a->upd, a->axis, NULL) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    /* exactly the walk that so_run gives to the element kernel: one group dim
     * that steps through indices, element blocks, one component */
    if (plan.gnd != 1 || plan.gs_out[0] != 0 || plan.gs_idx[0] == 0 || plan.bnd != 0 ||
            plan.k != 1 || plan.out_overlaps) {
        Py_DECREF(result);
        return NULL;
    }
    job.idx = a->idx;
    job.bounds = bounds;
    job.nbounds = so_args_bounds(a, bounds);
    job.bad = -1;
    job.poll = so_unlock(&u);
    {
        so_side_task tasks[2] = {{&job, &plan, kn, PyArray_BYTES(result), PyArray_BYTES(data),
                                  (size_t)PyArray_NBYTES(data)},
                                 {&job, NULL, NULL, NULL, NULL, 0}};
        if (so_run_tasks_report(side_task_main, tasks, sizeof tasks[0], 2, job.poll,
                                SO_JOB_KIND_SIDE_CHECK) == 0) {
            side_task_main(&tasks[0]);      /* on this thread: threads do not pay now */
            side_task_main(&tasks[1]);
        }
    }
    if (so_relock(&u) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    if (job.bad >= 0) {
        Py_DECREF(result);
        *bad = 1;
        return NULL;
    }
    return result;
}

/* A fresh result with the check fused into the walk, or NULL: an error set,
 * *oor = 1 (an index outside under a mode, nothing raised), or not of these
 * shapes (then the caller checks first). */
static PyArrayObject *
fresh_checked(const so_args *a, const so_kernel *kn, int nthreads, int *oor)
{
    PyArrayObject *data = a->data, *r = NULL;
    int bad = 0;
    if (!PyArray_IS_C_CONTIGUOUS(data)) return NULL;
    if (a->nupd >= SO_OVERLAP_MIN && nthreads > 1) {
        r = checked_by_owners(a, kn, nthreads, &bad);
        if (r != NULL || PyErr_Occurred()) return r;
    }
    if (!bad && a->kind != SO_UPDATE &&
            a->nidx >= (so_cost_model_on() ? SO_SIDE_CHECK_MIN : SO_OVERLAP_MIN) &&
            a->nupd == a->nidx &&
            PyArray_NBYTES(data) < SO_FUSED_MIN_BYTES && nthreads > 1) {
        r = checked_while_walking(a, kn, &bad);
        if (r != NULL || PyErr_Occurred()) return r;
    }
    /* the first bad index: its IndexError, or the mode's turn */
    if (bad) *oor = so_args_check_indices(a, nthreads) == SO_OUT_OF_RANGE;
    return NULL;
}

/* ---- the walk ---------------------------------------------------------------- */

/* The plan of this call into out (updates upd, mask or NULL), or -1 raised.
 * Plans live on the stack (6 KiB): a heap one costs a tiny call dearly
 * (docs/design.md, "The cost of a small call"). */
static int
make_plan(so_plan *plan, const so_args *a, PyArrayObject *out, PyArrayObject *upd,
          PyArrayObject *mask)
{
    return so_make_plan(plan, a->kind, out, a->idx, upd, a->axis, mask);
}

/* The walk of plan with kn: on this thread with the GIL for a small call or a
 * kernel that needs it, else on up to nthreads threads without the GIL.  Under
 * "none" the earlier writes of slices that a later one overwrites are dropped
 * first (plan/dedup). */
static int
run_plan(so_plan *plan, const so_kernel *kn, int op, npy_intp work, int nthreads)
{
    so_unlocked u;
    so_poll *poll;
    if (kn->needs_gil || work < SO_GIL_RELEASE_MIN) {
        if (work < SO_GIL_RELEASE_MIN) {
            if (op == SO_NONE && kn->needs_gil) so_dedup(plan, kn->itemsize, NULL);
            so_run(plan, kn);
            return 0;
        }
        poll = so_poll_signals(&u);
        if (op == SO_NONE) so_dedup(plan, kn->itemsize, poll);
        so_run_polled(plan, kn, poll);
        return so_poll_raised(&u);
    }
    poll = so_unlock(&u);
    if (op == SO_NONE) so_dedup(plan, kn->itemsize, poll);
    so_run_threaded(plan, kn, nthreads, &so_walk_cost_model, poll);
    return so_relock(&u);
}

/* reduction="mean" on out, for the dtypes whose division is in C: the sums,
 * then each element that updates hit divided by its count (+1 with
 * include_self). */
static int
apply_mean(const so_args *a, PyArrayObject *out, const so_kernel *kn, PyArrayObject *mask,
           int nthreads)
{
    PyArray_Descr *od = PyArray_DESCR(out);
    PyArrayObject *counts;
    so_plan plan, cplan;
    so_kernel ck;
    so_unlocked u;
    so_poll *poll;
    int rc, in_place = out == a->out;
    npy_intp n = a->nupd;
    /* a small call into a small out: counts per element, no threads, no GIL
     * dance (4 to 1000 updates: the hits per slice cost more to set up) */
    int small = n < SO_GIL_RELEASE_MIN && so_mean_out_small(PyArray_SIZE(out), n), done = 0;

    if (make_plan(&plan, a, out, a->upd, mask) < 0) return -1;
    if (!small) {
        poll = so_unlock(&u);
        done = so_mean_run(&plan, kn, od, a->include_self, nthreads, &so_walk_cost_model, poll,
                           in_place);
        if (so_relock(&u) < 0) return -1;
    }
    if (done) return 0;
    /* hits counted element by element */
    counts = (PyArrayObject *)PyArray_ZEROS(PyArray_NDIM(out), PyArray_DIMS(out), NPY_INTP, 0);
    if (counts == NULL) return -1;
    if (make_plan(&cplan, a, counts, a->upd, NULL) < 0) {
        Py_DECREF(counts);
        return -1;
    }
    so_reduce_kernel(&ck, PyArray_DESCR(counts), SO_COUNT);
    if (small) {
        so_run(&cplan, &ck);
        so_run(&plan, kn);
        so_mean_finish(out, counts, a->include_self);
    }
    else {
        /* stopped, in place: each element holds the mean of what was applied */
        poll = so_unlock(&u);
        if (!so_mean_counted(&plan, &cplan, kn, &ck, nthreads, &so_walk_cost_model, poll,
                             in_place) || in_place) {
            so_mean_finish(out, counts, a->include_self);
        }
        rc = so_relock(&u);
        Py_DECREF(counts);
        return rc;
    }
    Py_DECREF(counts);
    return 0;
}

/* The updates applied to out, which already holds data. */
static int
apply_updates(const so_args *a, PyArrayObject *out, const so_kernel *kn, int nthreads)
{
    PyArrayObject *mask = NULL;
    so_plan plan;
    int rc = 0;
    if (a->op != SO_NONE && !a->include_self) {
        /* which elements were hit: their first update is assigned, not combined */
        mask = (PyArrayObject *)PyArray_ZEROS(PyArray_NDIM(out), PyArray_DIMS(out), NPY_UINT8, 0);
        if (mask == NULL) return -1;
    }
    if (a->mean) {
        rc = apply_mean(a, out, kn, mask, nthreads);
    }
    else if (make_plan(&plan, a, out, a->upd, mask) == 0) {
        rc = run_plan(&plan, kn, a->op, a->nupd, nthreads);
        free(plan.win);
    }
    else {
        rc = -1;
    }
    Py_XDECREF(mask);
    return rc;
}

/* Out of place, a large contiguous data: the output from NumPy's allocator
 * (huge pages) through the output cache, left unwritten until the copy of data
 * and the updates go over it together, band by band (walk/fused). */
static PyArrayObject *
fresh_fused(const so_args *a, const so_kernel *kn, int nthreads)
{
    PyArrayObject *data = a->data, *result;
    PyArray_Descr *dd = PyArray_DESCR(data);
    so_plan plan;
    so_unlocked u;
    so_poll *poll;
    int done;
    Py_INCREF(dd);
    result = so_output_cache_new_array(dd, PyArray_NDIM(data), PyArray_DIMS(data));
    if (result == NULL) return NULL;
    if (so_make_plan(&plan, a->kind, result, a->idx, a->upd, a->axis, NULL) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    poll = so_unlock(&u);
    if (a->op == SO_NONE) so_dedup(&plan, kn->itemsize, poll);
    done = so_run_copying(&plan, kn, nthreads, &so_walk_cost_model, PyArray_BYTES(data),
                          PyArray_NBYTES(data), poll);
    if (!done && !so_parallel_copy(PyArray_BYTES(result), PyArray_BYTES(data),
                                   (size_t)PyArray_NBYTES(data), nthreads, poll)) {
        so_run_threaded(&plan, kn, nthreads, &so_walk_cost_model, poll);
    }
    free(plan.win);
    if (so_relock(&u) < 0) Py_CLEAR(result);
    return result;
}

/* ---- dtypes without a C loop ------------------------------------------------
 *
 * The reductions on longdouble, byte-swapped, datetime, object and user dtypes,
 * and "none" on structured dtypes holding objects, run NumPy's own ufunc.at in
 * scatterops/_generic.py on the destinations this plan computes: the flat
 * C-order position in out of every update element, in update order.
 */
static void
record_block(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n, npy_intp isz)
{
    npy_intp i;
    (void)isz;
    for (i = 0; i < n; i++) {
        npy_intp at = (npy_intp)(o + i * os);
        memcpy((char *)u + i * us, &at, sizeof at);
    }
}

static PyArrayObject *
flat_targets(const so_args *a, PyArrayObject *work)
{
    PyArrayObject *t;
    so_plan plan;
    so_unlocked u;
    so_kernel rec = {record_block, NULL, NULL, NULL, sizeof(npy_intp), 0};
    npy_intp n, j, *v, base = (npy_intp)PyArray_BYTES(work), isz = PyArray_ITEMSIZE(work);
    t = (PyArrayObject *)PyArray_EMPTY(PyArray_NDIM(a->upd), PyArray_DIMS(a->upd), NPY_INTP, 0);
    if (t == NULL) return NULL;
    if (make_plan(&plan, a, work, t, NULL) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    n = PyArray_SIZE(t);
    if (so_run_polled(&plan, &rec, n >= SO_GIL_RELEASE_MIN ? so_poll_signals(&u) : NULL)) {
        Py_DECREF(t);
        return NULL;            /* Ctrl-C, the exception set */
    }
    v = (npy_intp *)PyArray_DATA(t);
    for (j = 0; j < n; j++) v[j] = (v[j] - base) / isz;
    return t;
}

static int
apply_generic(const so_args *a, PyArrayObject *work)
{
    PyArrayObject *targets = flat_targets(a, work);
    PyObject *r;
    if (targets == NULL) return -1;
    so_generic_calls++;
    r = PyObject_CallFunction(so_hook_generic, "ONOOOO", (PyObject *)work, (PyObject *)targets,
                              (PyObject *)a->upd, so_reduction_ufunc(a->op),
                              a->include_self ? Py_True : Py_False, a->mean ? Py_True : Py_False);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* ---- the whole call ---------------------------------------------------------- */

/* Whether a large call on several threads keeps its 1-D contiguous indices in
 * their own dtype: where the owned split runs it (walk/owned.c reads any dtype;
 * the plain walk of such a plan runs as one owner, plan/validate.c checks it as
 * it is), and the copy to intp is saved (docs/design.md, "Checking while
 * walking"). */
static int
keeps_index_dtype(const so_args *a, int nthreads)
{
    PyArrayObject *idx = a->idx, *dst = a->out != NULL ? a->out : a->data;
    int t = so_index_type(PyArray_DESCR(idx));
    so_plan plan;
    if (nthreads < 2 || !a->typed || !a->include_self || a->mean || a->op == SO_NONE ||
            a->kind == SO_ND || a->nupd < SO_GIL_RELEASE_MIN || t < 0 || t == SO_IX_i64 ||
            PyArray_NDIM(idx) != 1 || PyArray_STRIDE(idx, 0) != so_index_size(t) ||
            !PyArray_ISALIGNED(idx)) {
        return 0;
    }
    if (so_make_plan(&plan, a->kind, dst, idx, a->upd, a->axis, NULL) < 0) {
        PyErr_Clear();          /* the general way raises it again */
        return 0;
    }
    return so_owned_split_applies(&plan, &a->kn, nthreads, &so_walk_cost_model);
}

PyObject *
so_call_run(so_args *a, int nthreads)
{
    PyArrayObject *data = a->data, *out = a->out, *work;
    const so_kernel *kn = &a->kn;
    int typed = a->typed, rc = 0, direct, oor = 0;

    if (so_fold_equal_rows(a, nthreads) < 0) return NULL;
    work = (PyArrayObject *)so_call_direct(a, nthreads, &direct);
    if (direct == SO_DIRECT_DONE) return (PyObject *)work;
    rc = direct == SO_DIRECT_OUT_OF_RANGE ? SO_OUT_OF_RANGE : 0;
    if (rc == 0) {
        if (!keeps_index_dtype(a, nthreads) && so_args_intp_indices(a) < 0) return NULL;
        if (typed && out == NULL && a->include_self && !a->mean) {
            PyArrayObject *r = fresh_checked(a, kn, nthreads, &oor);
            if (r != NULL || PyErr_Occurred()) return (PyObject *)r;
        }
        rc = oor ? SO_OUT_OF_RANGE
                 : a->nidx < SO_GIL_RELEASE_MIN ? so_args_check_indices(a, nthreads)
                                                : so_check_indices_long(a, nthreads);
        if (rc < 0) return NULL;
    }
    /* an index outside under wrap, clip or drop, found by the check above before
     * anything was written: the mode's transform of the indices, then on */
    if (rc == SO_OUT_OF_RANGE && so_args_apply_mode(a) < 0) return NULL;
    so_test_rewrite(a->idx);

    if (out == NULL && typed && a->include_self && !a->mean && a->nupd > 0 &&
            PyArray_IS_C_CONTIGUOUS(data) && PyArray_NBYTES(data) >= SO_FUSED_MIN_BYTES) {
        return (PyObject *)fresh_fused(a, kn, nthreads);
    }
    /* where the updates go: out itself, or a fresh copy of data (a C-ordered
     * one for the fallback, and for an object reduction into out, whose
     * elements' own methods may raise halfway: out is written only once all of
     * it succeeded) */
    if (out != NULL && (typed || (PyArray_IS_C_CONTIGUOUS(out) &&
                                  !(a->op != SO_NONE && PyDataType_REFCHK(PyArray_DESCR(out)))))) {
        if (out != data && so_copy_into(out, data) < 0) {
            so_note_interrupted(so_func_names[a->kind], 1);
            return NULL;
        }
        work = out;
        Py_INCREF(work);
    }
    else {
        work = so_fresh_copy(data, nthreads);
        if (work == NULL) return NULL;
    }
    if (a->nupd > 0) {
        rc = typed ? apply_updates(a, work, kn, nthreads) : apply_generic(a, work);
        if (rc < 0) {
            so_note_interrupted(so_func_names[a->kind], work == out);
            Py_DECREF(work);
            return NULL;
        }
    }
    if (out != NULL && work != out) {
        rc = PyArray_CopyInto(out, work);
        Py_DECREF(work);
        if (rc < 0) return NULL;
        Py_INCREF(out);
        return (PyObject *)out;
    }
    return (PyObject *)work;
}

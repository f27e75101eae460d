/*
 * py/checked.c: out-of-place calls of the fast path (py/fast.c) whose index
 * check runs together with the walk instead of before it, on a fresh result
 * nobody else can see yet; a bad index and the result is dropped unseen, and
 * the Python layer raises.
 *
 * Out of place, element by element into a small out (so_checked_while_walking):
 * the check of the indices and the walk run at the same time, on two threads:
 * the walk writes a fresh result nobody else can see, its element kernels clamp
 * every index into its axis (kernels/reduce.c, kernels/assign.c: a bad index writes element 0,
 * not outside), and if the check finds a bad index the result is dropped unseen
 * and the Python layer raises.  Only for walks that are one run of the element
 * kernel on one thread (out small enough to stay in cache, so not split): for
 * 1e6 updates into 1e5 int64 the check was a fifth of the call. */
#include "py/py.h"

#include <pthread.h>

typedef struct {
    PyArrayObject *idx;
    const npy_intp *bounds;
    int nbounds;
    int nthreads;
    npy_intp bad;
} so_check_job;

static void *
check_job_main(void *arg)
{
    so_check_job *j = (so_check_job *)arg;
    j->bad = so_find_bad_index(j->idx, j->bounds, j->nbounds, j->nthreads);
    return NULL;
}

/* Out of place into a large out, when the walk is split by index value
 * (walk/split.c): each thread reads every index anyway, so it checks them as it
 * goes, applying a bad one as 0; one bad index and the fresh result is dropped
 * unseen.  Saves the separate pass over the indices (1e7 int64: 7 ms).  Same
 * returns as so_checked_while_walking, below. */
PyObject *
so_checked_by_owners(int kind, PyArrayObject *data, PyArrayObject *idx, PyArrayObject *upd,
                     int axis, const so_kernel *kn, int nthreads, int *bad)
{
    PyArray_Descr *dd = PyArray_DESCR(data);
    PyArrayObject *result;
    so_plan plan;
    int ok;

    *bad = 0;
    Py_INCREF(dd);
    result = PyArray_NBYTES(data) >= SO_FUSED_MIN_BYTES
             ? so_output_cache_new_array(dd, PyArray_NDIM(data), PyArray_DIMS(data))
             : (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, PyArray_NDIM(data),
                                                     PyArray_DIMS(data), NULL, NULL, 0, NULL);
    if (result == NULL) return NULL;
    if (so_make_plan(&plan, kind, result, idx, upd, axis, NULL) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    /* one group dim stepping through indices, one component: walk/owned.c so_run_row_owned's
     * checking loop is the only one that reads an index.  Blocks of elements
     * go in lists, rows (an expanded index folded into the block, graph message
     * passing) one by one */
    if (plan.gnd != 1 || plan.gs_out[0] != 0 || plan.gs_idx[0] == 0 ||
            (plan.bnd == 0 && kn->list == NULL) || plan.k != 1 || plan.out_overlaps ||
            !so_owned_split_applies(&plan, kn, nthreads)) {
        Py_DECREF(result);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    so_parallel_copy(PyArray_BYTES(result), PyArray_BYTES(data), (size_t)PyArray_NBYTES(data),
                     nthreads);
    ok = so_run_owned_checked(&plan, kn, nthreads);
    Py_END_ALLOW_THREADS
    if (ok != 1) {
        /* 0: an index was bad; -1 cannot happen (applies was checked) but would
         * mean nothing was checked: either way, the Python layer decides */
        Py_DECREF(result);
        *bad = 1;
        return NULL;
    }
    return (PyObject *)result;
}

/* The result, or NULL: with an exception set on an error, with *bad set
 * when an index is bad, with neither when the call is not of this shape. */
PyObject *
so_checked_while_walking(int kind, PyArrayObject *data, PyArrayObject *idx,
                         PyArrayObject *upd, int axis, const so_kernel *kn,
                         const npy_intp *bounds, int nbounds, int nthreads, int *bad)
{
    PyArray_Descr *dd = PyArray_DESCR(data);
    PyArrayObject *result;
    so_plan plan;
    so_check_job job;
    pthread_t tid;
    int started;

    *bad = 0;
    if (kn->elem == NULL || kn->needs_gil) return NULL;
    Py_INCREF(dd);
    result = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, PyArray_NDIM(data),
                                                   PyArray_DIMS(data), NULL, NULL, 0, NULL);
    if (result == NULL) return NULL;
    if (so_make_plan(&plan, kind, result, idx, upd, axis, NULL) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    /* exactly the walk that so_run gives to the element kernel (walk/walk.c run_row):
     * one group dim that steps through indices, element blocks, one component */
    if (plan.gnd != 1 || plan.gs_out[0] != 0 || plan.gs_idx[0] == 0 || plan.bnd != 0 ||
            plan.k != 1 || plan.out_overlaps) {
        Py_DECREF(result);
        return NULL;
    }
    job.idx = idx;
    job.bounds = bounds;
    job.nbounds = nbounds;
    job.nthreads = nthreads;
    job.bad = -1;
    Py_BEGIN_ALLOW_THREADS
    started = pthread_create(&tid, NULL, check_job_main, &job) == 0;
    memcpy(PyArray_BYTES(result), PyArray_BYTES(data), (size_t)PyArray_NBYTES(data));
    so_run(&plan, kn);
    if (started) pthread_join(tid, NULL);
    else check_job_main(&job);
    Py_END_ALLOW_THREADS
    if (job.bad >= 0) {
        Py_DECREF(result);
        *bad = 1;
        return NULL;
    }
    return (PyObject *)result;
}

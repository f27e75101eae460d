/*
 * py/partial.c: the direct form (direct.c) of a 1-D call on several threads,
 * split by updates, for the reductions whose result does not depend on order:
 * integer add, sub, mul, max and min (kernels/partial.c).  A float sum in C
 * order cannot be split so, nor "none" (the last update wins): those keep
 * their order per element (walk/split.c splits them by output).
 *
 * The updates are cut into one contiguous share per thread.  The first share
 * goes straight into the call's own work array (a fresh result, or direct.c's
 * scratch copy of data: never the user's out); every other share into a
 * private partial output of out's size, filled with the operation's identity
 * by the thread that uses it.  Once all are done, the partials are merged into
 * the work array in order.  For integers, which wrap, the bits are those of
 * the loop in C order, on any number of threads.  Each share's loop tests its
 * indices as it reads them (kernels/indexed.c); on a bad one nothing reaches
 * the caller's out, and the error names the first bad index in C order (the
 * first share that met one).
 *
 * It pays where one thread's loop is bound by its chain of loads and stores
 * into a small out (a histogram): 1e6 int64 updates into 1e3 int64 take about
 * half the time on two threads (docs/performance.md).  The partials cost
 * (threads - 1) x out's bytes of memory for the call, so with the cost model
 * on they are used only for an out within one core's L2, with at least
 * PARTIAL_MIN_SHARE updates a thread and PARTIAL_MIN_RATIO times as many
 * updates as out has elements (the merge then costs little beside the loop).
 * A late pool backs this kind of job off as any other (base/threads.c).
 */
#include "py/py.h"

unsigned long so_partial_calls;

#define PARTIAL_MIN_SHARE ((npy_intp)1 << 15)
#define PARTIAL_MIN_RATIO 4

typedef struct {
    so_indexed_fn loop;
    void (*fill)(char *p, npy_intp n);  /* NULL: o is the work array, already set */
    char *o;
    npy_intp os, size, isz;
    const char *idx, *u;
    npy_intp lo, hi, us;
    npy_intp bad;                       /* first bad position in the call, -1, or stopped */
    so_poll *poll;
} partial_task;

static void *
partial_main(void *arg)
{
    partial_task *t = (partial_task *)arg;
    npy_intp c, m, pos;
    t->bad = -1;
    if (t->fill != NULL) t->fill(t->o, t->size);
    for (c = t->lo; c < t->hi; c += m) {
        m = t->hi - c < SO_PIECE ? t->hi - c : SO_PIECE;
        if (so_stopped(t->poll)) {
            t->bad = SO_CHECK_STOPPED;
            break;
        }
        pos = t->loop(t->o, t->os, t->size, t->idx + c * t->isz, t->u + c * t->us, m);
        if (pos >= 0) {
            t->bad = c + pos;
            break;
        }
    }
    return NULL;
}

int
so_partial_threads(const so_args *a, npy_intp n, npy_intp size, int nthreads)
{
    npy_intp bytes = size * PyArray_ITEMSIZE(a->data);
    if (nthreads < 2 || a->mean || !a->include_self ||
            so_partial_kernel_for(PyArray_DESCR(a->data), a->op) == NULL ||
            bytes > so_cache_bytes(2)) {
        return 1;
    }
    if (!so_cost_model_on()) {
        /* every split that can be made is made (the tests' setting) */
        return n / 2 < nthreads ? (int)(n / 2) : nthreads;
    }
    if (n < PARTIAL_MIN_RATIO * size) return 1;
    if (n / PARTIAL_MIN_SHARE < nthreads) return (int)(n / PARTIAL_MIN_SHARE);
    return nthreads;
}

npy_intp
so_run_partials(const so_args *a, const so_direct_form *form, char *o, npy_intp os,
                npy_intp size, int nthreads, so_poll *poll)
{
    const so_partial_kernel *pk = so_partial_kernel_for(PyArray_DESCR(a->data), a->op);
    npy_intp isz = PyArray_ITEMSIZE(a->idx), esz = PyArray_ITEMSIZE(a->data), n = form->n;
    partial_task one, *tasks;
    char *partials;
    npy_intp bad = -1;
    int t, ran;

    if (pk == NULL || nthreads < 2) return SO_PARTIAL_DECLINED;
    partials = PyMem_RawMalloc((size_t)(nthreads - 1) * (size_t)(size > 0 ? size : 1) *
                               (size_t)esz);
    if (partials == NULL) return SO_PARTIAL_DECLINED;       /* one thread needs none */
    tasks = so_task_array(&one, sizeof one, &nthreads);
    if (nthreads < 2) {
        so_task_array_free(tasks, &one);
        PyMem_RawFree(partials);
        return SO_PARTIAL_DECLINED;
    }
    for (t = 0; t < nthreads; t++) {
        partial_task *k = &tasks[t];
        k->loop = form->elems;
        k->fill = t == 0 ? NULL : pk->fill;
        k->o = t == 0 ? o : partials + (size_t)(t - 1) * (size_t)size * (size_t)esz;
        k->os = t == 0 ? os : esz;
        k->size = size;
        k->isz = isz;
        k->idx = PyArray_BYTES(a->idx);
        k->u = PyArray_BYTES(a->upd);
        k->us = form->us;
        k->lo = n / nthreads * t;
        k->hi = t + 1 == nthreads ? n : n / nthreads * (t + 1);
        k->bad = -1;
        k->poll = poll;
    }
    ran = so_run_tasks_report(partial_main, tasks, sizeof *tasks, nthreads, poll,
                              SO_JOB_KIND_PARTIAL + so_log2(n));
    if (ran == 0) {
        bad = SO_PARTIAL_DECLINED;      /* nothing ran: the caller's one-thread loop */
    }
    else {
        __atomic_fetch_add(&so_partial_calls, 1, __ATOMIC_RELAXED);
        /* the first share with a bad index has the first one in C order */
        for (t = 0; t < nthreads && bad == -1; t++) bad = tasks[t].bad;
        if (bad == -1 && so_stopped(poll)) bad = SO_CHECK_STOPPED;
        for (t = 1; t < nthreads && bad == -1; t++) pk->merge(o, os, tasks[t].o, size);
    }
    so_task_array_free(tasks, &one);
    PyMem_RawFree(partials);
    return bad;
}

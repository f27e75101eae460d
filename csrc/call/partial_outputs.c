/*
 * call/partial_outputs.c: the direct form (direct.c) of a 1-D call on several threads,
 * split by updates, for the reductions whose result does not depend on order:
 * integer add, sub, mul, max and min (kernels/partial.c).  A float sum in C
 * order cannot be split so, nor "none" (the last update wins): those keep
 * their order per element (walk/split.c splits them by output).
 *
 * The updates are cut into chunks, claimed in order by every thread of the
 * call.  Each thread reduces the chunks it claims into a target of its own:
 * the first, the call's own work array (a fresh result, or direct.c's scratch
 * copy of data: never the user's out); every other, a private partial output
 * of out's size, filled with the operation's identity when its thread claims
 * its first chunk.  Once all are done, the partials are merged into the work
 * array.  For integers, which wrap, the bits are those of the loop in C order
 * whoever took which chunk.  A worker that wakes late takes fewer chunks (none:
 * its partial is neither filled nor merged), so the caller never waits for a
 * fixed share.  Each chunk's loop tests its indices as it reads them
 * (kernels/indexed.c); on a bad one nothing reaches the caller's out, and the
 * error names the first bad index in C order.
 *
 * It pays where one thread's loop is bound by its chain of loads and stores
 * into a small out (a histogram): docs/design.md, "The direct form on several
 * threads".  The partials cost (threads - 1) x out's bytes of memory for the
 * call, so with the cost model on they are used only for an out within one
 * core's L2, with enough updates a thread and enough updates an element of out
 * that the merge costs little beside the loop (choose.c decides, from
 * call/cost.h's thresholds).
 * A late pool backs this kind of job off as any other (base/threads.c).
 */
#include "call/call.h"

#include <stdlib.h>

unsigned long so_partial_calls;

/* the updates are claimed in chunks of at most this many (and about eight a
 * thread), so that a worker that wakes late takes less, not the caller's time */
#define PARTIAL_CHUNK_MAX ((npy_intp)1 << 14)
#define PARTIAL_CHUNK_MIN ((npy_intp)64)

/* One call's shares: the chunks of updates, claimed in order from next. */
typedef struct {
    so_indexed_fn loop;
    const so_partial_kernel *pk;
    char *work, *partials;
    npy_intp os, size, esz, isz, us, n, chunk, nchunks;
    const char *idx, *u;
    npy_intp next;                      /* the next chunk to claim (atomic) */
    int halt;                           /* a bad index or a stop was met (atomic) */
    so_poll *poll;
} partial_job;

/* One thread's share: slot 0 reduces into the work array, slot s > 0 into
 * partial s - 1, filled with the identity when it claims its first chunk. */
typedef struct {
    partial_job *job;
    int slot, used;
    npy_intp bad;                       /* first bad position met, -1, or stopped */
} partial_task;

static void *
partial_main(void *arg)
{
    partial_task *t = (partial_task *)arg;
    partial_job *j = t->job;
    char *o = t->slot == 0 ? j->work : j->partials + (size_t)(t->slot - 1) * (size_t)j->size *
                                                    (size_t)j->esz;
    npy_intp os = t->slot == 0 ? j->os : j->esz, c, lo, m, pos;
    t->bad = -1;
    t->used = 0;
    /* chunks are claimed in order, so every chunk before one claimed is
     * claimed too and runs to its end or to its first bad index: the least
     * bad position met is the first in C order */
    while (!__atomic_load_n(&j->halt, __ATOMIC_RELAXED)) {
        c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (c >= j->nchunks) break;
        if (!t->used && t->slot > 0) j->pk->fill(o, j->size);
        t->used = 1;
        if (so_stopped(j->poll)) {
            t->bad = SO_CHECK_STOPPED;
            __atomic_store_n(&j->halt, 1, __ATOMIC_RELAXED);
            break;
        }
        lo = c * j->chunk;
        m = j->n - lo < j->chunk ? j->n - lo : j->chunk;
        pos = j->loop(o, os, j->size, j->idx + lo * j->isz, j->u + lo * j->us, m);
        if (pos >= 0) {
            t->bad = lo + pos;
            __atomic_store_n(&j->halt, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

npy_intp
so_run_partials(const so_call *c, const so_direct_form *form, char *o, npy_intp os,
                npy_intp size, int nthreads, so_poll *poll)
{
    const so_partial_kernel *pk = so_partial_kernel_for(c->data.dtype, c->op);
    partial_job job;
    partial_task one, *tasks;
    npy_intp bad = -1, chunk;
    int t, stopped = 0;

    if (pk == NULL || nthreads < 2) return SO_PARTIAL_DECLINED;
    chunk = form->n / (8 * (npy_intp)nthreads);
    chunk = chunk < PARTIAL_CHUNK_MIN ? PARTIAL_CHUNK_MIN
            : chunk > PARTIAL_CHUNK_MAX ? PARTIAL_CHUNK_MAX : chunk;
    job.loop = form->elems;
    job.pk = pk;
    job.work = o;
    job.os = os;
    job.size = size;
    job.esz = c->data.itemsize;
    job.isz = c->idx.itemsize;
    job.us = form->us;
    job.n = form->n;
    job.chunk = chunk;
    job.nchunks = (form->n + chunk - 1) / chunk;
    job.idx = c->idx.bytes;
    job.u = c->upd.bytes;
    job.next = 0;
    job.halt = 0;
    job.poll = poll;
    job.partials = malloc((size_t)(nthreads - 1) * (size_t)(size > 0 ? size : 1) *
                                   (size_t)job.esz);
    if (job.partials == NULL) return SO_PARTIAL_DECLINED;   /* one thread needs none */
    tasks = so_task_array(&one, sizeof one, &nthreads);
    if (nthreads < 2) {
        so_task_array_free(tasks, &one);
        free(job.partials);
        return SO_PARTIAL_DECLINED;
    }
    for (t = 0; t < nthreads; t++) {
        tasks[t].job = &job;
        tasks[t].slot = t;
        tasks[t].used = 0;
        tasks[t].bad = -1;
    }
    if (so_run_tasks_report(partial_main, tasks, sizeof *tasks, nthreads, poll,
                            SO_JOB_KIND_PARTIAL + so_log2(form->n)) == 0) {
        bad = SO_PARTIAL_DECLINED;      /* nothing ran: the caller's one-thread loop */
    }
    else {
        __atomic_fetch_add(&so_partial_calls, 1, __ATOMIC_RELAXED);
        for (t = 0; t < nthreads; t++) {
            if (tasks[t].bad == SO_CHECK_STOPPED) stopped = 1;
            else if (tasks[t].bad >= 0 && (bad == -1 || tasks[t].bad < bad)) bad = tasks[t].bad;
        }
        if (stopped || (bad == -1 && so_stopped(poll))) bad = SO_CHECK_STOPPED;
        for (t = 1; t < nthreads && bad == -1; t++) {
            if (tasks[t].used) {
                pk->merge(o, os, job.partials + (size_t)(t - 1) * (size_t)size * (size_t)job.esz,
                          size);
            }
        }
    }
    so_task_array_free(tasks, &one);
    free(job.partials);
    return bad;
}

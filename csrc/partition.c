/*
 * partition.c: threads for element-wise scatters (np.add.at's case: every
 * update hits one element chosen by its index, no slice to split).
 *
 * Output ownership again keeps the result bit-identical: thread t owns the
 * elements whose first index component lies in the t-th part of its axis.  The
 * updates go through in chunks, in C order.  In a chunk, each thread first
 * sorts its share of the positions into one list per owner (destination and
 * source offsets, in order); after a barrier, each owner applies the lists made
 * for it, producer by producer -- that is, in C order -- with the destination
 * of an update a few places ahead prefetched.  A barrier ends the chunk.  The
 * lists take a fixed amount of memory, however many updates there are.
 */
#include "scatterops.h"
#include <pthread.h>

#define SO_CHUNK ((npy_intp)1 << 16)
#define SO_MIN_PARTITION_WORK ((npy_intp)1 << 18)

typedef struct {
    const so_plan *p;
    const so_kernel *kn;
    int nthreads;
    npy_intp total;             /* positions along the one group dim */
    npy_intp cap;               /* pairs each (producer, owner) list can hold */
    npy_intp *lists;            /* [producer][owner][cap][2] */
    npy_intp *counts;           /* [producer][owner] */
    pthread_barrier_t barrier;
    /* the start gate: workers wait until the team is known (go = 1) or
     * called off (go = -1) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int go;
} so_shared;

typedef struct {
    so_shared *s;
    int t;
} so_worker;

static inline int
owner_of(npy_intp v, npy_intp size, int nthreads)
{
    /* owner t holds [size*t/T, size*(t+1)/T) */
    int t = (int)((double)v * nthreads / (double)size);
    if (t >= nthreads) t = nthreads - 1;
    while (t > 0 && v < size * t / nthreads) t--;
    while (t + 1 < nthreads && v >= size * (t + 1) / nthreads) t++;
    return t;
}

static void work(so_worker *w);

static void *
worker_main(void *arg)
{
    so_worker *w = (so_worker *)arg;
    so_shared *s = w->s;
    int go;
    pthread_mutex_lock(&s->lock);
    while (s->go == 0) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    go = s->go;
    pthread_mutex_unlock(&s->lock);
    if (go > 0) {
        work(w);
    }
    return NULL;
}

static void
work(so_worker *w)
{
    so_shared *s = w->s;
    const so_plan *p = s->p;
    const int T = s->nthreads, me = w->t;
    const npy_intp gso = p->gs_out[0], gsu = p->gs_upd[0], gsi = p->gs_idx[0];
    npy_intp c0;

    for (c0 = 0; c0 < s->total; c0 += SO_CHUNK) {
        npy_intp c1 = c0 + SO_CHUNK < s->total ? c0 + SO_CHUNK : s->total;
        npy_intp lo = c0 + (c1 - c0) * me / T, hi = c0 + (c1 - c0) * (me + 1) / T, i;
        npy_intp *mycount = s->counts + (npy_intp)me * T;
        int o;

        /* 1: my share of the chunk, into one list per owner */
        for (o = 0; o < T; o++) mycount[o] = 0;
        for (i = lo; i < hi; i++) {
            const char *pi = p->idx + i * gsi;
            npy_intp oo = 0, v0 = 0;
            int j;
            for (j = 0; j < p->k; j++) {
                npy_intp v = so_wrap(so_load_intp(pi + j * p->istep), p->isize[j]);
                if (j == 0) v0 = v;
                oo += v * p->is_out[j];
            }
            o = owner_of(v0, p->isize[0], T);
            {
                npy_intp *pr = s->lists + (((npy_intp)me * T + o) * s->cap + mycount[o]) * 2;
                pr[0] = i * gso + oo;
                pr[1] = i * gsu;
                mycount[o]++;
            }
        }
        pthread_barrier_wait(&s->barrier);

        /* 2: the lists made for me, producer by producer: C order */
        for (o = 0; o < T; o++) {
            npy_intp n = s->counts[(npy_intp)o * T + me];
            if (n > 0) {
                s->kn->pairs(p->out, p->upd, s->lists + (((npy_intp)o * T + me) * s->cap) * 2,
                             n, s->kn->itemsize);
            }
        }
        pthread_barrier_wait(&s->barrier);
    }
}

static void
open_gate(so_shared *s, int go)
{
    pthread_mutex_lock(&s->lock);
    s->go = go;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

int
so_run_partitioned(const so_plan *p, const so_kernel *kn, int nthreads)
{
    so_shared s;
    so_worker *workers;
    pthread_t *tids;
    int t, team = 1;

    if (nthreads < 2 || p->gnd != 1 || p->bnd != 0 || p->mask != NULL || p->nwin >= 0 ||
        p->own_hi > p->own_lo || kn->pairs == NULL || kn->needs_gil || p->k < 1 ||
        p->isize[0] < nthreads || p->gshape[0] < SO_MIN_PARTITION_WORK) {
        return 0;
    }
    workers = malloc(sizeof *workers * (size_t)nthreads);
    tids = malloc(sizeof *tids * (size_t)nthreads);
    if (workers == NULL || tids == NULL) {
        free(workers); free(tids);
        return 0;
    }
    s.p = p;
    s.kn = kn;
    s.total = p->gshape[0];
    s.lists = s.counts = NULL;
    s.go = 0;
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.cond, NULL);
    /* start what threads can be had; the team is those plus this one */
    for (t = 1; t < nthreads; t++) {
        workers[t].s = &s;
        workers[t].t = t;
        if (pthread_create(&tids[t], NULL, worker_main, &workers[t]) != 0) {
            break;
        }
        team++;
    }
    s.nthreads = team;
    s.cap = SO_CHUNK / team + 1;
    if (team > 1) {
        s.lists = malloc(sizeof(npy_intp) * 2 * (size_t)s.cap * (size_t)team * (size_t)team);
        s.counts = malloc(sizeof(npy_intp) * (size_t)team * (size_t)team);
    }
    if (team < 2 || s.lists == NULL || s.counts == NULL ||
            pthread_barrier_init(&s.barrier, NULL, (unsigned)team) != 0) {
        open_gate(&s, -1);      /* call it off: the workers return at once */
        for (t = 1; t < team; t++) pthread_join(tids[t], NULL);
        team = 0;
    }
    else {
        open_gate(&s, 1);
        workers[0].s = &s;
        workers[0].t = 0;
        work(&workers[0]);
        for (t = 1; t < team; t++) pthread_join(tids[t], NULL);
        pthread_barrier_destroy(&s.barrier);
    }
    pthread_mutex_destroy(&s.lock);
    pthread_cond_destroy(&s.cond);
    free(s.lists); free(s.counts); free(workers); free(tids);
    return team;
}

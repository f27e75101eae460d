/*
 * walk/fused.c: out of place, the copy of data fused into the walk.
 *
 * A fresh out must first hold data, then take the updates.  Done as two passes,
 * out is written twice and read back once from memory.  When the outermost
 * group dim owns a band of out (every destination of the groups at coordinate c
 * lies in [c*S, (c+1)*S), S its stride), each thread instead takes a range of
 * bands and, a few bands at a time, copies them from data and applies their
 * updates while they are still in cache.  Under reduction "none" with a winner
 * list (plan/dedup.c) the bytes a winner overwrites are not copied at all: only the
 * gaps between the winners' slices are.  The walk inside a band is so_run, so
 * the result is the one the two passes give.
 */
#include "walk/walk.h"

#include <stdlib.h>

#define SO_TILE_BYTES ((npy_intp)256 << 10)

typedef struct {
    so_plan plan;          /* narrowed to this task's bands */
    const so_kernel *kn;
    const char *src;       /* data at the task's first band */
    npy_intp lo, hi;       /* bands [lo, hi) of the whole plan */
    npy_intp band;         /* S */
    const npy_intp *gaps;  /* (start, end) byte pairs within a band to copy */
    npy_intp ngaps;
    so_poll *poll;
} so_fused_task;

static void
copy_bands(char *o, const char *s, npy_intp nbands, npy_intp band, const npy_intp *gaps,
           npy_intp ngaps)
{
    npy_intp b, g;
    if (ngaps == 1 && gaps[0] == 0 && gaps[1] == band) {
        memcpy(o, s, (size_t)(nbands * band));
        return;
    }
    for (b = 0; b < nbands; b++) {
        for (g = 0; g < ngaps; g++) {
            memcpy(o + b * band + gaps[2 * g], s + b * band + gaps[2 * g],
                   (size_t)(gaps[2 * g + 1] - gaps[2 * g]));
        }
    }
}

static void *
fused_main(void *arg)
{
    so_fused_task *t = (so_fused_task *)arg;
    npy_intp per = SO_TILE_BYTES / t->band, lo;
    if (per < 1) per = 1;
    for (lo = t->lo; lo < t->hi; lo += per) {
        npy_intp hi = lo + per < t->hi ? lo + per : t->hi;
        so_plan tile = t->plan;
        if (so_stopped(t->poll)) break;
        so_narrow(&tile, 0, lo - t->lo, hi - t->lo);
        copy_bands(tile.out, t->src + (lo - t->lo) * t->band, hi - lo, t->band, t->gaps,
                   t->ngaps);
        if (so_run_polled(&tile, t->kn, t->poll)) break;
    }
    return NULL;
}

/* The bytes within a band that no winner overwrites, as (start, end) pairs in a
 * malloc'd array; the whole band when there is no winner list or the winners'
 * slices are not contiguous runs in order.  NULL if memory is short. */
static npy_intp *
band_gaps(const so_plan *p, npy_intp band, npy_intp itemsize, npy_intp *ngaps)
{
    npy_intp *gaps, pos = 0, run, w, n = 0;
    int whole = p->nwin < 0 || p->gnd > 1 || p->bnd != 1 || p->bs_out[0] != itemsize;
    gaps = malloc(sizeof *gaps * (size_t)(2 * (whole ? 1 : p->nwin + 1)));
    if (gaps == NULL) return NULL;
    if (!whole) {
        run = p->bshape[0] * itemsize;
        for (w = 0; w < p->nwin && !whole; w++) {
            npy_intp at = p->win[2 * w];
            if (at < pos || at + run > band) {
                whole = 1;
            }
            else {
                if (at > pos) {
                    gaps[2 * n] = pos;
                    gaps[2 * n + 1] = at;
                    n++;
                }
                pos = at + run;
            }
        }
        if (!whole && pos < band) {
            gaps[2 * n] = pos;
            gaps[2 * n + 1] = band;
            n++;
        }
    }
    if (whole) {
        gaps[0] = 0;
        gaps[1] = band;
        n = 1;
    }
    *ngaps = n;
    return gaps;
}

/* The band stride S if the outermost group dim owns bands of out, else 0. */
static npy_intp
owned_band(const so_plan *p, npy_intp itemsize)
{
    npy_intp reach = itemsize, w;
    int d, j;
    if (p->gnd < 1 || p->gs_out[0] <= 0 || p->mask != NULL) return 0;
    for (d = 1; d < p->gnd; d++) {
        if (p->gs_out[d] < 0) return 0;
        reach += (p->gshape[d] - 1) * p->gs_out[d];
    }
    if (p->nwin >= 0) {
        for (w = 0; w < p->nwin; w++) {
            if (p->win[2 * w] < 0) return 0;
        }
        if (p->nwin > 0) reach += p->win[2 * (p->nwin - 1)];   /* sorted by offset */
    }
    else {
        for (j = 0; j < p->k; j++) {
            if (p->is_out[j] < 0) return 0;
            reach += (p->isize[j] - 1) * p->is_out[j];
        }
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] < 0) return 0;
        reach += (p->bshape[d] - 1) * p->bs_out[d];
    }
    return reach <= p->gs_out[0] ? p->gs_out[0] : 0;
}

int
so_run_copying(const so_plan *p, const so_kernel *kn, int nthreads, const so_walk_costs *c,
               const char *src, npy_intp nbytes, so_poll *poll)
{
    npy_intp band, nb, gap_n, *gaps;
    so_fused_task one, *tasks;
    int d, t;

    for (d = 0; d < p->gnd; d++) if (p->gshape[d] == 0) return 0;
    for (d = 0; d < p->bnd; d++) if (p->bshape[d] == 0) return 0;
    if (kn->needs_gil) return 0;
    band = owned_band(p, kn->itemsize);
    if (band == 0 || p->gshape[0] * band > nbytes) return 0;
    nb = p->gshape[0];
    gaps = band_gaps(p, band, kn->itemsize, &gap_n);
    if (gaps == NULL) return 0;

    if ((npy_intp)nthreads > nbytes / c->fused_per_thread) {
        nthreads = (int)(nbytes / c->fused_per_thread);
    }
    if (nthreads > nb) nthreads = (int)nb;
    tasks = so_task_array(&one, sizeof one, &nthreads);
    for (t = 0; t < nthreads; t++) {
        so_fused_task *k = &tasks[t];
        k->lo = nb * t / nthreads;
        k->hi = nb * (t + 1) / nthreads;
        k->plan = *p;
        so_narrow(&k->plan, 0, k->lo, k->hi);
        k->kn = kn;
        k->src = src + k->lo * band;
        k->band = band;
        k->gaps = gaps;
        k->ngaps = gap_n;
        k->poll = poll;
    }
    so_run_tasks_polled(fused_main, tasks, sizeof *tasks, nthreads, poll);
    /* the bytes past the last band: no group writes them */
    if (nb * band < nbytes) {
        memcpy(p->out + nb * band, src + nb * band, (size_t)(nbytes - nb * band));
    }
    free(gaps);
    so_task_array_free(tasks, &one);
    return 1;
}

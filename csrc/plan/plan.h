/*
 * plan/plan.h: the arrays of a checked call as a geometry the walk (walk/) can
 * follow, the index check that comes before it, and the dedup / hit counting
 * that rewrite or read a plan's index dims.
 *
 * A group's destination in out is
 *
 *     group offset (from its coordinates) + sum_j wrap(idx_j) * axis_stride_j
 *
 * and its source in updates comes from the same coordinates.  A plan is
 * geometry only: the per-call state of a walk (a thread's share, hit counts,
 * index checks) lives in walk/walk.h's so_walk.
 */
#ifndef SO_PLAN_H
#define SO_PLAN_H

#include "base/base.h"
#include "base/array.h"

#include <stdlib.h>

enum so_kind { SO_UPDATE = 0, SO_ND = 1, SO_ELEMENTS = 2 };

typedef struct {
    char *out;
    const char *upd;
    const char *idx;
    int ixtype;           /* the dtype of idx (SO_IX_*): intp (SO_IX_i64), except where
                           * only owners walk the plan (walk/owned.c reads any) */
    char *mask;           /* NULL, or a uint8 array: 0 until an element is first hit */

    int gnd;              /* group dims, in C order of the update index space */
    npy_intp gshape[SO_MAXDIMS];
    npy_intp gs_out[SO_MAXDIMS], gs_upd[SO_MAXDIMS], gs_idx[SO_MAXDIMS], gs_mask[SO_MAXDIMS];

    int k;                /* index components per group */
    npy_intp istep;       /* byte stride between the components in idx */
    npy_intp isize[SO_MAXDIMS], is_out[SO_MAXDIMS], is_mask[SO_MAXDIMS];

    int bnd;              /* block dims (coalesced) */
    npy_intp bshape[SO_MAXDIMS];
    npy_intp bs_out[SO_MAXDIMS], bs_upd[SO_MAXDIMS], bs_mask[SO_MAXDIMS];

    /* dedup.c: with nwin >= 0 the index dims are gone from the group dims and
     * each group combination applies the blocks at win[2w] (out offset) from
     * win[2w + 1] (updates offset), w < nwin: the visible writes only. */
    npy_intp nwin;
    npy_intp *win;

    /* out has elements that share bytes (a view made with as_strided): writes to
     * different coordinates may then collide, so nothing reorders them (no
     * winner lists, no hit counts per slice, one thread) */
    int out_overlaps;
} so_plan;

/* plan.c: fills *p, or returns -1 (nothing raised) when the arrays do not fit
 * together as kind says: a checked call always fits. */
int so_make_plan(so_plan *p, int kind, const so_array *out, const so_array *idx,
                 const so_array *upd, int axis, const so_array *mask);

/* Whether p is one run of single index values: one group dim stepping through
 * the indices (not through out), one index component, an out whose elements
 * share no bytes; *bnd is then its number of block dims (0: single elements).
 * The check fused with the walk takes such plans only (call/checked_walk.c). */
static inline int
so_plan_one_index_run(const so_plan *p, int *bnd)
{
    *bnd = p->bnd;
    return p->gnd == 1 && p->gs_out[0] == 0 && p->gs_idx[0] != 0 && p->k == 1 &&
           !p->out_overlaps;
}

/* The memory a plan holds (dedup.c's winner list), freed. */
static inline void
so_plan_release(so_plan *p)
{
    free(p->win);
    p->win = NULL;
}

/* dedup.c: for reduction "none" on slices, keep only the last write to each
 * slice (returns 1 if the plan now holds a winner list to free()); stopped by
 * poll, the plan is left as it was. */
int so_dedup(so_plan *p, npy_intp itemsize, so_poll *poll);
/* dedup.c: (destination offset, hits) pairs sorted by offset, for the index
 * dims after the first *lead group dims; NULL if the plan is not of that shape
 * or poll stopped the count. */
npy_intp *so_count_hits(const so_plan *p, int *lead, npy_intp *n, so_poll *poll);

/* validate.c: flat C-order position of the first index out of range, or -1;
 * long runs are checked on up to nthreads threads. */
npy_intp so_find_bad_index(const so_array *idx, const npy_intp *bounds, int nbounds, int nthreads);
/* validate.c: the same asking poll every SO_PIECE values; -2 if stopped. */
#define SO_CHECK_STOPPED ((npy_intp)-2)
npy_intp so_find_bad_index_polled(const so_array *idx, const npy_intp *bounds, int nbounds,
                                  int nthreads, so_poll *poll);

/* check_run.c: the first position in the contiguous, aligned run v[0..n) of
 * index type itype (base.h) whose value is outside [-size, size) (unsigned:
 * [0, size)), or -1; asks poll every SO_PIECE values (SO_CHECK_STOPPED). */
npy_intp so_first_bad_run(const char *v, int itype, npy_intp n, npy_intp size, so_poll *poll);

#endif

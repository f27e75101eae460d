/*
 * walk/block.h: private to walk/ -- one group's destination and one block's
 * kernel calls, shared by the plain walk (walk.c) and a thread's owned share
 * (owned.c), static inline so that neither pays a call for them; and the
 * owned share's entry points that walk.c and split.c call.
 */
#ifndef SO_WALK_BLOCK_H
#define SO_WALK_BLOCK_H

#include "walk/walk.h"
#include "base/nditer.h"

/* Offset of a group's destination in out (and in mask) from its index components. */
static inline void
dest_offsets(const so_plan *p, const char *pi, npy_intp *o_off, npy_intp *m_off)
{
    npy_intp oo = 0, mo = 0;
    int j;
    for (j = 0; j < p->k; j++) {
        npy_intp v = so_clamp(so_load_intp(pi + j * p->istep), p->isize[j]);
        oo += v * p->is_out[j];
        mo += v * p->is_mask[j];
    }
    *o_off = oo;
    *m_off = mo;
}

/* One row of a block with include_self=False: assign on first hit, else combine. */
static inline void
row_first(const so_kernel *kn, char *o, npy_intp os, const char *u, npy_intp us,
          char *m, npy_intp ms, npy_intp n)
{
    npy_intp i;
    for (i = 0; i < n; i++) {
        char *oi = o + i * os;
        const char *ui = u + i * us;
        char *mi = m + i * ms;
        if (*mi) {
            kn->block(oi, 0, ui, 0, 1, kn->itemsize);
        }
        else {
            *mi = 1;
            memcpy(oi, ui, (size_t)kn->itemsize);
        }
    }
}


/* Apply the kernel to one block: its innermost dim as one kernel call, the outer
 * dims counted here. */
static inline void
run_block(const so_plan *p, const so_kernel *kn, char *o, const char *u, char *m)
{
    int last = p->bnd - 1;
    npy_intp n, os, us, ms;
    so_nditer it;

    if (p->bnd == 0) {
        if (m) {
            row_first(kn, o, 0, u, 0, m, 0, 1);
        }
        else {
            kn->block(o, 0, u, 0, 1, kn->itemsize);
        }
        return;
    }
    if (last == 0 && m == NULL) {
        /* one row: the kernel straight on it (most blocks) */
        kn->block(o, p->bs_out[0], u, p->bs_upd[0], p->bshape[0], kn->itemsize);
        return;
    }
    n = p->bshape[last];
    os = p->bs_out[last];
    us = p->bs_upd[last];
    ms = p->bs_mask[last];
    so_nd_init(&it, last, p->bshape, 3, (const npy_intp *const[]){p->bs_out, p->bs_upd, p->bs_mask});
    do {
        if (m) {
            row_first(kn, o + it.off[0], os, u + it.off[1], us, m + it.off[2], ms, n);
        }
        else {
            kn->block(o + it.off[0], os, u + it.off[1], us, n, kn->itemsize);
        }
    } while (so_nd_next(&it));
}

/* owned.c: the groups of one row that w owns (w->owned), n of them from the
 * given pointers, with the row's strides. */
void so_run_row_owned(const so_plan *p, const so_walk *w, const so_kernel *kn, char *o,
                      const char *u, const char *pi, char *m, npy_intp n, npy_intp gso,
                      npy_intp gsu, npy_intp gsi, npy_intp gsm);
/* owned.c: whether the rows of this walk are compacted several at a time. */
int so_vector_compaction(const so_plan *p);

#endif

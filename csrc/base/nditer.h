/*
 * base/nditer.h: the one N-d counter loop and the one dimension-merging helper
 * of the C core, static inline so that the walks stay as fast as the loops they
 * replace.
 *
 * so_nditer counts through the C order of nd dims (extents shape[0..nd), the
 * last fastest) and keeps, for up to SO_ND_MAXOPS operands, the byte offset of
 * the current position (off[k] = sum_d count[d] * stride[k][d]).  Offsets, not
 * pointers: an operand may be absent (a NULL mask), and NULL + 0 is not C.
 * The arrays of shapes and strides are the caller's (not copied).  Typical use,
 * the innermost dim being the caller's own row loop:
 *
 *     so_nditer it;
 *     so_nd_init(&it, nd - 1, shape, 2, (const npy_intp *const[]){sa, sb});
 *     do { row(a + it.off[0], b + it.off[1]); } while (so_nd_next(&it));
 *
 * With nd == 0 the body runs once.  A zero extent is not skipped: callers that
 * can meet one test for it first (as the loops before this one did).
 *
 * so_nd_push appends a dim to a list of dims being built, dropping an extent of
 * 1 and merging it into the previous dim when every operand steps through both
 * as one (C order, and so every flat position, is kept).
 */
#ifndef SO_NDITER_H
#define SO_NDITER_H

#include "base/base.h"

#define SO_ND_MAXOPS 4

typedef struct {
    int nd, nop;
    const npy_intp *shape;
    const npy_intp *stride[SO_ND_MAXOPS];
    npy_intp off[SO_ND_MAXOPS];
    npy_intp count[SO_MAXDIMS];
} so_nditer;

static inline void
so_nd_init(so_nditer *it, int nd, const npy_intp *shape, int nop,
           const npy_intp *const *strides)
{
    int d, k;
    it->nd = nd;
    it->nop = nop;
    it->shape = shape;
    for (k = 0; k < nop; k++) {
        it->stride[k] = strides[k];
        it->off[k] = 0;
    }
    for (d = 0; d < nd; d++) it->count[d] = 0;
}

/* Step to the next position in C order; 0 when the walk is over (the offsets
 * are then back at 0). */
static inline int
so_nd_next(so_nditer *it)
{
    int d, k;
    for (d = it->nd - 1; d >= 0; d--) {
        for (k = 0; k < it->nop; k++) it->off[k] += it->stride[k][d];
        if (++it->count[d] < it->shape[d]) return 1;
        for (k = 0; k < it->nop; k++) it->off[k] -= it->stride[k][d] * it->shape[d];
        it->count[d] = 0;
    }
    return 0;
}

/* so_nd_push flags */
enum {
    SO_ND_KEEP = 1      /* keep the dim apart: not dropped if 1, nothing merged into it */
};

/* Append the dim (n, s[k] for each of nop operands) to shape[0..nd) and
 * stride[k][0..nd); returns the new nd. */
static inline int
so_nd_push(int nd, npy_intp *shape, npy_intp *const *stride, int nop, npy_intp n,
           const npy_intp *s, int flags)
{
    int k, merge;
    if (n == 1 && !(flags & SO_ND_KEEP)) return nd;
    merge = nd > 0 && !(flags & SO_ND_KEEP);
    for (k = 0; k < nop && merge; k++) merge = stride[k][nd - 1] == n * s[k];
    if (merge) {
        shape[nd - 1] *= n;
        for (k = 0; k < nop; k++) stride[k][nd - 1] = s[k];
        return nd;
    }
    shape[nd] = n;
    for (k = 0; k < nop; k++) stride[k][nd] = s[k];
    return nd + 1;
}

#endif

/*
 * kernels/group.h: the loops of a group reduction -- what the members of a
 * group do to its cells.  Values are read as a 3-D strided array (outer, n
 * members, inner) of one computing type; a cell is (outer row, group, inner
 * position), and the cells of a call are one C-ordered array (outer, size,
 * inner).  Each cell takes its members in member order, one at a time: that
 * order is the result's definition, so the loops never reorder it.  The call
 * layer (call/groups.c) decides what to run; these loops decide nothing.
 */
#ifndef SO_KERNELS_GROUP_H
#define SO_KERNELS_GROUP_H

#include "base/base.h"

/* The computing types: one loop each (values of other dtypes are converted to
 * one of these before the loops read them). */
/* SO_GT_DT: datetime64 and timedelta64, int64 with NaT as the NaN. */
enum so_group_type { SO_GT_I64, SO_GT_U64, SO_GT_F32, SO_GT_F64, SO_GT_LD, SO_GT_DT, SO_GT_N };

/* What a member does to its cell.  SUM and PROD start from cells filled with
 * 0 and 1; the others take the first member of a cell as it is, by its count
 * (cnt 0: not yet started).  *_HALF: float16 arithmetic in a float32 cell,
 * rounded to float16 after each member; MAX_HALF, MIN_HALF: float16's and
 * longdouble's np.maximum / np.minimum, which keep the earlier of a ±0 tie.  DEV: the sum of (x - mean)^2 with the
 * means in `mean`.  ANY, ALL write npy_bool cells; COUNT only counts. */
enum so_group_op {
    SO_G_SUM, SO_G_SUM_HALF, SO_G_PROD, SO_G_PROD_HALF, SO_G_MAX, SO_G_MIN, SO_G_FIRST,
    SO_G_LAST, SO_G_ARGMAX, SO_G_ARGMIN, SO_G_ANY, SO_G_ALL, SO_G_COUNT, SO_G_DEV, SO_G_MAX_HALF,
    SO_G_MIN_HALF, SO_G_NOPS
};

typedef struct {
    const char *v;              /* values: (outer, n, inner), byte strides so, sn, si */
    npy_intp outer, n, inner;
    npy_intp so, sn, si;
    const npy_intp *gid;        /* the group of each member; outside [0, size): none */
    const npy_int32 *gid32;     /* the same as int32 (then gid is NULL), or NULL */
    npy_intp size;              /* groups */
    int type;                   /* SO_GT_* */
    int op;                     /* SO_G_* */
    int skipnan;                /* a NaN member counts as absent (the nan-variants) */
    int stop_bad;               /* so_group_fast: a member whose id is outside [0, size)
                                 * stops the loop (mode="raise"), else it is skipped */
    int backward;               /* so_group_fast: the members of a piece run from the last
                                 * (first of single values by ids, so_group_runs_backward) */
    char *res;                  /* cells of the computing type (ANY, ALL: npy_bool) */
    npy_intp *pos;              /* ARGMAX, ARGMIN: the member index of each cell's best */
    npy_intp *cnt;              /* members so far: per cell when skipnan, else per (outer, group) */
    int counted;                /* whether the loops count (0: an empty cell keeps its start) */
    const char *mean;           /* DEV: the mean of each cell */
    npy_bool *seen;             /* so_group_fast's max, min, first, last: whether each
                                 * (outer, group) has a member (cnt is NULL then) */
    char *pairs;                /* so_group_fast's counted float sum of single values: the
                                 * sum and count of each (outer, group) side by side */
} so_group_loop;

/* the group of member n (gid or gid32) */
static inline npy_intp
so_group_id(const so_group_loop *L, npy_intp n)
{
    return L->gid32 != NULL ? (npy_intp)L->gid32[n] : L->gid[n];
}

/* Whether cell k (count index kc) of L has a member: by its count, its seen
 * flag, or (so_group_fast's argmax, argmin) its position; 1 when L keeps none
 * of them (a sum or product from its start). */
static inline int
so_group_nonempty(const so_group_loop *L, npy_intp k, npy_intp kc)
{
    if (L->cnt != NULL && L->counted) return L->cnt[kc] > 0;
    if (L->seen != NULL) return L->seen[kc];
    if (L->pos != NULL) return L->pos[k] >= 0;
    return 1;
}

/* group.c: members [n0, n1) of outer row o, each of group g (g >= 0: a
 * segment) or of gid[member] (g < 0). */
void so_group_members(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g);

/* group_fast.c: the loops of the common cases, one per (op, computing type,
 * ids: int64, int32 or a segment): no nan-variant, values read as contiguous
 * members (inner == 1) or contiguous rows (inner > 1), the ops SUM, MAX, MIN,
 * FIRST, LAST, ARGMAX, ARGMIN and COUNT on int64, uint64, float32 and float64.
 * Each gives the bits of so_group_members, but keeps only what its cells
 * need: SUM counts only when counted (a mean); MAX, MIN, FIRST and LAST keep
 * `seen` (cnt NULL), their cells started by so_group_fast_start and the flags
 * completed by so_group_fast_seen; ARGMAX and
 * ARGMIN keep no count, a position of -1 meaning no member yet.
 * so_group_fast_takes: whether L is such a case. */
int so_group_fast_takes(const so_group_loop *L);
/* group_starts.c: whether L (first of single values, by ids) may run backward:
 * its pieces taken from the last, and each piece's members from its last */
int so_group_runs_backward(const so_group_loop *L);
/* group_starts.c: the start of ncells cells (and their positions) of a fast L */
void so_group_fast_start(const so_group_loop *L, char *res, npy_intp *pos, npy_intp ncells);
/* group_starts.c: after a fast L's loops (max, min, first and last), the seen
 * flags of its ncnt (outer, group)s completed: the loops mark only a group
 * whose member left a cell at its start, and this marks every group whose
 * first cell moved off its start.  Before partials are joined or fill_value
 * is written. */
void so_group_fast_seen(const so_group_loop *L, npy_intp ncnt);
/* group_fast.c: as so_group_members, for an L so_group_fast_takes; returns
 * the member whose id stopped the loop (L->stop_bad), else -1.  The members
 * before it have been taken. */
npy_intp so_group_fast(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g);
/* group_segments.c: the sums of segments [g0, g1) of outer row o (offsets ip),
 * several segments at a time, for an L so_group_segsums_takes (a sum of
 * single values that keeps no count) */
int so_group_segsums_takes(const so_group_loop *L);
void so_group_segsums(const so_group_loop *L, npy_intp o, const npy_intp *ip, npy_intp g0,
                      npy_intp g1);
/* group_starts.c: whether the counted sum of L (a mean's) runs on pairs (a
 * float sum of single values: the sum and the count of a group side by side,
 * one cache line a member instead of two); the pairs' bytes per (outer,
 * group); so_group_unpair writes ncnt pairs' sums into res and counts into
 * cnt, which may be the pairs' own memory (each pair read before its count
 * is written, at or below it) */
int so_group_pairs_take(const so_group_loop *L);
npy_intp so_group_pair_size(int type);
void so_group_unpair(const so_group_loop *L, npy_intp ncnt);
/* group_starts.c: the first member of [n0, n1) whose id is outside [0, size), or -1 */
npy_intp so_group_bad_id(const so_group_loop *L, npy_intp n0, npy_intp n1);

/* group_combine.c: whether op on type has partial results that join exactly
 * (so that threads may split a call's members); so_group_combine joins b, the
 * partial of later members, into a: ncells cells, ncnt counts (a->op's) */
int so_group_combines(int op, int type);
void so_group_combine(const so_group_loop *a, const so_group_loop *b, npy_intp ncells,
                      npy_intp ncnt);
/* group_combine.c: the bytes of one partial result of L (its cells, positions,
 * counts and seen flags) */
npy_intp so_group_partial_bytes(const so_group_loop *L);

/* group_finish.c: the per-cell steps after the loops, cells of type t with
 * counts cnt (one per cell, or one per inner row of `inner` cells when inner
 * is given; the loops' cnt layout):
 * divide: cell /= count (converted to t) -- the mean;
 * var: cell /= (count - ddof), NaN where that is <= 0; with sqrt: std;
 * lse: cell = m + logs (m the max, logs = log of the sum), the rules of ±inf
 * and NaN maxima; empty cells are left alone (the fill comes later). */
void so_group_divide(int t, char *cells, const npy_intp *cnt, npy_intp ncells, npy_intp inner);
void so_group_var(int t, char *cells, const npy_intp *cnt, npy_intp ncells, npy_intp inner,
                  npy_intp ddof, int sqrt_it);
void so_group_lse(int t, char *cells, const char *m, npy_intp ncells);
/* group_finish.c: the exp terms of a logsumexp or softmax: out[k] = x - m of
 * each member cell of rows [n0, n1) of outer row o (contiguous, member by
 * member, a dropped member skipped); returns the items written. */
npy_intp so_group_diffs(const so_group_loop *L, const char *m, char *out, npy_intp o,
                        npy_intp n0, npy_intp n1);
/* group_finish.c: sums cells += terms, terms as so_group_diffs laid them out */
void so_group_add_terms(const so_group_loop *L, char *sums, const char *terms, npy_intp o,
                        npy_intp n0, npy_intp n1);
/* group_finish.c: softmax's last step on its contiguous (outer, n, inner)
 * result: each member divided by (log: less) its cell of s */
void so_group_scale(const so_group_loop *L, char *res, const char *s, int log, npy_intp o,
                    npy_intp n0, npy_intp n1);
/* group_finish.c: cells of type t set to 1 (a product's start) */
void so_group_ones(int t, char *cells, npy_intp ncells);
/* group_finish.c: the item size of type t */
npy_intp so_group_itemsize(int t);

#endif

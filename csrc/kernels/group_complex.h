/*
 * kernels/group_complex.h: the member loops of a group reduction on complex
 * values (group_complex.c) and on a float16 computing dtype (group_half.c) --
 * the dtypes the real loops of kernels/group.h do not read.  Values are a
 * C-ordered (outer, n, inner) array of the computing dtype, cells a C-ordered
 * (outer, size, inner) array; each cell takes its members in member order.
 */
#ifndef SO_KERNELS_GROUP_COMPLEX_H
#define SO_KERNELS_GROUP_COMPLEX_H

#include "base/base.h"

/* The computing types: complex64, complex128, complex long double; float16. */
enum { SO_GX_C64, SO_GX_C128, SO_GX_CLD, SO_GX_HALF };

/* What a member does to its cell: SUM and PROD (cells started at 0 and 1),
 * ANY and ALL (npy_bool cells started at 0 and 1), and for float16 MAX (cells
 * started by their first member), DEV (the sum of (x - mean)^2, the means in
 * `mean`) and COUNT (only the counts). */
enum { SO_GX_SUM, SO_GX_PROD, SO_GX_ANY, SO_GX_ALL, SO_GX_MAX, SO_GX_DEV, SO_GX_COUNT };

typedef struct {
    const char *v;              /* (outer, n, inner), C-ordered */
    npy_intp outer, n, inner;
    const npy_intp *gid;        /* the group of each member; outside [0, size): none */
    npy_intp size;
    int type, op;
    int skipnan;                /* float16: a NaN member is absent */
    char *res;                  /* the cells */
    npy_intp *cnt;              /* float16: the members of each cell so far */
    const char *mean;           /* DEV: the mean of each cell */
} so_gx_loop;

/* group_complex.c: members [n0, n1) of outer row o */
void so_gx_members(const so_gx_loop *L, npy_intp o, npy_intp n0, npy_intp n1);
/* group_complex.c: cells of type t set to 1 (a product's start) */
void so_gx_ones(int t, char *cells, npy_intp ncells);
/* group_complex.c: the item size of type t */
npy_intp so_gx_itemsize(int t);
/* group_complex.c: the complex mean, each cell with members divided by its
 * count k as NumPy divides by the complex k + 0j: (re + im*0) / k's
 * reciprocal, (im - re*0) times it; cnt is per (outer, group) */
void so_gx_complex_divide(int t, char *cells, const npy_intp *cnt, npy_intp ncells,
                          npy_intp inner);

/* group_half.c: float16 members (the half-precision form of group.c's loops:
 * every operation rounds to float16, as NumPy's float16 loops do) */
void so_gx_half_members(const so_gx_loop *L, npy_intp o, npy_intp n0, npy_intp n1);
/* group_half.c: the per-cell steps of a float16 mean, var and logsumexp; cnt
 * is per cell; empty cells are left alone (the fill comes later) */
void so_gx_half_divide(npy_half *cells, const npy_intp *cnt, npy_intp ncells, npy_intp ddof,
                       int var);
void so_gx_half_lse(npy_half *cells, const npy_half *m, npy_intp ncells);
/* group_half.c: logsumexp's exp terms x - m of members [n0, n1) of outer row
 * o, in member order (absent members skipped), and their sum into the cells;
 * each returns the terms it wrote or read */
npy_intp so_gx_half_diffs(const so_gx_loop *L, const npy_half *m, npy_half *out, npy_intp o,
                          npy_intp n0, npy_intp n1);
npy_intp so_gx_half_add_terms(const so_gx_loop *L, npy_half *sums, const npy_half *terms,
                          npy_intp o, npy_intp n0, npy_intp n1);

#endif

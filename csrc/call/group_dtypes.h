/*
 * call/group_dtypes.h: how a group reduction on complex values, or with a
 * float16 computing dtype, runs (group_dtypes.c), and the member scan that
 * first, last and count of any dtype need: Python-free, for py/groups_dtypes.c.
 */
#ifndef SO_CALL_GROUP_DTYPES_H
#define SO_CALL_GROUP_DTYPES_H

#include "base/base.h"
#include "kernels/group_complex.h"

/* group_dtypes.c: one pass of op (SO_GX_*) over every member of L, in member
 * order, the cells started as op starts them (SUM, DEV: 0, PROD: 1, ANY:
 * False, ALL: True; MAX: by their first member, the counts zeroed); 0 done,
 * 1 stopped by the poll. */
int so_gx_pass(so_gx_loop *L, int op, so_poll *poll);
/* group_dtypes.c: the complex mean's division (cnt per (outer, group)) */
void so_gx_divide_complex(const so_gx_loop *L, const npy_intp *cnt);
/* group_dtypes.c: the float16 mean's (var's, with ddof) division, cnt per cell */
void so_gx_divide_half(const so_gx_loop *L, npy_intp ddof, int var);
/* group_dtypes.c: the float16 logsumexp's exp terms x - m of every member, row
 * after row, into terms (outer * n * inner items); returns how many */
npy_intp so_gx_half_terms(const so_gx_loop *L, const char *m, char *terms);
/* group_dtypes.c: the terms (after exp) summed into L's cells, started at 0 */
void so_gx_half_sum_terms(const so_gx_loop *L, const char *terms);
/* group_dtypes.c: logsumexp's m + log(s): the cells hold log(s) */
void so_gx_half_finish_lse(const so_gx_loop *L, const char *m);
/* group_dtypes.c: for each group, its members (cnt), its first and last
 * member (-1 without one), gid of n members with ids outside [0, size) none */
void so_group_member_scan(const npy_intp *gid, npy_intp n, npy_intp size, npy_intp *cnt,
                          npy_intp *first, npy_intp *last);

#endif

/*
 * call/group_dtypes.c: a group reduction on complex values or in float16
 * (group_dtypes.h): each pass walks the members in order, one outer row after
 * another, in pieces of about SO_PIECE items between which the poll is asked.
 * One thread: each cell takes its members in member order, and these dtypes
 * have no partial results that join exactly but the counts.
 */
#include "call/group_dtypes.h"

#include <stdlib.h>

int
so_gx_pass(so_gx_loop *L, int op, so_poll *poll)
{
    const npy_intp ncells = L->outer * L->size * L->inner, isz = so_gx_itemsize(L->type);
    npy_intp piece = SO_PIECE / (L->inner > 0 ? L->inner : 1), o, n0;
    if (piece < 1) piece = 1;
    L->op = op;
    switch (op) {
    case SO_GX_SUM: case SO_GX_DEV: memset(L->res, 0, (size_t)(ncells * isz)); break;
    case SO_GX_PROD: so_gx_ones(L->type, L->res, ncells); break;
    case SO_GX_ANY: case SO_GX_ALL: memset(L->res, op == SO_GX_ALL, (size_t)ncells); break;
    default: break;
    }
    if (L->cnt != NULL && op != SO_GX_DEV) memset(L->cnt, 0, (size_t)ncells * sizeof(npy_intp));
    for (o = 0; o < L->outer; o++) {
        for (n0 = 0; n0 < L->n; n0 += piece) {
            if (so_stopped(poll)) return 1;
            so_gx_members(L, o, n0, n0 + piece < L->n ? n0 + piece : L->n);
        }
    }
    return 0;
}

void
so_gx_divide_complex(const so_gx_loop *L, const npy_intp *cnt)
{
    so_gx_complex_divide(L->type, L->res, cnt, L->outer * L->size * L->inner, L->inner);
}

void
so_gx_divide_half(const so_gx_loop *L, npy_intp ddof, int var)
{
    so_gx_half_divide((npy_half *)L->res, L->cnt, L->outer * L->size * L->inner, ddof, var);
}

npy_intp
so_gx_half_terms(const so_gx_loop *L, const char *m, char *terms)
{
    npy_intp o, k = 0;
    for (o = 0; o < L->outer; o++) {
        k += so_gx_half_diffs(L, (const npy_half *)m, (npy_half *)terms + k, o, 0, L->n);
    }
    return k;
}

void
so_gx_half_sum_terms(const so_gx_loop *L, const char *terms)
{
    npy_intp o, k = 0;
    memset(L->res, 0, (size_t)(L->outer * L->size * L->inner) * sizeof(npy_half));
    for (o = 0; o < L->outer; o++) {
        k += so_gx_half_add_terms(L, (npy_half *)L->res, (const npy_half *)terms + k, o, 0, L->n);
    }
}

void
so_gx_half_finish_lse(const so_gx_loop *L, const char *m)
{
    so_gx_half_lse((npy_half *)L->res, (const npy_half *)m, L->outer * L->size * L->inner);
}

void
so_group_member_scan(const npy_intp *gid, npy_intp n, npy_intp size, npy_intp *cnt,
                     npy_intp *first, npy_intp *last)
{
    npy_intp k;
    for (k = 0; k < size; k++) {
        cnt[k] = 0;
        first[k] = last[k] = -1;
    }
    for (k = 0; k < n; k++) {
        const npy_intp g = gid[k];
        if ((npy_uintp)g >= (npy_uintp)size) continue;
        if (cnt[g]++ == 0) first[g] = k;
        last[g] = k;
    }
}

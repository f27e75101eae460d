/*
 * kernels/group_combine.c: the partial results of a group reduction's threads
 * joined in member order (group.h, so_group_combine).  A thread that took a
 * later range of members holds a later partial; joining partial b into a
 * gives what one pass over a's members and then b's gives, for the ops whose
 * partials join exactly: integer sums and products (they wrap), max and min
 * (np.maximum keeps the later of a tie and the first NaN, so max(a, b) is the
 * max of the members of both), argmax and argmin (the first best), first,
 * last, any, all and the counts.
 */
#include "kernels/group_types.h"

/* cell k of a takes cell k of b: both have members (c0, c1 their counts) */
#define COMBINE(NAME, T, UT, ISNAN, GTF, LTF)                                            \
static void                                                                              \
combine_##NAME(int op, T *a, npy_intp *pa, const T *b, const npy_intp *pb, npy_intp k)   \
{                                                                                        \
    switch (op) {                                                                        \
    case SO_G_SUM: a[k] = (T)((UT)a[k] + (UT)b[k]); break;                               \
    case SO_G_PROD: a[k] = (T)((UT)a[k] * (UT)b[k]); break;                              \
    case SO_G_MAX: if (!(GTF(a[k], b[k]) || ISNAN(a[k]))) a[k] = b[k]; break;            \
    case SO_G_MIN: if (!(LTF(a[k], b[k]) || ISNAN(a[k]))) a[k] = b[k]; break;            \
    case SO_G_MAX_HALF: if (!(a[k] >= b[k] || ISNAN(a[k]))) a[k] = b[k]; break;          \
    case SO_G_MIN_HALF: if (!(a[k] <= b[k] || ISNAN(a[k]))) a[k] = b[k]; break;          \
    case SO_G_LAST: a[k] = b[k]; break;                                                  \
    case SO_G_ARGMAX:                                                                    \
        if (!ISNAN(a[k]) && (ISNAN(b[k]) || b[k] > a[k])) {                              \
            a[k] = b[k];                                                                 \
            pa[k] = pb[k];                                                               \
        }                                                                                \
        break;                                                                           \
    case SO_G_ARGMIN:                                                                    \
        if (!ISNAN(a[k]) && (ISNAN(b[k]) || b[k] < a[k])) {                              \
            a[k] = b[k];                                                                 \
            pa[k] = pb[k];                                                               \
        }                                                                                \
        break;                                                                           \
    default: break;                                                                      \
    }                                                                                    \
}

SO_GROUP_TYPES(COMBINE)

int
so_group_combines(int op, int type)
{
    switch (op) {
    case SO_G_SUM: case SO_G_PROD:
        return type == SO_GT_I64 || type == SO_GT_U64;
    case SO_G_MAX: case SO_G_MIN: case SO_G_MAX_HALF: case SO_G_MIN_HALF: case SO_G_FIRST: case SO_G_LAST: case SO_G_ARGMAX:
    case SO_G_ARGMIN: case SO_G_ANY: case SO_G_ALL: case SO_G_COUNT:
        return 1;
    default:
        return 0;
    }
}

npy_intp
so_group_partial_bytes(const so_group_loop *L)
{
    const npy_intp ncells = L->outer * L->size * L->inner;
    const npy_intp ncnt = L->outer * L->size * (L->skipnan ? L->inner : 1);
    const npy_intp word = (npy_intp)sizeof(npy_intp);
    return ncells * (so_group_itemsize(L->type) + (L->pos != NULL ? word : 0)) +
           ncnt * ((L->cnt != NULL ? word : 0) + (L->seen != NULL ? 1 : 0));
}

void
so_group_combine(const so_group_loop *a, const so_group_loop *b, npy_intp ncells,
                 npy_intp ncnt)
{
    const npy_intp per = ncnt > 0 ? ncells / ncnt : 1;
    npy_bool *ba = (npy_bool *)a->res;
    const npy_bool *bb = (const npy_bool *)b->res;
    npy_intp k;
    for (k = 0; k < ncells; k++) {
        /* uncounted (sum, prod): the partials start at the identity and always join */
        const int c0 = so_group_nonempty(a, k, k / per), c1 = so_group_nonempty(b, k, k / per);
        if (a->op == SO_G_ANY || a->op == SO_G_ALL) {
            ba[k] = (npy_bool)(a->op == SO_G_ANY ? ba[k] | bb[k] : ba[k] & bb[k]);
            continue;
        }
        if (a->op == SO_G_COUNT || c1 == 0) continue;
        if (c0 == 0) {
            const npy_intp isz = so_group_itemsize(a->type);
            memcpy(a->res + k * isz, b->res + k * isz, (size_t)isz);
            if (a->pos != NULL) a->pos[k] = b->pos[k];
            continue;
        }
        if (a->op == SO_G_FIRST) continue;
        switch (a->type) {
        case SO_GT_I64: combine_i64(a->op, (npy_int64 *)a->res, a->pos, (const npy_int64 *)b->res, b->pos, k); break;
        case SO_GT_U64: combine_u64(a->op, (npy_uint64 *)a->res, a->pos, (const npy_uint64 *)b->res, b->pos, k); break;
        case SO_GT_F32: combine_f32(a->op, (npy_float *)a->res, a->pos, (const npy_float *)b->res, b->pos, k); break;
        case SO_GT_F64: combine_f64(a->op, (npy_double *)a->res, a->pos, (const npy_double *)b->res, b->pos, k); break;
        case SO_GT_DT: combine_dt(a->op, (npy_int64 *)a->res, a->pos, (const npy_int64 *)b->res, b->pos, k); break;
        default: combine_ld(a->op, (npy_longdouble *)a->res, a->pos, (const npy_longdouble *)b->res, b->pos, k); break;
        }
    }
    for (k = 0; a->counted && a->cnt != NULL && k < ncnt; k++) a->cnt[k] += b->cnt[k];
    for (k = 0; a->seen != NULL && k < ncnt; k++) a->seen[k] |= b->seen[k];
}

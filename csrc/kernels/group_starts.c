/*
 * kernels/group_starts.c: what the fast group loops (group_fast.c) keep
 * beside their cells: the start of the cells of max, min, last and a
 * backward first (group.h, so_group_fast_start), the seen flags completed from
 * the cells that moved off their start (so_group_fast_seen), and the check of
 * a piece's ids for the loops that do not check as they read
 * (so_group_bad_id), and the pairs of a counted float sum unpacked into sums
 * and counts (so_group_unpair).
 */
#include "kernels/group_types.h"

/* whether L's cells start at a value (so_group_fast_start) that tells an
 * empty cell with so_group_fast_seen */
static int
starts_tell(const so_group_loop *L)
{
    return L->op == SO_G_MAX || L->op == SO_G_MIN || (L->op == SO_G_LAST && L->inner == 1) ||
           L->backward;
}

int
so_group_runs_backward(const so_group_loop *L)
{
    return so_group_fast_takes(L) && L->op == SO_G_FIRST && L->inner == 1;
}

/* the start of L's cells as the cells' type T (B: its bits) */
#define START_OF(NAME, T, B)                                                             \
    T B##_;                                                                              \
    if (L->op == SO_G_MAX || L->op == SO_G_ARGMAX) B##_ = LO_##NAME;                     \
    else if (L->op == SO_G_MIN || L->op == SO_G_ARGMIN) B##_ = HI_##NAME;                \
    else { const __typeof__(SB_##NAME) sb_ = SB_##NAME; memcpy(&B##_, &sb_, sizeof B##_); }

#define START(NAME, T)                                                                   \
    do {                                                                                 \
        T *r_ = (T *)res;                                                                \
        START_OF(NAME, T, st)                                                            \
        for (k = 0; k < ncells; k++) r_[k] = st_;                                        \
    } while (0)

void
so_group_fast_start(const so_group_loop *L, char *res, npy_intp *pos, npy_intp ncells)
{
    npy_intp k;
    if (L->op == SO_G_ARGMAX || L->op == SO_G_ARGMIN) {
        for (k = 0; k < ncells; k++) pos[k] = -1;
    }
    else if (!starts_tell(L)) return;
    switch (L->type) {
    case SO_GT_I64: START(i64, npy_int64); break;
    case SO_GT_U64: START(u64, npy_uint64); break;
    case SO_GT_F32: START(f32, npy_float); break;
    default: START(f64, npy_double); break;
    }
}

#define SEEN(NAME, T)                                                                    \
    do {                                                                                 \
        const T *r_ = (const T *)L->res;                                                 \
        START_OF(NAME, T, st)                                                            \
        for (k = 0; k < ncnt; k++) {                                                     \
            L->seen[k] |= (npy_bool)(bits_##NAME(r_[k * L->inner]) != bits_##NAME(st_)); \
        }                                                                                \
    } while (0)

void
so_group_fast_seen(const so_group_loop *L, npy_intp ncnt)
{
    npy_intp k;
    if (L->seen == NULL || !starts_tell(L)) return;
    switch (L->type) {
    case SO_GT_I64: SEEN(i64, npy_int64); break;
    case SO_GT_U64: SEEN(u64, npy_uint64); break;
    case SO_GT_F32: SEEN(f32, npy_float); break;
    default: SEEN(f64, npy_double); break;
    }
}

/* The first bad id of [n0, n1): a chunk at a time, the OR of id and
 * size - 1 - id over the chunk (either is negative exactly when the id is
 * outside [0, size): one subtraction and two ORs an id, which the compiler
 * vectorises with the baseline's instructions, as a 64-bit min / max is not),
 * and a chunk with a bad id searched for its first. */
/* the ids of a chunk checked at once: a few pages of ids, in L1 for the loop */
#define ID_CHUNK 2048

#define BAD_ID(NAME, IT)                                                                 \
static npy_intp                                                                          \
NAME(const IT *ids, npy_intp n0, npy_intp n1, npy_intp size)                             \
{                                                                                        \
    const npy_uint64 top = (npy_uint64)size - 1;                                         \
    npy_intp c, e, n;                                                                    \
    if (size == 0) return n1 > n0 ? n0 : -1;                                             \
    for (c = n0; c < n1; c = e) {                                                        \
        npy_uint64 acc = 0;                                                              \
        e = c + ID_CHUNK < n1 ? c + ID_CHUNK : n1;                                       \
        for (n = c; n < e; n++) {                                                        \
            const npy_uint64 id = (npy_uint64)(npy_int64)ids[n];                         \
            acc |= id | (top - id);                                                      \
        }                                                                                \
        if (!(acc >> 63)) continue;                                                      \
        for (n = c; n < e; n++) {                                                        \
            if ((npy_uintp)(npy_intp)ids[n] >= (npy_uintp)size) return n;                \
        }                                                                                \
    }                                                                                    \
    return -1;                                                                           \
}
BAD_ID(bad_i64, npy_intp)
BAD_ID(bad_i32, npy_int32)

npy_intp
so_group_bad_id(const so_group_loop *L, npy_intp n0, npy_intp n1)
{
    if (L->gid32 != NULL) return bad_i32(L->gid32, n0, n1, L->size);
    return bad_i64(L->gid, n0, n1, L->size);
}

int
so_group_pairs_take(const so_group_loop *L)
{
    return so_group_fast_takes(L) && L->op == SO_G_SUM && L->counted && L->inner == 1 &&
           (L->type == SO_GT_F32 || L->type == SO_GT_F64);
}

npy_intp
so_group_pair_size(int type)
{
    return type == SO_GT_F32 ? (npy_intp)sizeof(struct pair_f32) : (npy_intp)sizeof(struct pair_f64);
}

#define UNPAIR(NAME, T)                                                                  \
    do {                                                                                 \
        const struct NAME *pr = (const struct NAME *)L->pairs;                           \
        for (k = 0; k < ncnt; k++) {                                                     \
            const T s_ = pr[k].s;                                                        \
            const npy_intp c_ = pr[k].c;                                                 \
            ((T *)L->res)[k] = s_;                                                       \
            L->cnt[k] = c_;                                                              \
        }                                                                                \
    } while (0)

void
so_group_unpair(const so_group_loop *L, npy_intp ncnt)
{
    npy_intp k;
    if (L->type == SO_GT_F32) UNPAIR(pair_f32, npy_float);
    else UNPAIR(pair_f64, npy_double);
}

/*
 * kernels/group_types.h: private to kernels/group*.c -- the computing types of
 * the group loops as one X-macro list, X(suffix, C type, the type + and * run
 * in, is-NaN, greater, less), and the predicates the list names: a NaN is x != x
 * for the floats, NaT (int64's least value) for datetime64 / timedelta64, none
 * for the integers; GT_NAT and LT_NAT are false when the right side is NaT, as
 * a float compare is false against NaN.  Also the member loops' steps
 * (AT_MEMBER, AT_FOUR) that kernels/group_fast.c and group_finish.c share.
 */
#ifndef SO_KERNELS_GROUP_TYPES_H
#define SO_KERNELS_GROUP_TYPES_H

#include "kernels/group.h"

#include <math.h>
#include <string.h>

#define NO_NAN(x) ((void)(x), 0)
#define IS_NAN(x) ((x) != (x))
#define IS_NAT(x) ((x) == NPY_MIN_INT64)
#define GT(a, b) ((a) > (b))
#define LT(a, b) ((a) < (b))
#define GT_NAT(a, b) ((a) > (b) && !IS_NAT(b))
#define LT_NAT(a, b) ((a) < (b) && !IS_NAT(b))

/* Member m of a member loop, its id GK: outside [0, size) BAD, else the
 * step (last: it may hold commas) with the member's group g.  The loop's
 * locals: size, and n (AT_FOUR). */
#define AT_MEMBER(M, GK, BAD, ...)                                                       \
    {                                                                                    \
        const npy_intp g = (GK), m = (M);                                                \
        (void)m;                                                                         \
        if (NPY_UNLIKELY((npy_uintp)g >= (npy_uintp)size)) {                             \
            BAD;                                                                         \
        }                                                                                \
        else {                                                                           \
            __VA_ARGS__;                                                                 \
        }                                                                                \
    }
/* Members n .. n + 3, their four ids read before the first is tested, so
 * that the loads go together */
#define AT_FOUR(IDF, BAD, ...)                                                           \
    {                                                                                    \
        const npy_intp g0_ = IDF(n), g1_ = IDF(n + 1), g2_ = IDF(n + 2), g3_ = IDF(n + 3);\
        AT_MEMBER(n, g0_, BAD, __VA_ARGS__)                                              \
        AT_MEMBER(n + 1, g1_, BAD, __VA_ARGS__)                                          \
        AT_MEMBER(n + 2, g2_, BAD, __VA_ARGS__)                                          \
        AT_MEMBER(n + 3, g3_, BAD, __VA_ARGS__)                                          \
    }

#define SO_GROUP_TYPES(X)                                                                \
    X(i64, npy_int64, npy_uint64, NO_NAN, GT, LT)                                        \
    X(u64, npy_uint64, npy_uint64, NO_NAN, GT, LT)                                       \
    X(f32, npy_float, npy_float, IS_NAN, GT, LT)                                         \
    X(f64, npy_double, npy_double, IS_NAN, GT, LT)                                       \
    X(ld, npy_longdouble, npy_longdouble, IS_NAN, GT, LT)                                \
    X(dt, npy_int64, npy_uint64, IS_NAT, GT_NAT, LT_NAT)

/* Per computing type: a cell's bits (for the compare with a start), the
 * starts of max and min (the least and greatest value), and the bits of first's
 * and last's start: a value no data is likely to hold (a quiet NaN with a
 * payload for the floats); a member that holds it only costs a store. */
static inline npy_uint64 bits_i64(npy_int64 x) { return (npy_uint64)x; }
static inline npy_uint64 bits_u64(npy_uint64 x) { return x; }
static inline npy_uint32 bits_f32(npy_float x) { npy_uint32 b; memcpy(&b, &x, sizeof b); return b; }
static inline npy_uint64 bits_f64(npy_double x) { npy_uint64 b; memcpy(&b, &x, sizeof b); return b; }
#define LO_i64 NPY_MIN_INT64
#define HI_i64 NPY_MAX_INT64
#define SB_i64 ((npy_uint64)NPY_MIN_INT64 + 0x5a5a5a5au)
#define LO_u64 ((npy_uint64)0)
#define HI_u64 NPY_MAX_UINT64
#define SB_u64 (NPY_MAX_UINT64 - 0x5a5a5a5au)
#define LO_f32 (-(npy_float)INFINITY)
#define HI_f32 ((npy_float)INFINITY)
#define SB_f32 ((npy_uint32)0x7fd5a5a5u)
#define LO_f64 (-(npy_double)INFINITY)
#define HI_f64 ((npy_double)INFINITY)
#define SB_f64 ((npy_uint64)0x7ffa5a5a5a5a5a5aULL)

/* A counted float sum on pairs (so_group_pairs_take): the sum from 0 and the
 * count of each group in one struct */
struct pair_f32 { npy_float s; npy_intp c; };
struct pair_f64 { npy_double s; npy_intp c; };

#endif

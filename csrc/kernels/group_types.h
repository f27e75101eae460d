/*
 * kernels/group_types.h: private to kernels/group*.c -- the computing types of
 * the group loops as one X-macro list, X(suffix, C type, the type + and * run
 * in, is-NaN, greater, less), and the predicates the list names: a NaN is x != x
 * for the floats, NaT (int64's least value) for datetime64 / timedelta64, none
 * for the integers; GT_NAT and LT_NAT are false when the right side is NaT, as
 * a float compare is false against NaN.
 */
#ifndef SO_KERNELS_GROUP_TYPES_H
#define SO_KERNELS_GROUP_TYPES_H

#include "kernels/group.h"

#define NO_NAN(x) ((void)(x), 0)
#define IS_NAN(x) ((x) != (x))
#define IS_NAT(x) ((x) == NPY_MIN_INT64)
#define GT(a, b) ((a) > (b))
#define LT(a, b) ((a) < (b))
#define GT_NAT(a, b) ((a) > (b) && !IS_NAT(b))
#define LT_NAT(a, b) ((a) < (b) && !IS_NAT(b))

#define SO_GROUP_TYPES(X)                                                                \
    X(i64, npy_int64, npy_uint64, NO_NAN, GT, LT)                                        \
    X(u64, npy_uint64, npy_uint64, NO_NAN, GT, LT)                                       \
    X(f32, npy_float, npy_float, IS_NAN, GT, LT)                                         \
    X(f64, npy_double, npy_double, IS_NAN, GT, LT)                                       \
    X(ld, npy_longdouble, npy_longdouble, IS_NAN, GT, LT)                                \
    X(dt, npy_int64, npy_uint64, IS_NAT, GT_NAT, LT_NAT)

#endif

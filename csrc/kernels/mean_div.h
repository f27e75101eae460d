/*
 * kernels/mean_div.h: private to kernels/ -- the division that finishes one
 * element of a mean, sum / k for a count k >= 1, for each typed dtype, as
 * docs/contract.md says: floats divide in double (long double never reaches
 * here) and round once to the dtype; complex divides in complex128 by the count
 * as NumPy's true_divide does (its formula, below); integers floor-divide.
 * mean.c's loops over counted elements and mean_indexed.c's direct form both
 * divide with these.
 */
#ifndef SO_KERNELS_MEAN_DIV_H
#define SO_KERNELS_MEAN_DIV_H

#include "kernels/ops.h"

/* floor division of a signed value by k >= 1 */
static inline npy_int64 so_floor_div(npy_int64 s, npy_int64 k)
{
    npy_int64 q = s / k;
    return (s % k != 0 && s < 0) ? q - 1 : q;
}

static inline npy_int8 i8_div(npy_int8 x, npy_intp k) { return (npy_int8)so_floor_div(x, k); }
static inline npy_int16 i16_div(npy_int16 x, npy_intp k) { return (npy_int16)so_floor_div(x, k); }
static inline npy_int32 i32_div(npy_int32 x, npy_intp k) { return (npy_int32)so_floor_div(x, k); }
static inline npy_int64 i64_div(npy_int64 x, npy_intp k) { return so_floor_div(x, k); }
static inline npy_uint8 u8_div(npy_uint8 x, npy_intp k) { return (npy_uint8)(x / (npy_uint64)k); }
static inline npy_uint16 u16_div(npy_uint16 x, npy_intp k) { return (npy_uint16)(x / (npy_uint64)k); }
static inline npy_uint32 u32_div(npy_uint32 x, npy_intp k) { return (npy_uint32)(x / (npy_uint64)k); }
static inline npy_uint64 u64_div(npy_uint64 x, npy_intp k) { return x / (npy_uint64)k; }
static inline npy_half f16_div(npy_half x, npy_intp k)
{
    return npy_double_to_half(npy_half_to_double(x) / (double)k);
}
static inline npy_float f32_div(npy_float x, npy_intp k) { return (npy_float)((double)x / (double)k); }
static inline npy_double f64_div(npy_double x, npy_intp k) { return x / (double)k; }

/* NumPy's complex128 division (a + bi) / (c + di), for d = 0 and c = k >= 1:
 * |c| >= |d|, so rat = d / c and scl = 1 / (c + d * rat), and the parts are
 * (a + b * rat) * scl and (b - a * rat) * scl.  Written out as NumPy's loop
 * does (not a / k): an infinite or NaN part, and the sign of a zero, come out
 * the same, bit for bit.  complex64 widens to complex128 and rounds each part
 * back once. */
static inline void
so_cdiv(double *re, double *im, double k)
{
    const double d = 0.0, rat = d / k, scl = 1.0 / (k + d * rat);
    const double a = *re, b = *im;
    *re = (a + b * rat) * scl;
    *im = (b - a * rat) * scl;
}

static inline so_c64
c64_div(so_c64 x, npy_intp k)
{
    double re = x.r, im = x.i;
    so_cdiv(&re, &im, (double)k);
    x.r = (float)re;
    x.i = (float)im;
    return x;
}

static inline so_c128
c128_div(so_c128 x, npy_intp k)
{
    so_cdiv(&x.r, &x.i, (double)k);
    return x;
}

#endif

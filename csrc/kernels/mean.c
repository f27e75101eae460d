/*
 * kernels/mean.c: the division loops of reduction="mean" for the typed dtypes:
 * every element that updates hit becomes sum / (count + include_self), as
 * docs/contract.md says: floats divide in double (long double never reaches
 * here) and round once to the dtype; complex divides in complex128 by the count
 * as NumPy's true_divide does (its formula, below); integers floor-divide.  The
 * other dtypes finish in NumPy (scatterops/_generic.py: mean_divide).  Which
 * elements and counts: walk/mean.c.
 */
#include "kernels/kernels.h"
#include <numpy/halffloat.h>

#define MEAN_LOOP(NAME, T, BODY)                                                      \
static void                                                                           \
NAME(char *o, npy_intp os, const char *c, npy_intp cs, npy_intp n, npy_intp extra)   \
{                                                                                     \
    npy_intp i, k;                                                                    \
    T x;                                                                              \
    if (cs == 0) {                                                                    \
        /* one count for the whole row: no test per element (it vectorises) */      \
        memcpy(&k, c, sizeof k);                                                      \
        if (k == 0) return;                                                           \
        k += extra;                                                                   \
        for (i = 0; i < n; i++) {                                                     \
            memcpy(&x, o + i * os, sizeof(T));                                        \
            BODY;                                                                     \
            memcpy(o + i * os, &x, sizeof(T));                                        \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        memcpy(&k, c + i * cs, sizeof k);                                             \
        if (k == 0) continue;                                                         \
        k += extra;                                                                   \
        memcpy(&x, o + i * os, sizeof(T));                                            \
        BODY;                                                                         \
        memcpy(o + i * os, &x, sizeof(T));                                            \
    }                                                                                 \
}

/* floor division of a signed value by k >= 1 */
static inline npy_int64 floor_div(npy_int64 s, npy_int64 k)
{
    npy_int64 q = s / k;
    return (s % k != 0 && s < 0) ? q - 1 : q;
}

MEAN_LOOP(mean_i8, npy_int8, x = (npy_int8)floor_div(x, k))
MEAN_LOOP(mean_i16, npy_int16, x = (npy_int16)floor_div(x, k))
MEAN_LOOP(mean_i32, npy_int32, x = (npy_int32)floor_div(x, k))
MEAN_LOOP(mean_i64, npy_int64, x = floor_div(x, k))
MEAN_LOOP(mean_u8, npy_uint8, x = (npy_uint8)(x / (npy_uint64)k))
MEAN_LOOP(mean_u16, npy_uint16, x = (npy_uint16)(x / (npy_uint64)k))
MEAN_LOOP(mean_u32, npy_uint32, x = (npy_uint32)(x / (npy_uint64)k))
MEAN_LOOP(mean_u64, npy_uint64, x = x / (npy_uint64)k)
MEAN_LOOP(mean_f16, npy_half, x = npy_double_to_half(npy_half_to_double(x) / (double)k))
MEAN_LOOP(mean_f32, npy_float, x = (npy_float)((double)x / (double)k))
MEAN_LOOP(mean_f64, npy_double, x = x / (double)k)

/* NumPy's complex128 division (a + bi) / (c + di), for d = 0 and c = k >= 1:
 * |c| >= |d|, so rat = d / c and scl = 1 / (c + d * rat), and the parts are
 * (a + b * rat) * scl and (b - a * rat) * scl.  Written out as NumPy's loop
 * does (not a / k): an infinite or NaN part, and the sign of a zero, come out
 * the same, bit for bit.  complex64 widens to complex128 and rounds each part
 * back once. */
typedef struct { float r, i; } so_mean_c64;
typedef struct { double r, i; } so_mean_c128;

static inline void
cdiv(double *re, double *im, double k)
{
    const double d = 0.0, rat = d / k, scl = 1.0 / (k + d * rat);
    const double a = *re, b = *im;
    *re = (a + b * rat) * scl;
    *im = (b - a * rat) * scl;
}

static inline so_mean_c64
cdiv64(so_mean_c64 x, npy_intp k)
{
    double re = x.r, im = x.i;
    cdiv(&re, &im, (double)k);
    x.r = (float)re;
    x.i = (float)im;
    return x;
}

static inline so_mean_c128
cdiv128(so_mean_c128 x, npy_intp k)
{
    cdiv(&x.r, &x.i, (double)k);
    return x;
}

MEAN_LOOP(mean_c64, so_mean_c64, x = cdiv64(x, k))
MEAN_LOOP(mean_c128, so_mean_c128, x = cdiv128(x, k))

so_mean_fn
so_mean_kernel(PyArray_Descr *d)
{
    int tn = d->type_num;
    npy_intp isz = PyDataType_ELSIZE(d);
    if (!PyArray_ISNBO(d->byteorder)) return NULL;
    if (PyTypeNum_ISSIGNED(tn)) {
        switch (isz) {
            case 1: return mean_i8;
            case 2: return mean_i16;
            case 4: return mean_i32;
            case 8: return mean_i64;
        }
    }
    else if (PyTypeNum_ISUNSIGNED(tn)) {
        switch (isz) {
            case 1: return mean_u8;
            case 2: return mean_u16;
            case 4: return mean_u32;
            case 8: return mean_u64;
        }
    }
    switch (tn) {
        case NPY_HALF: return mean_f16;
        case NPY_FLOAT: return mean_f32;
        case NPY_DOUBLE: return mean_f64;
        case NPY_CFLOAT: return mean_c64;
        case NPY_CDOUBLE: return mean_c128;
    }
    return NULL;
}

int
so_has_mean_kernel(PyArray_Descr *d)
{
    return so_mean_kernel(d) != NULL;
}

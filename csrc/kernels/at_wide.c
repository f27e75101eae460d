/*
 * kernels/at_wide.c: the loops of kernels/at_wide.h, one for each of the
 * four dtypes and five operations.  The float64 operations are ops.h's
 * f64_* (NumPy's float64 loops, bit for bit); the conversions are NumPy's own
 * casts (none for float64): float32 and float16 widen exactly and narrow with one rounding to
 * nearest even (C's double-to-float conversion; npy_double_to_half, the
 * function NumPy's float64-to-float16 cast computes), and ml_dtypes' bfloat16
 * narrows as ml_dtypes casts float64 to it, through float32 (two roundings:
 * tests/test_at_wide.py holds the rule to ml_dtypes itself).
 */
#include "kernels/at_wide.h"
#include "kernels/ops.h"

#define F64_SAME(x) (x)
#define F32_WIDEN(x) ((double)(x))
#define F32_NARROW(r) ((npy_float)(r))
#define F16_WIDEN(x) npy_half_to_double(x)
#define F16_NARROW(r) npy_double_to_half(r)
#define BF16_WIDEN(x) ((double)bf16_to_float(x))
#define BF16_NARROW(r) bf16_from_float((float)(r))

/* so_clamp, not so_wrap: the index values are checked, but the array may be
 * the caller's, which another thread can rewrite while the loop runs */
#define WIDE_LOOP(NAME, T, WIDEN, NARROW, F)                                          \
static void                                                                           \
NAME(char *o, npy_intp aos, npy_intp size, const npy_intp *idx, npy_intp n,           \
     const npy_intp *rest, npy_intp m, double b)                                      \
{                                                                                     \
    npy_intp q, r;                                                                    \
    if (m == 1) {                                                                     \
        o += rest[0];                                                                 \
        for (q = 0; q < n; q++) {                                                     \
            T *e = (T *)(o + so_clamp(idx[q], size) * aos);                           \
            *e = NARROW(F(WIDEN(*e), b));                                             \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (q = 0; q < n; q++) {                                                         \
        char *p = o + so_clamp(idx[q], size) * aos;                                   \
        for (r = 0; r < m; r++) {                                                     \
            T *e = (T *)(p + rest[r]);                                                \
            *e = NARROW(F(WIDEN(*e), b));                                             \
        }                                                                             \
    }                                                                                 \
}

#define WIDE_LOOPS(NAME, T, WIDEN, NARROW)                                            \
WIDE_LOOP(NAME##_add, T, WIDEN, NARROW, f64_add)                                      \
WIDE_LOOP(NAME##_sub, T, WIDEN, NARROW, f64_sub)                                      \
WIDE_LOOP(NAME##_mul, T, WIDEN, NARROW, f64_mul)                                      \
WIDE_LOOP(NAME##_max, T, WIDEN, NARROW, f64_max1)                                     \
WIDE_LOOP(NAME##_min, T, WIDEN, NARROW, f64_min1)                                     \
static const so_wide_fn NAME[SO_MIN] = {NAME##_add, NAME##_sub, NAME##_mul,           \
                                        NAME##_max, NAME##_min};

WIDE_LOOPS(wide_f64, npy_double, F64_SAME, F64_SAME)
WIDE_LOOPS(wide_f32, npy_float, F32_WIDEN, F32_NARROW)
WIDE_LOOPS(wide_f16, npy_half, F16_WIDEN, F16_NARROW)
WIDE_LOOPS(wide_bf16, npy_uint16, BF16_WIDEN, BF16_NARROW)

so_wide_fn
so_wide_kernel(PyArray_Descr *d, int op)
{
    if (op < SO_ADD || op > SO_MIN || !PyArray_ISNBO(d->byteorder)) return NULL;
    if (d->type_num == NPY_DOUBLE) return wide_f64[op - SO_ADD];
    if (d->type_num == NPY_FLOAT) return wide_f32[op - SO_ADD];
    if (d->type_num == NPY_HALF) return wide_f16[op - SO_ADD];
    if (so_is_bfloat16(d)) return wide_bf16[op - SO_ADD];
    return NULL;
}

/*
 * kernels/ops.h: private to kernels/ -- what one update does to one element,
 * f(x, y) for every typed dtype and reduction, static inline so that every
 * loop built on them (reduce.c's kernels by dtype, indexed.c's loops by index
 * dtype) compiles them into its body.
 *
 * Each f(x, y) below is written to give exactly what NumPy's ufunc loop gives
 * for one element (the tests hold it to ufunc.at bit for bit):
 *   integers wrap (computed in the unsigned type: no signed overflow);
 *   bool add is OR, mul is AND, max is OR, min is AND;
 *   float16 converts to float, operates once, rounds back (one rounding per update);
 *   float max/min propagate NaN from either side: x if x is NaN or x > y, else y
 *   (float16: x >= y), which is what ufunc.at gives for +0.0 against -0.0;
 *   complex max/min are lexicographic with NaN propagation, complex mul is
 *   (ar*br - ai*bi, ar*bi + ai*br) with no fused multiply-add (-ffp-contract=off).
 */
#ifndef SO_KERNELS_OPS_H
#define SO_KERNELS_OPS_H

#include "kernels/kernels.h"
#include <numpy/halffloat.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct { float r, i; } so_c64;
typedef struct { double r, i; } so_c128;

/* ---- the element operations ------------------------------------------------ */

/* Every max and min also as NAME_max1 (one element at a time, in a loop the
 * compiler does not vectorise) and NAME_maxv (a loop over a row it does): for
 * the floats, the same choice as NAME_max made without a branch (below); for
 * the other types the same function. */
#define SO_SAME_MAXMIN(NAME, T)                                                       \
static inline T NAME##_max1(T x, T y) { return NAME##_max(x, y); }                    \
static inline T NAME##_min1(T x, T y) { return NAME##_min(x, y); }                    \
static inline T NAME##_maxv(T x, T y) { return NAME##_max(x, y); }                    \
static inline T NAME##_minv(T x, T y) { return NAME##_min(x, y); }

/* The operation OP of NAME in those two kinds of loop: SO_OP1(f32, max) is
 * f32_max1, SO_OPV(f32, add) f32_add. */
#define SO_OP1(NAME, OP) SO_OP1_##OP(NAME)
#define SO_OP1_add(NAME) NAME##_add
#define SO_OP1_sub(NAME) NAME##_sub
#define SO_OP1_mul(NAME) NAME##_mul
#define SO_OP1_max(NAME) NAME##_max1
#define SO_OP1_min(NAME) NAME##_min1
#define SO_OP1_none(NAME) NAME##_none
#define SO_OP1_count(NAME) NAME##_count
#define SO_OPV(NAME, OP) SO_OPV_##OP(NAME)
#define SO_OPV_add(NAME) NAME##_add
#define SO_OPV_sub(NAME) NAME##_sub
#define SO_OPV_mul(NAME) NAME##_mul
#define SO_OPV_max(NAME) NAME##_maxv
#define SO_OPV_min(NAME) NAME##_minv
#define SO_OPV_none(NAME) NAME##_none
#define SO_OPV_count(NAME) NAME##_count

/* WT: the unsigned type the arithmetic runs in (at least unsigned int, so no
 * operand is promoted to a signed int that could overflow). */
#define INT_OPS(NAME, T, WT)                                                          \
static inline T NAME##_add(T x, T y) { return (T)((WT)x + (WT)y); }                   \
static inline T NAME##_sub(T x, T y) { return (T)((WT)x - (WT)y); }                   \
static inline T NAME##_mul(T x, T y) { return (T)((WT)x * (WT)y); }                   \
static inline T NAME##_max(T x, T y) { return x >= y ? x : y; }                       \
static inline T NAME##_min(T x, T y) { return x <= y ? x : y; }                       \
SO_SAME_MAXMIN(NAME, T)

INT_OPS(i8, npy_int8, unsigned int)
INT_OPS(i16, npy_int16, unsigned int)
INT_OPS(i32, npy_int32, npy_uint32)
INT_OPS(i64, npy_int64, npy_uint64)
INT_OPS(u8, npy_uint8, unsigned int)
INT_OPS(u16, npy_uint16, unsigned int)
INT_OPS(u32, npy_uint32, npy_uint32)
INT_OPS(u64, npy_uint64, npy_uint64)

static inline npy_bool b_add(npy_bool x, npy_bool y) { return (npy_bool)(x || y); }
static inline npy_bool b_mul(npy_bool x, npy_bool y) { return (npy_bool)(x && y); }
static inline npy_bool b_max(npy_bool x, npy_bool y) { return (npy_bool)(x || y); }
static inline npy_bool b_min(npy_bool x, npy_bool y) { return (npy_bool)(x && y); }
SO_SAME_MAXMIN(b, npy_bool)

/* NaN payloads are not promised (docs/contract.md: NaN where NaN): when both operands are
 * NaN, which one's bits survive depends on how the compiler ordered the
 * operands.  Pinning the order (x != x ? x + x : x + y) matches NumPy's real
 * loops exactly but stops the row loops from vectorising (docs/design.md,
 * "The element operations"). */
#define FLOAT_OPS(NAME, T)                                                            \
static inline T NAME##_add(T x, T y) { return x + y; }                                \
static inline T NAME##_sub(T x, T y) { return x - y; }                                \
static inline T NAME##_mul(T x, T y) { return x * y; }                                \
static inline T NAME##_max(T x, T y) { return (x > y || x != x) ? x : y; }            \
static inline T NAME##_min(T x, T y) { return (x < y || x != x) ? x : y; }

FLOAT_OPS(f32, npy_float)
FLOAT_OPS(f64, npy_double)

/* The floats' max and min without a branch.  NAME_max's branch is taken at
 * random on random data, and mispredicted about every other update, which
 * makes max several times slower than add.  NAME_maxv picks through the bits
 * with a mask from the two compares, which the compiler turns into vector
 * compares and a blend on a row; NAME_max1, for one element at a time, does
 * the same in an SSE register (through the integer registers it costs more).
 * docs/design.md, "The element operations". */
#define FLOAT_MAXMIN(NAME, T, UT)                                                     \
static inline T NAME##_selv(int take_x, T x, T y)                                     \
{                                                                                     \
    UT xb, yb, m = (UT)0 - (UT)take_x;                                                \
    T r;                                                                              \
    memcpy(&xb, &x, sizeof x);                                                        \
    memcpy(&yb, &y, sizeof y);                                                        \
    xb = (xb & m) | (yb & ~m);                                                        \
    memcpy(&r, &xb, sizeof r);                                                        \
    return r;                                                                         \
}                                                                                     \
static inline T NAME##_maxv(T x, T y) { return NAME##_selv((x > y) | (x != x), x, y); } \
static inline T NAME##_minv(T x, T y) { return NAME##_selv((x < y) | (x != x), x, y); }
FLOAT_MAXMIN(f32, npy_float, npy_uint32)
FLOAT_MAXMIN(f64, npy_double, npy_uint64)

#if defined(__SSE2__)
static inline npy_float
f32_max1(npy_float x, npy_float y)
{
    __m128 a = _mm_set_ss(x), b = _mm_set_ss(y);
    __m128 m = _mm_or_ps(_mm_cmpgt_ss(a, b), _mm_cmpunord_ss(a, a));
    return _mm_cvtss_f32(_mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)));
}
static inline npy_float
f32_min1(npy_float x, npy_float y)
{
    __m128 a = _mm_set_ss(x), b = _mm_set_ss(y);
    __m128 m = _mm_or_ps(_mm_cmplt_ss(a, b), _mm_cmpunord_ss(a, a));
    return _mm_cvtss_f32(_mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)));
}
static inline npy_double
f64_max1(npy_double x, npy_double y)
{
    __m128d a = _mm_set_sd(x), b = _mm_set_sd(y);
    __m128d m = _mm_or_pd(_mm_cmpgt_sd(a, b), _mm_cmpunord_sd(a, a));
    return _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(m, a), _mm_andnot_pd(m, b)));
}
static inline npy_double
f64_min1(npy_double x, npy_double y)
{
    __m128d a = _mm_set_sd(x), b = _mm_set_sd(y);
    __m128d m = _mm_or_pd(_mm_cmplt_sd(a, b), _mm_cmpunord_sd(a, a));
    return _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(m, a), _mm_andnot_pd(m, b)));
}
#else
static inline npy_float f32_max1(npy_float x, npy_float y) { return f32_maxv(x, y); }
static inline npy_float f32_min1(npy_float x, npy_float y) { return f32_minv(x, y); }
static inline npy_double f64_max1(npy_double x, npy_double y) { return f64_maxv(x, y); }
static inline npy_double f64_min1(npy_double x, npy_double y) { return f64_minv(x, y); }
#endif

#define HF(x) npy_half_to_float(x)
static inline npy_half f16_add(npy_half x, npy_half y) { return npy_float_to_half(f32_add(HF(x), HF(y))); }
static inline npy_half f16_sub(npy_half x, npy_half y) { return npy_float_to_half(HF(x) - HF(y)); }
static inline npy_half f16_mul(npy_half x, npy_half y) { return npy_float_to_half(f32_mul(HF(x), HF(y))); }
static inline npy_half f16_max(npy_half x, npy_half y)
{
    float a = HF(x), b = HF(y);
    return (a >= b || a != a) ? x : y;
}
static inline npy_half f16_min(npy_half x, npy_half y)
{
    float a = HF(x), b = HF(y);
    return (a <= b || a != a) ? x : y;
}
SO_SAME_MAXMIN(f16, npy_half)
#undef HF

/* The same float16 operations with the F16C conversion instructions, chosen at
 * run time where the CPU has them: NumPy's npy_half_to_float / npy_float_to_half
 * are out-of-line bit manipulations, a large share of a float16 scatter-add
 * (docs/design.md, "The element operations").  Both convert exactly and round
 * to nearest even, so every result is the same; a NaN result's payload may
 * differ, which docs/contract.md leaves open. */
#if SO_X86_VECTOR
#include <immintrin.h>
#define SO_HAVE_F16C 1
#define SO_F16C __attribute__((target("f16c")))
#define HF(x) _cvtsh_ss(x)
#define FH(x) ((npy_half)_cvtss_sh((x), _MM_FROUND_TO_NEAREST_INT))
SO_F16C static inline npy_half f16c_add(npy_half x, npy_half y) { return FH(f32_add(HF(x), HF(y))); }
SO_F16C static inline npy_half f16c_sub(npy_half x, npy_half y) { return FH(HF(x) - HF(y)); }
SO_F16C static inline npy_half f16c_mul(npy_half x, npy_half y) { return FH(f32_mul(HF(x), HF(y))); }
SO_F16C static inline npy_half f16c_max(npy_half x, npy_half y)
{
    float a = HF(x), b = HF(y);
    return (a >= b || a != a) ? x : y;
}
SO_F16C static inline npy_half f16c_min(npy_half x, npy_half y)
{
    float a = HF(x), b = HF(y);
    return (a <= b || a != a) ? x : y;
}
SO_F16C static inline npy_half f16c_max1(npy_half x, npy_half y) { return f16c_max(x, y); }
SO_F16C static inline npy_half f16c_min1(npy_half x, npy_half y) { return f16c_min(x, y); }
SO_F16C static inline npy_half f16c_maxv(npy_half x, npy_half y) { return f16c_max(x, y); }
SO_F16C static inline npy_half f16c_minv(npy_half x, npy_half y) { return f16c_min(x, y); }
#undef HF
#undef FH
#endif

/* ml_dtypes' bfloat16 (the high 16 bits of a float32), its operations as
 * ml_dtypes' own ufunc loops compute them, which ufunc.at calls update by update:
 * add, sub and mul widen both operands to float32 exactly, operate once in
 * float32 and round the float32 result to bfloat16 to nearest, ties to even
 * (a NaN becomes the quiet NaN 0x7fc0 with the NaN's sign); max and min compare
 * in float32 and return one operand's bits unchanged: x if x is NaN or x > y
 * (x < y), else y -- strict, so max(+0, -0) is -0, unlike float16's (x >= y).
 * No flush of subnormals: bfloat16 has float32's exponent range, so they widen
 * and round like any other value.  tests/test_bfloat16.py holds these rules to
 * ml_dtypes itself. */
static inline float bf16_to_float(npy_uint16 h)
{
    npy_uint32 b = (npy_uint32)h << 16;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
static inline npy_uint16 bf16_from_float(float f)
{
    npy_uint32 b;
    memcpy(&b, &f, sizeof b);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (npy_uint16)(((b >> 16) & 0x8000u) | 0x7fc0u);
    return (npy_uint16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
#define BF(x) bf16_to_float(x)
/* y + x and y * x: the same value as x + y and x * y (both commute exactly); with
 * two NaNs, which NaN's sign survives depends on the order, and written this way
 * it is the one ml_dtypes' loops give here (which docs/contract.md does not promise) */
static inline npy_uint16 bf16_add(npy_uint16 x, npy_uint16 y) { return bf16_from_float(BF(y) + BF(x)); }
static inline npy_uint16 bf16_sub(npy_uint16 x, npy_uint16 y) { return bf16_from_float(BF(x) - BF(y)); }
static inline npy_uint16 bf16_mul(npy_uint16 x, npy_uint16 y) { return bf16_from_float(BF(y) * BF(x)); }
static inline npy_uint16 bf16_max(npy_uint16 x, npy_uint16 y)
{
    float a = BF(x), b = BF(y);
    return (a > b || a != a) ? x : y;
}
static inline npy_uint16 bf16_min(npy_uint16 x, npy_uint16 y)
{
    float a = BF(x), b = BF(y);
    return (a < b || a != a) ? x : y;
}
SO_SAME_MAXMIN(bf16, npy_uint16)
#undef BF

#define CPLX_OPS(NAME, T, R)                                                          \
static inline T NAME##_add(T x, T y) { T z; z.r = R##_add(x.r, y.r); z.i = R##_add(x.i, y.i); return z; } \
static inline T NAME##_sub(T x, T y) { T z; z.r = x.r - y.r; z.i = x.i - y.i; return z; } \
static inline T NAME##_mul(T x, T y)                                                  \
{                                                                                     \
    T z;                                                                              \
    z.r = R##_mul(x.r, y.r) - R##_mul(x.i, y.i);                                      \
    z.i = R##_add(R##_mul(x.r, y.i), R##_mul(x.i, y.r));                              \
    return z;                                                                         \
}                                                                                     \
static inline T NAME##_max(T x, T y)                                                  \
{                                                                                     \
    int ge = (x.r > y.r && y.i == y.i && x.i == x.i) || (x.r == y.r && x.i >= y.i);   \
    return (x.r != x.r || x.i != x.i || ge) ? x : y;                                  \
}                                                                                     \
static inline T NAME##_min(T x, T y)                                                  \
{                                                                                     \
    int le = (x.r < y.r && y.i == y.i && x.i == x.i) || (x.r == y.r && x.i <= y.i);   \
    return (x.r != x.r || x.i != x.i || le) ? x : y;                                  \
}

CPLX_OPS(c64, so_c64, f32)
CPLX_OPS(c128, so_c128, f64)
SO_SAME_MAXMIN(c64, so_c64)
SO_SAME_MAXMIN(c128, so_c128)

/* Counting hits for mean: the "out" array is npy_intp counts, updates unread. */
static inline npy_intp cnt_count(npy_intp x, npy_intp y) { (void)y; return x + 1; }

/* The one table of dtypes: X(name, C type). Type numbers are folded by
 * kind and size in so_reduce_kernel, so int/long/longlong all land on one row. */
#define SO_NUMERIC_TYPES(X)                                                           \
    X(i8, npy_int8)                                                                   \
    X(i16, npy_int16)                                                                 \
    X(i32, npy_int32)                                                                 \
    X(i64, npy_int64)                                                                 \
    X(u8, npy_uint8)                                                                  \
    X(u16, npy_uint16)                                                                \
    X(u32, npy_uint32)                                                                \
    X(u64, npy_uint64)                                                                \
    X(f16, npy_half)                                                                  \
    X(f32, npy_float)                                                                 \
    X(f64, npy_double)                                                                \
    X(c64, so_c64)                                                                    \
    X(c128, so_c128)

/* An index read in its own type (base.h's SO_INDEX_TYPES, S its signedness),
 * wrapped and clamped into [0, size) (base.h's so_clamp): a signed one counts
 * from the end when negative; an unsigned one above intp's range is outside. */
#define SO_IX_CLAMP_1(v, size) so_clamp((npy_intp)(v), size)
#define SO_IX_CLAMP_0(v, size) ((npy_uintp)(v) < (npy_uintp)(size) ? (npy_intp)(v) : 0)
/* The same index only wrapped, for loops that test it themselves: inside out
 * exactly when (npy_uintp)j < size (an unsigned one above intp's range turns
 * negative, so outside too). */
#define SO_IX_WRAP_1(v, size) so_wrap((npy_intp)(v), size)
#define SO_IX_WRAP_0(v, size) ((npy_intp)(v))
#define SO_IX_OUTSIDE(j, size) ((npy_uintp)(j) >= (npy_uintp)(size))

/* widen.c: the loops of indexed.c and rows.c read int32 and int64 indices as
 * they are; the other index types go through a wider one of these two,
 * so_wide_index_type(itype), a chunk of at most SO_WIDE_CHUNK indices at a
 * time copied by so_widen_index into a buffer (int64-aligned, 8 bytes an
 * index) that the wider type's loop reads.  A uint64 index above int64's range
 * becomes int64's maximum: outside out, as it was. */
#define SO_WIDE_CHUNK 2048
int so_wide_index_type(int itype);
void so_widen_index(int itype, char *w, const char *idx, npy_intp n);
/* the same copy into int64 for every index type (rows.c's loops read int64 only) */
void so_widen_index64(int itype, char *w, const char *idx, npy_intp n);
/* an indexed loop (kernels.h's so_indexed_fn) for index type itype, through
 * wide, the loop of so_wide_index_type(itype); usz the bytes of an update */
npy_intp so_indexed_widened(so_indexed_fn wide, int itype, npy_intp usz, char *o,
                            npy_intp aos, npy_intp size, const char *idx, const char *u,
                            npy_intp n);

#define SO_ROW_ENUM(NAME, T) SO_ROW_##NAME,
enum so_typed_row { SO_NUMERIC_TYPES(SO_ROW_ENUM) SO_NROWS };
#undef SO_ROW_ENUM

/* The row of the table for dtype d (the integers in base.h's order of index
 * types, so_index_type), or -1 (bool, byte-swapped, generic dtypes). */
static inline int
so_typed_row(PyArray_Descr *d)
{
    int ix = so_index_type(d);
    if (ix >= 0) return SO_ROW_i8 + (ix - SO_IX_i8);
    if (!PyArray_ISNBO(d->byteorder)) return -1;
    switch (d->type_num) {
        case NPY_HALF: return SO_ROW_f16;
        case NPY_FLOAT: return SO_ROW_f32;
        case NPY_DOUBLE: return SO_ROW_f64;
        case NPY_CFLOAT: return SO_ROW_c64;
        case NPY_CDOUBLE: return SO_ROW_c128;
    }
    return -1;
}

/* The dtypes of the loops that read their indices as given (indexed.c by
 * element, rows.c by row): ops.h's table without float16 (its loops convert
 * through F16C, chosen at run time in reduce.c; a float16 call keeps the intp
 * path).  Their tables are indexed by so_typed_row, with NULL in float16's row.
 * SO_OWN_LOOP_TYPES(X) have loops of their own for every op; an unsigned
 * integer's add, sub and mul give the bits of the signed integer of its size
 * (both wrap modulo 2^bits: INT_OPS above), so SO_SHARED_LOOP_TYPES(U), U(name,
 * C type, the signed one's name), take that one's loops for them and have their
 * own max and min only: the same machine code, compiled once. */
#define SO_OWN_LOOP_TYPES(X)                                                          \
    X(i8, npy_int8) X(i16, npy_int16) X(i32, npy_int32) X(i64, npy_int64)             \
    X(f32, npy_float) X(f64, npy_double) X(c64, so_c64) X(c128, so_c128)
#define SO_SHARED_LOOP_TYPES(U)                                                       \
    U(u8, npy_uint8, i8) U(u16, npy_uint16, i16) U(u32, npy_uint32, i32)              \
    U(u64, npy_uint64, i64)

#endif

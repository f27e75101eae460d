/*
 * kernels/reduce.c: typed reduction kernels, generated from one table of dtypes.
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
#include "kernels/kernels.h"
#include <numpy/halffloat.h>

/* how many elements ahead the element kernels prefetch their destination, and
 * the size of out (bytes along the axis) below which they do not: it is in cache */
#define SO_ELEM_AHEAD 16
#define SO_CACHED_BYTES ((npy_intp)1 << 20)
/* the list kernels (a thread's owned elements, walk/owned.c) prefetch further ahead */
#define SO_LIST_AHEAD 32

typedef struct { float r, i; } so_c64;
typedef struct { double r, i; } so_c128;

/* ---- the element operations ------------------------------------------------ */

/* WT: the unsigned type the arithmetic runs in (at least unsigned int, so no
 * operand is promoted to a signed int that could overflow). */
#define INT_OPS(NAME, T, WT)                                                          \
static inline T NAME##_add(T x, T y) { return (T)((WT)x + (WT)y); }                   \
static inline T NAME##_sub(T x, T y) { return (T)((WT)x - (WT)y); }                   \
static inline T NAME##_mul(T x, T y) { return (T)((WT)x * (WT)y); }                   \
static inline T NAME##_max(T x, T y) { return x >= y ? x : y; }                       \
static inline T NAME##_min(T x, T y) { return x <= y ? x : y; }

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

/* NaN payloads are not promised (docs/contract.md: NaN where NaN): when both operands are
 * NaN, which one's bits survive depends on how the compiler ordered the
 * operands.  Pinning the order (x != x ? x + x : x + y) matched NumPy's real
 * loops exactly but stopped the row loops from vectorising: a graph
 * scatter-add took 80-90 ms instead of 38 ms. */
#define FLOAT_OPS(NAME, T)                                                            \
static inline T NAME##_add(T x, T y) { return x + y; }                                        \
static inline T NAME##_sub(T x, T y) { return x - y; }                                \
static inline T NAME##_mul(T x, T y) { return x * y; }                                        \
static inline T NAME##_max(T x, T y) { return (x > y || x != x) ? x : y; }            \
static inline T NAME##_min(T x, T y) { return (x < y || x != x) ? x : y; }

FLOAT_OPS(f32, npy_float)
FLOAT_OPS(f64, npy_double)

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
#undef HF

/* The same float16 operations with the F16C conversion instructions, chosen at
 * run time where the CPU has them: NumPy's npy_half_to_float / npy_float_to_half
 * are out-of-line bit manipulations and took half the time of a float16
 * scatter-add.  Both convert exactly and round to nearest even, so every result
 * is the same; a NaN result's payload may differ, which docs/contract.md leaves open. */
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
#undef HF
#undef FH
#endif

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

/* Counting hits for mean: the "out" array is npy_intp counts, updates unread. */
static inline npy_intp cnt_count(npy_intp x, npy_intp y) { (void)y; return x + 1; }

/* ---- kernels from the element operations ----------------------------------- */

#define DEFINE_KERNELS_ATTR(NAME, T, OP, ATTR)                                        \
ATTR static void                                                                      \
NAME##_##OP##_block(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n,    \
                    npy_intp isz)                                                     \
{                                                                                     \
    npy_intp i;                                                                       \
    T x, y;                                                                           \
    if (os == (npy_intp)sizeof(T) && us == (npy_intp)sizeof(T)) {                     \
        for (i = 0; i < n; i++) {                                                     \
            memcpy(&x, o + i * sizeof(T), sizeof(T));                                 \
            memcpy(&y, u + i * sizeof(T), sizeof(T));                                 \
            x = NAME##_##OP(x, y);                                                    \
            memcpy(o + i * sizeof(T), &x, sizeof(T));                                 \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        memcpy(&x, o + i * os, sizeof(T));                                            \
        memcpy(&y, u + i * us, sizeof(T));                                            \
        x = NAME##_##OP(x, y);                                                        \
        memcpy(o + i * os, &x, sizeof(T));                                            \
    }                                                                                 \
}                                                                                     \
ATTR static void                                                                      \
NAME##_##OP##_elem(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size,\
                   npy_intp aos, const char *u, npy_intp us, npy_intp n, npy_intp isz)\
{                                                                                     \
    npy_intp i;                                                                       \
    T x, y;                                                                           \
    if (os == 0 && is == (npy_intp)sizeof(npy_intp) && us == (npy_intp)sizeof(T) &&   \
            size * (aos < 0 ? -aos : aos) <= SO_CACHED_BYTES) {                       \
        /* scattered elements into an out that stays in cache: nothing to prefetch */ \
        for (i = 0; i < n; i++) {                                                     \
            npy_intp j = so_clamp(so_load_intp(idx + i * sizeof(npy_intp)), size);     \
            char *p = o + j * aos;                                                    \
            memcpy(&x, p, sizeof(T));                                                 \
            memcpy(&y, u + i * sizeof(T), sizeof(T));                                 \
            x = NAME##_##OP(x, y);                                                    \
            memcpy(p, &x, sizeof(T));                                                 \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    if (os == 0 && is == (npy_intp)sizeof(npy_intp) && us == (npy_intp)sizeof(T)) {  \
        /* a run of scattered elements: indices and updates contiguous */             \
        for (i = 0; i < n; i++) {                                                     \
            npy_intp j = so_clamp(so_load_intp(idx + i * sizeof(npy_intp)), size);     \
            char *p = o + j * aos;                                                    \
            if (i + SO_ELEM_AHEAD < n) {                                              \
                npy_intp jf = so_load_intp(idx + (i + SO_ELEM_AHEAD) * sizeof(npy_intp)); \
                __builtin_prefetch(o + so_wrap(jf, size) * aos, 1);                   \
            }                                                                         \
            memcpy(&x, p, sizeof(T));                                                 \
            memcpy(&y, u + i * sizeof(T), sizeof(T));                                 \
            x = NAME##_##OP(x, y);                                                    \
            memcpy(p, &x, sizeof(T));                                                 \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);                       \
        char *p = o + i * os + j * aos;                                               \
        memcpy(&x, p, sizeof(T));                                                     \
        memcpy(&y, u + i * us, sizeof(T));                                            \
        x = NAME##_##OP(x, y);                                                        \
        memcpy(p, &x, sizeof(T));                                                     \
    }                                                                                 \
}                                                                                     \
ATTR static void                                                                      \
NAME##_##OP##_first(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size,\
                    npy_intp aos, char *m, npy_intp ms, npy_intp ams, const char *u,  \
                    npy_intp us, npy_intp n)                                          \
{                                                                                     \
    npy_intp i;                                                                       \
    T x, y;                                                                           \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);                      \
        char *p = o + i * os + j * aos, *mk = m + i * ms + j * ams;                   \
        memcpy(&y, u + i * us, sizeof(T));                                            \
        if (*mk) {                                                                    \
            memcpy(&x, p, sizeof(T));                                                 \
            y = NAME##_##OP(x, y);                                                    \
        }                                                                             \
        *mk = 1;                                                                      \
        memcpy(p, &y, sizeof(T));                                                     \
    }                                                                                 \
}                                                                                     \
ATTR static void                                                                      \
NAME##_##OP##_list(char *o, const char *u, const npy_intp *oo, const npy_intp *uo,   \
                   npy_intp n, npy_intp isz)                                          \
{                                                                                     \
    npy_intp q;                                                                       \
    T x, y;                                                                           \
    for (q = 0; q < n; q++) {                                                         \
        char *p = o + oo[q];                                                          \
        if (q + SO_LIST_AHEAD < n) __builtin_prefetch(o + oo[q + SO_LIST_AHEAD], 1);  \
        memcpy(&x, p, sizeof(T));                                                     \
        memcpy(&y, u + uo[q], sizeof(T));                                             \
        x = NAME##_##OP(x, y);                                                        \
        memcpy(p, &x, sizeof(T));                                                     \
    }                                                                                 \
}

#define DEFINE_KERNELS(NAME, T, OP) DEFINE_KERNELS_ATTR(NAME, T, OP, )
#define DEFINE_ONE(NAME, T, OP) DEFINE_KERNELS(NAME, T, OP)
#define DEFINE_ALL(NAME, T)                                                           \
    DEFINE_ONE(NAME, T, add) DEFINE_ONE(NAME, T, sub)                                 \
    DEFINE_ONE(NAME, T, mul) DEFINE_ONE(NAME, T, max) DEFINE_ONE(NAME, T, min)

/* The one table of dtypes: X(name, C type). Type numbers are folded by
 * kind and size in so_reduce_kernel, so int/long/longlong all land on one row. */
#define SO_NUMERIC_TYPES(X)        \
    X(i8, npy_int8)                \
    X(i16, npy_int16)              \
    X(i32, npy_int32)              \
    X(i64, npy_int64)              \
    X(u8, npy_uint8)               \
    X(u16, npy_uint16)             \
    X(u32, npy_uint32)             \
    X(u64, npy_uint64)             \
    X(f16, npy_half)               \
    X(f32, npy_float)              \
    X(f64, npy_double)             \
    X(c64, so_c64)                 \
    X(c128, so_c128)

SO_NUMERIC_TYPES(DEFINE_ALL)
#ifdef SO_HAVE_F16C
DEFINE_KERNELS_ATTR(f16c, npy_half, add, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, sub, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, mul, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, max, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, min, SO_F16C)
#endif
DEFINE_ONE(b, npy_bool, add)
DEFINE_ONE(b, npy_bool, mul)
DEFINE_ONE(b, npy_bool, max)
DEFINE_ONE(b, npy_bool, min)
DEFINE_ONE(cnt, npy_intp, count)

typedef struct {
    so_block_fn block[SO_NOPS];
    so_elem_fn elem[SO_NOPS];
    so_list_fn list[SO_NOPS];
    so_first_fn first[SO_NOPS];
} so_row;

#define ROW(NAME, T)                                                                  \
    static const so_row row_##NAME = {                                                \
        {NULL, NAME##_add_block, NAME##_sub_block, NAME##_mul_block,                  \
         NAME##_max_block, NAME##_min_block, NULL},                                   \
        {NULL, NAME##_add_elem, NAME##_sub_elem, NAME##_mul_elem,                     \
         NAME##_max_elem, NAME##_min_elem, NULL},                                     \
        {NULL, NAME##_add_list, NAME##_sub_list, NAME##_mul_list,                     \
         NAME##_max_list, NAME##_min_list, NULL},                                     \
        {NULL, NAME##_add_first, NAME##_sub_first, NAME##_mul_first,                  \
         NAME##_max_first, NAME##_min_first, NULL}};
SO_NUMERIC_TYPES(ROW)
#ifdef SO_HAVE_F16C
ROW(f16c, npy_half)
#endif
static const so_row row_b = {
    {NULL, b_add_block, NULL, b_mul_block, b_max_block, b_min_block, NULL},
    {NULL, b_add_elem, NULL, b_mul_elem, b_max_elem, b_min_elem, NULL},
    {NULL, b_add_list, NULL, b_mul_list, b_max_list, b_min_list, NULL},
    {NULL, b_add_first, NULL, b_mul_first, b_max_first, b_min_first, NULL}};

/* Type characters with typed kernels (native byte order): Python routes the
 * others to the generic path. */
const char so_typed_chars[] = "?bBhHiIlLqQefdFD";


static const so_row *
row_for(PyArray_Descr *descr)
{
    int tn = descr->type_num;
    int isz = (int)PyDataType_ELSIZE(descr);
    if (tn == NPY_BOOL) return &row_b;
    if (PyTypeNum_ISSIGNED(tn)) {
        switch (isz) {
            case 1: return &row_i8;
            case 2: return &row_i16;
            case 4: return &row_i32;
            case 8: return &row_i64;
        }
        return NULL;
    }
    if (PyTypeNum_ISUNSIGNED(tn)) {
        switch (isz) {
            case 1: return &row_u8;
            case 2: return &row_u16;
            case 4: return &row_u32;
            case 8: return &row_u64;
        }
        return NULL;
    }
    switch (tn) {
        case NPY_HALF:
#ifdef SO_HAVE_F16C
            if (so_cpu_has(SO_CPU_F16C)) return &row_f16c;
#endif
            return &row_f16;
        case NPY_FLOAT: return &row_f32;
        case NPY_DOUBLE: return &row_f64;
        case NPY_CFLOAT: return &row_c64;
        case NPY_CDOUBLE: return &row_c128;
    }
    return NULL;
}

int
so_reduce_kernel(so_kernel *kn, PyArray_Descr *descr, int op)
{
    const so_row *row;
    if (op == SO_COUNT) {
        if (!PyTypeNum_ISSIGNED(descr->type_num) ||
            PyDataType_ELSIZE(descr) != (npy_intp)sizeof(npy_intp)) return 0;
        kn->block = cnt_count_block;
        kn->elem = cnt_count_elem;
        kn->list = cnt_count_list;
        kn->first = NULL;            /* counts are never masked */
        (void)cnt_count_first;
        kn->itemsize = sizeof(npy_intp);
        kn->needs_gil = 0;
        return 1;
    }
    if (op <= SO_NONE || op >= SO_COUNT || !PyArray_ISNBO(descr->byteorder)) {
        return 0;
    }
    row = row_for(descr);
    if (row == NULL || row->block[op] == NULL) {
        return 0;
    }
    kn->block = row->block[op];
    kn->elem = row->elem[op];
    kn->list = row->list[op];
    kn->first = row->first[op];
    kn->itemsize = PyDataType_ELSIZE(descr);
    kn->needs_gil = 0;
    return 1;
}

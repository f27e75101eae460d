/*
 * kernels/rows.c: the row loops of a scatter along axis 0 into rows of f
 * contiguous elements, for the direct form of a call on rows: for i < n, with
 * j = idx[i] read as int64 (the other index types through a copy to int64,
 * kernels/widen.c), row j of
 * out takes f(row j, row i of the updates) element by element -- every typed
 * reduction of indexed.c's dtypes, and the assignment of reduction "none" by
 * item size.  Rows are applied in C order, the elements of a row in order: the
 * bits of the plain walk (ufunc.at's).
 *
 * The loop over a row is inline, never a call: f = 1, 2, 4 and 8 are
 * compile-time constants (the compiler unrolls, and vectorises a row of 4 or
 * 8), any other f a counted loop (which the compiler vectorises).  Rows of at
 * least SO_ROWS_AHEAD_ROW bytes into an out larger than a core's L2 have the
 * destination row of index i + SO_ROWS_AHEAD prefetched: random rows there
 * miss every cache.  As in indexed.c's element loops, each index is wrapped
 * and tested as it is read (ops.h's SO_IX_WRAP and SO_IX_OUTSIDE): the first
 * outside [-size, size) ends the loop, which returns its position (-1: every
 * row applied); a row's address is formed only from an index inside (one from
 * an index outside could overflow).  So a loop into memory its caller can
 * drop (a fresh result) is the only reader of its indices, and a loop whose
 * indices were checked before still writes only inside out if another thread
 * rewrote one since.
 */
#include "kernels/ops.h"

/* reduction "none": the update's bits, whatever the dtype (an unsigned type, or
 * two of them, of the item size: no float load that could touch a NaN) */
typedef struct { npy_uint64 lo, hi; } so_b128;
#define ASSIGN_OP(NAME, T) static inline T NAME##_none(T x, T y) { (void)x; return y; }
ASSIGN_OP(b8, npy_uint8)
ASSIGN_OP(b16, npy_uint16)
ASSIGN_OP(b32, npy_uint32)
ASSIGN_OP(b64, npy_uint64)
ASSIGN_OP(b128, so_b128)

/* every row i < n through the operation NAME_OP, with F elements a row; an
 * index outside out ends the loop, which returns its position */
#define ROW_LOOP(NAME, OP, T, S, F)                                                   \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = SO_IX_WRAP_##S(ix[i], size);                                     \
        T *r;                                                                         \
        if (SO_IX_OUTSIDE(j, size)) return i;                                         \
        r = (T *)(void *)(o + j * ros);                                               \
        const T *s = (const T *)(const void *)(u + i * us);                           \
        npy_intp k;                                                                   \
        for (k = 0; k < (F); k++) r[k] = SO_OP1(NAME, OP)(r[k], s[k]);                \
    }                                                                                 \
    return -1;

/* the same through local copies of the row and the update, which the compiler
 * knows apart and vectorises as a whole: for F = 4 and 8, where they beat
 * ROW_LOOP (docs/design.md, "The row loops", has the widths tried) */
#define ROW_LOOP_COPIED(NAME, OP, T, S, F)                                            \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = SO_IX_WRAP_##S(ix[i], size);                                     \
        char *r;                                                                      \
        T x[F], y[F];                                                                 \
        npy_intp k;                                                                   \
        if (SO_IX_OUTSIDE(j, size)) return i;                                         \
        r = o + j * ros;                                                              \
        memcpy(x, r, sizeof x);                                                       \
        memcpy(y, u + i * us, sizeof y);                                              \
        for (k = 0; k < (F); k++) x[k] = SO_OPV(NAME, OP)(x[k], y[k]);                \
        memcpy(r, x, sizeof x);                                                       \
    }                                                                                 \
    return -1;

/* Prefetching the row SO_ROWS_AHEAD rows ahead, every cache line of it, for
 * writing, where the out is larger than SO_ROWS_AHEAD_OUT bytes (a core's L2;
 * in cache the prefetch is only work) and rows at least SO_ROWS_AHEAD_ROW
 * (shorter rows gain nothing; docs/design.md, "The row loops"). */
#define SO_ROWS_AHEAD 8
#define SO_ROWS_AHEAD_OUT ((npy_intp)2 << 20)
#define SO_ROWS_AHEAD_ROW 128

/* the rows below which ROW_LOOP_AHEAD prefetches: those of a call into an out
 * beyond SO_ROWS_AHEAD_OUT, with rows of SO_ROWS_AHEAD_ROW bytes or more */
#define ROWS_AHEAD_LIM(T) (size * ros > SO_ROWS_AHEAD_OUT &&                          \
                           f * (npy_intp)sizeof(T) >= SO_ROWS_AHEAD_ROW ? n - SO_ROWS_AHEAD : 0)

/* ROW_LOOP, prefetching the row SO_ROWS_AHEAD rows ahead below row lim (0: no
 * prefetch; not a loop-invariant test, which the compiler would split into two loops) */
#define ROW_LOOP_AHEAD(NAME, OP, T, S, F, lim)                                        \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = SO_IX_WRAP_##S(ix[i], size);                                     \
        T *r;                                                                         \
        const T *s = (const T *)(const void *)(u + i * us);                           \
        npy_intp k;                                                                   \
        if (SO_IX_OUTSIDE(j, size)) return i;                                         \
        r = (T *)(void *)(o + j * ros);                                               \
        if (i < (lim)) {                                                              \
            const char *p = o + SO_IX_CLAMP_##S(ix[i + SO_ROWS_AHEAD], size) * ros;   \
            for (k = 0; k < (F) * (npy_intp)sizeof(T); k += 64) __builtin_prefetch(p + k, 1); \
        }                                                                             \
        for (k = 0; k < (F); k++) r[k] = SO_OPV(NAME, OP)(r[k], s[k]);                \
    }                                                                                 \
    return -1;

/* ROW_LOOP_COPIED for one F as a function of its own, never inlined: inline
 * beside more loops, the compiler keeps the local copies on the stack
 * (docs/design.md, "The row loops") */
#define ROWS_COPIED(NAME, T, OP, IN, IT, S, F)                                        \
__attribute__((noinline)) static npy_intp                                             \
NAME##_##OP##_rows##F##_by_##IN(char *restrict o, npy_intp ros, npy_intp size,        \
                                const IT *restrict ix, const char *restrict u,        \
                                npy_intp us, npy_intp n)                              \
{                                                                                     \
    npy_intp i;                                                                       \
    ROW_LOOP_COPIED(NAME, OP, T, S, F)                                                \
}

/* Rows of 2: add, sub and mul through local copies too, which are faster for
 * them; max, min and "none" keep the inline loop, slower copied
 * (docs/design.md, "The row loops"). */
#define ROWS2_FN_add(NAME, T, IN, IT, S) ROWS_COPIED(NAME, T, add, IN, IT, S, 2)
#define ROWS2_FN_sub(NAME, T, IN, IT, S) ROWS_COPIED(NAME, T, sub, IN, IT, S, 2)
#define ROWS2_FN_mul(NAME, T, IN, IT, S) ROWS_COPIED(NAME, T, mul, IN, IT, S, 2)
#define ROWS2_FN_max(NAME, T, IN, IT, S)
#define ROWS2_FN_min(NAME, T, IN, IT, S)
#define ROWS2_FN_none(NAME, T, IN, IT, S)
#define ROWS2_add(NAME, T, IN, S) return NAME##_add_rows2_by_##IN(o, ros, size, ix, u, us, n);
#define ROWS2_sub(NAME, T, IN, S) return NAME##_sub_rows2_by_##IN(o, ros, size, ix, u, us, n);
#define ROWS2_mul(NAME, T, IN, S) return NAME##_mul_rows2_by_##IN(o, ros, size, ix, u, us, n);
#define ROWS2_max(NAME, T, IN, S) ROW_LOOP(NAME, max, T, S, 2)
#define ROWS2_min(NAME, T, IN, S) ROW_LOOP(NAME, min, T, S, 2)
#define ROWS2_none(NAME, T, IN, S) ROW_LOOP(NAME, none, T, S, 2)

#define ROWS(NAME, T, OP, IN, IT, S)                                                  \
ROWS2_FN_##OP(NAME, T, IN, IT, S)                                                     \
ROWS_COPIED(NAME, T, OP, IN, IT, S, 4)                                                \
ROWS_COPIED(NAME, T, OP, IN, IT, S, 8)                                                \
static npy_intp                                                                       \
NAME##_##OP##_rows_by_##IN(char *restrict o, npy_intp ros, npy_intp size,             \
                           const char *idx, const char *restrict u, npy_intp us,      \
                           npy_intp n, npy_intp f)                                    \
{                                                                                     \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    const npy_intp lim = ROWS_AHEAD_LIM(T);                                           \
    npy_intp i;                                                                       \
    switch (f) {                                                                      \
        case 1: ROW_LOOP(NAME, OP, T, S, 1)                                           \
        case 2: ROWS2_##OP(NAME, T, IN, S)                                            \
        case 4: return NAME##_##OP##_rows4_by_##IN(o, ros, size, ix, u, us, n);       \
        case 8: return NAME##_##OP##_rows8_by_##IN(o, ros, size, ix, u, us, n);       \
        default: ROW_LOOP_AHEAD(NAME, OP, T, S, f, lim)                               \
    }                                                                                 \
}

/* An index type other than int64: chunk by chunk, its indices widened into a
 * buffer of int64 (ops.h's so_widen_index64), which the loop wide of int64
 * reads.  Per row, the copy is a small part of the work, and the loops of one
 * index type are half of those of two to build. */
static npy_intp
rows_widened(so_rows_fn wide, int itype, char *o, npy_intp ros, npy_intp size,
             const char *idx, const char *u, npy_intp us, npy_intp n, npy_intp f)
{
    npy_int64 w[SO_WIDE_CHUNK];
    const npy_intp isz = so_index_size(itype);
    npy_intp c, pos;
    for (c = 0; c < n; c += SO_WIDE_CHUNK) {
        npy_intp m = n - c < SO_WIDE_CHUNK ? n - c : SO_WIDE_CHUNK;
        so_widen_index64(itype, (char *)w, idx + c * isz, m);
        pos = wide(o, ros, size, (const char *)w, u + c * us, us, m, f);
        if (pos >= 0) return c + pos;
    }
    return -1;
}

/* the loop NAME_OP_ROWS_by_IN (ROWS: rows, rows_avx2) of an index type other
 * than int64, through int64's */
#define ROWS_WIDENED(NAME, OP, ROWS, IN, WIDE)                                        \
static npy_intp                                                                       \
NAME##_##OP##_##ROWS##_by_##IN(char *o, npy_intp ros, npy_intp size, const char *idx, \
                               const char *u, npy_intp us, npy_intp n, npy_intp f)    \
{                                                                                     \
    return rows_widened(NAME##_##OP##_##ROWS##_by_##WIDE, SO_IX_##IN, o, ros, size,   \
                        idx, u, us, n, f);                                            \
}
#define ROWS_WIDENED_ALL(NAME, OP, ROWS)                                              \
    ROWS_WIDENED(NAME, OP, ROWS, i8, i64) ROWS_WIDENED(NAME, OP, ROWS, i16, i64)      \
    ROWS_WIDENED(NAME, OP, ROWS, i32, i64)                                            \
    ROWS_WIDENED(NAME, OP, ROWS, u8, i64) ROWS_WIDENED(NAME, OP, ROWS, u16, i64)      \
    ROWS_WIDENED(NAME, OP, ROWS, u32, i64) ROWS_WIDENED(NAME, OP, ROWS, u64, i64)

/* the loops of one dtype and operation, one per index type, and their row of a table */
#define ROW_TABLE_ENTRY(NAME, OP) NAME##_##OP##_rows_by_i8, NAME##_##OP##_rows_by_i16,  \
    NAME##_##OP##_rows_by_i32, NAME##_##OP##_rows_by_i64, NAME##_##OP##_rows_by_u8,   \
    NAME##_##OP##_rows_by_u16, NAME##_##OP##_rows_by_u32, NAME##_##OP##_rows_by_u64

#define ROWS_OF(NAME, T, OP)                                                          \
    ROWS(NAME, T, OP, i64, npy_int64, 1) ROWS_WIDENED_ALL(NAME, OP, rows)

/* a dtype's typed reductions: their loops and table, by op and index type */
#define REDUCE_ROWS(NAME, T)                                                          \
    ROWS_OF(NAME, T, add) ROWS_OF(NAME, T, sub) ROWS_OF(NAME, T, mul)                 \
    ROWS_OF(NAME, T, max) ROWS_OF(NAME, T, min)                                       \
    static const so_rows_fn NAME##_rows[SO_NOPS][SO_IX_NTYPES] = {                    \
        {NULL}, {ROW_TABLE_ENTRY(NAME, add)}, {ROW_TABLE_ENTRY(NAME, sub)},           \
        {ROW_TABLE_ENTRY(NAME, mul)}, {ROW_TABLE_ENTRY(NAME, max)},                   \
        {ROW_TABLE_ENTRY(NAME, min)}, {NULL}};
/* an unsigned dtype's: add, sub and mul those of the signed one SNAME (ops.h's
 * SO_SHARED_LOOP_TYPES) */
#define REDUCE_SHARED_ROWS(NAME, T, SNAME)                                            \
    ROWS_OF(NAME, T, max) ROWS_OF(NAME, T, min)                                       \
    static const so_rows_fn NAME##_rows[SO_NOPS][SO_IX_NTYPES] = {                    \
        {NULL}, {ROW_TABLE_ENTRY(SNAME, add)}, {ROW_TABLE_ENTRY(SNAME, sub)},         \
        {ROW_TABLE_ENTRY(SNAME, mul)}, {ROW_TABLE_ENTRY(NAME, max)},                  \
        {ROW_TABLE_ENTRY(NAME, min)}, {NULL}};
SO_OWN_LOOP_TYPES(REDUCE_ROWS)
SO_SHARED_LOOP_TYPES(REDUCE_SHARED_ROWS)

/* The same loops compiled for AVX2, for add, sub, mul, max and min of the 4-
 * and 8-byte integers and floats, chosen at run time (so_rows_kernel): a row of
 * 8 through a vector of 8 (one 256-bit operation for float32, where the
 * baseline's local copies take two of 128), rows longer than 8 the baseline's
 * counted loop built for AVX2, rows of 1, 2 and 4 the baseline's loops
 * themselves.  Element by element the same operations, so the same bits
 * (docs/design.md, "The row loops"). */
#if SO_X86_VECTOR
#define VEC_ROWS(NAME, T, OP, IN, IT, S)                                              \
__attribute__((noinline, target("avx2"))) static npy_intp                             \
NAME##_##OP##_rows8v_by_##IN(char *restrict o, npy_intp ros, npy_intp size,           \
                             const IT *restrict ix, const char *restrict u,           \
                             npy_intp us, npy_intp n)                                 \
{                                                                                     \
    npy_intp i;                                                                       \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = SO_IX_WRAP_##S(ix[i], size);                                     \
        NAME##_v8 x, y;                                                               \
        int k;                                                                        \
        if (SO_IX_OUTSIDE(j, size)) return i;                                         \
        memcpy(&x, o + j * ros, sizeof x);                                            \
        memcpy(&y, u + i * us, sizeof y);                                             \
        for (k = 0; k < 8; k++) x[k] = SO_OPV(NAME, OP)(x[k], y[k]);                  \
        memcpy(o + j * ros, &x, sizeof x);                                            \
    }                                                                                 \
    return -1;                                                                        \
}                                                                                     \
__attribute__((target("avx2"))) static npy_intp                                       \
NAME##_##OP##_rows_avx2_by_##IN(char *restrict o, npy_intp ros, npy_intp size,        \
                                const char *idx, const char *restrict u, npy_intp us, \
                                npy_intp n, npy_intp f)                               \
{                                                                                     \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    const npy_intp lim = ROWS_AHEAD_LIM(T);                                           \
    npy_intp i;                                                                       \
    switch (f) {                                                                      \
        case 1: case 2: case 4:                                                       \
            return NAME##_##OP##_rows_by_##IN(o, ros, size, idx, u, us, n, f);        \
        case 8: return NAME##_##OP##_rows8v_by_##IN(o, ros, size, ix, u, us, n);      \
        default: ROW_LOOP_AHEAD(NAME, OP, T, S, f, lim)                               \
    }                                                                                 \
}

#define VEC_ROWS_OF(NAME, T, OP)                                                      \
    VEC_ROWS(NAME, T, OP, i64, npy_int64, 1) ROWS_WIDENED_ALL(NAME, OP, rows_avx2)

#define VEC_REDUCE_ROWS(NAME, T)                                                      \
    typedef T NAME##_v8 __attribute__((vector_size(8 * sizeof(T))));                  \
    VEC_ROWS_OF(NAME, T, add) VEC_ROWS_OF(NAME, T, sub) VEC_ROWS_OF(NAME, T, mul)     \
    VEC_ROWS_OF(NAME, T, max) VEC_ROWS_OF(NAME, T, min)                               \
    static const so_rows_fn NAME##_rows_avx2[5][SO_IX_NTYPES] = {                     \
        {ROW_TABLE_ENTRY_AVX2(NAME, add)}, {ROW_TABLE_ENTRY_AVX2(NAME, sub)},         \
        {ROW_TABLE_ENTRY_AVX2(NAME, mul)}, {ROW_TABLE_ENTRY_AVX2(NAME, max)},         \
        {ROW_TABLE_ENTRY_AVX2(NAME, min)}};
#define VEC_REDUCE_SHARED_ROWS(NAME, T, SNAME)                                        \
    typedef T NAME##_v8 __attribute__((vector_size(8 * sizeof(T))));                  \
    VEC_ROWS_OF(NAME, T, max) VEC_ROWS_OF(NAME, T, min)                               \
    static const so_rows_fn NAME##_rows_avx2[5][SO_IX_NTYPES] = {                     \
        {ROW_TABLE_ENTRY_AVX2(SNAME, add)}, {ROW_TABLE_ENTRY_AVX2(SNAME, sub)},       \
        {ROW_TABLE_ENTRY_AVX2(SNAME, mul)}, {ROW_TABLE_ENTRY_AVX2(NAME, max)},        \
        {ROW_TABLE_ENTRY_AVX2(NAME, min)}};

#define ROW_TABLE_ENTRY_AVX2(NAME, OP) NAME##_##OP##_rows_avx2_by_i8,                 \
    NAME##_##OP##_rows_avx2_by_i16, NAME##_##OP##_rows_avx2_by_i32,                   \
    NAME##_##OP##_rows_avx2_by_i64, NAME##_##OP##_rows_avx2_by_u8,                    \
    NAME##_##OP##_rows_avx2_by_u16, NAME##_##OP##_rows_avx2_by_u32,                   \
    NAME##_##OP##_rows_avx2_by_u64

VEC_REDUCE_ROWS(i32, npy_int32)
VEC_REDUCE_ROWS(i64, npy_int64)
VEC_REDUCE_SHARED_ROWS(u32, npy_uint32, i32)
VEC_REDUCE_SHARED_ROWS(u64, npy_uint64, i64)
VEC_REDUCE_ROWS(f32, npy_float)
VEC_REDUCE_ROWS(f64, npy_double)

/* the AVX2 loop of a dtype (its typed row) and op, or NULL */
static so_rows_fn
avx2_rows(int row, int op, int itype)
{
    static const so_rows_fn (*const by_row[SO_NROWS])[SO_IX_NTYPES] = {
        NULL, NULL, i32_rows_avx2, i64_rows_avx2, NULL, NULL, u32_rows_avx2, u64_rows_avx2,
        NULL, f32_rows_avx2, f64_rows_avx2, NULL, NULL};
    if (op < SO_ADD || op > SO_MIN || by_row[row] == NULL || !so_cpu_has(SO_CPU_AVX2)) {
        return NULL;
    }
    return by_row[row][op - SO_ADD][itype];
}
#endif

/* an item size's assignment: its loops and table, by index type */
#define ASSIGN_ROWS(NAME, T)                                                          \
    ROWS_OF(NAME, T, none)                                                            \
    static const so_rows_fn NAME##_assign_rows[SO_IX_NTYPES] = {ROW_TABLE_ENTRY(NAME, none)};
ASSIGN_ROWS(b8, npy_uint8)
ASSIGN_ROWS(b16, npy_uint16)
ASSIGN_ROWS(b32, npy_uint32)
ASSIGN_ROWS(b64, npy_uint64)
ASSIGN_ROWS(b128, so_b128)

so_rows_fn
so_rows_kernel(PyArray_Descr *d, int op, int itype)
{
    int isz = (int)PyDataType_ELSIZE(d);
    if (itype < 0 || itype >= SO_IX_NTYPES) return NULL;
    if (op == SO_NONE) {
        /* any dtype without references; its items are read as unsigned words of
         * their size, so the caller sees to their alignment */
        if (PyDataType_REFCHK(d)) return NULL;
        switch (isz) {
            case 1: return b8_assign_rows[itype];
            case 2: return b16_assign_rows[itype];
            case 4: return b32_assign_rows[itype];
            case 8: return b64_assign_rows[itype];
            case 16: return b128_assign_rows[itype];
        }
        return NULL;
    }
    static const so_rows_fn (*const by_row[SO_NROWS])[SO_IX_NTYPES] = {
        i8_rows, i16_rows, i32_rows, i64_rows, u8_rows, u16_rows, u32_rows, u64_rows,
        NULL, f32_rows, f64_rows, c64_rows, c128_rows};
    int row = so_typed_row(d);
    if (op <= SO_NONE || op >= SO_COUNT || row < 0 || by_row[row] == NULL) return NULL;
#if SO_X86_VECTOR
    {
        so_rows_fn v = avx2_rows(row, op, itype);
        if (v != NULL) return v;
    }
#endif
    return by_row[row][op][itype];
}

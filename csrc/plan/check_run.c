/*
 * plan/check_run.c: the bounds check of one contiguous, aligned run of index
 * values of any integer dtype (base.h's SO_INDEX_TYPES), read as they are, at
 * memory bandwidth: the minimum and the maximum of each chunk (two reductions
 * the compiler vectorises; built for AVX-512 and AVX2 beside the portable
 * loop and chosen at run time), and a look for the first bad position only in
 * a chunk whose extremes fall outside.  Every check of a contiguous run uses
 * it: validate.c's intp runs, the direct calls (call/direct.c) and
 * scatterops.at's positions (call/at_wide_run.c).
 */
#include "plan/plan.h"

/* Values a chunk: its extremes are compared once, and a chunk whose extremes
 * fall outside is read again for the first bad position.  SO_PIECE is a
 * multiple of it, so a poll falls on the start of a chunk.  8192 rather than
 * 2048: the reduction below is then nearly as fast by chunks as over the whole
 * run (docs/design.md, "The check of a run of index values"). */
#define SO_CHECK_CHUNK 8192

/* The smallest and largest value of v[0..n), n >= 1.  Four quarters of the
 * run are reduced side by side, each into its own pair: one pair is a chain of
 * dependent min/max operations whose latency bounds the loop (AVX2 has no
 * 64-bit min or max; each is a compare and a blend), four chains keep the loads
 * busy.  The C model is benchmarks/cmodel/check_model.c; its figures are in
 * docs/design.md, "The check of a run of index values". */
#define MINMAX(NAME, T, S, ATTR, SFX)                                                 \
ATTR static void                                                                      \
NAME##_minmax##SFX(const T *restrict v, npy_intp n, T *lo_out, T *hi_out)            \
{                                                                                     \
    const npy_intp q = n / 4;                                                         \
    const T *restrict a = v, *restrict b = v + q, *restrict c = v + 2 * q;           \
    const T *restrict d = v + 3 * q;                                                  \
    T lo0 = v[0], hi0 = v[0], lo1 = v[0], hi1 = v[0];                                 \
    T lo2 = v[0], hi2 = v[0], lo3 = v[0], hi3 = v[0];                                 \
    npy_intp i;                                                                       \
    for (i = 0; i < q; i++) {                                                         \
        lo0 = a[i] < lo0 ? a[i] : lo0;                                                \
        hi0 = a[i] > hi0 ? a[i] : hi0;                                                \
        lo1 = b[i] < lo1 ? b[i] : lo1;                                                \
        hi1 = b[i] > hi1 ? b[i] : hi1;                                                \
        lo2 = c[i] < lo2 ? c[i] : lo2;                                                \
        hi2 = c[i] > hi2 ? c[i] : hi2;                                                \
        lo3 = d[i] < lo3 ? d[i] : lo3;                                                \
        hi3 = d[i] > hi3 ? d[i] : hi3;                                                \
    }                                                                                 \
    for (i = 4 * q; i < n; i++) {                                                     \
        lo0 = v[i] < lo0 ? v[i] : lo0;                                                \
        hi0 = v[i] > hi0 ? v[i] : hi0;                                                \
    }                                                                                 \
    lo0 = lo1 < lo0 ? lo1 : lo0;                                                      \
    lo2 = lo3 < lo2 ? lo3 : lo2;                                                      \
    hi0 = hi1 > hi0 ? hi1 : hi0;                                                      \
    hi2 = hi3 > hi2 ? hi3 : hi2;                                                      \
    *lo_out = lo2 < lo0 ? lo2 : lo0;                                                  \
    *hi_out = hi2 > hi0 ? hi2 : hi0;                                                  \
}

#define PORTABLE_MINMAX(NAME, T, S) MINMAX(NAME, T, S, , )
SO_INDEX_TYPES(PORTABLE_MINMAX)
#if SO_X86_VECTOR
#define AVX2_MINMAX(NAME, T, S) MINMAX(NAME, T, S, __attribute__((target("avx2"))), _avx2)
#define AVX512_MINMAX(NAME, T, S) \
    MINMAX(NAME, T, S, __attribute__((target("avx512f,avx512bw,avx512vl"))), _avx512)
SO_INDEX_TYPES(AVX2_MINMAX)
SO_INDEX_TYPES(AVX512_MINMAX)
#endif

/* The first position in v[0..n) that base.h's rule puts outside an axis of
 * size, or -1; asks poll every SO_PIECE values (SO_CHECK_STOPPED).  A chunk is
 * passed whole when its extremes lie in [lo_ok, hi_ok] (the rule's values, in
 * the index type's own range: the vectorised form of the rule); else the rule
 * itself finds the position. */
#define FIRST_BAD(NAME, T, S)                                                         \
static npy_intp                                                                       \
NAME##_first_bad(const T *v, npy_intp n, T lo_ok, T hi_ok, npy_intp size, so_poll *poll) \
{                                                                                     \
    void (*minmax)(const T *restrict, npy_intp, T *, T *) = NAME##_minmax;            \
    npy_intp c, i;                                                                    \
    FAST_MINMAX(NAME)                                                                 \
    for (c = 0; c < n; c += SO_CHECK_CHUNK) {                                         \
        npy_intp m = n - c < SO_CHECK_CHUNK ? n - c : SO_CHECK_CHUNK;                 \
        T lo, hi;                                                                     \
        if ((c & (SO_PIECE - 1)) == 0 && c > 0 && so_stopped(poll)) {                 \
            return SO_CHECK_STOPPED;                                                  \
        }                                                                             \
        minmax(v + c, m, &lo, &hi);                                                   \
        if (lo < lo_ok || hi > hi_ok) {                                               \
            for (i = c; i < c + m; i++) {                                             \
                if (S ? !so_index_inside((npy_int64)v[i], size)                       \
                      : !so_index_inside_unsigned((npy_uint64)v[i], size)) return i;   \
            }                                                                         \
        }                                                                             \
    }                                                                                 \
    return -1;                                                                        \
}
#if SO_X86_VECTOR
#define FAST_MINMAX(NAME)                                                             \
    if (so_cpu_has(SO_CPU_AVX512)) minmax = NAME##_minmax_avx512;                     \
    else if (so_cpu_has(SO_CPU_AVX2)) minmax = NAME##_minmax_avx2;
#else
#define FAST_MINMAX(NAME)
#endif
SO_INDEX_TYPES(FIRST_BAD)

npy_intp
so_first_bad_run(const char *v, int itype, npy_intp n, npy_intp size, so_poll *poll)
{
    /* the values in range, [-size, size) for signed types and [0, size) for
     * unsigned ones, cut to what the type holds; size 0: every value is bad */
    if (n <= 0) return -1;
    if (size <= 0) return 0;
#define CALL(NAME, T, S)                                                              \
    case SO_IX_##NAME: {                                                              \
        const npy_uint64 tmax = S ? ((npy_uint64)1 << (8 * sizeof(T) - 1)) - 1          \
                                  : (npy_uint64)(T)-1;                                 \
        const npy_int64 tmin = S ? -(npy_int64)tmax - 1 : 0;                          \
        npy_int64 lo = S ? -(npy_int64)size : 0;                                      \
        npy_uint64 hi = (npy_uint64)size - 1;                                         \
        if (lo < tmin) lo = tmin;                                                     \
        if (hi > tmax) hi = tmax;                                                     \
        return NAME##_first_bad((const T *)(const void *)v, n, (T)lo, (T)hi, size, poll); \
    }
    switch (itype) {
        SO_INDEX_TYPES(CALL)
    }
#undef CALL
    return 0;
}

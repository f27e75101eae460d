/*
 * benchmarks/cmodel/four_model.c: a bare C model of the direct loop into an
 * out in cache (kernels/indexed.c) one update at a time against four at a
 * time, the evidence for the second.  Not part of the package: run.py --model
 * four compiles and runs it (gcc -O3 -march=native).  Arrays are 2 MiB aligned
 * and madvised for huge pages, as NumPy's large arrays are.
 *
 * Usage: four_model N_UPDATES OUT_SIZE REPEATS [NONNEG [WARM]]
 * For each variant, the median over REPEATS runs, in ns per update, of one
 * pass over N_UPDATES random int64 indices into OUT_SIZE elements; each repeat
 * runs every variant once, in turn:
 *   loop      o[ix[i]] += u[i], a negative index from the end (numba's loop as
 *             written; the compiler keeps it one update at a time)
 *   loop4     the same, four updates a step (what LLVM makes of numba's loop)
 *   tested    the kernel's loop before: each index wrapped, tested, the loop
 *             stopping at the first one outside
 *   tested4   the kernel's loop now: four indices wrapped, one branch tests
 *             the four, then the four updates in order; a group with a bad
 *             index goes to the one-at-a-time loop
 * and two ways to drop the test from the loop, for indices checked before it:
 *   clamp4    tested4 with each wrapped index clamped into range (a select)
 *             instead of tested: safe if another thread rewrites an index
 *             after the check, as the package's loops must be
 *   buf4      each chunk of BUF_CHUNK (256) indices wrapped and tested into
 *             a private buffer first (a loop the compiler vectorises), then
 *             loop4's updates from the buffer: what the loop reads is what
 *             was tested
 * and a check in vector registers (AVX2 machines):
 *   vec8      eight indices a step loaded as two vectors, wrapped and tested
 *             there (one branch for the eight), then each moved to a general
 *             register for its update: two loads for eight indices instead of
 *             eight
 * and, for an out beyond L2, the loops that prefetch (into L2) the element
 * PREFETCH (128) updates ahead, its index clamped; the last ones without:
 *   testedpf  tested with the prefetch, one update at a time (the kernel's
 *             loop beyond L2 before vec8pf)
 *   vec8pf    vec8 with the eight indices 128 ahead read as vectors too,
 *             clamped there, and their elements prefetched
 * and, with int32, int16 or int8 indices (-DSO_MODEL_IX32, IX16, IX8; run.py
 * --index; vec8 then sign-extends each four as it loads them):
 *   vec8n     the eight indices loaded as one vector (int16 and int8 ones
 *             sign-extended to 32 bits as they load), wrapped and tested in
 *             32-bit lanes (out below 2^31 elements), then widened to two
 *             vectors of int64 for their updates: one load for eight indices
 *   vec8npf   vec8n with the eight indices 128 ahead wrapped and clamped in
 *             32-bit lanes, widened, and their elements prefetched
 * and one without the wrap, for non-negative indices:
 *   utest4    four indices read, then each tested with one unsigned compare
 *             and a branch of its own, no wrap, and applied; one that fails
 *             (negative or bad) goes to a step of one update that wraps and
 *             tests it (a mispredicted branch each: with half the indices
 *             negative, as drawn by default, it is slow)
 *   utestg4   the same four tests folded into one branch for the four
 *   utest4pf  utest4 with the element PF_NEAR (32) updates ahead prefetched
 *             into L1 (an index outside [0, size) prefetches element 0):
 *             for an out in L2, not in L1
 * The indices are drawn from [-size, size) (half negative), or from [0, size)
 * with NONNEG = 1 (run.py --nonneg).  Each variant has an out of its own, so
 * beyond L3 each is timed with its out cold (the others' evicted it); with
 * WARM = 1 (run.py --warm) each variant runs once untimed right before it is
 * timed, as a call repeated on one out does: an out in L3 stays there.
 * Every variant's sums are checked equal to loop's, bit for bit.
 *
 * The element type is float (float32) unless compiled with -DSO_MODEL_INT64
 * (int64 data and updates: run.py --dtype int64).
 */
#define _POSIX_C_SOURCE 200112L
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "model.h"
#include "huge.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

#ifdef SO_MODEL_INT64
typedef int64_t T;
#define T_NAME "int64"
#define T_VALUE(x) ((T)((x) >> 40))
#else
typedef float T;
#define T_NAME "float32"
#define T_VALUE(x) ((T)((x) >> 40) * 1e-7f)
#endif

#if defined(SO_MODEL_IX8)
typedef int8_t IX;
#define IX_NAME "int8"
#define SO_MODEL_NARROW
#elif defined(SO_MODEL_IX16)
typedef int16_t IX;
#define IX_NAME "int16"
#define SO_MODEL_NARROW
#elif defined(SO_MODEL_IX32)
typedef int32_t IX;
#define IX_NAME "int32"
#define SO_MODEL_NARROW
#else
typedef int64_t IX;
#define IX_NAME "int64"
#endif

#define WRAP(j, size) ((j) + ((j) < 0 ? (size) : 0))
#define OUTSIDE(j, size) ((uint64_t)(j) >= (uint64_t)(size))

__attribute__((noinline)) static int64_t
loop(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
     int64_t size)
{
#pragma GCC unroll 1
    for (int64_t i = 0; i < n; i++) {
        int64_t j = ix[i];
        o[j + ((j >> 63) & size)] += u[i];
    }
    return -1;
}

__attribute__((noinline)) static int64_t
loop4(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
      int64_t size)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int64_t j0 = ix[i], j1 = ix[i + 1], j2 = ix[i + 2], j3 = ix[i + 3];
        o[j0 + ((j0 >> 63) & size)] += u[i];
        o[j1 + ((j1 >> 63) & size)] += u[i + 1];
        o[j2 + ((j2 >> 63) & size)] += u[i + 2];
        o[j3 + ((j3 >> 63) & size)] += u[i + 3];
    }
    for (; i < n; i++) {
        int64_t j = ix[i];
        o[j + ((j >> 63) & size)] += u[i];
    }
    return -1;
}

__attribute__((noinline)) static int64_t
tested(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
       int64_t size)
{
#pragma GCC unroll 1
    for (int64_t i = 0; i < n; i++) {
        int64_t j = WRAP(ix[i], size);
        if (OUTSIDE(j, size)) return i;
        o[j] = o[j] + u[i];
    }
    return -1;
}

__attribute__((noinline)) static int64_t
tested4(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
        int64_t size)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int64_t j0 = WRAP(ix[i], size), j1 = WRAP(ix[i + 1], size);
        int64_t j2 = WRAP(ix[i + 2], size), j3 = WRAP(ix[i + 3], size);
        if (OUTSIDE(j0, size) | OUTSIDE(j1, size) | OUTSIDE(j2, size) | OUTSIDE(j3, size)) break;
        o[j0] = o[j0] + u[i];
        o[j1] = o[j1] + u[i + 1];
        o[j2] = o[j2] + u[i + 2];
        o[j3] = o[j3] + u[i + 3];
    }
#pragma GCC unroll 1
    for (; i < n; i++) {
        int64_t j = WRAP(ix[i], size);
        if (OUTSIDE(j, size)) return i;
        o[j] = o[j] + u[i];
    }
    return -1;
}

/* utest4's loop, and with AHEAD > 0 utest4pf's: the element AHEAD updates
 * ahead prefetched into L1 (an index outside [0, size) prefetches element 0),
 * the last AHEAD updates and the rest after the groups of four one at a time */
static inline __attribute__((always_inline)) int64_t
utest4_loop(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
            int64_t size, const int64_t ahead)
{
    int64_t i = 0;
    const uint64_t us = (uint64_t)size;
#define PF_AT(j) ((uint64_t)(j) < us ? (int64_t)(j) : 0)
    while (i + 4 <= n - ahead) {
        int64_t j0 = ix[i], j1 = ix[i + 1], j2 = ix[i + 2], j3 = ix[i + 3];
        if (ahead) {
            __builtin_prefetch(o + PF_AT(ix[i + ahead]), 1, 3);
            __builtin_prefetch(o + PF_AT(ix[i + ahead + 1]), 1, 3);
            __builtin_prefetch(o + PF_AT(ix[i + ahead + 2]), 1, 3);
            __builtin_prefetch(o + PF_AT(ix[i + ahead + 3]), 1, 3);
        }
        if (__builtin_expect((uint64_t)j0 >= us, 0)) goto slow;
        o[j0] = o[j0] + u[i];
        if (__builtin_expect((uint64_t)j1 >= us, 0)) { i += 1; goto slow; }
        o[j1] = o[j1] + u[i + 1];
        if (__builtin_expect((uint64_t)j2 >= us, 0)) { i += 2; goto slow; }
        o[j2] = o[j2] + u[i + 2];
        if (__builtin_expect((uint64_t)j3 >= us, 0)) { i += 3; goto slow; }
        o[j3] = o[j3] + u[i + 3];
        i += 4;
        continue;
    slow: {
            int64_t j = WRAP(ix[i], size);
            if (OUTSIDE(j, size)) return i;
            o[j] = o[j] + u[i];
            i++;
        }
    }
#undef PF_AT
#pragma GCC unroll 1
    for (; i < n; i++) {
        int64_t j = WRAP(ix[i], size);
        if (OUTSIDE(j, size)) return i;
        o[j] = o[j] + u[i];
    }
    return -1;
}

/* utest4: the fast path tests each index unsigned against size, no wrap (a
 * negative index fails it) and applies it; one that fails goes to a step of
 * one update that wraps and tests it */
__attribute__((noinline)) static int64_t
utest4(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
       int64_t size)
{
    return utest4_loop(o, ix, u, n, size, 0);
}

/* utest4pf: utest4 with the element PF_NEAR (32) updates ahead prefetched
 * into L1 (for an out in L2 but not in L1) */
#define PF_NEAR 32
__attribute__((noinline)) static int64_t
utest4pf(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
         int64_t size)
{
    return utest4_loop(o, ix, u, n, size, PF_NEAR);
}

/* utestg4: four unsigned tests, one branch for the four */
__attribute__((noinline)) static int64_t
utestg4(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
        int64_t size)
{
    int64_t i = 0;
    const uint64_t us = (uint64_t)size;
    for (; i + 4 <= n; i += 4) {
        int64_t j0 = ix[i], j1 = ix[i + 1], j2 = ix[i + 2], j3 = ix[i + 3];
        if (__builtin_expect(((uint64_t)j0 >= us) | ((uint64_t)j1 >= us) | ((uint64_t)j2 >= us) | ((uint64_t)j3 >= us), 0)) {
            int64_t at = tested4(o, ix + i, u + i, 4, size);
            if (at >= 0) return i + at;
            continue;
        }
        o[j0] = o[j0] + u[i];
        o[j1] = o[j1] + u[i + 1];
        o[j2] = o[j2] + u[i + 2];
        o[j3] = o[j3] + u[i + 3];
    }
    int64_t at = tested4(o, ix + i, u + i, n - i, size);
    return at < 0 ? at : i + at;
}

#define CLAMP(j, size) (OUTSIDE(j, size) ? 0 : (j))

__attribute__((noinline)) static int64_t
clamp4(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
       int64_t size)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int64_t j0 = CLAMP(WRAP(ix[i], size), size), j1 = CLAMP(WRAP(ix[i + 1], size), size);
        int64_t j2 = CLAMP(WRAP(ix[i + 2], size), size), j3 = CLAMP(WRAP(ix[i + 3], size), size);
        o[j0] = o[j0] + u[i];
        o[j1] = o[j1] + u[i + 1];
        o[j2] = o[j2] + u[i + 2];
        o[j3] = o[j3] + u[i + 3];
    }
#pragma GCC unroll 1
    for (; i < n; i++) {
        int64_t j = CLAMP(WRAP(ix[i], size), size);
        o[j] = o[j] + u[i];
    }
    return -1;
}

#define BUF_CHUNK 256

__attribute__((noinline)) static int64_t
buf4(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n,
     int64_t size)
{
    int64_t b[BUF_CHUNK] __attribute__((aligned(64)));
    for (int64_t c = 0; c < n; c += BUF_CHUNK) {
        const int64_t e = n - c < BUF_CHUNK ? n - c : BUF_CHUNK;
        const IX *x = ix + c;
        const T *v = u + c;
        uint64_t bad = 0;
        int64_t i = 0;
        for (int64_t k = 0; k < e; k++) {
            int64_t w = WRAP(x[k], size);
            bad |= OUTSIDE(w, size);
            b[k] = w;
        }
        if (bad) {
            int64_t at = tested4(o, x, v, e, size);
            return at < 0 ? at : c + at;
        }
        for (; i + 4 <= e; i += 4) {
            o[b[i]] = o[b[i]] + v[i];
            o[b[i + 1]] = o[b[i + 1]] + v[i + 1];
            o[b[i + 2]] = o[b[i + 2]] + v[i + 2];
            o[b[i + 3]] = o[b[i + 3]] + v[i + 3];
        }
        for (; i < e; i++) o[b[i]] = o[b[i]] + v[i];
    }
    return -1;
}


#ifdef __AVX2__
/* the indices wrapped into (u)int64 lanes, and whether all four are in [0, size) */
#define VWRAP(v) _mm256_add_epi64(v, _mm256_and_si256(_mm256_cmpgt_epi64(zero, v), sz))
#define VINSIDE(v) _mm256_cmpgt_epi64(szf, _mm256_xor_si256(v, flip))
/* k bytes at p into the low end of a vector */
static inline __m128i
load_bytes(const void *p, size_t k)
{
    int64_t b = 0;
    memcpy(&b, p, k);
    return _mm_cvtsi64_si128(b);
}
#if defined(SO_MODEL_IX8)
/* four narrow indices sign-extended into int64 lanes as they are loaded; eight into int32 lanes */
#define VLOAD4(p) _mm256_cvtepi8_epi64(load_bytes(p, 4))
#define VLOAD8N(p) _mm256_cvtepi8_epi32(load_bytes(p, 8))
#elif defined(SO_MODEL_IX16)
#define VLOAD4(p) _mm256_cvtepi16_epi64(load_bytes(p, 8))
#define VLOAD8N(p) _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#elif defined(SO_MODEL_IX32)
#define VLOAD4(p) _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define VLOAD8N(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#else
#define VLOAD4(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#endif
#define APPLY4(v, k)                                                                    \
    do {                                                                                \
        __m128i lo_ = _mm256_castsi256_si128(v), hi_ = _mm256_extracti128_si256(v, 1);   \
        int64_t j0 = _mm_cvtsi128_si64(lo_), j1 = _mm_extract_epi64(lo_, 1);            \
        int64_t j2 = _mm_cvtsi128_si64(hi_), j3 = _mm_extract_epi64(hi_, 1);            \
        o[j0] = o[j0] + u[(k)];                                                         \
        o[j1] = o[j1] + u[(k) + 1];                                                     \
        o[j2] = o[j2] + u[(k) + 2];                                                     \
        o[j3] = o[j3] + u[(k) + 3];                                                     \
    } while (0)

__attribute__((noinline)) static int64_t
vec8(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n, int64_t size)
{
    const __m256i sz = _mm256_set1_epi64x(size), flip = _mm256_set1_epi64x(INT64_MIN);
    const __m256i szf = _mm256_xor_si256(sz, flip), zero = _mm256_setzero_si256();
    int64_t i = 0, at;
    for (; i + 8 <= n; i += 8) {
        __m256i v = VLOAD4(ix + i);
        __m256i w = VLOAD4(ix + i + 4);
        v = VWRAP(v);
        w = VWRAP(w);
        if (_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_and_si256(VINSIDE(v), VINSIDE(w))))
                != 0xF) {
            break;
        }
        APPLY4(v, i);
        APPLY4(w, i + 4);
    }
    at = tested4(o, ix + i, u + i, n - i, size);
    return at < 0 ? at : i + at;
}
#ifdef SO_MODEL_NARROW
/* vec8n: the eight int32 indices as one vector, wrapped and tested in 32-bit
 * lanes (size below 2^31), then widened to two vectors of int64 for APPLY4 */
__attribute__((noinline)) static int64_t
vec8n(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n, int64_t size)
{
    const __m256i sz = _mm256_set1_epi32((int32_t)size), flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i szf = _mm256_xor_si256(sz, flip), zero = _mm256_setzero_si256();
    int64_t i = 0, at;
    for (; i + 8 <= n; i += 8) {
        __m256i x = VLOAD8N(ix + i), v, w;
        x = _mm256_add_epi32(x, _mm256_and_si256(_mm256_cmpgt_epi32(zero, x), sz));
        if (_mm256_movemask_ps(_mm256_castsi256_ps(
                _mm256_cmpgt_epi32(szf, _mm256_xor_si256(x, flip)))) != 0xFF) {
            break;
        }
        v = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(x));
        w = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(x, 1));
        APPLY4(v, i);
        APPLY4(w, i + 4);
    }
    at = tested4(o, ix + i, u + i, n - i, size);
    return at < 0 ? at : i + at;
}
#endif
#endif

#define PREFETCH 128
#define CLAMPW(j, size) (OUTSIDE(WRAP(j, size), size) ? 0 : WRAP(j, size))

__attribute__((noinline)) static int64_t
testedpf(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n, int64_t size)
{
    int64_t i = 0;
#pragma GCC unroll 1
    for (; i < n - PREFETCH; i++) {
        int64_t j = WRAP(ix[i], size);
        if (OUTSIDE(j, size)) return i;
        __builtin_prefetch(o + CLAMPW(ix[i + PREFETCH], size), 0, 1);
        o[j] = o[j] + u[i];
    }
#pragma GCC unroll 1
    for (; i < n; i++) {
        int64_t j = WRAP(ix[i], size);
        if (OUTSIDE(j, size)) return i;
        o[j] = o[j] + u[i];
    }
    return -1;
}

#ifdef __AVX2__
#define PREFETCH4(v)                                                                    \
    do {                                                                                \
        __m128i lo_ = _mm256_castsi256_si128(v), hi_ = _mm256_extracti128_si256(v, 1);   \
        __builtin_prefetch(o + _mm_cvtsi128_si64(lo_), 0, 1);                           \
        __builtin_prefetch(o + _mm_extract_epi64(lo_, 1), 0, 1);                        \
        __builtin_prefetch(o + _mm_cvtsi128_si64(hi_), 0, 1);                           \
        __builtin_prefetch(o + _mm_extract_epi64(hi_, 1), 0, 1);                        \
    } while (0)

__attribute__((noinline)) static int64_t
vec8pf(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n, int64_t size)
{
    const __m256i sz = _mm256_set1_epi64x(size), flip = _mm256_set1_epi64x(INT64_MIN);
    const __m256i szf = _mm256_xor_si256(sz, flip), zero = _mm256_setzero_si256();
    int64_t i = 0, at;
    for (; i + 8 <= n - PREFETCH; i += 8) {
        __m256i v = VLOAD4(ix + i);
        __m256i w = VLOAD4(ix + i + 4);
        __m256i pv = VLOAD4(ix + i + PREFETCH);
        __m256i pw = VLOAD4(ix + i + PREFETCH + 4);
        v = VWRAP(v);
        w = VWRAP(w);
        if (_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_and_si256(VINSIDE(v), VINSIDE(w))))
                != 0xF) {
            break;
        }
        pv = VWRAP(pv);
        pw = VWRAP(pw);
        pv = _mm256_and_si256(pv, VINSIDE(pv));
        pw = _mm256_and_si256(pw, VINSIDE(pw));
        PREFETCH4(pv);
        PREFETCH4(pw);
        APPLY4(v, i);
        APPLY4(w, i + 4);
    }
    at = tested4(o, ix + i, u + i, n - i, size);
    return at < 0 ? at : i + at;
}
#endif

#if defined(__AVX2__) && defined(SO_MODEL_NARROW)
/* vec8npf: vec8n with the eight indices PREFETCH ahead read as one vector,
 * wrapped and clamped in 32-bit lanes, widened, and their elements prefetched */
__attribute__((noinline)) static int64_t
vec8npf(T *restrict o, const IX *restrict ix, const T *restrict u, int64_t n, int64_t size)
{
    const __m256i sz = _mm256_set1_epi32((int32_t)size), flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i szf = _mm256_xor_si256(sz, flip), zero = _mm256_setzero_si256();
    int64_t i = 0, at;
    for (; i + 8 <= n - PREFETCH; i += 8) {
        __m256i x = VLOAD8N(ix + i), v, w;
        __m256i p = VLOAD8N(ix + i + PREFETCH);
        x = _mm256_add_epi32(x, _mm256_and_si256(_mm256_cmpgt_epi32(zero, x), sz));
        if (_mm256_movemask_ps(_mm256_castsi256_ps(
                _mm256_cmpgt_epi32(szf, _mm256_xor_si256(x, flip)))) != 0xFF) {
            break;
        }
        p = _mm256_add_epi32(p, _mm256_and_si256(_mm256_cmpgt_epi32(zero, p), sz));
        p = _mm256_and_si256(p, _mm256_cmpgt_epi32(szf, _mm256_xor_si256(p, flip)));
        v = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(p));
        w = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(p, 1));
        PREFETCH4(v);
        PREFETCH4(w);
        v = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(x));
        w = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(x, 1));
        APPLY4(v, i);
        APPLY4(w, i + 4);
    }
    at = tested4(o, ix + i, u + i, n - i, size);
    return at < 0 ? at : i + at;
}
#endif

typedef int64_t (*variant)(T *restrict, const IX *restrict, const T *restrict,
                           int64_t, int64_t);

int
main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 100000;
    int reps = argc > 3 ? atoi(argv[3]) : 21;
    int nonneg = argc > 4 && atoi(argv[4]);
    int warm = argc > 5 && atoi(argv[5]);
#ifdef __AVX2__
#ifdef SO_MODEL_NARROW
    static const char *const names[] = {"loop", "loop4", "tested", "tested4", "clamp4", "buf4",
                                        "vec8", "vec8n", "testedpf", "vec8pf", "vec8npf",
                                        "utest4", "utestg4", "utest4pf"};
    static const variant fns[] = {loop, loop4, tested, tested4, clamp4, buf4, vec8, vec8n,
                                  testedpf, vec8pf, vec8npf, utest4, utestg4, utest4pf};
#else
    static const char *const names[] = {"loop", "loop4", "tested", "tested4", "clamp4", "buf4",
                                        "vec8", "testedpf", "vec8pf", "utest4", "utestg4", "utest4pf"};
    static const variant fns[] = {loop, loop4, tested, tested4, clamp4, buf4, vec8, testedpf,
                                  vec8pf, utest4, utestg4, utest4pf};
#endif
#else
    static const char *const names[] = {"loop", "loop4", "tested", "tested4", "clamp4", "buf4",
                                        "testedpf", "utest4", "utestg4", "utest4pf"};
    static const variant fns[] = {loop, loop4, tested, tested4, clamp4, buf4, testedpf, utest4,
                                  utestg4, utest4pf};
#endif
    enum { NVAR = sizeof names / sizeof names[0] };
    IX *ix = big(sizeof *ix * (size_t)n);
    T *u = big(sizeof *u * (size_t)n);
    T *o[NVAR];
    double *t = malloc(sizeof *t * (size_t)reps * NVAR);
    uint64_t x = 88172645463325252ull;
    int v, r, bad = 0;
    for (v = 0; v < NVAR; v++) o[v] = big(sizeof(T) * (size_t)size);
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ix[i] = nonneg ? (IX)(x % (uint64_t)size)                         /* [0, size) */
                       : (IX)((int64_t)(x % (uint64_t)(2 * size)) - size);     /* negatives too */
        u[i] = T_VALUE(x);
    }
    printf("%lld %s%s indices into %lld %s%s, median of %d, ns/update\n", (long long)n,
           nonneg ? "non-negative " : "", IX_NAME, (long long)size, T_NAME,
           warm ? " (out warm)" : "", reps);
    for (r = 0; r < reps; r++) {
        for (v = 0; v < NVAR; v++) {
            double t0;
            if (warm) fns[v](o[v], ix, u, n, size);
            t0 = now();
            bad |= fns[v](o[v], ix, u, n, size) != -1;
            t[v * reps + r] = now() - t0;
        }
    }
    for (v = 1; v < NVAR; v++) bad |= memcmp(o[0], o[v], sizeof(T) * (size_t)size) != 0;
    for (v = 0; v < NVAR; v++) {
        qsort(t + v * reps, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-8s %6.3f\n", names[v], t[v * reps + reps / 2] * 1e9 / (double)n);
    }
    if (bad) printf("  the variants' sums differ\n");
    return bad;
}

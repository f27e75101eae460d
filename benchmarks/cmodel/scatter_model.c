/*
 * benchmarks/cmodel/scatter_model.c: a bare C model of the one-thread float32
 * scatter-add loop, the evidence of what the hardware allows under the
 * contract (nothing written on a bad index).  Not part of the package: run.py
 * beside it compiles it with gcc -O3 -march=native and prints ns per update.
 *
 * Usage: scatter_model N_UPDATES OUT_SIZE REPEATS
 * For each variant, the median over REPEATS runs of one pass over N_UPDATES
 * random indices into OUT_SIZE floats:
 *   loop64        for i: o[ix[i]] += u[i], negatives from the end (numba's @njit loop)
 *   loop32        the same loop reading int32 indices
 *   check64       min/max of the int64 indices, in chunks (vectorised)
 *   check32       the same over int32 indices
 *   check+loop64  the check, then the loop (in place: nothing written on a bad index)
 *   check+loop32  the same with int32 indices
 *   fused64       one pass: each chunk's min/max, then that chunk's updates with a
 *                 clamped index (out of place: a bad index drops the fresh result)
 *   clamp64       the loop with each index wrapped and clamped into [0, size)
 *   staged64      one pass by chunks of STAGE: the chunk's indices checked, wrapped and
 *                 clamped into a buffer in L1 (vectorised), then the plain loop over
 *                 the buffer (out of place: the check fused, no clamp in the loop)
 *   staged32      the same reading int32 indices
 *   check+staged64  the whole check first, then staged64 (in place)
 *   check+staged32  the same with int32 indices
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

/* a negative index counts from the end, as in numba (its wraparound) */
#define LOOP(NAME, IT)                                                            \
__attribute__((noinline)) static void                                             \
NAME(float *restrict o, const IT *restrict ix, const float *restrict u, int64_t n,\
     int64_t size)                                                                \
{                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                             \
        int64_t j = ix[i];                                                        \
        o[j + ((j >> 63) & size)] += u[i];                                        \
    }                                                                             \
}
LOOP(loop64, int64_t)
LOOP(loop32, int32_t)

/* 1 if every index is in [-size, size): min and max per chunk, the compiler
 * vectorises the two reductions (check64, the int64 one, is model.h's) */
#define CHECK(NAME, IT)                                                           \
__attribute__((noinline)) static int                                              \
NAME(const IT *restrict ix, int64_t n, int64_t size)                              \
{                                                                                 \
    for (int64_t c = 0; c < n; c += CHUNK) {                                      \
        int64_t e = c + CHUNK < n ? c + CHUNK : n;                                \
        IT lo = ix[c], hi = ix[c];                                                \
        for (int64_t i = c; i < e; i++) {                                         \
            lo = ix[i] < lo ? ix[i] : lo;                                         \
            hi = ix[i] > hi ? ix[i] : hi;                                         \
        }                                                                         \
        if ((int64_t)lo < -size || (int64_t)hi >= size) return 0;                 \
    }                                                                             \
    return 1;                                                                     \
}
CHECK(check32, int32_t)

__attribute__((noinline)) static int
fused64(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
        int64_t size)
{
    int ok = 1;
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t e = c + CHUNK < n ? c + CHUNK : n;
        ok &= check64(ix + c, e - c, size);
        clamp64(o, ix + c, u + c, e - c, size);
    }
    return ok;
}

#define STAGE 512

/* the chunk's indices wrapped and clamped into buf; 0 if one was outside */
#define STAGE_FILL(NAME, IT)                                                      \
static inline int                                                                 \
NAME(const IT *restrict ix, int64_t n, int64_t size, int64_t *restrict buf)      \
{                                                                                 \
    int bad = 0;                                                                  \
    for (int64_t i = 0; i < n; i++) {                                             \
        int64_t v = ix[i];                                                        \
        bad |= (uint64_t)v + (uint64_t)size >= 2 * (uint64_t)size;                \
        v += v < 0 ? size : 0;                                                    \
        buf[i] = (uint64_t)v < (uint64_t)size ? v : 0;                            \
    }                                                                             \
    return !bad;                                                                  \
}
STAGE_FILL(fill64, int64_t)
STAGE_FILL(fill32, int32_t)

#define STAGED(NAME, FILL, IT)                                                    \
__attribute__((noinline)) static int                                              \
NAME(float *restrict o, const IT *restrict ix, const float *restrict u, int64_t n,\
     int64_t size)                                                                \
{                                                                                 \
    int64_t buf[STAGE];                                                           \
    int ok = 1;                                                                   \
    for (int64_t c = 0; c < n; c += STAGE) {                                      \
        int64_t m = n - c < STAGE ? n - c : STAGE;                                \
        ok &= FILL(ix + c, m, size, buf);                                         \
        for (int64_t i = 0; i < m; i++) o[buf[i]] += u[c + i];                    \
    }                                                                             \
    return ok;                                                                    \
}
STAGED(staged64, fill64, int64_t)
STAGED(staged32, fill32, int32_t)

int
main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 1000;
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    int64_t *ix64 = malloc(sizeof *ix64 * (size_t)n);
    int32_t *ix32 = malloc(sizeof *ix32 * (size_t)n);
    float *u = malloc(sizeof *u * (size_t)n), *o = calloc((size_t)size, sizeof *o);
    double *t = malloc(sizeof *t * (size_t)reps);
    const char *names[] = {"loop64", "loop32", "check64", "check32", "check+loop64",
                           "check+loop32", "fused64", "clamp64", "staged64", "staged32",
                           "check+staged64", "check+staged32"};
    uint64_t s = 88172645463325252ull;
    volatile int sink = 0;
    int v, r;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        ix64[i] = (int64_t)(s % (uint64_t)size);
        ix32[i] = (int32_t)ix64[i];
        u[i] = (float)(s >> 40) * 1e-7f;
    }
    printf("%lld updates into %lld float32, median of %d, ns/update\n", (long long)n,
           (long long)size, reps);
    for (v = 0; v < 12; v++) {
        for (r = 0; r < reps; r++) {
            double t0 = now();
            switch (v) {
                case 0: loop64(o, ix64, u, n, size); break;
                case 1: loop32(o, ix32, u, n, size); break;
                case 2: sink += check64(ix64, n, size); break;
                case 3: sink += check32(ix32, n, size); break;
                case 4: if (check64(ix64, n, size)) loop64(o, ix64, u, n, size); break;
                case 5: if (check32(ix32, n, size)) loop32(o, ix32, u, n, size); break;
                case 6: sink += fused64(o, ix64, u, n, size); break;
                case 7: clamp64(o, ix64, u, n, size); break;
                case 8: sink += staged64(o, ix64, u, n, size); break;
                case 9: sink += staged32(o, ix32, u, n, size); break;
                case 10: if (check64(ix64, n, size)) sink += staged64(o, ix64, u, n, size); break;
                case 11: if (check32(ix32, n, size)) sink += staged32(o, ix32, u, n, size); break;
            }
            t[r] = now() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-13s %6.3f\n", names[v], t[reps / 2] * 1e9 / (double)n);
    }
    free(ix64); free(ix32); free(u); free(o); free(t);
    return sink == -1;
}

/*
 * benchmarks/cmodel/prefetch_model.c: a bare C model of two changes to the
 * one-thread direct loop (kernels/indexed.c), the evidence for or against them.
 * Not part of the package: run.py --model prefetch compiles and runs it (gcc
 * -O3 -march=native).  Arrays are 2 MiB aligned and madvised for huge pages,
 * as NumPy's large arrays are.
 *
 * Usage: prefetch_model N_UPDATES OUT_SIZE REPEATS
 * For each variant, the median over REPEATS runs, in ns per update, of one pass
 * over N_UPDATES random int64 indices into OUT_SIZE floats; each repeat runs
 * every variant once, in turn, so that a change of load hits them alike:
 *   loop          o[ix[i]] += u[i], a negative index from the end (numba's loop)
 *   clamp         the same, each index wrapped and clamped (the kernel's loop)
 *   check+clamp   the whole min/max check by chunks of 2048, then clamp (the
 *                 direct form today, in place or out of place)
 *   pfD           clamp with a prefetch into L1 (prefetcht0) of o[ix[i + D]] (its
 *                 index clamped too), D = 16 .. 256; the last D updates without
 *   l2pfD         the same prefetching into L2 only (prefetcht2); a prefetch for
 *                 writing (prefetchw) was slower than either in a first run
 *   check+l2pf128 the whole check, then l2pf128
 *   oneK          one pass by chunks of K indices: the chunk's min/max, then its
 *                 updates (clamped) into a scratch copy of out; out copied into
 *                 the scratch first and back at the end (in place: nothing
 *                 written to out on a bad index), K = 2048 .. 16384
 *   onefreshK     the same without the two copies (out of place: the scratch is
 *                 the fresh result, which a bad index drops)
 *   flagged       one pass with no check: the loop notes an index outside as it
 *                 wraps and clamps it (an OR a update), into the scratch with its
 *                 two copies; flaggedfresh without them
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

__attribute__((noinline)) static void
loop64(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
       int64_t size)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = ix[i];
        o[j + ((j >> 63) & size)] += u[i];
    }
}

/* clamp64 with a prefetch D updates ahead: into L1 (LOC 3, prefetcht0) or
 * into L2 only (LOC 1, prefetcht2) */
#define PREFETCHED(NAME, D, LOC)                                                  \
__attribute__((noinline)) static void                                             \
NAME(float *restrict o, const int64_t *restrict ix, const float *restrict u,      \
     int64_t n, int64_t size)                                                     \
{                                                                                 \
    int64_t i;                                                                    \
    for (i = 0; i + D < n; i++) {                                                 \
        __builtin_prefetch(o + clamp(ix[i + D], size), 0, LOC);                   \
        int64_t j = clamp(ix[i], size);                                           \
        o[j] = o[j] + u[i];                                                       \
    }                                                                             \
    for (; i < n; i++) {                                                          \
        int64_t j = clamp(ix[i], size);                                           \
        o[j] = o[j] + u[i];                                                       \
    }                                                                             \
}
PREFETCHED(pf16, 16, 3)
PREFETCHED(pf32, 32, 3)
PREFETCHED(pf64, 64, 3)
PREFETCHED(pf128, 128, 3)
PREFETCHED(pf256, 256, 3)
PREFETCHED(l2pf16, 16, 1)
PREFETCHED(l2pf32, 32, 1)
PREFETCHED(l2pf64, 64, 1)
PREFETCHED(l2pf128, 128, 1)
PREFETCHED(l2pf256, 256, 1)

/* one pass by chunks of k into s (a copy of out when copy is set); 0 on a bad
 * index, out then untouched */
__attribute__((noinline)) static int
one_pass(float *restrict o, float *restrict s, const int64_t *restrict ix,
         const float *restrict u, int64_t n, int64_t size, int64_t k, int copy)
{
    if (copy) memcpy(s, o, sizeof *o * (size_t)size);
    for (int64_t c = 0; c < n; c += k) {
        int64_t m = n - c < k ? n - c : k;
        if (!check64(ix + c, m, size)) return 0;
        clamp64(s, ix + c, u + c, m, size);
    }
    if (copy) memcpy(o, s, sizeof *o * (size_t)size);
    return 1;
}

/* one pass with no check of its own: the loop's wrap and clamp also note
 * whether any index was outside [-size, size), into s as one_pass does */
__attribute__((noinline)) static int
flagged(float *restrict o, float *restrict s, const int64_t *restrict ix,
        const float *restrict u, int64_t n, int64_t size, int copy)
{
    uint64_t bad = 0;
    if (copy) memcpy(s, o, sizeof *o * (size_t)size);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ix[i];
        bad |= (uint64_t)v + (uint64_t)size >= 2 * (uint64_t)size;
        int64_t j = clamp(v, size);
        s[j] = s[j] + u[i];
    }
    if (bad) return 0;
    if (copy) memcpy(o, s, sizeof *o * (size_t)size);
    return 1;
}

int
main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 10000000;
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    int64_t *ix = big(sizeof *ix * (size_t)n);
    float *u = big(sizeof *u * (size_t)n), *o = big(sizeof *o * (size_t)size);
    float *s = big(sizeof *s * (size_t)size);
    static const char *const names[] = {
        "loop", "clamp", "check+clamp", "pf16", "pf32", "pf64", "pf128", "pf256",
        "l2pf16", "l2pf32", "l2pf64", "l2pf128", "l2pf256", "check+l2pf128", "one2048",
        "one4096", "one16384", "onefresh2048", "onefresh4096", "flagged",
        "flaggedfresh"};
    enum { NVAR = sizeof names / sizeof names[0] };
    double *t = malloc(sizeof *t * (size_t)reps * NVAR);
    uint64_t x = 88172645463325252ull;
    volatile int sink = 0;
    int v, r;
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ix[i] = (int64_t)(x % (uint64_t)size);
        u[i] = (float)(x >> 40) * 1e-7f;
    }
    printf("%lld int64 indices into %lld float32, median of %d, ns/update\n", (long long)n,
           (long long)size, reps);
    for (r = 0; r < reps; r++) {
        for (v = 0; v < NVAR; v++) {
            double t0 = now();
            switch (v) {
                case 0: loop64(o, ix, u, n, size); break;
                case 1: clamp64(o, ix, u, n, size); break;
                case 2: if (check64(ix, n, size)) clamp64(o, ix, u, n, size); break;
                case 3: pf16(o, ix, u, n, size); break;
                case 4: pf32(o, ix, u, n, size); break;
                case 5: pf64(o, ix, u, n, size); break;
                case 6: pf128(o, ix, u, n, size); break;
                case 7: pf256(o, ix, u, n, size); break;
                case 8: l2pf16(o, ix, u, n, size); break;
                case 9: l2pf32(o, ix, u, n, size); break;
                case 10: l2pf64(o, ix, u, n, size); break;
                case 11: l2pf128(o, ix, u, n, size); break;
                case 12: l2pf256(o, ix, u, n, size); break;
                case 13: if (check64(ix, n, size)) l2pf128(o, ix, u, n, size); break;
                case 14: sink += one_pass(o, s, ix, u, n, size, 2048, 1); break;
                case 15: sink += one_pass(o, s, ix, u, n, size, 4096, 1); break;
                case 16: sink += one_pass(o, s, ix, u, n, size, 16384, 1); break;
                case 17: sink += one_pass(o, s, ix, u, n, size, 2048, 0); break;
                case 18: sink += one_pass(o, s, ix, u, n, size, 4096, 0); break;
                case 19: sink += flagged(o, s, ix, u, n, size, 1); break;
                case 20: sink += flagged(o, s, ix, u, n, size, 0); break;
            }
            t[v * reps + r] = now() - t0;
        }
    }
    for (v = 0; v < NVAR; v++) {
        qsort(t + v * reps, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-13s %6.3f\n", names[v], t[v * reps + reps / 2] * 1e9 / (double)n);
    }
    free(ix); free(u); free(o); free(s); free(t);
    return sink == -1;
}

/*
 * benchmarks/cmodel/check_model.c: a bare C model of the bounds check that runs
 * before an in-place call's first write (plan/check_run.c): the minimum and the
 * maximum of each chunk of int64 indices.  Not part of the package: run.py
 * --model check compiles and runs it, as the package builds the check: for
 * AVX2 with gcc's generic tuning (-O3 -mavx2), and portable (-O3).
 *
 * Usage: check_model N_INDICES CHUNK REPEATS
 * For each variant, the median over REPEATS rounds, in ns per index, of one
 * check of N_INDICES random int64 indices in [0, N_INDICES) (each round runs
 * every variant in turn, each as many times as makes about 0.2 s, and keeps its
 * fastest call):
 *   one      one pair of accumulators over the chunk (the loop before): each
 *            min and each max waits for the one before it
 *   four     the chunk's four quarters side by side, a pair each (the loop now)
 * each over the whole run as one chunk, and by chunks of CHUNK.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "model.h"

typedef int64_t T;

__attribute__((noinline)) static void
one(const T *restrict v, int64_t n, T *lo_out, T *hi_out)
{
    T lo = v[0], hi = v[0];
    for (int64_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    *lo_out = lo;
    *hi_out = hi;
}

__attribute__((noinline)) static void
four(const T *restrict v, int64_t n, T *lo_out, T *hi_out)
{
    const int64_t q = n / 4;
    const T *restrict a = v, *restrict b = v + q, *restrict c = v + 2 * q, *restrict d = v + 3 * q;
    T l0 = v[0], h0 = v[0], l1 = v[0], h1 = v[0], l2 = v[0], h2 = v[0], l3 = v[0], h3 = v[0];
    for (int64_t i = 0; i < q; i++) {
        l0 = a[i] < l0 ? a[i] : l0; h0 = a[i] > h0 ? a[i] : h0;
        l1 = b[i] < l1 ? b[i] : l1; h1 = b[i] > h1 ? b[i] : h1;
        l2 = c[i] < l2 ? c[i] : l2; h2 = c[i] > h2 ? c[i] : h2;
        l3 = d[i] < l3 ? d[i] : l3; h3 = d[i] > h3 ? d[i] : h3;
    }
    for (int64_t i = 4 * q; i < n; i++) {
        l0 = v[i] < l0 ? v[i] : l0; h0 = v[i] > h0 ? v[i] : h0;
    }
    l0 = l1 < l0 ? l1 : l0; l2 = l3 < l2 ? l3 : l2;
    h0 = h1 > h0 ? h1 : h0; h2 = h3 > h2 ? h3 : h2;
    *lo_out = l2 < l0 ? l2 : l0;
    *hi_out = h2 > h0 ? h2 : h0;
}

typedef void (*minmax_fn)(const T *restrict, int64_t, T *, T *);

/* 1 if every value is in [-size, size), by chunks of chunk */
__attribute__((noinline)) static int
check(minmax_fn f, const T *v, int64_t n, int64_t chunk, int64_t size)
{
    for (int64_t c = 0; c < n; c += chunk) {
        int64_t m = n - c < chunk ? n - c : chunk;
        T lo, hi;
        f(v + c, m, &lo, &hi);
        if (lo < -size || hi >= size) return 0;
    }
    return 1;
}

int
main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s N_INDICES CHUNK REPEATS\n", argv[0]);
        return 2;
    }
    const int64_t n = atoll(argv[1]), chunk = atoll(argv[2]);
    const int rounds = atoi(argv[3]);
    T *v = aligned_alloc(64, ((size_t)n * sizeof(T) + 63) / 64 * 64);
    if (!v || n < 1 || chunk < 1 || rounds < 1) return 2;
    srand(1);
    for (int64_t i = 0; i < n; i++) v[i] = (T)(((uint64_t)rand() * RAND_MAX + rand()) % (uint64_t)n);
    const char *names[4] = {"one, whole", "four, whole", "one, chunks", "four, chunks"};
    double *t = malloc(sizeof(double) * 4 * (size_t)rounds);
    const int64_t calls = 1 + (int64_t)(0.2e9 / 0.15 / (double)n);
    volatile int sink = 0;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 4; k++) {
            double best = 1e30;
            minmax_fn f = (k & 1) ? four : one;
            for (int64_t c = 0; c < calls; c++) {
                double t0 = now();
                sink += check(f, v, n, k < 2 ? n : chunk, n);
                double dt = now() - t0;
                best = dt < best ? dt : best;
            }
            t[k * rounds + r] = best;
        }
    }
    printf("%lld int64 indices (%.0f KB), chunk %lld, ns an index, median of %d:",
           (long long)n, n * 8 / 1e3, (long long)chunk, rounds);
    for (int k = 0; k < 4; k++) {
        qsort(t + k * rounds, (size_t)rounds, sizeof(double), cmp_double);
        printf("  %s %.3f", names[k], 1e9 * t[k * rounds + rounds / 2] / (double)n);
    }
    printf("\n");
    return sink < 0;
}

/*
 * benchmarks/cmodel/at_scalar_model.c: a bare C model of scatterops.at's call with one
 * float64 b (py/at_scalar_b.c): 1000 int64 indices into a float64 a of 1000, the check
 * of every index before the first write, then the update loop.  Not part of the
 * package; build and run it as the package builds those loops:
 *
 *     gcc -O3 -std=c11 -o /tmp/at_scalar_model benchmarks/cmodel/at_scalar_model.c
 *     /tmp/at_scalar_model
 *
 * Prints the fastest of 2000 rounds of 100 calls, in us per call of 1000 updates, for:
 *   numpy-like  the update loop as NumPy's indexed loop writes it (wrap only);
 *   loop        the update loop with so_clamp (kernels/at_wide.c);
 *   check       the check as one loop, the portable build (SSE2);
 *   check avx2  the same loop built for AVX2 (what the package runs where the CPU has it).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "model.h"

typedef int64_t ip;

static inline int
inside(int64_t v, ip s)
{
    return (uint64_t)v + (uint64_t)s < 2 * (uint64_t)s;
}

#define CHECK(NAME, ATTR)                                                          \
    __attribute__((noinline)) ATTR static int                                      \
    NAME(const ip *idx, ip n, ip s)                                                \
    {                                                                              \
        ip bad = 0;                                                                \
        for (ip i = 0; i < n; i++) bad |= !inside(idx[i], s);                      \
        return bad != 0;                                                           \
    }
CHECK(check_sse2, )
CHECK(check_avx2, __attribute__((target("avx2"))))

__attribute__((noinline)) static void
loop_clamp(char *o, ip aos, ip size, const ip *idx, ip n, double b)
{
    for (ip q = 0; q < n; q++) {
        double *e = (double *)(o + clamp(idx[q], size) * aos);
        *e = *e + b;
    }
}

__attribute__((noinline)) static void
loop_numpy(char *o, ip aos, ip size, const ip *idx, ip n, double b)
{
    for (ip q = 0; q < n; q++) {
        ip j = idx[q] < 0 ? idx[q] + size : idx[q];
        double *e = (double *)(o + j * aos);
        *e = *e + b;
    }
}

int
main(void)
{
    enum { N = 1000, CALLS = 100, ROUNDS = 2000 };
    static ip idx[N];
    static double a[N];
    const char *names[4] = {"numpy-like", "loop", "check", "check avx2"};
    double best[4] = {1, 1, 1, 1};
    int bad = 0;
    srand(1);
    for (int i = 0; i < N; i++) idx[i] = rand() % N;
    for (int r = 0; r < ROUNDS; r++) {
        for (int v = 0; v < 4; v++) {
            double t0 = now();
            for (int k = 0; k < CALLS; k++) {
                if (v == 0) loop_numpy((char *)a, 8, N, idx, N, 1.5);
                if (v == 1) loop_clamp((char *)a, 8, N, idx, N, 1.5);
                if (v == 2) bad |= check_sse2(idx, N, N);
                if (v == 3) bad |= check_avx2(idx, N, N);
            }
            double t = (now() - t0) / CALLS;
            if (t < best[v]) best[v] = t;
        }
    }
    for (int v = 0; v < 4; v++) printf("%-11s %.3f us\n", names[v], best[v] * 1e6);
    return bad;
}

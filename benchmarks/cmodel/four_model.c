/*
 * benchmarks/cmodel/four_model.c: a bare C model of the direct loop into an
 * out in cache (kernels/indexed.c) one update at a time against four at a
 * time, the evidence for the second.  Not part of the package: run.py --model
 * four compiles and runs it (gcc -O3 -march=native).  Arrays are 2 MiB aligned
 * and madvised for huge pages, as NumPy's large arrays are.
 *
 * Usage: four_model N_UPDATES OUT_SIZE REPEATS
 * For each variant, the median over REPEATS runs, in ns per update, of one
 * pass over N_UPDATES random int64 indices into OUT_SIZE floats; each repeat
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
 * Every variant's sums are checked equal to loop's, bit for bit.
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

#define WRAP(j, size) ((j) + ((j) < 0 ? (size) : 0))
#define OUTSIDE(j, size) ((uint64_t)(j) >= (uint64_t)(size))

__attribute__((noinline)) static int64_t
loop(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
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
loop4(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
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
tested(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
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
tested4(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
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

#define CLAMP(j, size) (OUTSIDE(j, size) ? 0 : (j))

__attribute__((noinline)) static int64_t
clamp4(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
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
buf4(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
     int64_t size)
{
    int64_t b[BUF_CHUNK] __attribute__((aligned(64)));
    for (int64_t c = 0; c < n; c += BUF_CHUNK) {
        const int64_t e = n - c < BUF_CHUNK ? n - c : BUF_CHUNK;
        const int64_t *x = ix + c;
        const float *v = u + c;
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

typedef int64_t (*variant)(float *restrict, const int64_t *restrict, const float *restrict,
                           int64_t, int64_t);

int
main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 100000;
    int reps = argc > 3 ? atoi(argv[3]) : 21;
    static const char *const names[] = {"loop", "loop4", "tested", "tested4", "clamp4", "buf4"};
    static const variant fns[] = {loop, loop4, tested, tested4, clamp4, buf4};
    enum { NVAR = sizeof names / sizeof names[0] };
    int64_t *ix = big(sizeof *ix * (size_t)n);
    float *u = big(sizeof *u * (size_t)n);
    float *o[NVAR];
    double *t = malloc(sizeof *t * (size_t)reps * NVAR);
    uint64_t x = 88172645463325252ull;
    int v, r, bad = 0;
    for (v = 0; v < NVAR; v++) o[v] = big(sizeof(float) * (size_t)size);
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ix[i] = (int64_t)(x % (uint64_t)(2 * size)) - size;     /* negatives too */
        u[i] = (float)(x >> 40) * 1e-7f;
    }
    printf("%lld int64 indices into %lld float32, median of %d, ns/update\n", (long long)n,
           (long long)size, reps);
    for (r = 0; r < reps; r++) {
        for (v = 0; v < NVAR; v++) {
            double t0 = now();
            bad |= fns[v](o[v], ix, u, n, size) != -1;
            t[v * reps + r] = now() - t0;
        }
    }
    for (v = 1; v < NVAR; v++) bad |= memcmp(o[0], o[v], sizeof(float) * (size_t)size) != 0;
    for (v = 0; v < NVAR; v++) {
        qsort(t + v * reps, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-8s %6.3f\n", names[v], t[v * reps + reps / 2] * 1e9 / (double)n);
    }
    if (bad) printf("  the variants' sums differ\n");
    return bad;
}

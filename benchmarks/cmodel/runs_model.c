/*
 * benchmarks/cmodel/runs_model.c: a bare C model of two changes to the
 * one-thread direct loop (kernels/indexed.c), the evidence for them.  Not part
 * of the package: run.py --model runs [--sorted] compiles and runs it (gcc -O3
 * -march=native).
 *
 * Usage: runs_model N_UPDATES OUT_SIZE REPEATS SORTED
 * For each variant, the median over REPEATS runs, in ns per update, of one pass
 * over N_UPDATES indices (int64, random or sorted) into OUT_SIZE floats:
 *   clamp         o[j] += u[i], j wrapped and clamped (today's loop)
 *   runs          the element held in a register while the index repeats, stored
 *                 when it changes (the same additions in the same order)
 *   check         the min/max check by chunks of 2048 (today's)
 *   check+sorted  the same check also noting whether the chunk is non-decreasing
 *   mean2         mean: a pass counting the hits, a pass adding, the division
 *   mean1         mean: one pass adding and counting, the division
 *   mean1runs     mean1 holding the element and its count while the index repeats
 *   mean1pair     mean1 with each sum beside its int32 count (one cache line an
 *                 update): out copied in, the updates, out written back divided
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

__attribute__((noinline)) static void
runs64(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
       int64_t size)
{
    int64_t prev;
    float acc;
    if (n == 0) return;
    prev = clamp(ix[0], size);
    acc = o[prev] + u[0];
    for (int64_t i = 1; i < n; i++) {
        int64_t j = clamp(ix[i], size);
        if (j == prev) {
            acc = acc + u[i];
        }
        else {
            o[prev] = acc;
            acc = o[j] + u[i];
            prev = j;
        }
    }
    o[prev] = acc;
}

/* the check, and the number of chunks whose values never decrease */
__attribute__((noinline)) static int64_t
check_sorted64(const int64_t *restrict ix, int64_t n, int64_t size)
{
    int64_t sorted = 0;
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t e = c + CHUNK < n ? c + CHUNK : n;
        int64_t lo = ix[c], hi = ix[c];
        int down = 0;
        for (int64_t i = c; i < e; i++) {
            lo = ix[i] < lo ? ix[i] : lo;
            hi = ix[i] > hi ? ix[i] : hi;
        }
        for (int64_t i = c + 1; i < e; i++) down |= ix[i] < ix[i - 1];
        if (lo < -size || hi >= size) return -1;
        sorted += !down;
    }
    return sorted;
}

__attribute__((noinline)) static void
divide(float *restrict o, const int64_t *restrict cnt, int64_t size)
{
    for (int64_t j = 0; j < size; j++) {
        if (cnt[j]) o[j] = (float)((double)o[j] / (double)(cnt[j] + 1));
    }
}

__attribute__((noinline)) static void
mean2(float *restrict o, int64_t *restrict cnt, const int64_t *restrict ix,
      const float *restrict u, int64_t n, int64_t size)
{
    memset(cnt, 0, sizeof *cnt * (size_t)size);
    for (int64_t i = 0; i < n; i++) cnt[clamp(ix[i], size)]++;
    clamp64(o, ix, u, n, size);
    divide(o, cnt, size);
}

__attribute__((noinline)) static void
mean1(float *restrict o, int64_t *restrict cnt, const int64_t *restrict ix,
      const float *restrict u, int64_t n, int64_t size)
{
    memset(cnt, 0, sizeof *cnt * (size_t)size);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = clamp(ix[i], size);
        o[j] = o[j] + u[i];
        cnt[j]++;
    }
    divide(o, cnt, size);
}

__attribute__((noinline)) static void
mean1runs(float *restrict o, int64_t *restrict cnt, const int64_t *restrict ix,
          const float *restrict u, int64_t n, int64_t size)
{
    int64_t prev, k = 1;
    float acc;
    memset(cnt, 0, sizeof *cnt * (size_t)size);
    prev = clamp(ix[0], size);
    acc = o[prev] + u[0];
    for (int64_t i = 1; i < n; i++) {
        int64_t j = clamp(ix[i], size);
        if (j == prev) {
            acc = acc + u[i];
            k++;
        }
        else {
            o[prev] = acc;
            cnt[prev] += k;
            acc = o[j] + u[i];
            k = 1;
            prev = j;
        }
    }
    o[prev] = acc;
    cnt[prev] += k;
    divide(o, cnt, size);
}

typedef struct { float s; int32_t c; } pair;

__attribute__((noinline)) static void
mean1pair(float *restrict o, pair *restrict w, const int64_t *restrict ix,
          const float *restrict u, int64_t n, int64_t size)
{
    for (int64_t j = 0; j < size; j++) {
        w[j].s = o[j];
        w[j].c = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        pair *p = w + clamp(ix[i], size);
        p->s = p->s + u[i];
        p->c++;
    }
    for (int64_t j = 0; j < size; j++) {
        o[j] = w[j].c ? (float)((double)w[j].s / (double)(w[j].c + 1)) : o[j];
    }
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 1000;
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    int sorted = argc > 4 ? atoi(argv[4]) : 0;
    int64_t *ix = malloc(sizeof *ix * (size_t)n), *cnt = malloc(sizeof *cnt * (size_t)size);
    pair *w = malloc(sizeof *w * (size_t)size);
    float *u = malloc(sizeof *u * (size_t)n), *o = calloc((size_t)size, sizeof *o);
    double *t = malloc(sizeof *t * (size_t)reps);
    const char *names[] = {"clamp", "runs", "check", "check+sorted", "mean2", "mean1",
                           "mean1runs", "mean1pair"};
    uint64_t s = 88172645463325252ull;
    volatile int64_t sink = 0;
    int v, r;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        ix[i] = (int64_t)(s % (uint64_t)size);
        u[i] = (float)(s >> 40) * 1e-7f;
    }
    if (sorted) qsort(ix, (size_t)n, sizeof *ix, cmp_i64);
    printf("%lld %s updates into %lld float32, median of %d, ns/update\n", (long long)n,
           sorted ? "sorted" : "random", (long long)size, reps);
    for (v = 0; v < 8; v++) {
        for (r = 0; r < reps; r++) {
            double t0 = now();
            switch (v) {
                case 0: clamp64(o, ix, u, n, size); break;
                case 1: runs64(o, ix, u, n, size); break;
                case 2: sink += check64(ix, n, size); break;
                case 3: sink += check_sorted64(ix, n, size); break;
                case 4: mean2(o, cnt, ix, u, n, size); break;
                case 5: mean1(o, cnt, ix, u, n, size); break;
                case 6: mean1runs(o, cnt, ix, u, n, size); break;
                case 7: mean1pair(o, w, ix, u, n, size); break;
            }
            t[r] = now() - t0;
            memset(o, 0, sizeof *o * (size_t)size);
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        printf("  %-13s %6.3f\n", names[v], t[reps / 2] * 1e9 / (double)n);
    }
    free(ix); free(cnt); free(w); free(u); free(o); free(t);
    return sink == -1;
}

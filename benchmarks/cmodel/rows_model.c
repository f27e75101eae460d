/*
 * benchmarks/cmodel/rows_model.c: a bare C model of the direct form's row loop
 * (csrc/kernels/rows.c): float32 rows of F contiguous elements added into
 * random rows of an out of OUT_ROWS rows, int64 indices, each wrapped and
 * clamped as the kernel does.  Not part of the package: run.py beside it
 * (--model rows) compiles it with gcc -O3 -march=native and prints ns per row.
 *
 * Usage: rows_model ELEMENTS OUT_ROWS REPEATS
 * For F = 8, 16, 32 and 64 (ELEMENTS / F rows of updates: 4e6 gives the
 * benchmarks' rows-F8 and rows-F64, 6.4e7 with F = 64 pyg-bcast's messages),
 * the median over REPEATS runs of one pass of each variant:
 *   plain      for i: row ix[i] of out += row i of the updates (F a constant)
 *   copied     the same through local copies of the row and the update
 *   pf-D       plain, with every cache line of the row ix[i + D] prefetched for
 *              writing first (D = 4, 8, 16, 32 rows ahead)
 *   copied-pf-8  copied, with pf-8's prefetch (c-pf-8-sse2: the same for x86-64)
 *   compact-2t two threads, each owning half of out's rows: block by block of indices
 *              it compacts the positions of its own rows without a branch, then applies
 *              them (local copies up to 64-byte rows, else pf-8's prefetch)
 *   owned-2t   two threads, each applying the rows whose destination is in its half
 *              of out (reading every index), with pf-8's prefetch of its own rows
 *   -sse2      the same compiled for baseline x86-64 (as the package is built)
 *   copy       memcpy of the whole out, in ms (what an out-of-place call adds)
 */
#define _POSIX_C_SOURCE 199309L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

/* every cache line of the row d rows ahead prefetched for writing (d = 0: none) */
#define AHEAD(F)                                                                  \
    if (d > 0 && i + d < n) {                                                     \
        const char *p = (const char *)(o + clamp(ix[i + d], size) * (F));         \
        for (int64_t b = 0; b < (F) * 4; b += 64) __builtin_prefetch(p + b, 1);   \
    }

#define ROWS(F, SFX, ATTR)                                                        \
__attribute__((noinline)) ATTR static void                                        \
plain##F##SFX(float *restrict o, const int64_t *restrict ix, const float *restrict u,  \
         int64_t n, int64_t size, int64_t d)                                      \
{                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                             \
        AHEAD(F)                                                                  \
        float *r = o + clamp(ix[i], size) * (F);                                  \
        const float *s = u + i * (F);                                             \
        for (int k = 0; k < (F); k++) r[k] += s[k];                               \
    }                                                                             \
}                                                                                 \
__attribute__((noinline)) ATTR static void                                        \
copied##F##SFX(float *restrict o, const int64_t *restrict ix, const float *restrict u, \
          int64_t n, int64_t size, int64_t d)                                     \
{                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                             \
        AHEAD(F)                                                                  \
        float *r = o + clamp(ix[i], size) * (F);                                  \
        float x[F], y[F];                                                         \
        memcpy(x, r, sizeof x);                                                   \
        memcpy(y, u + i * (F), sizeof y);                                         \
        for (int k = 0; k < (F); k++) x[k] += y[k];                               \
        memcpy(r, x, sizeof x);                                                   \
    }                                                                             \
}
#define NATIVE
#define SSE2 __attribute__((target("arch=x86-64")))
ROWS(8, , NATIVE) ROWS(16, , NATIVE) ROWS(32, , NATIVE) ROWS(64, , NATIVE)
ROWS(8, _sse2, SSE2) ROWS(16, _sse2, SSE2) ROWS(32, _sse2, SSE2) ROWS(64, _sse2, SSE2)

/* the split by ownership of the out rows: thread t of 2 reads every index and
 * applies the rows whose destination is in its half of out, prefetching the
 * row d ahead when it is its own */
typedef struct {
    float *o;
    const int64_t *ix;
    const float *u;
    int64_t n, size, d, lo, hi;
    void (*fn)(void *);
} owned_share;

#define OWNED(F)                                                                  \
static void                                                                       \
owned##F(void *arg)                                                               \
{                                                                                 \
    owned_share *t = arg;                                                         \
    float *restrict o = t->o;                                                     \
    const int64_t *restrict ix = t->ix;                                           \
    const float *restrict u = t->u;                                               \
    int64_t n = t->n, size = t->size, d = t->d, lo = t->lo, hi = t->hi;           \
    for (int64_t i = 0; i < n; i++) {                                             \
        int64_t j = clamp(ix[i], size);                                           \
        if (d > 0 && i + d < n) {                                                 \
            int64_t a = clamp(ix[i + d], size);                                   \
            const char *p = (const char *)(o + a * (F));                          \
            if (a >= lo && a < hi)                                                \
                for (int64_t b = 0; b < (F) * 4; b += 64) __builtin_prefetch(p + b, 1); \
        }                                                                         \
        if (j < lo || j >= hi) continue;                                          \
        float *r = o + j * (F);                                                   \
        const float *s = u + i * (F);                                             \
        for (int k = 0; k < (F); k++) r[k] += s[k];                               \
    }                                                                             \
}
OWNED(8) OWNED(16) OWNED(32) OWNED(64)

/* the same ownership, with the branch moved out of the row loop: thread t
 * compacts, block by block of CBLOCK indices, the positions whose destination
 * is its own (branch-free: every position is stored, the count moves when it
 * is owned), then applies those rows in order (local copies for rows of up to
 * 64 bytes, else the plain loop with pf-8's prefetch) */
#define CBLOCK 4096
#define COMPACT(F)                                                                \
static void                                                                       \
compact##F(void *arg)                                                             \
{                                                                                 \
    owned_share *t = arg;                                                         \
    float *restrict o = t->o;                                                     \
    const int64_t *restrict ix = t->ix;                                           \
    const float *restrict u = t->u;                                               \
    int64_t n = t->n, size = t->size, lo = t->lo, span = t->hi - t->lo;           \
    int32_t pos[CBLOCK];                                                          \
    int64_t jj[CBLOCK];                                                           \
    for (int64_t b = 0; b < n; b += CBLOCK) {                                     \
        int64_t e = b + CBLOCK < n ? b + CBLOCK : n, c = 0;                       \
        for (int64_t i = b; i < e; i++) {                                         \
            int64_t j = clamp(ix[i], size);                                       \
            pos[c] = (int32_t)(i - b);                                            \
            jj[c] = j;                                                            \
            c += (uint64_t)(j - lo) < (uint64_t)span;                             \
        }                                                                         \
        for (int64_t k = 0; k < c; k++) {                                         \
            if ((F) * 4 >= 128 && k + 8 < c) {                                    \
                const char *p = (const char *)(o + jj[k + 8] * (F));              \
                for (int64_t q = 0; q < (F) * 4; q += 64) __builtin_prefetch(p + q, 1); \
            }                                                                     \
            float *r = o + jj[k] * (F);                                           \
            const float *s = u + (b + pos[k]) * (F);                              \
            if ((F) * 4 <= 64) {                                                  \
                float x[F], y[F];                                                 \
                memcpy(x, r, sizeof x);                                           \
                memcpy(y, s, sizeof y);                                           \
                for (int q = 0; q < (F); q++) x[q] += y[q];                       \
                memcpy(r, x, sizeof x);                                           \
            } else {                                                              \
                for (int q = 0; q < (F); q++) r[q] += s[q];                       \
            }                                                                     \
        }                                                                         \
    }                                                                             \
}
COMPACT(8) COMPACT(16) COMPACT(32) COMPACT(64)

static void *
owned_main(void *arg)
{
    ((owned_share *)arg)->fn(arg);
    return NULL;
}

static void
owned_2t(void (*fn)(void *), float *o, const int64_t *ix, const float *u, int64_t n,
         int64_t size, int64_t d)
{
    owned_share sh[2];
    pthread_t th;
    for (int t = 0; t < 2; t++) {
        owned_share x = {o, ix, u, n, size, d, size * t / 2, size * (t + 1) / 2, fn};
        sh[t] = x;
    }
    pthread_create(&th, NULL, owned_main, &sh[1]);
    owned_main(&sh[0]);
    pthread_join(th, NULL);
}

typedef void (*plain_fn)(float *restrict, const int64_t *restrict, const float *restrict,
                         int64_t, int64_t, int64_t);
typedef void (*copied_fn)(float *restrict, const int64_t *restrict, const float *restrict,
                          int64_t, int64_t, int64_t);

/* the variants, by row of the table: plain or copied loop, native or SSE2, prefetch distance */
#define NV 14
static const char *const names[NV] = {"plain", "copied", "pf-4", "pf-8", "pf-16", "pf-32",
                                      "plain-sse2", "copied-sse2", "pf-8-sse2", "copied-pf-8",
                                      "c-pf-8-sse2", "compact-2t", "owned-2t", "copy"};
static const int64_t dist[NV] = {0, 0, 4, 8, 16, 32, 0, 0, 8, 8, 8, 8, 8, 0};

int
main(int argc, char **argv)
{
    int64_t elems = argc > 1 ? atoll(argv[1]) : 4000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 100000;
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    static const int fs[4] = {8, 16, 32, 64};
    static const plain_fn plain[2][4] = {{plain8, plain16, plain32, plain64},
                                         {plain8_sse2, plain16_sse2, plain32_sse2, plain64_sse2}};
    static void (*const owned[4])(void *) = {owned8, owned16, owned32, owned64};
    static void (*const compact[4])(void *) = {compact8, compact16, compact32, compact64};
    static const copied_fn copied[2][4] = {
        {copied8, copied16, copied32, copied64},
        {copied8_sse2, copied16_sse2, copied32_sse2, copied64_sse2}};
    double res[NV][4], *t = malloc(sizeof *t * (size_t)(reps * NV));
    int v, r, c;
    printf("%lld float32 of updates into %lld rows, median of %d (variants interleaved), "
           "ns/row (copy: ms)\n", (long long)elems, (long long)size, reps);
    for (c = 0; c < 4; c++) {
        int64_t f = fs[c], n = elems / f;
        int64_t *ix = malloc(sizeof *ix * (size_t)n);
        float *u = malloc(sizeof *u * (size_t)(n * f));
        float *o = calloc((size_t)(size * f), sizeof *o), *o2 = calloc((size_t)(size * f), 4);
        uint64_t s = 88172645463325252ull;
        for (int64_t i = 0; i < n; i++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            ix[i] = (int64_t)(s % (uint64_t)size);
        }
        for (int64_t i = 0; i < n * f; i++) u[i] = (float)(i & 1023) * 1e-3f;
        memcpy(o2, o, (size_t)(size * f) * 4);   /* both touched before the clock */
        for (r = 0; r < reps; r++) {
            for (v = 0; v < NV; v++) {
                int sse = (v >= 6 && v < 9) || v == 10;
                double t0 = now();
                if (v == 1 || v == 7 || v == 9 || v == 10) copied[sse][c](o, ix, u, n, size, dist[v]);
                else if (v == NV - 1) memcpy(o2, o, (size_t)(size * f) * 4);
                else if (v == NV - 2) owned_2t(owned[c], o, ix, u, n, size, dist[v]);
                else if (v == NV - 3) owned_2t(compact[c], o, ix, u, n, size, dist[v]);
                else plain[sse][c](o, ix, u, n, size, dist[v]);
                t[v * reps + r] = now() - t0;
            }
        }
        for (v = 0; v < NV; v++) {
            qsort(t + v * reps, (size_t)reps, sizeof *t, cmp_double);
            res[v][c] = t[v * reps + reps / 2] * (v == NV - 1 ? 1e3 : 1e9 / (double)n);
        }
        free(ix); free(u); free(o); free(o2);
    }
    printf("  %-11s", "F");
    for (c = 0; c < 4; c++) printf(" %8d", fs[c]);
    printf("\n  %-11s", "rows");
    for (c = 0; c < 4; c++) printf(" %8lld", (long long)(elems / fs[c]));
    printf("\n");
    for (v = 0; v < NV; v++) {
        printf("  %-11s", names[v]);
        for (c = 0; c < 4; c++) printf(" %8.2f", res[v][c]);
        printf("\n");
    }
    free(t);
    return 0;
}

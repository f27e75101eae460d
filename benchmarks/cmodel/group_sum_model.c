/*
 * benchmarks/cmodel/group_sum_model.c: a bare C model of the one-thread group
 * sum of float64 values into float64 cells (group_reduce(v, g, "sum")), the
 * floor the C loops of kernels/group.c can reach on this machine.  Not part of
 * the package: compile and run it by hand,
 *
 *     gcc -O3 -march=native -o /tmp/gsm benchmarks/cmodel/group_sum_model.c
 *     /tmp/gsm N_MEMBERS SIZE REPEATS
 *
 * Each variant: the median over REPEATS runs (of this thread's CPU time, so that
 * the other processes of a shared machine count less) of a fresh call's work, the cells
 * allocated and zeroed (as a result array is), N_MEMBERS random int64 ids into
 * SIZE groups:
 *   loop          for i: r[g[i]] += v[i], no check (the floor)
 *   loop32        the same loop reading int32 ids
 *   skip          the loop skipping an id outside [0, size) (mode="drop")
 *   skip4         skip, four ids read before the first is tested
 *   check+loop    min/max of all ids first (vectorised, chunks), then the loop
 *   fused         by pieces of CHUNK: the piece's ids checked, then its loop with
 *                 the skip (nothing written outside the cells; a bad id
 *                 stops the call before any later piece)
 *   fused32       the same reading int32 ids
 *   counted       the loop keeping a count per group as well (mean, a fill)
 *   strided       the loop reading values through a char pointer and a byte
 *                 stride, ids as intp (the generic loop's shape)
 *   counted2      the loop, then a second loop counting the ids of each piece
 *                 of CHUNK (the mean's counts apart from its sums)
 *   pairs         the loop with the sum and the count of a group side by side
 *                 (one cache line a member), then the division into the cells
 *   seen1         the loop storing 1 into a byte per group as well (which
 *                 groups are empty, for a fill: no read-modify-write)
 *   seen8         the same into an int64 per group
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

__attribute__((noinline)) static void
loop(double *restrict r, const int64_t *restrict g, const double *restrict v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) r[g[i]] += v[i];
}

__attribute__((noinline)) static void
loop32(double *restrict r, const int32_t *restrict g, const double *restrict v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) r[g[i]] += v[i];
}

__attribute__((noinline)) static void
skip(double *restrict r, const int64_t *restrict g, const double *restrict v, int64_t n,
     int64_t size)
{
    for (int64_t i = 0; i < n; i++) {
        if ((uint64_t)g[i] < (uint64_t)size) r[g[i]] += v[i];
    }
}

/* skip with the ids read four at a time, all four before the first is
 * tested (kernels/group_fast.c's AT_FOUR) */
__attribute__((noinline)) static void
skip4(double *restrict r, const int64_t *restrict g, const double *restrict v, int64_t n,
      int64_t size)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int64_t g0 = g[i], g1 = g[i + 1], g2 = g[i + 2], g3 = g[i + 3];
        if ((uint64_t)g0 < (uint64_t)size) r[g0] += v[i];
        if ((uint64_t)g1 < (uint64_t)size) r[g1] += v[i + 1];
        if ((uint64_t)g2 < (uint64_t)size) r[g2] += v[i + 2];
        if ((uint64_t)g3 < (uint64_t)size) r[g3] += v[i + 3];
    }
    for (; i < n; i++) {
        if ((uint64_t)g[i] < (uint64_t)size) r[g[i]] += v[i];
    }
}

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
        if ((int64_t)lo < 0 || (int64_t)hi >= size) return 0;                     \
    }                                                                             \
    return 1;                                                                     \
}
CHECK(checkg64, int64_t)
CHECK(checkg32, int32_t)

/* by chunks: the chunk's ids checked, then its loop */
#define FUSED(NAME, IT, CHECKF, LOOPF)                                            \
__attribute__((noinline)) static int                                              \
NAME(double *restrict r, const IT *restrict g, const double *restrict v, int64_t n,\
     int64_t size)                                                                \
{                                                                                 \
    for (int64_t c = 0; c < n; c += CHUNK) {                                      \
        int64_t e = c + CHUNK < n ? c + CHUNK : n;                                \
        if (!CHECKF(g + c, e - c, size)) return 0;                                \
        LOOPF(r, g + c, v + c, e - c);                                            \
    }                                                                             \
    return 1;                                                                     \
}
FUSED(fused, int64_t, checkg64, loop)
FUSED(fused32, int32_t, checkg32, loop32)

__attribute__((noinline)) static void
counted(double *restrict r, int64_t *restrict cnt, const int64_t *restrict g,
        const double *restrict v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        r[g[i]] += v[i];
        cnt[g[i]]++;
    }
}

__attribute__((noinline)) static void
strided(double *restrict r, const int64_t *restrict g, const char *restrict v, int64_t sn,
        int64_t n, int64_t size)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = g[i];
        if ((uint64_t)k >= (uint64_t)size) continue;
        r[k] += *(const double *)(v + i * sn);
    }
}

/* the loop storing 1 into a flag of type FT per group as well */
#define SEEN(NAME, FT)                                                            \
__attribute__((noinline)) static void                                             \
NAME(double *restrict r, FT *restrict seen, const int64_t *restrict g,            \
     const double *restrict v, int64_t n)                                         \
{                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                             \
        r[g[i]] += v[i];                                                          \
        seen[g[i]] = 1;                                                           \
    }                                                                             \
}
SEEN(seen1, char)
SEEN(seen8, int64_t)

__attribute__((noinline)) static void
count_ids(int64_t *restrict cnt, const int64_t *restrict g, int64_t n)
{
    for (int64_t i = 0; i < n; i++) cnt[g[i]]++;
}

typedef struct { double s; int64_t c; } pair;

__attribute__((noinline)) static void
pairs(double *restrict r, pair *restrict p, const int64_t *restrict g, const double *restrict v,
      int64_t n, int64_t size)
{
    for (int64_t i = 0; i < n; i++) {
        p[g[i]].s += v[i];
        p[g[i]].c++;
    }
    for (int64_t k = 0; k < size; k++) r[k] = p[k].c ? p[k].s / (double)p[k].c : r[k];
}

enum { LOOP, LOOP32, SKIP, SKIP4, CHECKLOOP, FUSED, FUSED32, COUNTED, STRIDED, SEEN1, SEEN8, COUNTED2, PAIRS, NV };
static const char *names[NV] = {"loop", "loop32", "skip", "skip4", "check+loop", "fused", "fused32",
                                "counted", "strided", "seen1", "seen8", "counted2", "pairs"};

int
main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    const int64_t size = argc > 2 ? atoll(argv[2]) : 100000;
    const int reps = argc > 3 ? atoi(argv[3]) : 21;
    int64_t *g = malloc((size_t)n * sizeof *g), *cnt;
    int32_t *g32 = malloc((size_t)n * sizeof *g32);
    double *v = malloc((size_t)n * sizeof *v), *t = malloc((size_t)reps * sizeof *t), *r;
    double sink = 0;
    draw_members(g, v, n, size);
    for (int64_t i = 0; i < n; i++) g32[i] = (int32_t)g[i];
    printf("n=%lld size=%lld, ns per member (median of %d)\n", (long long)n, (long long)size, reps);
    for (int var = 0; var < NV; var++) {
        for (int k = 0; k < reps; k++) {
            double t0 = cpu_now();
            r = malloc((size_t)size * sizeof *r);
            memset(r, 0, (size_t)size * sizeof *r);
            cnt = NULL;
            switch (var) {
            case LOOP: loop(r, g, v, n); break;
            case LOOP32: loop32(r, g32, v, n); break;
            case SKIP: skip(r, g, v, n, size); break;
            case SKIP4: skip4(r, g, v, n, size); break;
            case CHECKLOOP: if (checkg64(g, n, size)) loop(r, g, v, n); break;
            case FUSED: fused(r, g, v, n, size); break;
            case FUSED32: fused32(r, g32, v, n, size); break;
            case COUNTED:
                cnt = calloc((size_t)size, sizeof *cnt);
                counted(r, cnt, g, v, n);
                break;
            case STRIDED: strided(r, g, (const char *)v, 8, n, size); break;
            case SEEN1:
                cnt = calloc((size_t)size, 1);
                seen1(r, (char *)cnt, g, v, n);
                break;
            case SEEN8:
                cnt = calloc((size_t)size, sizeof *cnt);
                seen8(r, cnt, g, v, n);
                break;
            case PAIRS:
                cnt = calloc((size_t)size, sizeof(pair));
                pairs(r, (pair *)cnt, g, v, n, size);
                break;
            default:
                cnt = calloc((size_t)size, sizeof *cnt);
                for (int64_t c = 0; c < n; c += CHUNK) {
                    int64_t e = c + CHUNK < n ? c + CHUNK : n;
                    loop(r, g + c, v + c, e - c);
                    count_ids(cnt, g + c, e - c);
                }
                break;
            }
            t[k] = cpu_now() - t0;
            sink += r[k % size];
            free(r);
            free(cnt);
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        printf("%-12s %6.2f ns  (%.2f ms)\n", names[var], t[reps / 2] * 1e9 / (double)n,
               t[reps / 2] * 1e3);
    }
    fprintf(stderr, "%g\n", sink);
    return 0;
}

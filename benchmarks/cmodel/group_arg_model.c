/*
 * benchmarks/cmodel/group_arg_model.c: a bare C model of the one-thread group
 * argmax of float64 values (group_reduce(v, g, "argmax")), the loops of
 * kernels/group_fast.c without the package around them.  Not part of the
 * package: compile and run it by hand,
 *
 *     gcc -O3 -o /tmp/gam benchmarks/cmodel/group_arg_model.c
 *     /tmp/gam N_MEMBERS SIZE REPEATS
 *
 * Each variant: the median over REPEATS runs (of this thread's CPU time) of a
 * fresh call's work, the cells started at -inf and the positions at -1,
 * N_MEMBERS random int64 ids into SIZE groups; the variants take turns in
 * each repeat:
 *   every    one member at a time, the position read at every member
 *            (take if it is -1, or the cell is a number and x a NaN or greater)
 *   every4   the same, four ids read before the first is tested
 *   tie      one member at a time, the position read only on a tie with the
 *            cell (take if x is greater, a NaN against a number, or equal to
 *            a cell whose position is -1)
 *   tie4     tie with four ids read before the first is tested (the package)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

#define ISNAN(x) ((x) != (x))
#define EVERY(k, x, i)                                                                   \
    if (pos[k] < 0 || (!ISNAN(r[k]) && (ISNAN(x) || (x) > r[k]))) {                      \
        r[k] = (x);                                                                      \
        pos[k] = (i);                                                                    \
    }
#define TIE(k, x, i)                                                                     \
    if ((x) > r[k] || (ISNAN(x) && !ISNAN(r[k])) || ((x) == r[k] && pos[k] < 0)) {       \
        r[k] = (x);                                                                      \
        pos[k] = (i);                                                                    \
    }
#define ONE(NAME, STEP)                                                                  \
__attribute__((noinline)) static void                                                    \
NAME(double *r, int64_t *pos, const int64_t *g, const double *v, int64_t n, int64_t size) \
{                                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                    \
        const int64_t k = g[i];                                                          \
        if ((uint64_t)k >= (uint64_t)size) continue;                                     \
        STEP(k, v[i], i)                                                                 \
    }                                                                                    \
}
#define FOUR(NAME, STEP)                                                                 \
__attribute__((noinline)) static void                                                    \
NAME(double *r, int64_t *pos, const int64_t *g, const double *v, int64_t n, int64_t size) \
{                                                                                        \
    int64_t i = 0;                                                                       \
    for (; i + 4 <= n; i += 4) {                                                         \
        const int64_t k[4] = {g[i], g[i + 1], g[i + 2], g[i + 3]};                       \
        for (int j = 0; j < 4; j++) {                                                    \
            if ((uint64_t)k[j] >= (uint64_t)size) continue;                              \
            STEP(k[j], v[i + j], i + j)                                                  \
        }                                                                                \
    }                                                                                    \
    for (; i < n; i++) {                                                                 \
        if ((uint64_t)g[i] >= (uint64_t)size) continue;                                  \
        STEP(g[i], v[i], i)                                                              \
    }                                                                                    \
}
ONE(every, EVERY)
FOUR(every4, EVERY)
ONE(tie, TIE)
FOUR(tie4, TIE)

enum { NV = 4 };
static void (*const loops[NV])(double *, int64_t *, const int64_t *, const double *, int64_t,
                               int64_t) = {every, every4, tie, tie4};
static const char *names[NV] = {"every", "every4", "tie", "tie4"};

int
main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    const int64_t size = argc > 2 ? atoll(argv[2]) : 1000;
    const int reps = argc > 3 ? atoi(argv[3]) : 15;
    int64_t *g = malloc((size_t)n * sizeof *g), *pos;
    double *v = malloc((size_t)n * sizeof *v), *t = malloc((size_t)(NV * reps) * sizeof *t), *r;
    double sink = 0;
    draw_members(g, v, n, size);
    for (int k = 0; k < reps; k++) {
        for (int var = 0; var < NV; var++) {
            const double t0 = cpu_now();
            r = malloc((size_t)size * sizeof *r);
            pos = malloc((size_t)size * sizeof *pos);
            for (int64_t c = 0; c < size; c++) {
                r[c] = -1.0 / 0.0;
                pos[c] = -1;
            }
            loops[var](r, pos, g, v, n, size);
            t[var * reps + k] = cpu_now() - t0;
            sink += (double)pos[k % size];
            free(r);
            free(pos);
        }
    }
    printf("n=%lld size=%lld, ms (median of %d)\n", (long long)n, (long long)size, reps);
    for (int var = 0; var < NV; var++) {
        qsort(t + var * reps, (size_t)reps, sizeof *t, cmp_double);
        printf("%-8s %6.2f ms\n", names[var], t[var * reps + reps / 2] * 1e3);
    }
    fprintf(stderr, "%g\n", sink);
    return 0;
}

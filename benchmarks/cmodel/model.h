/*
 * benchmarks/cmodel/model.h: what the C models (scatter_model.c, runs_model.c,
 * prefetch_model.c, rows_model.c, partition_model.c, ...) share: a clock and
 * a thread's CPU clock, the compare for the median, the group models' draw,
 * the kernel's wrap and clamp of an index, its loop and the check by chunks.
 * Each model defines _POSIX_C_SOURCE before including it.
 */
#ifndef SO_CMODEL_H
#define SO_CMODEL_H
#include <stdint.h>
#include <time.h>

static inline double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* this thread's CPU time: the other processes of a shared machine count less */
static inline double
cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the group models' draw: n members' ids in [0, size) and values in
 * [-0.5, 0.5), from one xorshift stream */
static inline void
draw_members(int64_t *g, double *v, int64_t n, int64_t size)
{
    uint64_t s = 88172645463325252ULL;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        g[i] = (int64_t)(s % (uint64_t)size);
        v[i] = (double)(s >> 11) * 0x1p-53 - 0.5;
    }
}

/* a negative index from the end, then anything outside [0, size) to 0 */
static inline int64_t
clamp(int64_t j, int64_t size)
{
    j += j < 0 ? size : 0;
    return (uint64_t)j < (uint64_t)size ? j : 0;
}

#define CHUNK 2048

/* the kernel's loop: o[j] += u[i], j wrapped and clamped */
__attribute__((noinline, unused)) static void
clamp64(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
        int64_t size)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = clamp(ix[i], size);
        o[j] = o[j] + u[i];
    }
}

/* 1 if every index of ix[0..n) is in [-size, size): min and max per chunk of
 * CHUNK (the compiler vectorises the two reductions) */
__attribute__((noinline, unused)) static int
check64(const int64_t *restrict ix, int64_t n, int64_t size)
{
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t e = c + CHUNK < n ? c + CHUNK : n;
        int64_t lo = ix[c], hi = ix[c];
        for (int64_t i = c; i < e; i++) {
            lo = ix[i] < lo ? ix[i] : lo;
            hi = ix[i] > hi ? ix[i] : hi;
        }
        if (lo < -size || hi >= size) return 0;
    }
    return 1;
}
#endif

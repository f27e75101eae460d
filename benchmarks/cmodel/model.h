/*
 * benchmarks/cmodel/model.h: what the C models (scatter_model.c, runs_model.c,
 * prefetch_model.c) share: a clock, the compare for the median, and the
 * kernel's wrap and clamp of an index.  Each model defines _POSIX_C_SOURCE
 * before including it.
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

static inline int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* a negative index from the end, then anything outside [0, size) to 0 */
static inline int64_t
clamp(int64_t j, int64_t size)
{
    j += j < 0 ? size : 0;
    return (uint64_t)j < (uint64_t)size ? j : 0;
}
#endif

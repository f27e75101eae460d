/*
 * benchmarks/cmodel/fusedrows_model.c: a bare C model of an out-of-place row
 * scatter-add on one thread: float32 rows of F elements added into random rows
 * of a fresh copy of a (OUT_ROWS, F) data, int64 indices.  Not part of the
 * package: run.py beside it (--model fusedrows) compiles it with gcc -O3
 * -march=native and prints ms per call.
 *
 * Usage: fusedrows_model ELEMENTS OUT_ROWS REPEATS
 * For F = 16, 32, 64 (ELEMENTS / F rows of updates; 4e6 gives the benchmarks'
 * rows-F64), the median over REPEATS runs, the variants interleaved:
 *   copy+loop   memcpy of data into out, then the row loop (row i+8 prefetched):
 *               what the package does
 *   blocked-B   the indices counted and placed by block of B KiB of out (a
 *               stable counting sort of the positions), then block by block:
 *               the block copied from data, its rows applied in C order while
 *               it is in cache (the update row 8 ahead prefetched)
 *   copy        the memcpy alone
 * The result of every variant is checked equal to copy+loop's, bit for bit.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

static void
copy_loop(float *restrict o, const float *restrict d, const int64_t *restrict ix,
          const float *restrict u, int64_t n, int64_t size, int64_t f)
{
    memcpy(o, d, (size_t)(size * f) * 4);
    for (int64_t i = 0; i < n; i++) {
        if (i + 8 < n) {
            const char *p = (const char *)(o + clamp(ix[i + 8], size) * f);
            for (int64_t b = 0; b < f * 4; b += 64) __builtin_prefetch(p + b, 1);
        }
        float *r = o + clamp(ix[i], size) * f;
        const float *s = u + i * f;
        for (int64_t k = 0; k < f; k++) r[k] += s[k];
    }
}

static void
blocked(float *restrict o, const float *restrict d, const int64_t *restrict ix,
        const float *restrict u, int64_t n, int64_t size, int64_t f, int64_t block_bytes,
        int32_t *pos, int64_t *count)
{
    int64_t rows_per = block_bytes / (f * 4), nb = (size + rows_per - 1) / rows_per;
    memset(count, 0, sizeof *count * (size_t)(nb + 1));
    for (int64_t i = 0; i < n; i++) count[clamp(ix[i], size) / rows_per + 1]++;
    for (int64_t b = 0; b < nb; b++) count[b + 1] += count[b];
    for (int64_t i = 0; i < n; i++) pos[count[clamp(ix[i], size) / rows_per]++] = (int32_t)i;
    /* count[b] is now the end of block b's positions, count[b - 1] its start */
    for (int64_t b = 0, start = 0; b < nb; b++) {
        int64_t lo = b * rows_per, hi = lo + rows_per < size ? lo + rows_per : size;
        memcpy(o + lo * f, d + lo * f, (size_t)((hi - lo) * f) * 4);
        for (int64_t q = start; q < count[b]; q++) {
            if (q + 8 < count[b]) {
                const char *p = (const char *)(u + pos[q + 8] * f);
                for (int64_t c = 0; c < f * 4; c += 64) __builtin_prefetch(p + c, 0);
            }
            int64_t i = pos[q];
            float *r = o + clamp(ix[i], size) * f;
            const float *s = u + i * f;
            for (int64_t k = 0; k < f; k++) r[k] += s[k];
        }
        start = count[b];
    }
}

int
main(int argc, char **argv)
{
    int64_t elems = argc > 1 ? atoll(argv[1]) : 4000000;
    int64_t size = argc > 2 ? atoll(argv[2]) : 100000;
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    static const int64_t fs[3] = {16, 32, 64}, blocks[3] = {256, 512, 1024};
    enum { NV = 5 };
    static const char *const names[NV] = {"copy+loop", "blocked-256", "blocked-512",
                                          "blocked-1024", "copy"};
    double res[NV][3], *t = malloc(sizeof *t * (size_t)(reps * NV));
    printf("%lld float32 of updates into %lld rows, out of place, one thread, median of %d "
           "(variants interleaved), ms a call\n", (long long)elems, (long long)size, reps);
    for (int c = 0; c < 3; c++) {
        int64_t f = fs[c], n = elems / f;
        int64_t *ix = malloc(sizeof *ix * (size_t)n), *count = malloc(sizeof *count * (size_t)(size + 2));
        int32_t *pos = malloc(sizeof *pos * (size_t)n);
        float *u = malloc(sizeof *u * (size_t)(n * f)), *d = malloc(sizeof *d * (size_t)(size * f));
        float *o = malloc(sizeof *o * (size_t)(size * f)), *ref = malloc(sizeof *ref * (size_t)(size * f));
        uint64_t s = 88172645463325252ull;
        for (int64_t i = 0; i < n; i++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            ix[i] = (int64_t)(s % (uint64_t)size);
        }
        for (int64_t i = 0; i < n * f; i++) u[i] = (float)(i & 1023) * 1e-3f;
        for (int64_t i = 0; i < size * f; i++) d[i] = (float)(i % 977) * 1e-2f;
        copy_loop(ref, d, ix, u, n, size, f);
        for (int v = 1; v < 4; v++) {
            blocked(o, d, ix, u, n, size, f, blocks[v - 1] << 10, pos, count);
            if (memcmp(o, ref, (size_t)(size * f) * 4) != 0) printf("  MISMATCH %s F=%lld\n", names[v], (long long)f);
        }
        for (int r = 0; r < reps; r++) {
            for (int v = 0; v < NV; v++) {
                double t0 = now();
                if (v == 0) copy_loop(o, d, ix, u, n, size, f);
                else if (v < 4) blocked(o, d, ix, u, n, size, f, blocks[v - 1] << 10, pos, count);
                else memcpy(o, d, (size_t)(size * f) * 4);
                t[v * reps + r] = now() - t0;
            }
        }
        for (int v = 0; v < NV; v++) {
            qsort(t + v * reps, (size_t)reps, sizeof *t, cmp_double);
            res[v][c] = t[v * reps + reps / 2] * 1e3;
        }
        free(ix); free(count); free(pos); free(u); free(d); free(o); free(ref);
    }
    printf("  %-13s", "F");
    for (int c = 0; c < 3; c++) printf(" %8lld", (long long)fs[c]);
    printf("\n");
    for (int v = 0; v < NV; v++) {
        printf("  %-13s", names[v]);
        for (int c = 0; c < 3; c++) printf(" %8.3f", res[v][c]);
        printf("\n");
    }
    free(t);
    return 0;
}

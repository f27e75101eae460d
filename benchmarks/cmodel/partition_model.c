/*
 * benchmarks/cmodel/partition_model.c: a bare C model of an exact scatter-add on
 * two threads into an out in cache, where splitting the updates between threads
 * cannot keep each element's C order and splitting out by owner makes each thread
 * read every index.  The model: a stable partition by destination half, then each
 * thread applies its own half of out.  Not part of the package: run.py --model
 * partition compiles and runs it (gcc -O3 -march=native -pthread).
 *
 * Usage: partition_model N_UPDATES OUT_SIZE REPEATS
 * For each variant, the median over REPEATS runs, in ns per update, of N_UPDATES
 * random int64 indices (a negative one from the end) into OUT_SIZE floats; each
 * repeat runs every variant once, in turn:
 *   loop      o[ix[i]] += u[i] on one thread (numba's loop; the kernel's costs
 *             the same, docs/performance.md)
 *   owned2    two threads, each reading every index and applying those into its
 *             own half of out (the owned split without compaction)
 *   part2     two threads: thread t partitions the updates of its half of the input
 *             by destination half into two buckets of (local index, value) pairs,
 *             branch-free; then, after a barrier, thread b applies bucket b of
 *             input half 0, then of input half 1, into its half of out: every
 *             element gets its updates in C order, so the result is bit-identical
 *             to loop's.  The buckets take 8 bytes an update (16 MB for 1e6 in
 *             this model, sized for the worst case).
 * The threads are started once; a repeat releases them through a barrier, as a
 * pool does.
 */
#define _POSIX_C_SOURCE 200112L
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct { int32_t j; float v; } pair;

static int64_t N, SIZE, HALF;
static const int64_t *IX;
static const float *U;
static float *O;
static pair *BUCKET[2][2];          /* [input half][out half] */
static int64_t COUNT[2][2];
static int VARIANT, STOP;
static pthread_barrier_t START, MID, END;

static void
partition(int t)
{
    int64_t lo = t * (N / 2), hi = t ? N : N / 2, c0 = 0, c1 = 0;
    pair *b0 = BUCKET[t][0], *b1 = BUCKET[t][1];
    for (int64_t i = lo; i < hi; i++) {
        int64_t j = IX[i];
        j += j < 0 ? SIZE : 0;
        int b = j >= HALF;
        pair p = {(int32_t)(j - (b ? HALF : 0)), U[i]};
        /* both stores, one kept: no branch on the bucket */
        b0[c0] = p;
        b1[c1] = p;
        c0 += !b;
        c1 += b;
    }
    COUNT[t][0] = c0;
    COUNT[t][1] = c1;
}

static void
apply(int b)
{
    float *o = O + (b ? HALF : 0);
    for (int t = 0; t < 2; t++) {
        const pair *p = BUCKET[t][b];
        for (int64_t k = 0, n = COUNT[t][b]; k < n; k++) o[p[k].j] += p[k].v;
    }
}

static void
owned(int b)
{
    int64_t lo = b ? HALF : 0, hi = b ? SIZE : HALF;
    for (int64_t i = 0; i < N; i++) {
        int64_t j = IX[i];
        j += j < 0 ? SIZE : 0;
        if (j >= lo && j < hi) O[j] += U[i];
    }
}

static void
work(int t)
{
    if (VARIANT == 1) {
        owned(t);
    }
    else {
        partition(t);
        pthread_barrier_wait(&MID);
        apply(t);
    }
}

static void *
worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_barrier_wait(&START);
        if (STOP) return NULL;
        work(1);
        pthread_barrier_wait(&END);
    }
}

__attribute__((noinline)) static void
loop64(float *restrict o, const int64_t *restrict ix, const float *restrict u, int64_t n,
       int64_t size)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = ix[i];
        j += j < 0 ? size : 0;
        o[j] = o[j] + u[i];
    }
}

int
main(int argc, char **argv)
{
    if (argc < 4) return 2;
    N = atoll(argv[1]);
    SIZE = atoll(argv[2]);
    HALF = SIZE / 2;
    int reps = atoi(argv[3]);
    int64_t *ix = malloc(N * sizeof *ix);
    float *u = malloc(N * sizeof *u), *o = calloc(SIZE, sizeof *o), *ref = calloc(SIZE, sizeof *o);
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 2; b++) BUCKET[t][b] = malloc((N / 2 + 1) * sizeof(pair));
    srand(1);
    for (int64_t i = 0; i < N; i++) {
        ix[i] = (int64_t)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % (uint64_t)SIZE);
        if (i % 3 == 0) ix[i] -= SIZE;                      /* some negative */
        u[i] = (float)(rand() % 1000) * 0.001f + 0.1f;
    }
    IX = ix;
    U = u;
    pthread_t th;
    pthread_barrier_init(&START, NULL, 2);
    pthread_barrier_init(&MID, NULL, 2);
    pthread_barrier_init(&END, NULL, 2);
    pthread_create(&th, NULL, worker, NULL);
    const char *names[3] = {"loop", "owned2", "part2"};
    double *t = malloc(3 * reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        for (int v = 0; v < 3; v++) {
            memset(o, 0, SIZE * sizeof *o);
            double t0 = now();
            if (v == 0) {
                loop64(o, ix, u, N, SIZE);
            }
            else {
                VARIANT = v;
                O = o;
                pthread_barrier_wait(&START);
                work(0);
                pthread_barrier_wait(&END);
            }
            t[v * reps + r] = now() - t0;
            if (v == 0) memcpy(ref, o, SIZE * sizeof *o);
            else if (memcmp(ref, o, SIZE * sizeof *o) != 0) {
                fprintf(stderr, "%s: not bit-identical to loop\n", names[v]);
                return 1;
            }
        }
    }
    STOP = 1;
    pthread_barrier_wait(&START);
    pthread_join(th, NULL);
    printf("%lld updates into %lld:", (long long)N, (long long)SIZE);
    for (int v = 0; v < 3; v++) {
        qsort(t + v * reps, reps, sizeof *t, cmp_double);
        printf("  %s %.3f", names[v], t[v * reps + reps / 2] * 1e9 / (double)N);
    }
    printf("  ns/update\n");
    return 0;
}

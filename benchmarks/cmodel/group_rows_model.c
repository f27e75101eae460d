/*
 * benchmarks/cmodel/group_rows_model.c: a bare C model of the group sum of
 * rows (message passing: group_reduce of 1e6 x 64 float32 values by random
 * ids), one member's row added into its group's row of cells, against the same
 * loop with the cells of the member AHEAD members on prefetched, and on two
 * threads that split each row's columns (each thread every member, its band of
 * the row: the bits of one thread).  Not part of the package:
 *
 *     gcc -O3 -pthread -o /tmp/grm benchmarks/cmodel/group_rows_model.c
 *     /tmp/grm GROUPS AHEAD THREADS [SPLIT]
 *     for s in 1000 100000; do /tmp/grm $s 0 1; /tmp/grm $s 8 1; /tmp/grm $s 8 2 32; /tmp/grm $s 8 2 16; done
 *
 * 1e6 members of 64 float32, int64 ids in [0, GROUPS), all arrays on huge
 * pages; AHEAD 0: no prefetch; THREADS 2: thread 0 takes columns [0, SPLIT),
 * thread 1 [SPLIT, 64).  Prints the best of 7 calls, the cells zeroed before
 * each.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "model.h"
#include "huge.h"

#include <pthread.h>
#include <stdio.h>

#define F 64
static const long N = 1000000;
static float *v, *r;
static int64_t *g;
static int ahead;

static void
run(long i0, long i1)
{
    long n, i, b;
    for (n = 0; n < N; n++) {
        float *rr = r + g[n] * F;
        const float *x = v + n * F;
        if (ahead && n + ahead < N) {
            const char *ra = (const char *)(r + g[n + ahead] * F);
            for (b = i0 * 4; b < i1 * 4; b += 64) __builtin_prefetch(ra + b, 1);
        }
        for (i = i0; i < i1; i++) rr[i] += x[i];
    }
}

typedef struct { long a, b; } band;

static void *
thread(void *p)
{
    band *s = (band *)p;
    run(s->a, s->b);
    return NULL;
}

int
main(int argc, char **argv)
{
    long size, split, n, i;
    int threads, rep;
    double best = 1e9;
    if (argc < 4) return 2;
    size = atol(argv[1]);
    ahead = atoi(argv[2]);
    threads = atoi(argv[3]);
    split = argc > 4 ? atol(argv[4]) : F / 2;
    v = big((size_t)N * F * 4);
    r = big((size_t)size * F * 4);
    g = big((size_t)N * 8);
    srand(1);
    for (n = 0; n < N; n++) {
        g[n] = ((int64_t)rand() * RAND_MAX + rand()) % size;
        for (i = 0; i < F; i++) v[n * F + i] = (float)i;
    }
    for (rep = 0; rep < 7; rep++) {
        double t;
        memset(r, 0, (size_t)size * F * 4);
        t = now();
        if (threads == 1) run(0, F);
        else {
            pthread_t other;
            band a = {0, split};
            pthread_create(&other, NULL, thread, &a);
            run(split, F);
            pthread_join(other, NULL);
        }
        t = now() - t;
        if (t < best) best = t;
    }
    printf("groups=%ld ahead=%d threads=%d split=%ld: %.1f ms\n", size, ahead, threads, split,
           best * 1e3);
    return 0;
}

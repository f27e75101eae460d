/*
 * benchmarks/cmodel/group_partition_model.c: a bare C model of an exact float64
 * group sum (group_reduce(v, g, "sum")) of unsorted ids on two threads, against
 * the one-thread loop.  Each group must add its members in member order, so the
 * members cannot be split between threads by position; the model splits them by
 * group block instead, with a stable partition.  Not part of the package:
 *
 *     gcc -O3 -march=native -pthread -o /tmp/gpm benchmarks/cmodel/group_partition_model.c
 *     /tmp/gpm N_MEMBERS SIZE REPEATS [ROUND [COUNTED]]
 *     /tmp/gpm 1000000 100000 15; /tmp/gpm 1000000 1000 15
 *
 * (or python benchmarks/cmodel/run.py --model group_partition --repeat 15 100000 1000).
 * N_MEMBERS random int64 ids in [0, SIZE), float64 values; the cells allocated
 * and zeroed each call, as a result array is.  Each repeat runs every variant
 * once, in turn; printed, in ns a member: the median over REPEATS of each
 * variant's wall time, the ratio loop / part2 per repeat (median, and in how
 * many repeats part2 was the faster), and the medians of each thread's CPU time
 * (on a machine that other work loads, the wall time of two threads mostly
 * says whether both got a CPU; the larger CPU time of part2's two threads is
 * about what its wall time would be if both had, their waits at the barrier
 * included, as the waits spin):
 *   loop    for i: r[g[i]] += v[i] on one thread
 *   part2   two threads and two blocks of groups, [0, SIZE/2) and [SIZE/2, SIZE),
 *           the members taken ROUND at a time (default 16384): in a round each
 *           thread partitions its half of the round's members by block, stably
 *           and branch-free, into its own buffer of (local id int32, value) --
 *           block 0 from the front and block 1 from the back (read backwards,
 *           which is member order), or with COUNTED 1 a count per block first and
 *           each block at its offset -- and then thread b adds block b's members
 *           of both halves, the first half's first, into its block's cells: each
 *           group gets its members in member order, so the cells are
 *           bit-identical to loop's (checked each repeat).  Two buffers
 *           alternate, so that a round's partition runs beside the previous
 *           round's adds with one barrier a round (as one pool job a round whose
 *           tasks are independent); the scratch is 2 x ROUND x 12 bytes whatever
 *           N_MEMBERS is.
 *   part1   part2's work on the calling thread alone, both shares of a round one
 *           after the other: what the partition costs in all.
 *   owned2  two threads and the same two blocks, no scratch and no barrier: thread
 *           b reads every member and adds those of block b, a piece of 2048 at a
 *           time (their positions in the piece first, branch-free, then their
 *           adds); member order holds for the same reason.
 * The worker thread is started once and sleeps between calls (on a semaphore:
 * the other variants run in between, longer than the pool's workers look for a
 * next job before they sleep), so part2 and owned2 pay for a wake-up each call.
 */
#define _POSIX_C_SOURCE 200112L
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int64_t N, SIZE, HALF, ROUND;
static int COUNTED;
static volatile int OWNED;   /* the worker's next call is owned2's */
static const int64_t *G;
static const double *V;
static double *R;
/* [buffer][thread]: a thread's partition of its half of a round */
static int32_t *LID[2][2];
static double *VAL[2][2];
static int64_t OFF[2][2][3];     /* [buffer][thread][block]: the block's start, end */
static volatile int STOP;
static sem_t GO;                 /* posted by the caller for each call */
static double WORKER_CPU;        /* the worker's CPU time in its last call */
static volatile int64_t CALLS;   /* calls the worker has finished */

/* a barrier of two threads, spinning, yielding the CPU every 16 looks (as the
 * pool's look does: on a busy machine the other thread may need this CPU) */
static volatile int64_t ARRIVED;

static void
barrier(int64_t *phase)
{
    int64_t want = 2 * (++*phase);
    __atomic_add_fetch(&ARRIVED, 1, __ATOMIC_ACQ_REL);
    for (int i = 1; __atomic_load_n(&ARRIVED, __ATOMIC_ACQUIRE) < want; i++) {
        __builtin_ia32_pause();
        if (i % 16 == 0) sched_yield();
    }
}

/* members [lo, hi) into buffer k of thread t, each block in member order: with
 * COUNTED a count per block first, block 0 then block 1 at its offset; else
 * block 0 from the front and block 1 from the back, read backwards */
static void
partition(int k, int t, int64_t lo, int64_t hi)
{
    int64_t c1 = 0, p0 = 0, p1;
    int32_t *lid = LID[k][t];
    double *val = VAL[k][t];
    if (COUNTED) {
        for (int64_t i = lo; i < hi; i++) c1 += G[i] >= HALF;
        p1 = hi - lo - c1;
        /* branch-free: the block of a random id is a coin toss */
        for (int64_t i = lo; i < hi; i++) {
            int64_t g = G[i], m = -(int64_t)(g >= HALF);
            int64_t at = (p1 & m) | (p0 & ~m);
            lid[at] = (int32_t)(g - (HALF & m));
            val[at] = V[i];
            p0 += 1 + m;
            p1 -= m;
        }
    }
    else {
        p1 = hi - lo - 1;
        for (int64_t i = lo; i < hi; i++) {
            int64_t g = G[i], m = -(int64_t)(g >= HALF);
            int64_t at = (p1 & m) | (p0 & ~m);
            lid[at] = (int32_t)(g - (HALF & m));
            val[at] = V[i];
            p0 += 1 + m;
            p1 += m;
        }
    }
    OFF[k][t][0] = 0;
    OFF[k][t][1] = p0;
    OFF[k][t][2] = hi - lo;
}

/* block b of buffer k: the first half's members, then the second's */
static void
add_block(int k, int b)
{
    double *r = R + (b ? HALF : 0);
    for (int t = 0; t < 2; t++) {
        const int32_t *lid = LID[k][t];
        const double *val = VAL[k][t];
        int64_t m = OFF[k][t][b], e = OFF[k][t][b + 1];
        if (COUNTED || b == 0) {
            for (; m < e; m++) r[lid[m]] += val[m];
        }
        else {
            for (e--; e >= m; e--) r[lid[e]] += val[e];
        }
    }
}

/* owned2: thread b reads every member and adds those of block b, a piece of
 * 2048 at a time: their positions first (branch-free), then their adds */
static void
owned(int b, int64_t *phase)
{
    int32_t pos[2048];
    const int64_t lo = b ? HALF : 0, span = b ? SIZE - HALF : HALF;
    double *r = R + lo;
    for (int64_t c = 0; c < N; c += 2048) {
        int64_t e = c + 2048 < N ? c + 2048 : N, k = 0;
        for (int64_t i = c; i < e; i++) {
            pos[k] = (int32_t)(i - c);
            k += (uint64_t)(G[i] - lo) < (uint64_t)span;
        }
        for (int64_t j = 0; j < k; j++) r[G[c + pos[j]] - lo] += V[c + pos[j]];
    }
    barrier(phase);
}

/* thread t's share of a call (t < 0: both shares, one after the other, no
 * barrier): round j's partition beside round j-1's adds */
static void
work(int t, int64_t *phase)
{
    int64_t rounds = (N + ROUND - 1) / ROUND;
    for (int64_t j = 0; j <= rounds; j++) {
        for (int u = t < 0 ? 0 : t; u <= (t < 0 ? 1 : t); u++) {
            if (j < rounds) {
                int64_t lo = j * ROUND, hi = lo + ROUND < N ? lo + ROUND : N, mid = lo + (hi - lo) / 2;
                partition((int)(j & 1), u, u ? mid : lo, u ? hi : mid);
            }
            if (j > 0) add_block((int)((j - 1) & 1), u);
        }
        if (t >= 0) barrier(phase);
    }
}

static void *
worker(void *arg)
{
    int64_t phase = 0;
    (void)arg;
    for (;;) {
        sem_wait(&GO);
        if (STOP) return NULL;
        double c0 = cpu_now();
        if (OWNED) owned(1, &phase);
        else work(1, &phase);
        WORKER_CPU = cpu_now() - c0;
        __atomic_add_fetch(&CALLS, 1, __ATOMIC_RELEASE);
    }
}

__attribute__((noinline)) static void
loop(double *restrict r, const int64_t *restrict g, const double *restrict v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) r[g[i]] += v[i];
}

int
main(int argc, char **argv)
{
    if (argc < 4) return 2;
    N = atoll(argv[1]);
    SIZE = atoll(argv[2]);
    HALF = SIZE / 2;
    int reps = atoi(argv[3]);
    ROUND = argc > 4 ? atoll(argv[4]) : 16384;
    COUNTED = argc > 5 ? atoi(argv[5]) : 0;
    int64_t *g = malloc(N * sizeof *g), phase = 0;
    double *v = malloc(N * sizeof *v), *ref = malloc(SIZE * sizeof *ref);
    for (int k = 0; k < 2; k++)
        for (int t = 0; t < 2; t++) {
            LID[k][t] = malloc((ROUND / 2 + 1) * sizeof(int32_t));
            VAL[k][t] = malloc((ROUND / 2 + 1) * sizeof(double));
        }
    srand(1);
    for (int64_t i = 0; i < N; i++) {
        g[i] = (int64_t)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % (uint64_t)SIZE);
        v[i] = (double)rand() / RAND_MAX - 0.3;
    }
    G = g;
    V = v;
    pthread_t th;
    sem_init(&GO, 0, 0);
    pthread_create(&th, NULL, worker, NULL);
    const char *names[4] = {"loop", "part2", "part1", "owned2"};
    /* [variant][repeat] (wall; the calling thread's CPU time), then [4][repeat]
     * part2's worker's CPU time and the ratio loop / part2, [5][repeat] owned2's
     * worker's CPU time */
    double *t = malloc(6 * reps * sizeof *t), *c = malloc(6 * reps * sizeof *c);
    int faster = 0;
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < 4; k++) {
            double t0 = now(), c0 = cpu_now();
            double *cells = calloc(SIZE, sizeof *cells);
            if (k == 0) {
                loop(cells, g, v, N);
            }
            else if (k == 1) {
                R = cells;
                sem_post(&GO);
                work(0, &phase);
            }
            else if (k == 2) {
                R = cells;
                work(-1, &phase);
            }
            else {
                R = cells;
                OWNED = 1;
                sem_post(&GO);
                owned(0, &phase);
            }
            t[k * reps + r] = now() - t0;
            c[k * reps + r] = cpu_now() - c0;
            if (k == 1 || k == 3) {
                while (__atomic_load_n(&CALLS, __ATOMIC_ACQUIRE) < 2 * r + (k == 3) + 1) sched_yield();
                c[(k == 1 ? 4 : 5) * reps + r] = WORKER_CPU;
                OWNED = 0;
            }
            if (k == 0) memcpy(ref, cells, SIZE * sizeof *ref);
            else if (memcmp(ref, cells, SIZE * sizeof *ref) != 0) {
                fprintf(stderr, "%s: not bit-identical to loop\n", names[k]);
                return 1;
            }
            free(cells);
        }
        t[4 * reps + r] = t[r] / t[reps + r];
        faster += t[4 * reps + r] > 1;
    }
    STOP = 1;
    sem_post(&GO);
    pthread_join(th, NULL);
    printf("%lld members into %lld, round %lld%s, ns a member\n  wall:", (long long)N,
           (long long)SIZE, (long long)ROUND, COUNTED ? ", counted" : "");
    for (int k = 0; k < 6; k++) {
        qsort(t + k * reps, reps, sizeof *t, cmp_double);
        qsort(c + k * reps, reps, sizeof *c, cmp_double);
        if (k < 4) printf("  %s %.3f", names[k], t[k * reps + reps / 2] * 1e9 / (double)N);
    }
    printf(";  loop/part2 %.2f (part2 faster in %d of %d)\n", t[4 * reps + reps / 2], faster, reps);
    printf("  CPU time:  loop %.3f  part2 caller %.3f worker %.3f  part1 %.3f  owned2 caller %.3f"
           " worker %.3f\n", c[reps / 2] * 1e9 / (double)N, c[reps + reps / 2] * 1e9 / (double)N,
           c[4 * reps + reps / 2] * 1e9 / (double)N, c[2 * reps + reps / 2] * 1e9 / (double)N,
           c[3 * reps + reps / 2] * 1e9 / (double)N, c[5 * reps + reps / 2] * 1e9 / (double)N);
    return 0;
}

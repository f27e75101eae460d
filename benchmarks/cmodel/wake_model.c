/*
 * benchmarks/cmodel/wake_model.c: a bare C model of the pool's hand-off
 * (base/threads.c): how long a job of nothing takes from the caller's post to
 * its worker's "done", when the worker sleeps on a condition variable between
 * jobs and when it first looks for the next job for a while.  Not part of the
 * package: run.py --model wake compiles and runs it.
 *
 * Usage: wake_model JOBS GAP_US REPEATS
 * The caller posts JOBS jobs one after another, GAP_US microseconds of its own
 * work apart (a busy wait: the Python between two calls), to one worker, and
 * waits for each; it prints the median and the 90th percentile of the round
 * trips, for each way of waiting:
 *   sleep    the worker sleeps on the condition variable as soon as its task is
 *            done, the caller as soon as it has posted (the pool before)
 *   look     each first looks for up to LOOK_NS (200 us), pausing and yielding
 *            the CPU each round of 16 loads, then sleeps (the pool now)
 * REPEATS is not used (each line is already a median of JOBS).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "model.h"

#define LOOK_NS 200000.0

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static long job, finished;
static double look_ns;

/* look up to look_ns while *word equals was */
static void
look_a_while(long *word, long was)
{
    double until = now() + look_ns * 1e-9;
    if (look_ns <= 0) return;
    for (;;) {
        for (int i = 0; i < 16; i++) {
            if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != was) return;
            __builtin_ia32_pause();
        }
        if (now() >= until) return;
        sched_yield();
    }
}

static void *
worker(void *arg)
{
    long seen = 0;
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (job == seen) {
            pthread_mutex_unlock(&mu);
            look_a_while(&job, seen);
            pthread_mutex_lock(&mu);
            if (job == seen) pthread_cond_wait(&wake, &mu);
        }
        seen = job;
        /* the task: nothing */
        __atomic_store_n(&finished, seen, __ATOMIC_RELEASE);
        pthread_cond_signal(&done_cv);
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    long jobs = argc > 1 ? atol(argv[1]) : 2001;
    double gap = argc > 2 ? atof(argv[2]) * 1e-6 : 0;
    double *rt = malloc(sizeof *rt * (size_t)jobs);
    pthread_t tid;
    static const char *names[2] = {"sleep", "look"};
    if (jobs < 1 || rt == NULL) return 1;
    pthread_create(&tid, NULL, worker, NULL);
    for (int way = 0; way < 2; way++) {
        look_ns = way == 0 ? 0 : LOOK_NS;
        for (long r = 0; r < jobs; r++) {
            double g0 = now(), t0;
            long mine;
            while (now() - g0 < gap) {
            }
            t0 = now();
            pthread_mutex_lock(&mu);
            mine = ++job;
            pthread_cond_signal(&wake);
            pthread_mutex_unlock(&mu);
            look_a_while(&finished, mine - 1);
            pthread_mutex_lock(&mu);
            while (finished != mine) pthread_cond_wait(&done_cv, &mu);
            pthread_mutex_unlock(&mu);
            rt[r] = now() - t0;
        }
        qsort(rt, (size_t)jobs, sizeof *rt, cmp_double);
        printf("gap %8.1f us  %-5s  round trip median %8.2f us  p90 %8.2f us\n", gap * 1e6,
               names[way], rt[jobs / 2] * 1e6, rt[jobs * 9 / 10] * 1e6);
        fflush(stdout);
    }
    return 0;
}

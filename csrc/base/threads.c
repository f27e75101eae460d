/*
 * base/threads.c: run a set of independent tasks on a pool of worker threads
 * that persists between calls.
 *
 * A call is split by output ownership (walk/split.c): every output element
 * belongs to one task, which applies its updates in the same order as one
 * thread would, so the result is bit-identical whoever runs which task.  The
 * tasks of a call are claimed one at a time from a shared counter by the
 * calling thread and by the workers: a worker that is descheduled (a busy
 * machine) or late to wake holds nobody back, since the caller takes the
 * tasks nobody took.  The workers start at the first call that needs them and
 * wait between calls; a child made by fork() has none, and starts its own.
 * One call uses the pool at a time: a second calling thread that finds it busy
 * runs its tasks itself, or (so_run_tasks_report) hands them back to run its
 * call another way: the workers are shared by all callers, never multiplied.
 * so_run_tasks_report remembers, per kind of job, whether its workers came
 * late (the caller did every task, waited for the others, or was itself off
 * its CPU: a busy machine), and runs the next jobs of a late kind on their
 * caller alone for a while (the cost model, walk/split.c).
 *
 * A long call may be stopped (so_poll, base.h): the calling thread asks its
 * check between pieces of its own tasks and, once they are done, while it
 * waits for the workers' ones.
 */
#include "base/base.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

/* How long a worker that finished its tasks keeps looking for the next job,
 * and a caller done with its own tasks for its workers' last ones, before each
 * sleeps on its condition variable.  On a virtual machine a sleeping thread can
 * be slow to wake, far slower than one still looking (docs/design.md, "Waking
 * the pool's workers, and when a job is late"; the C model
 * benchmarks/cmodel/wake_model.c).  The look yields the CPU each round, so a
 * caller that shares its CPU with a looking worker (a busy machine) is not
 * held back by it.  Only workers the last job wanted look: a job wants no
 * more than the thread count, which is capped at the CPUs this process may use
 * (py/settings.c), so looking workers never outnumber the CPUs. */
#ifndef SO_SPIN_NS
#define SO_SPIN_NS ((npy_int64)200000)
#endif

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done_cv;
    int nworkers;                 /* started, waiting between jobs */
    int busy;                     /* a call is using the pool */
    unsigned long job;            /* bumped for each call's tasks */
    int want;                     /* workers asked to help with this job */
    /* the job */
    void *(*fn)(void *);
    char *tasks;
    size_t size;
    int n, next, finished, ran;
    int caller_ran;               /* tasks the calling thread ran */
} so_pool;

static so_pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                       PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* the most tasks one job of this calling thread was split into since it last
 * asked (what the split chose, whoever ran them) */
static _Thread_local int threads_asked;

static npy_int64
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (npy_int64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
so_poll_init(so_poll *poll, int (*check)(void *), void *ctx)
{
    poll->check = check;
    poll->ctx = ctx;
    poll->caller = pthread_self();
    poll->stop = 0;
    poll->next_ns = now_ns() + SO_POLL_INTERVAL_NS;
}

/* The slow half of so_stopped: on the calling thread, when its time has come,
 * run the check. */
static int
poll_check(so_poll *poll)
{
    npy_int64 t;
    if (poll->check == NULL || !pthread_equal(pthread_self(), poll->caller)) return 0;
    t = now_ns();
    if (t < poll->next_ns) return 0;
    poll->next_ns = t + SO_POLL_INTERVAL_NS;
    if (!poll->check(poll->ctx)) return 0;
    __atomic_store_n(&poll->stop, 1, __ATOMIC_RELAXED);
    return 1;
}

int
so_stopped(so_poll *poll)
{
    if (poll == NULL) return 0;
    if (__atomic_load_n(&poll->stop, __ATOMIC_RELAXED)) return 1;
    return poll_check(poll);
}

/* In a child made by fork(): the parent's workers do not exist here, and the
 * lock may have been held by one of them.  The child starts afresh. */
static void
pool_after_fork_in_child(void)
{
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done_cv, NULL);
    pool.nworkers = 0;
    pool.busy = 0;
    pool.n = pool.next = pool.finished = 0;
}

static void
pool_init(void)
{
    (void)pthread_atfork(NULL, NULL, pool_after_fork_in_child);
}

/* Claim and run tasks of the current job until none is left; how many ran.
 * Called with pool.mu held; returns with it held. */
static int
run_claimed(void)
{
    int ran = 0;
    while (pool.next < pool.n) {
        int t = pool.next++;
        void *(*fn)(void *) = pool.fn;
        char *task = pool.tasks + (size_t)t * pool.size;
        pthread_mutex_unlock(&pool.mu);
        fn(task);
        pthread_mutex_lock(&pool.mu);
        __atomic_store_n(&pool.finished, pool.finished + 1, __ATOMIC_RELEASE);
        ran++;
    }
    if (pool.finished == pool.n) pthread_cond_broadcast(&pool.done_cv);
    return ran;
}

#if defined(__x86_64__) || defined(__i386__)
#define SO_PAUSE() __builtin_ia32_pause()
#else
#define SO_PAUSE() ((void)0)
#endif

/* Look (pool.mu not held) for up to SO_SPIN_NS: a worker until the job count
 * moves past seen (job non-NULL), the caller until n tasks have finished; the
 * waiter then takes pool.mu and sleeps if it must. */
static void
look_a_while(const unsigned long *job, unsigned long seen, int n)
{
    npy_int64 until = now_ns() + SO_SPIN_NS;
    int i;
    if (SO_SPIN_NS <= 0) return;
    for (;;) {
        for (i = 0; i < 16; i++) {
            if (job != NULL ? __atomic_load_n(job, __ATOMIC_ACQUIRE) != seen
                            : __atomic_load_n(&pool.finished, __ATOMIC_ACQUIRE) >= n) {
                return;
            }
            SO_PAUSE();
        }
        if (now_ns() >= until) return;
        sched_yield();
    }
}

static void *
worker_main(void *arg)
{
    int id = (int)(npy_intp)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        /* a job with tasks left that asks for this worker */
        while (pool.job == seen || id >= pool.want || pool.next >= pool.n) {
            seen = pool.job;
            if (id < pool.want) {
                pthread_mutex_unlock(&pool.mu);
                look_a_while(&pool.job, seen, 0);
                pthread_mutex_lock(&pool.mu);
            }
            if (pool.job == seen) pthread_cond_wait(&pool.wake, &pool.mu);
        }
        seen = pool.job;
        if (run_claimed() > 0) pool.ran++;
    }
    return NULL;
}

/* Make sure at least want workers exist (with pool.mu held); how many do. */
static int
start_workers(int want)
{
    pthread_attr_t attr;
    if (want > SO_POOL_MAX) want = SO_POOL_MAX;
    if (pool.nworkers >= want) return pool.nworkers;
    if (pthread_attr_init(&attr) != 0) return pool.nworkers;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (pool.nworkers < want) {
        pthread_t tid;
        if (pthread_create(&tid, &attr, worker_main, (void *)(npy_intp)pool.nworkers) != 0) break;
        pool.nworkers++;
    }
    pthread_attr_destroy(&attr);
    return pool.nworkers;
}

int
so_run_tasks(void *(*fn)(void *), void *tasks, size_t size, int n)
{
    return so_run_tasks_polled(fn, tasks, size, n, NULL);
}

/* Wait (pool.mu held) until every task of the job has finished; with a poll,
 * wake up every interval to ask it. */
static void
wait_for_job(so_poll *poll)
{
    if (pool.finished < pool.n) {
        int n = pool.n;
        pthread_mutex_unlock(&pool.mu);
        look_a_while(NULL, 0, n);
        pthread_mutex_lock(&pool.mu);
    }
    while (pool.finished < pool.n) {
        struct timespec until;
        if (poll == NULL || poll->check == NULL || so_stopped(poll)) {
            pthread_cond_wait(&pool.done_cv, &pool.mu);
            continue;
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += SO_POLL_INTERVAL_NS;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        (void)pthread_cond_timedwait(&pool.done_cv, &pool.mu, &until);
        if (pool.finished < pool.n) {
            /* the check may take the GIL: not with the pool's lock held */
            pthread_mutex_unlock(&pool.mu);
            (void)so_stopped(poll);
            pthread_mutex_lock(&pool.mu);
        }
    }
}

static int
run_alone(void *(*fn)(void *), char *base, size_t size, int n)
{
    int t;
    for (t = 0; t < n; t++) fn(base + (size_t)t * size);
    return 1;
}

int
so_run_tasks_polled(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll)
{
    return so_run_tasks_report(fn, tasks, size, n, poll, -1);
}

/* What the pool remembers of each kind of job: whether its workers came late,
 * and how many of its next jobs run on their caller alone.  Read and written
 * with relaxed atomics: two callers racing on a kind lose a verdict, nothing
 * else. */
typedef struct {
    int skip, backoff;
} so_lateness;

static so_lateness lateness[SO_JOB_KINDS];

/* What happened to each kind's jobs, counted since the module loaded (read by
 * _core.job_tally, for the benchmark and the tests): see so_job_tally. */
static long tally[SO_JOB_KINDS][SO_TALLY_FIELDS];

static void
count(int kind, int field)
{
    if (kind < 0 || kind >= SO_JOB_KINDS) return;
    __atomic_fetch_add(&tally[kind][field], 1, __ATOMIC_RELAXED);
}

int
so_job_tally(int kind, long out[SO_TALLY_FIELDS])
{
    int f, any = 0;
    for (f = 0; f < SO_TALLY_FIELDS; f++) {
        out[f] = __atomic_load_n(&tally[kind][f], __ATOMIC_RELAXED);
        any |= out[f] != 0;
    }
    return any;
}

static int cost_model = 1;

int
so_set_cost_model(int on)
{
    int was = cost_model, k;
    cost_model = on;
    for (k = 0; k < SO_JOB_KINDS; k++) {        /* and what it learnt: tests start afresh */
        __atomic_store_n(&lateness[k].skip, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&lateness[k].backoff, 0, __ATOMIC_RELAXED);
    }
    return was;
}

int
so_cost_model_on(void)
{
    return cost_model;
}

/* Whether a job of this kind runs on its caller alone this time. */
static int
backing_off(int kind)
{
    int skip;
    if (kind < 0 || kind >= SO_JOB_KINDS) return 0;
    skip = __atomic_load_n(&lateness[kind].skip, __ATOMIC_RELAXED);
    if (skip <= 0) return 0;
    __atomic_store_n(&lateness[kind].skip, skip - 1, __ATOMIC_RELAXED);
    count(kind, SO_TALLY_DECLINED);
    return 1;
}

int
so_backing_off(int kind)
{
    return cost_model && backing_off(kind);
}

/* A late job doubles its kind's back-off (2, 4, ... SO_LATE_BACKOFF_MAX jobs
 * alone), one on time halves it. */
static void
learn(int kind, int late)
{
    int b;
    if (kind < 0 || kind >= SO_JOB_KINDS) return;
    b = __atomic_load_n(&lateness[kind].backoff, __ATOMIC_RELAXED);
    b = late ? (b == 0 ? 2 : b < SO_LATE_BACKOFF_MAX ? 2 * b : b) : b / 2;
    __atomic_store_n(&lateness[kind].backoff, b, __ATOMIC_RELAXED);
    __atomic_store_n(&lateness[kind].skip, b, __ATOMIC_RELAXED);
}

static npy_int64
thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (npy_int64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
so_run_tasks_report(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll, int kind)
{
    int used, workers, late;
    char *base = (char *)tasks;
    npy_int64 t0, t1, c0, c1, wait;
    if (n <= 1) return run_alone(fn, base, size, n);
    if (!cost_model) kind = -1;
    if (backing_off(kind)) return 0;
    if (threads_asked < n) threads_asked = n;
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.mu);
    if (pool.busy) {
        /* another thread's call has the pool: this one runs on its own thread,
         * or hands its tasks back (kind given) to run the call in one piece */
        pthread_mutex_unlock(&pool.mu);
        if (kind >= 0) {
            count(kind, SO_TALLY_POOL_BUSY);
            learn(kind, 1);
            return 0;
        }
        return run_alone(fn, base, size, n);
    }
    workers = start_workers(n - 1);
    if (workers == 0) {
        pthread_mutex_unlock(&pool.mu);
        return run_alone(fn, base, size, n);
    }
    pool.busy = 1;
    pool.fn = fn;
    pool.tasks = base;
    pool.size = size;
    pool.n = n;
    pool.next = 0;
    pool.finished = 0;
    pool.ran = 0;
    pool.want = n - 1;
    __atomic_store_n(&pool.job, pool.job + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool.wake);
    /* the caller takes tasks too, and whatever nobody else took */
    c0 = kind >= 0 ? thread_cpu_ns() : 0;
    t0 = now_ns();
    pool.caller_ran = run_claimed();
    if (pool.caller_ran > 0) pool.ran++;
    t1 = now_ns();
    c1 = kind >= 0 ? thread_cpu_ns() : 0;
    wait_for_job(poll);
    /* late: the caller ran every task; or the job took more than three
     * quarters of what the caller alone would have, at its own pace (own time
     * / tasks it ran x all tasks: with two tasks, it waited for the other
     * more than half its own time); or it was itself off its CPU for a fifth
     * of it (a machine with more runnable threads than CPUs).  Two threads
     * that share memory bandwidth each run slower than one alone, hence three
     * quarters: with a quarter, a job of rows beyond L2 that still beats one
     * thread is called late and the next ones run alone (docs/design.md,
     * "Waking the pool's workers, and when a job is late"). */
    wait = now_ns() - t1;
    late = 0;
    if (kind >= 0) {
        count(kind, SO_TALLY_JOBS);
        if (pool.caller_ran == n) {
            late = 1;
            count(kind, SO_TALLY_CALLER_RAN_ALL);
        } else if (((t1 - t0) + wait) * 4 * pool.caller_ran > (t1 - t0) * 3 * n) {
            late = 1;
            count(kind, SO_TALLY_WAITED);
        } else if ((t1 - t0) * 4 > (c1 - c0) * 5) {
            late = 1;
            count(kind, SO_TALLY_OFF_CPU);
        }
    }
    used = pool.ran;
    pool.busy = 0;
    pool.n = 0;
    pool.next = 0;
    pthread_mutex_unlock(&pool.mu);
    learn(kind, late);
    return used;
}

void
so_run_tasks_kind(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll, int kind)
{
    if (so_run_tasks_report(fn, tasks, size, n, poll, kind) == 0) {
        run_alone(fn, (char *)tasks, size, n);
    }
}

int
so_threads_asked_take(void)
{
    int r = threads_asked;
    threads_asked = 0;
    return r;
}

void *
so_task_array(void *one, size_t size, int *n)
{
    void *tasks;
    if (*n <= 1) {
        *n = 1;
        return one;
    }
    tasks = malloc(size * (size_t)*n);
    if (tasks == NULL) {
        *n = 1;
        return one;
    }
    return tasks;
}

void
so_task_array_free(void *tasks, void *one)
{
    if (tasks != one) free(tasks);
}

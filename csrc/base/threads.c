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
 * runs its tasks itself (the workers are shared by all callers, never
 * multiplied).
 *
 * A long call may be stopped (so_poll, base.h): the calling thread asks its
 * check between pieces of its own tasks and, once they are done, while it
 * waits for the workers' ones.
 */
#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

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
} so_pool;

static so_pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                       PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, 0};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

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
        pool.finished++;
        ran++;
    }
    if (pool.finished == pool.n) pthread_cond_broadcast(&pool.done_cv);
    return ran;
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
            pthread_cond_wait(&pool.wake, &pool.mu);
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

int
so_run_tasks_polled(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll)
{
    int t, used, workers;
    char *base = (char *)tasks;
    if (n <= 1) {
        if (n == 1) fn(base);
        return 1;
    }
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.mu);
    if (pool.busy) {
        /* another thread's call has the pool: this one runs on its own thread */
        pthread_mutex_unlock(&pool.mu);
        for (t = 0; t < n; t++) fn(base + (size_t)t * size);
        return 1;
    }
    workers = start_workers(n - 1);
    if (workers == 0) {
        pthread_mutex_unlock(&pool.mu);
        for (t = 0; t < n; t++) fn(base + (size_t)t * size);
        return 1;
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
    pool.job++;
    pthread_cond_broadcast(&pool.wake);
    /* the caller takes tasks too, and whatever nobody else took */
    if (run_claimed() > 0) pool.ran++;
    wait_for_job(poll);
    used = pool.ran;
    pool.busy = 0;
    pool.n = 0;
    pool.next = 0;
    pthread_mutex_unlock(&pool.mu);
    return used;
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

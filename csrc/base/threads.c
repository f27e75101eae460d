/*
 * base/threads.c: run a set of tasks on threads made for the call and joined
 * before it returns.
 *
 * A call is split by output ownership (walk/split.c): every output element then
 * belongs to one thread, which applies its updates in the same order as one
 * thread would, so the result is bit-identical for every thread count.  Threads
 * are made per call and joined before it returns, so nothing outlives a call
 * (and a child after fork() starts clean).
 */
#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>

int
so_run_tasks(void *(*fn)(void *), void *tasks, size_t size, int n)
{
    pthread_t *tids;
    int *started;
    int t, used = 1;
    char *base = (char *)tasks;
    if (n <= 1) {
        if (n == 1) fn(base);
        return 1;
    }
    tids = malloc(sizeof *tids * (size_t)n);
    started = malloc(sizeof *started * (size_t)n);
    if (tids == NULL || started == NULL) {
        free(tids);
        free(started);
        for (t = 0; t < n; t++) fn(base + (size_t)t * size);
        return 1;
    }
    for (t = 1; t < n; t++) {
        started[t] = pthread_create(&tids[t], NULL, fn, base + (size_t)t * size) == 0;
        used += started[t];
    }
    fn(base);
    for (t = 1; t < n; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else fn(base + (size_t)t * size);          /* no thread to be had: here */
    }
    free(tids);
    free(started);
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

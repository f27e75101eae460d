/*
 * py/settings.c: the settings a call runs with, as set from Python
 * (scatterops/_threads.py and scatterops/_settings.py parse the environment
 * and the user's calls, then set them here): the thread count, its cap (the
 * CPUs this process may use), the per-thread count of scatterops.threads(n),
 * and the CPU switches.  Each entry point reads the thread count once and
 * passes it down; nothing below this layer reads it.
 * Also a private test setting: rewrite every index right after the check
 * (what another thread or a __del__ could do), to test that no write then
 * leaves out.
 */
#include "py/py.h"

/* The most threads any call may use: the CPUs this process may use (set at
 * import), never more than the pool keeps. */
static int thread_cap = 1;
/* The process-wide count (set_num_threads, SCATTEROPS_NUM_THREADS,
 * threadpoolctl), at most thread_cap. */
static int process_threads = 1;
/* The count of the calls this thread makes inside `with scatterops.threads(n)`;
 * 0 outside any such block.  Only the entry points of the calling thread read
 * it (the pool's workers never do). */
static _Thread_local int local_threads;
/* How many threads are inside such a block: while none is (the usual case),
 * a call does not look up its thread's count (a call into the C library for
 * a thread-local variable of a shared library).  Changed and read with the
 * GIL held. */
static int threads_in_blocks;

int
so_settings_threads(void)
{
    if (threads_in_blocks > 0) {
        const int local = local_threads;
        if (local > 0) return local;
    }
    return process_threads;
}

/* threadpoolctl recognises scatterops' shared library by this exported name
 * (scatterops/_threads.py); it is the process-wide count. */
__attribute__((visibility("default"))) int
scatterops_num_threads(void)
{
    return process_threads;
}

/* n as a thread count (>= lo), or -1 with an exception set */
static int
count_arg(PyObject *arg, long lo)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
        PyErr_Clear();
        n = LONG_MAX;
    }
    if (n < lo) {
        PyErr_Format(PyExc_ValueError, "scatterops._core: a thread count must be >= %ld", lo);
        return -1;
    }
    return n > thread_cap ? thread_cap : (int)n;
}

PyObject *
so_py_set_thread_cap(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    (void)self;
    if (n == -1 && PyErr_Occurred()) return NULL;
    thread_cap = n < 1 ? 1 : n > SO_POOL_MAX ? SO_POOL_MAX : (int)n;
    if (process_threads > thread_cap) process_threads = thread_cap;
    return PyLong_FromLong(thread_cap);
}

PyObject *
so_py_set_num_threads(PyObject *self, PyObject *arg)
{
    int n = count_arg(arg, 1);
    (void)self;
    if (n < 0) return NULL;
    process_threads = n;
    return PyLong_FromLong(n);
}

PyObject *
so_py_swap_local_threads(PyObject *self, PyObject *arg)
{
    int n = count_arg(arg, 0), before = local_threads;
    (void)self;
    if (n < 0) return NULL;
    local_threads = n;
    threads_in_blocks += (n > 0) - (before > 0);
    return PyLong_FromLong(before);
}

PyObject *
so_py_get_num_threads(PyObject *self, PyObject *process_wide)
{
    int all = PyObject_IsTrue(process_wide);
    (void)self;
    if (all < 0) return NULL;
    return PyLong_FromLong(all ? process_threads : so_settings_threads());
}

PyObject *
so_py_disable_cpu_feature(PyObject *self, PyObject *arg)
{
    long f = PyLong_AsLong(arg);
    (void)self;
    if (f == -1 && PyErr_Occurred()) return NULL;
    if (f < 0 || f >= SO_CPU_NFEATURES) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core.disable_cpu_feature: no such feature");
        return NULL;
    }
    so_cpu_disable((int)f);
    Py_RETURN_NONE;
}

PyObject *
so_py_cpu_features(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return Py_BuildValue("(NNN)", PyBool_FromLong(so_cpu_has(SO_CPU_F16C)),
                         PyBool_FromLong(so_cpu_has(SO_CPU_AVX512)),
                         PyBool_FromLong(so_cpu_has(SO_CPU_AVX2)));
}

PyObject *
so_py_cache_bytes(PyObject *self, PyObject *arg)
{
    long level = PyLong_AsLong(arg);
    (void)self;
    if (level == -1 && PyErr_Occurred()) return NULL;
    if (level < 1 || level > 3) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core.cache_bytes: level must be 1, 2 or 3");
        return NULL;
    }
    return PyLong_FromSsize_t(so_cache_bytes((int)level));
}

static int rewrite_on;
static npy_intp rewrite_value;

PyObject *
so_py_test_rewrite_indices(PyObject *self, PyObject *arg)
{
    (void)self;
    if (arg == Py_None) {
        rewrite_on = 0;
        Py_RETURN_NONE;
    }
    rewrite_value = PyLong_AsSsize_t(arg);
    if (rewrite_value == -1 && PyErr_Occurred()) return NULL;
    rewrite_on = 1;
    Py_RETURN_NONE;
}

void
so_test_rewrite(PyArrayObject *idx)
{
    PyArrayIterObject *it;
    if (!rewrite_on || PyArray_SIZE(idx) == 0) return;
    it = (PyArrayIterObject *)PyArray_IterNew((PyObject *)idx);
    if (it == NULL) {
        PyErr_Clear();
        return;
    }
    while (PyArray_ITER_NOTDONE(it)) {
        /* narrower indices (the direct form reads them as given) get the
         * value cut to their size, as a cast would (little-endian) */
        memcpy(PyArray_ITER_DATA(it), &rewrite_value, (size_t)PyArray_ITEMSIZE(idx));
        PyArray_ITER_NEXT(it);
    }
    Py_DECREF(it);
}

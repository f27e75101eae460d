/*
 * py/settings.c: the thread count a large call may use, as set from Python
 * (scatterops.set_num_threads, SCATTEROPS_NUM_THREADS at import).  Each entry
 * point reads it once and passes it down; nothing below this layer reads it.
 * Also a private test setting: rewrite every index right after the check
 * (what another thread or a __del__ could do), to test that no write then
 * leaves out.
 */
#include "py/py.h"

static int so_num_threads = 1;

int
so_settings_threads(void)
{
    return so_num_threads;
}

PyObject *
so_py_set_num_threads(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    (void)self;
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 1 || n > 1024) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: threads must be in [1, 1024]");
        return NULL;
    }
    so_num_threads = (int)n;
    Py_RETURN_NONE;
}

PyObject *
so_py_get_num_threads(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(so_num_threads);
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
        memcpy(PyArray_ITER_DATA(it), &rewrite_value, sizeof rewrite_value);
        PyArray_ITER_NEXT(it);
    }
    Py_DECREF(it);
}

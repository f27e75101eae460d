/*
 * py/settings.c: the thread count a large call may use, as set from Python
 * (scatterops.set_num_threads, SCATTEROPS_NUM_THREADS at import).  Each entry
 * point reads it once and passes it down; nothing below this layer reads it.
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

/*
 * py/generic.c: the calls of dtypes without a C loop.  The reductions on
 * longdouble, byte-swapped, datetime, object and user dtypes, and "none" on
 * structured dtypes holding objects, run NumPy's own ufunc.at in
 * scatterops/_generic.py on the destinations the call's plan computes: the
 * flat C-order position in out of every update element, in update order.
 */
#include "py/py.h"

unsigned long so_generic_calls;

/* The flat targets of the call a into work (call/flat_targets.c), or NULL raised. */
static PyArrayObject *
flat_targets(const so_args *a, PyArrayObject *work)
{
    PyArrayObject *t;
    so_array w, ta;
    so_unlocked u;
    so_status st;
    t = (PyArrayObject *)PyArray_EMPTY(PyArray_NDIM(a->upd), PyArray_DIMS(a->upd), NPY_INTP, 0);
    if (t == NULL) return NULL;
    so_array_of(work, &w);
    so_array_of(t, &ta);
    st = so_call_flat_targets(&a->c, &w, &ta, so_size(t) >= SO_GIL_RELEASE_MIN
                                           ? so_poll_signals(&u) : NULL);
    if (st != SO_DONE) {
        /* Ctrl-C (the exception set), or arrays that do not fit together */
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "scatterops._core: inconsistent arguments");
        }
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

int
so_apply_generic(const so_args *a, PyArrayObject *work)
{
    PyArrayObject *targets = flat_targets(a, work);
    PyObject *r;
    if (targets == NULL) return -1;
    so_generic_calls++;
    r = PyObject_CallFunction(so_hook_generic, "ONOOOO", (PyObject *)work, (PyObject *)targets,
                              (PyObject *)a->upd, so_reduction_ufunc(a->c.op),
                              a->c.include_self ? Py_True : Py_False, a->c.mean ? Py_True : Py_False);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}


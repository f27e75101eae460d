/*
 * py/call.c: a checked call handed to the call layer (call/call.h) and its
 * outcome turned into a result or an exception.  The call layer chooses and
 * runs the strategy (so_call_execute); what comes back is a result, a bad
 * index (its IndexError under mode "raise"; under another mode, the mode's
 * transform of the indices (mode.c) and the call run once more, its indices
 * now inside), or a failure (no memory, Ctrl-C with the note of what out may
 * hold).  _core._choose gives the strategy a call would take (its index folded
 * as the call would fold it).
 */
#include "py/py.h"

/* The exception for an outcome of the call layer that is not a result (NULL):
 * no memory, or the host's error (an interrupt, with the note of what out may
 * hold when in_place; arrays that do not fit together, which a checked call
 * never has). */
static PyObject *
failed(const so_args *a, so_status st, int in_place)
{
    if (st == SO_NO_MEMORY) return PyErr_NoMemory();
    if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: inconsistent arguments");
        return NULL;
    }
    so_note_interrupted(so_func_names[a->c.kind], in_place);
    return NULL;
}

/* The result the call layer left in r (a new reference): a fresh array is the
 * caller's already, out gets one more. */
static PyObject *
result_of(const so_args *a, const so_array *r)
{
    PyObject *o = (PyObject *)r->handle;
    if (o == (PyObject *)a->out) Py_INCREF(o);
    return o;
}

PyObject *
so_call_run(so_args *a, int nthreads)
{
    so_py_host host;
    so_array result;
    so_status st;
    npy_intp bad;
    int in_place = 0;

    so_call_sync(a, nthreads);
    so_py_host_init(&host, nthreads);
    host.a = a;
    st = so_call_execute(&a->c, &host.h, &result, &bad, &in_place);
    if (st == SO_BAD_INDEX) {
        /* under "raise" its IndexError; else the mode's transform, found before
         * anything was written, and the call with its indices now inside */
        if (so_args_out_of_range(a, bad) < 0) return NULL;
        if (so_args_apply_mode(a) < 0) return NULL;
        so_call_sync(a, nthreads);
        a->c.indices_inside = 1;
        st = so_call_execute(&a->c, &host.h, &result, &bad, &in_place);
    }
    if (st == SO_DONE) return result_of(a, &result);
    return failed(a, st, in_place);
}

PyObject *
so_py_choose(PyObject *self, PyObject *args)
{
    PyObject *data, *indices, *updates, *axis, *reduction, *include_self, *mode, *out, *res;
    so_py_host host;
    so_choice ch;
    so_args a;
    int kind, nthreads;
    (void)self;
    if (!PyArg_ParseTuple(args, "iOOOOOOOOi:_choose", &kind, &data, &indices, &updates, &axis,
                          &reduction, &include_self, &mode, &out, &nthreads)) {
        return NULL;
    }
    if (kind < SO_UPDATE || kind > SO_ELEMENTS || nthreads < 1) {
        PyErr_SetString(PyExc_ValueError, "_choose: kind must be a value of KINDS, nthreads >= 1");
        return NULL;
    }
    if (so_args_parse(&a, kind, data, indices, updates, kind == SO_ND ? NULL : axis, reduction,
                      include_self, mode, out) < 0) {
        return NULL;
    }
    so_call_sync(&a, nthreads);
    so_py_host_init(&host, nthreads);
    host.a = &a;
    if (so_call_fold(&a.c, &host.h) < 0) {
        so_args_clear(&a);
        return NULL;
    }
    so_call_choose(&a.c, &ch);
    res = PyUnicode_FromString(so_strategy_names[ch.strategy]);
    so_args_clear(&a);
    return res;
}

/*
 * py/call.c: a checked call run through the call layer (call/call.h).  It
 * describes the call (host.c), lets the call layer try its strategies in turn
 * -- the direct form, the check fused with the walk into a fresh result, the
 * copy of data fused with the walk, the general walk -- and does what needs
 * Python between them: the indices converted to intp, the IndexError of the
 * first bad index or the mode's transform of the indices, the output (out, or
 * a fresh copy of data), the fallback for dtypes without a C loop, and the
 * exception for every outcome that is not a result.
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
    PyArrayObject *data = a->data, *out = a->out, *work;
    so_call *c = &a->c;
    so_py_host host;
    so_array result, w;
    so_status st;
    npy_intp bad;
    int typed = a->c.typed, rc = 0, in_place = 0;

    if (so_fold_equal_rows(a, nthreads) < 0) return NULL;
    so_call_sync(a, nthreads);
    so_py_host_init(&host, nthreads);
    st = so_call_direct(c, &host.h, &result, &bad, &in_place);
    if (st == SO_DONE) return result_of(a, &result);
    if (st == SO_BAD_INDEX) {
        /* under "raise" its IndexError; else the mode's turn */
        if ((rc = so_args_out_of_range(a, bad)) < 0) return NULL;
    }
    else if (st != SO_NOT_TAKEN) {
        return failed(a, st, in_place);
    }
    if (rc == 0) {
        if (!so_call_keeps_index_dtype(c)) {
            if (so_args_intp_indices(a) < 0) return NULL;
            so_array_of(a->idx, &c->idx);
        }
        if (typed && out == NULL && a->c.include_self && !a->c.mean) {
            st = so_call_fresh_checked(c, &host.h, &result);
            if (st == SO_DONE) return result_of(a, &result);
            if (st == SO_BAD_INDEX) {
                /* the first bad index: its IndexError, or the mode's turn */
                if ((rc = so_args_check_indices(a, nthreads)) < 0) return NULL;
            }
            else if (st != SO_NOT_TAKEN) {
                return failed(a, st, 0);
            }
        }
        if (rc != SO_OUT_OF_RANGE) {
            rc = a->c.nidx < SO_GIL_RELEASE_MIN ? so_args_check_indices(a, nthreads)
                                              : so_check_indices_long(a, nthreads);
            if (rc < 0) return NULL;
        }
    }
    /* an index outside under wrap, clip or drop, found by the check above before
     * anything was written: the mode's transform of the indices, then on */
    if (rc == SO_OUT_OF_RANGE) {
        if (so_args_apply_mode(a) < 0) return NULL;
        so_call_sync(a, nthreads);
    }
    so_test_rewrite(a->idx);

    if (typed && so_call_fuses_copy(c)) {
        st = so_call_fresh_fused(c, &host.h, &result);
        return st == SO_DONE ? result_of(a, &result) : failed(a, st, 0);
    }
    /* where the updates go: out itself, or a fresh copy of data (a C-ordered
     * one for the fallback, and for an object reduction into out, whose
     * elements' own methods may raise halfway: out is written only once all of
     * it succeeded) */
    if (out != NULL && (typed || (PyArray_IS_C_CONTIGUOUS(out) &&
                                  !(a->c.op != SO_NONE && PyDataType_REFCHK(PyArray_DESCR(out)))))) {
        if (out != data && so_copy_into(out, data) < 0) {
            so_note_interrupted(so_func_names[a->c.kind], 1);
            return NULL;
        }
        work = out;
        Py_INCREF(work);
    }
    else {
        work = so_fresh_copy(data, nthreads);
        if (work == NULL) return NULL;
    }
    if (a->c.nupd > 0) {
        if (typed) {
            so_array_of(work, &w);
            st = so_call_apply(c, &host.h, &w);
            rc = st == SO_DONE ? 0 : -1;
            if (st == SO_NO_MEMORY) PyErr_NoMemory();
            else if (rc < 0 && !PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "scatterops._core: inconsistent arguments");
            }
        }
        else {
            rc = so_apply_generic(a, work);
        }
        if (rc < 0) {
            so_note_interrupted(so_func_names[a->c.kind], work == out);
            Py_DECREF(work);
            return NULL;
        }
    }
    if (out != NULL && work != out) {
        rc = PyArray_CopyInto(out, work);
        Py_DECREF(work);
        if (rc < 0) return NULL;
        Py_INCREF(out);
        return (PyObject *)out;
    }
    return (PyObject *)work;
}

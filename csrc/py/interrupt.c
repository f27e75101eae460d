/*
 * py/interrupt.c: Ctrl-C during a long call.  The layers below work in pieces
 * and ask a poll (base/base.h) between them; the check made here takes the GIL
 * back for a moment and runs Python's signal handlers (PyErr_CheckSignals).
 * When one raises (KeyboardInterrupt), every thread of the call stops at its
 * next piece and the call raises that exception; in place, with a note that
 * says what out may hold (scatterops/_messages.py, docs/contract.md).
 *
 * Python runs signal handlers on its main thread only: a call made on another
 * thread gets no check, and never takes the GIL back in the middle.
 */
#include "py/py.h"

/* PyErr_CheckSignals between the slabs of a copy made with the GIL held */
#define SO_COPY_SLAB_BYTES ((npy_intp)16 << 20)

static int
on_main_thread(void)
{
    static unsigned long main_ident;
    static int known;
    if (!known) {
        PyObject *threading = PyImport_ImportModule("threading"), *main = NULL, *ident = NULL;
        if (threading != NULL) main = PyObject_CallMethod(threading, "main_thread", NULL);
        if (main != NULL) ident = PyObject_GetAttrString(main, "ident");
        if (ident != NULL) {
            main_ident = PyLong_AsUnsignedLong(ident);
            known = !PyErr_Occurred();
        }
        Py_XDECREF(threading);
        Py_XDECREF(main);
        Py_XDECREF(ident);
        if (!known) {
            PyErr_Clear();
            return 0;
        }
    }
    return PyThread_get_thread_ident() == main_ident;
}

/* The poll's check: nonzero when a signal handler raised (the exception is
 * then set, for so_relock to find). */
static int
check_signals(void *ctx)
{
    so_unlocked *u = (so_unlocked *)ctx;
    int raised;
    if (u->saved != NULL) PyEval_RestoreThread(u->saved);
    raised = PyErr_CheckSignals() < 0;
    if (u->saved != NULL) u->saved = PyEval_SaveThread();
    return raised;
}

so_poll *
so_poll_signals(so_unlocked *u)
{
    u->saved = NULL;
    so_poll_init(&u->poll, on_main_thread() ? check_signals : NULL, u);
    return &u->poll;
}

so_poll *
so_unlock(so_unlocked *u)
{
    so_poll *poll = so_poll_signals(u);
    u->saved = PyEval_SaveThread();
    return poll;
}

int
so_relock(so_unlocked *u)
{
    if (u->saved != NULL) PyEval_RestoreThread(u->saved);
    u->saved = NULL;
    return so_poll_raised(u);
}

int
so_poll_raised(so_unlocked *u)
{
    if (!__atomic_load_n(&u->poll.stop, __ATOMIC_RELAXED)) return 0;
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    return -1;
}

int
so_note_interrupted(const char *func, int in_place)
{
    PyObject *type, *value, *tb, *made;
    if (!in_place || so_hook_error == NULL || !PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        return -1;
    }
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) PyException_SetTraceback(value, tb);
    made = value == NULL ? NULL
           : PyObject_CallFunction(so_hook_error, "ss{sO}", "interrupted", func, "exc", value);
    if (made == NULL) {
        /* the note could not be added: the interrupt goes on as it was */
        PyErr_Clear();
    }
    Py_XDECREF(made);
    PyErr_Restore(type, value, tb);
    return -1;
}

int
so_same_bytes_apart(PyArrayObject *dst, PyArrayObject *src)
{
    PyArray_Descr *d = PyArray_DESCR(src);
    const char *a = PyArray_BYTES(dst), *b = PyArray_BYTES(src);
    npy_intp n = PyArray_NBYTES(src);
    return PyArray_IS_C_CONTIGUOUS(src) && PyArray_IS_C_CONTIGUOUS(dst) && !PyDataType_REFCHK(d) &&
           PyArray_EquivTypes(d, PyArray_DESCR(dst)) && PyArray_NBYTES(dst) == n &&
           (a + n <= b || b + n <= a);
}

int
so_copy_apart(PyArrayObject *dst, PyArrayObject *src, int nthreads)
{
    so_unlocked u;
    so_poll *poll = so_unlock(&u);
    so_parallel_copy(PyArray_BYTES(dst), PyArray_BYTES(src), (size_t)PyArray_NBYTES(src),
                     nthreads, poll);
    return so_relock(&u);
}

/* dst = src: a large copy of plain bytes between two C-ordered arrays apart
 * on one thread in copy.c (streamed if it is large enough), else slab by slab
 * along the first dim, asking for signals between. */
int
so_copy_into(PyArrayObject *dst, PyArrayObject *src)
{
    npy_intp n = PyArray_NDIM(src) > 0 ? PyArray_DIM(src, 0) : 0, row, step, i;
    if (PyArray_NBYTES(src) >= 2 * SO_COPY_SLAB_BYTES && so_same_bytes_apart(dst, src)) {
        return so_copy_apart(dst, src, 1);
    }
    if (n < 2 || PyArray_NBYTES(src) < 2 * SO_COPY_SLAB_BYTES || !PyArray_CheckExact(src) ||
            !PyArray_CheckExact(dst)) {
        return PyArray_CopyInto(dst, src);
    }
    row = PyArray_NBYTES(src) / n;
    step = row >= SO_COPY_SLAB_BYTES ? 1 : SO_COPY_SLAB_BYTES / (row > 0 ? row : 1);
    for (i = 0; i < n; i += step) {
        PyObject *lo = PyLong_FromSsize_t(i), *hi = PyLong_FromSsize_t(i + step < n ? i + step : n);
        PyObject *slice = lo != NULL && hi != NULL ? PySlice_New(lo, hi, NULL) : NULL;
        PyObject *d = NULL, *s = NULL;
        int rc = -1;
        Py_XDECREF(lo);
        Py_XDECREF(hi);
        if (slice != NULL) {
            d = PyObject_GetItem((PyObject *)dst, slice);
            s = PyObject_GetItem((PyObject *)src, slice);
        }
        if (d != NULL && s != NULL) {
            rc = PyArray_CopyInto((PyArrayObject *)d, (PyArrayObject *)s);
        }
        Py_XDECREF(slice);
        Py_XDECREF(d);
        Py_XDECREF(s);
        if (rc < 0 || PyErr_CheckSignals() < 0) return -1;
    }
    return 0;
}

/*
 * py/direct.c: the direct form of the commonest call -- a typed reduction of
 * 1-D contiguous updates into a 1-D data through 1-D contiguous indices of any
 * integer dtype, run on one thread, and its form on rows of contiguous elements
 * (py/rows.c) -- with no plan and no conversion of the indices: their check at
 * memory bandwidth (plan/check_run.c), then one element loop chosen by dtype,
 * reduction and index dtype (kernels/indexed.c), or one row loop
 * (kernels/rows.c).
 * It writes what the plain walk in C order writes, and nothing on a bad index.
 */
#include "py/py.h"

/* The loop, its index type and length, or NULL when the call is not of this
 * form (call.c then runs it the general way). */
static so_indexed_fn
direct_loop(const so_args *a, int nthreads, int *itype, npy_intp *n)
{
    PyArrayObject *idx = a->idx, *upd = a->upd, *data = a->data;
    PyArrayObject *dst = a->out != NULL ? a->out : data;
    int q = PyArray_NDIM(idx);
    if (!a->typed || !a->include_self || a->mean || a->op == SO_NONE || a->nupd == 0) {
        return NULL;
    }
    if (PyArray_NDIM(data) != 1 || PyArray_NDIM(upd) != 1 || !PyArray_ISALIGNED(dst) ||
            !PyArray_ISALIGNED(upd) || !PyArray_ISALIGNED(idx) ||
            PyArray_STRIDE(upd, 0) != PyArray_ITEMSIZE(upd)) {
        return NULL;
    }
    /* scatter_nd into 1-D data: indices (n, 1) */
    if (q != 1 && !(a->kind == SO_ND && q == 2 && PyArray_DIM(idx, 1) == 1)) return NULL;
    *n = PyArray_DIM(idx, 0);
    if (*n != a->nupd || (*n > 1 && PyArray_STRIDE(idx, 0) != PyArray_ITEMSIZE(idx))) return NULL;
    *itype = so_index_type(PyArray_DESCR(idx));
    /* on several threads, only where the cost model would run the call on one
     * anyway, and the general way has no second thread to offer either: in
     * place, or with indices it would first copy to intp (1e6 int8 indices
     * into 1e2 float32 on two threads: 1.54 ms through the intp copy and the
     * general walk, 0.67 ms here).  Out of place with intp indices, the
     * general way checks them on a second thread beside its walk: 1e6 into 1e3
     * float32, 0.77 ms there against 1.03 ms here. */
    if (nthreads > 1 && a->nupd >= SO_GIL_RELEASE_MIN &&
            (!so_owned_keeps_one_thread(PyArray_NBYTES(dst), a->nupd, nthreads) ||
             (a->out == NULL && *itype == SO_IX_i64))) {
        return NULL;
    }
    return so_indexed_kernel(PyArray_DESCR(data), a->op, *itype);
}

/* The loop of form on n index values from idx and updates from u. */
static void
apply(const so_direct_form *form, char *o, npy_intp os, npy_intp size, const char *idx,
      const char *u, npy_intp n)
{
    if (form->rows != NULL) form->rows(o, os, size, idx, u, form->us, n, form->f);
    else form->elems(o, os, size, idx, u, n);
}

/* The loop on the whole run, in pieces of about SO_PIECE elements asking poll;
 * 1 if stopped. */
static int
run_pieces(const so_direct_form *form, char *o, npy_intp os, npy_intp size, const char *idx,
           npy_intp isz, const char *u, so_poll *poll)
{
    npy_intp c, n = form->n, piece = SO_PIECE / form->f > 0 ? SO_PIECE / form->f : 1;
    for (c = 0; c < n; c += piece) {
        if (so_stopped(poll)) return 1;
        apply(form, o, os, size, idx + c * isz, u + c * form->us, n - c < piece ? n - c : piece);
    }
    return 0;
}

PyObject *
so_call_direct(const so_args *a, int nthreads, int *done)
{
    PyArrayObject *data = a->data, *out = a->out, *work;
    const char *func = so_func_names[a->kind];
    npy_intp size = PyArray_DIM(data, 0), pos;
    int large = a->nupd >= SO_GIL_RELEASE_MIN;
    so_direct_form form = {NULL, NULL, -1, 0, 1, PyArray_ITEMSIZE(a->upd)};
    so_unlocked u;
    so_poll *poll;

    form.elems = direct_loop(a, nthreads, &form.itype, &form.n);
    *done = form.elems != NULL || so_direct_rows(a, nthreads, &form);
    if (!*done) return NULL;
    if (large) {
        poll = so_unlock(&u);
        pos = so_first_bad_run(PyArray_BYTES(a->idx), form.itype, form.n, size, poll);
        if (so_relock(&u) < 0) return NULL;
    }
    else {
        pos = so_first_bad_run(PyArray_BYTES(a->idx), form.itype, form.n, size, NULL);
    }
    if (pos >= 0) {
        so_args_index_error(a, pos);
        return NULL;
    }
    so_test_rewrite(a->idx);
    if (out == NULL) {
        work = so_fresh_copy(data, nthreads);
        if (work == NULL) return NULL;
    }
    else {
        if (out != data && so_copy_into(out, data) < 0) {
            so_note_interrupted(func, 1);
            return NULL;
        }
        work = out;
        Py_INCREF(work);
    }
    if (!large) {
        apply(&form, PyArray_BYTES(work), PyArray_STRIDE(work, 0), size, PyArray_BYTES(a->idx),
              PyArray_BYTES(a->upd), form.n);
        return (PyObject *)work;
    }
    poll = so_unlock(&u);
    run_pieces(&form, PyArray_BYTES(work), PyArray_STRIDE(work, 0), size, PyArray_BYTES(a->idx),
               PyArray_ITEMSIZE(a->idx), PyArray_BYTES(a->upd), poll);
    if (so_relock(&u) < 0) {
        /* stopped: the updates of the pieces before applied */
        so_note_interrupted(func, work == out);
        Py_DECREF(work);
        return NULL;
    }
    return (PyObject *)work;
}

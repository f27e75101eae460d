/*
 * py/direct.c: the direct form of the commonest call -- a typed reduction of
 * 1-D contiguous updates into a 1-D data through 1-D contiguous indices of any
 * integer dtype, run on one thread, and its form on rows of contiguous elements
 * (py/rows_direct.c) -- with no plan and no conversion of the indices: their check at
 * memory bandwidth (plan/check_run.c), then one element loop chosen by dtype,
 * reduction and index dtype (kernels/indexed.c; the mean's sums and counts
 * together in scratch pairs, then its division: kernels/mean_indexed.c), or one
 * row loop (kernels/rows.c).  Where what the loop writes can be dropped -- a
 * fresh result, a mean's scratch pairs, or a scratch copy of an out that is
 * small next to the updates (element loops only) -- the call takes one pass
 * instead: the loop, which tests each index itself, is the only reader of the
 * indices (one_pass, below).  It writes what the plain walk in C order writes, and
 * nothing on a bad index.
 */
#include "py/py.h"

unsigned long so_direct_calls, so_direct_means, so_direct_one_pass;

/* One pass over the indices: the element and row loops test each index as they
 * read it (kernels/indexed.c, kernels/rows.c: they stop at the first bad one
 * and return its position),
 * where a whole check first would read them twice.  The loop then writes before
 * every index is known good, so it writes where that can be dropped: out of
 * place the fresh result; for a mean its scratch pairs (out is written only by
 * the division after the pass); into out, a scratch copy of data, copied into
 * out only when every index was good (so_scratch_pays).  The test in the loop
 * is a branch never taken, cheaper than a check of each chunk before its loop
 * (docs/design.md, "Checking while walking").  When: from SO_ONE_PASS_MIN
 * updates, and into out where so_scratch_pays (call/cost.h). */

/* The loop, its index type and length, or NULL when the call is not of this
 * form (call.c then runs it the general way). */
static so_indexed_fn
direct_loop(const so_args *a, int nthreads, int *itype, npy_intp *n)
{
    PyArrayObject *idx = a->idx, *upd = a->upd, *data = a->data;
    PyArrayObject *dst = a->out != NULL ? a->out : data;
    int q = PyArray_NDIM(idx);
    if (!a->typed || (!a->include_self && !a->mean) || a->op == SO_NONE || a->nupd == 0) {
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
    /* on several threads, where the cost model weighs it the fastest way
     * (walk/split.c): against the owned split into an out in L2 (1e6 updates
     * into 3e4 float32: 1.31-1.40 ms on two threads, 1.13-1.24 ms here) */
    if (nthreads > 1 && a->nupd >= SO_GIL_RELEASE_MIN &&
            so_partial_threads(a, *n, PyArray_DIM(data, 0), nthreads) < 2 &&
            !so_direct_form_pays(PyArray_DIM(data, 0), PyArray_STRIDE(dst, 0), a->nupd, nthreads) &&
            !so_direct_form_backs_off(PyArray_DIM(data, 0),
                                      a->out != NULL ? PyArray_STRIDE(dst, 0)
                                                     : PyArray_ITEMSIZE(data), a->nupd)) {
        return NULL;
    }
    return so_indexed_kernel(PyArray_DESCR(data), a->op, *itype);
}

/* A mean's loops (its additions then replace loop), or NULL when the general
 * walk does it: a dtype without them, more updates than a count holds, or an
 * out much larger than the updates (the pairs' two passes over it would cost
 * more than the hits the general walk counts per slice). */
static const so_mean_indexed *
direct_mean(const so_args *a, npy_intp n, npy_intp size, int itype, so_indexed_fn *loop)
{
    const so_mean_indexed *mk = so_mean_indexed_kernel(PyArray_DESCR(a->data));
    if (mk == NULL || n > SO_MEAN_INDEXED_MAX || !so_mean_out_small(size, n)) return NULL;
    *loop = (a->include_self ? mk->self : mk->first)[itype];
    return mk;
}

/* The loop of form on n index values from idx and updates from u: the
 * position of the first bad one, where an element loop stopped, or -1. */
static npy_intp
run_form_loop(const so_direct_form *form, char *o, npy_intp os, npy_intp size, const char *idx,
              const char *u, npy_intp n)
{
    if (form->rows == NULL) return form->elems(o, os, size, idx, u, n);
    return form->rows(o, os, size, idx, u, form->us, n, form->f);
}

/* The loop on the whole run into o (step os), in pieces of about SO_PIECE
 * elements asking poll (NULL: never stops): the first bad position (an element
 * loop stops there), SO_CHECK_STOPPED if poll stopped it, or -1. */
static npy_intp
run_pieces(const so_direct_form *form, char *o, npy_intp os, npy_intp size, const char *idx,
           npy_intp isz, const char *u, so_poll *poll)
{
    npy_intp c, m, pos, n = form->n, piece = SO_PIECE / form->f > 0 ? SO_PIECE / form->f : 1;
    for (c = 0; c < n; c += m) {
        m = n - c < piece ? n - c : piece;
        if (so_stopped(poll)) return SO_CHECK_STOPPED;
        pos = run_form_loop(form, o, os, size, idx + c * isz, u + c * form->us, m);
        if (pos >= 0) return c + pos;
    }
    return -1;
}

/* The bad index at position pos of the loop's run (so_args_out_of_range: its
 * IndexError, or SO_OUT_OF_RANGE under a mode): on rows of scatter_elements'
 * expanded index, row pos of the index (its element (pos, 0, ...); only an
 * index rewritten after py/rows_direct.c checked the column gets here). */
static int
out_of_range(const so_args *a, const so_direct_form *form, npy_intp pos)
{
    if (form->rows != NULL && a->kind == SO_ELEMENTS && form->n > 0) pos *= a->nidx / form->n;
    return so_args_out_of_range(a, pos);
}

/* The call in one pass (see SO_ONE_PASS_MIN): the result, or NULL raised, or
 * NULL with *bad = 1 and nothing raised (a bad index under a mode).  Stopped or
 * on a bad index, nothing was written to out.  so_test_rewrite runs
 * where the separate check would have ended, before the loop: the tests tell by
 * it which calls read their indices once (the loop then sees the rewritten
 * values and stops at them). */
static PyObject *
one_pass(const so_args *a, const so_direct_form *form, const so_mean_indexed *mean,
         int nthreads, int partial_threads, int *bad)
{
    PyArrayObject *data = a->data, *out = a->out, *work = NULL;
    npy_intp size = PyArray_DIM(data, 0), os, pos;
    int rc = 0, divided = 0;
    char *o, *pairs = NULL;
    so_unlocked u;
    so_poll *poll;

    /* the fresh copy of data: the result out of place, else the scratch copy
     * (a mean into out needs none: its pairs are the scratch) */
    if (mean == NULL || out == NULL) {
        work = so_fresh_copy(data, nthreads);
        if (work == NULL) return NULL;
    }
    if (mean != NULL) {
        pairs = PyMem_RawMalloc((size_t)size * mean->pair_bytes);
        if (pairs == NULL) {
            Py_XDECREF(work);
            return PyErr_NoMemory();
        }
        o = pairs;
        os = (npy_intp)mean->pair_bytes;
    }
    else {
        o = PyArray_BYTES(work);
        os = PyArray_STRIDE(work, 0);
    }
    so_test_rewrite(a->idx);
    so_direct_calls += form->elems != NULL;
    so_direct_one_pass++;
    poll = a->nupd >= SO_GIL_RELEASE_MIN ? so_unlock(&u) : NULL;
    if (mean != NULL) mean->start(PyArray_BYTES(data), PyArray_STRIDE(data, 0), size, pairs);
    pos = partial_threads > 1 ? so_run_partials(a, form, o, os, size, partial_threads, poll)
                              : SO_PARTIAL_DECLINED;
    if (pos == SO_PARTIAL_DECLINED) {
        pos = run_pieces(form, o, os, size, PyArray_BYTES(a->idx), PyArray_ITEMSIZE(a->idx),
                         PyArray_BYTES(a->upd), poll);
    }
    if (pos == -1 && mean != NULL && (out == NULL || out == data)) {
        /* the division, into the fresh result or into data itself */
        PyArrayObject *dst = out == NULL ? work : out;
        mean->finish(PyArray_BYTES(dst), PyArray_STRIDE(dst, 0), size, pairs, a->include_self);
        divided = out != NULL;
    }
    if (poll != NULL) rc = so_relock(&u);
    if (rc == 0 && pos >= 0) *bad = out_of_range(a, form, pos) == SO_OUT_OF_RANGE;
    if (rc < 0 || pos >= 0) {
        /* stopped or a bad index: out untouched, unless the stop came after
         * the division in place (the whole result then stands) */
        if (rc < 0) so_note_interrupted(so_func_names[a->kind], divided);
        PyMem_RawFree(pairs);
        Py_XDECREF(work);
        return NULL;
    }
    so_direct_means += mean != NULL;       /* the means done */
    if (out == NULL) {
        PyMem_RawFree(pairs);
        return (PyObject *)work;
    }
    if (mean == NULL) {
        rc = so_copy_into(out, work);
        Py_DECREF(work);
    }
    else if (out != data) {
        rc = so_copy_into(out, data);
        if (rc == 0) {
            mean->finish(PyArray_BYTES(out), PyArray_STRIDE(out, 0), size, pairs,
                         a->include_self);
        }
    }
    PyMem_RawFree(pairs);
    if (rc < 0) {
        so_note_interrupted(so_func_names[a->kind], 1);
        return NULL;
    }
    Py_INCREF(out);
    return (PyObject *)out;
}

PyObject *
so_call_direct(const so_args *a, int nthreads, int *done)
{
    PyArrayObject *data = a->data, *out = a->out, *work;
    const char *func = so_func_names[a->kind];
    npy_intp size = PyArray_DIM(data, 0), pos;
    int large = a->nupd >= SO_GIL_RELEASE_MIN, rc = 0, partial, bad = 0;
    so_direct_form form = {NULL, NULL, -1, 0, 1, PyArray_ITEMSIZE(a->upd)};
    const so_mean_indexed *mean = NULL;
    so_unlocked u;
    so_poll *poll;

    /* a mean takes the direct form on any number of threads: one thread here
     * beat two in the general walk at every size measured (1e6 float32 into
     * 1e2 .. 1e6: 1.2 .. 19 ms against 3.7 .. 29 ms) */
    form.elems = direct_loop(a, a->mean ? 1 : nthreads, &form.itype, &form.n);
    if (form.elems != NULL && a->mean &&
            (mean = direct_mean(a, form.n, size, form.itype, &form.elems)) == NULL) {
        form.elems = NULL;
    }
    *done = form.elems != NULL || so_direct_rows(a, nthreads, &form);
    if (!*done) return NULL;
    /* an order-free reduction on several threads, each into its own partial
     * output (py/partial_outputs.c), writes only what can be dropped, as one_pass */
    partial = form.elems != NULL && mean == NULL ? so_partial_threads(a, form.n, size, nthreads)
                                                 : 1;
    if ((form.elems != NULL &&
         (out == NULL || mean != NULL || partial > 1 ||
          so_scratch_pays(form.n, size, PyArray_ITEMSIZE(a->data), PyArray_ITEMSIZE(a->idx)))) ||
            (form.rows != NULL && out == NULL)) {
        PyObject *r = one_pass(a, &form, mean, nthreads, partial, &bad);
        if (bad) *done = SO_DIRECT_OUT_OF_RANGE;
        return r;
    }
    /* else the whole check first, at memory bandwidth, then the loop into out */
    if (large) {
        poll = so_unlock(&u);
        pos = so_first_bad_run(PyArray_BYTES(a->idx), form.itype, form.n, size, poll);
        if (so_relock(&u) < 0) return NULL;
    }
    else {
        pos = so_first_bad_run(PyArray_BYTES(a->idx), form.itype, form.n, size, NULL);
    }
    if (pos >= 0) {
        if (out_of_range(a, &form, pos) == SO_OUT_OF_RANGE) *done = SO_DIRECT_OUT_OF_RANGE;
        return NULL;
    }
    so_test_rewrite(a->idx);
    so_direct_calls += form.elems != NULL;
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
    poll = large ? so_unlock(&u) : NULL;
    /* an index another thread rewrote after the check stops the loop there:
     * every write stays inside out (the result is then unspecified) */
    (void)run_pieces(&form, PyArray_BYTES(work), PyArray_STRIDE(work, 0), size,
                     PyArray_BYTES(a->idx), PyArray_ITEMSIZE(a->idx), PyArray_BYTES(a->upd), poll);
    if (large) rc = so_relock(&u);
    if (rc < 0) {
        /* stopped: the updates of the pieces before applied */
        so_note_interrupted(func, work == out);
        Py_DECREF(work);
        return NULL;
    }
    return (PyObject *)work;
}

/*
 * py/direct.c: the direct form of the commonest call -- a typed reduction of
 * 1-D contiguous updates into a 1-D data through 1-D contiguous indices of any
 * integer dtype, run on one thread, and its form on rows of contiguous elements
 * (py/rows.c) -- with no plan and no conversion of the indices: their check at
 * memory bandwidth (plan/check_run.c), then one element loop chosen by dtype,
 * reduction and index dtype (kernels/indexed.c; the mean's sums and counts
 * together in scratch pairs, then its division: kernels/mean_indexed.c), or one
 * row loop (kernels/rows.c).  Many updates into an out in L2 take one pass
 * instead: the loop, which tests each index itself, into a fresh copy of data
 * (one_pass, below).  It writes what the plain walk in C order writes, and
 * nothing on a bad index.
 */
#include "py/py.h"

unsigned long so_direct_calls, so_direct_means, so_direct_one_pass;

/* One pass over the indices: the loop reads them in chunks of ONE_PASS_CHUNK
 * and tests each one as it reads it (kernels/indexed.c: it stops at the first
 * bad one), where the whole check first would read them twice.  The loop then writes before every
 * index is known good, so it writes into a fresh copy of data: the result out
 * of place, copied into out at the end in place (nothing written to out on a
 * bad index).  Taken for an element loop (no mean, no rows) into an out of at
 * most one core's L2, at least ONE_PASS_MIN updates and twice out's elements
 * (the copy back costs little beside them); into an out in L1 only with
 * indices of 4 bytes or more (1e6 int8 indices into 1e2 float32 were no
 * faster so: their second read costs little).  The C model
 * (benchmarks/cmodel/prefetch_model.c, int64 indices, ns an update, check then
 * loop -> one pass by chunks of 2048, in place with its two copies): 1e7
 * updates into 1e5 float32, 1.78 -> 1.46; 1e6 into 1e3, 0.91 -> 0.83; with
 * the loop's own test instead of a check of each chunk, 1e6 int64 into 1e3 at
 * 1 thread: 906 -> 683 us). */
#define ONE_PASS_CHUNK 2048
#define ONE_PASS_MIN SO_GIL_RELEASE_MIN

static int
one_pass_pays(const so_args *a, const so_direct_form *form, npy_intp size)
{
    npy_intp bytes = size * PyArray_ITEMSIZE(a->data);
    return form->elems != NULL && form->n >= ONE_PASS_MIN && form->n >= 2 * size &&
           bytes <= so_cache_bytes(2) &&
           (PyArray_ITEMSIZE(a->idx) >= 4 || bytes > so_cache_bytes(1));
}

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
     * into 3e4 float32: 1.31-1.40 ms on two threads, 1.13-1.24 ms here), and
     * against the check beside the walk into an out in L1 (which runs there) */
    if (nthreads > 1 && a->nupd >= SO_GIL_RELEASE_MIN &&
            !so_direct_form_pays(PyArray_DIM(data, 0), PyArray_STRIDE(dst, 0), a->nupd, nthreads,
                                 a->out == NULL && *itype == SO_IX_i64 && a->kind != SO_UPDATE)) {
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
    if (mk == NULL || n > SO_MEAN_INDEXED_MAX || size > 4 * n + 1024) return NULL;
    *loop = (a->include_self ? mk->self : mk->first)[itype];
    return mk;
}

/* The loop of form on n index values from idx and updates from u. */
static void
apply(const so_direct_form *form, char *o, npy_intp os, npy_intp size, const char *idx,
      const char *u, npy_intp n)
{
    if (form->rows != NULL) form->rows(o, os, size, idx, u, form->us, n, form->f);
    else (void)form->elems(o, os, size, idx, u, n);   /* checked first: never stops */
}

/* The loop on the whole run, in pieces of about SO_PIECE elements asking poll
 * (NULL: never stops); 1 if stopped. */
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

/* The one pass into o (step os) over form's run: the first bad position,
 * SO_CHECK_STOPPED if poll stopped it, or -1. */
static npy_intp
checked_chunks(const so_direct_form *form, char *o, npy_intp os, npy_intp size,
               const char *idx, npy_intp isz, const char *u, so_poll *poll)
{
    npy_intp c, m, pos;
    for (c = 0; c < form->n; c += m) {
        m = form->n - c < ONE_PASS_CHUNK ? form->n - c : ONE_PASS_CHUNK;
        if ((c & (SO_PIECE - 1)) == 0 && so_stopped(poll)) return SO_CHECK_STOPPED;
        /* the loop tests each index as it reads it (kernels/indexed.c) */
        pos = form->elems(o, os, size, idx + c * isz, u + c * form->us, m);
        if (pos >= 0) return c + pos;
    }
    return -1;
}

/* The call in one pass (one_pass_pays): the result, or NULL raised.  No
 * so_test_rewrite here: no moment follows the check of every index, and a
 * value rewritten between a chunk's check and its loop is clamped by the loop
 * as anywhere else. */
static PyObject *
one_pass(const so_args *a, const so_direct_form *form, int nthreads)
{
    PyArrayObject *work = so_fresh_copy(a->data, nthreads);
    so_unlocked u;
    npy_intp pos;
    int rc;
    if (work == NULL) return NULL;
    so_direct_calls++;
    so_direct_one_pass++;
    pos = checked_chunks(form, PyArray_BYTES(work), PyArray_STRIDE(work, 0),
                         PyArray_DIM(work, 0), PyArray_BYTES(a->idx), PyArray_ITEMSIZE(a->idx),
                         PyArray_BYTES(a->upd), so_unlock(&u));
    rc = so_relock(&u);
    if (rc == 0 && pos >= 0) so_args_index_error(a, pos);
    if (rc < 0 || pos >= 0) {
        /* stopped or a bad index: out untouched */
        Py_DECREF(work);
        return NULL;
    }
    if (a->out == NULL) return (PyObject *)work;
    rc = so_copy_into(a->out, work);
    Py_DECREF(work);
    if (rc < 0) {
        so_note_interrupted(so_func_names[a->kind], 1);
        return NULL;
    }
    Py_INCREF(a->out);
    return (PyObject *)a->out;
}

PyObject *
so_call_direct(const so_args *a, int nthreads, int *done)
{
    PyArrayObject *data = a->data, *out = a->out, *work;
    const char *func = so_func_names[a->kind];
    npy_intp size = PyArray_DIM(data, 0), pos, aos;
    int large = a->nupd >= SO_GIL_RELEASE_MIN, rc = 0;
    so_direct_form form = {NULL, NULL, -1, 0, 1, PyArray_ITEMSIZE(a->upd)};
    const so_mean_indexed *mean = NULL;
    char *o, *pairs = NULL;
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
    if (mean == NULL && one_pass_pays(a, &form, size)) return one_pass(a, &form, nthreads);
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
    if (form.elems != NULL) so_direct_calls++;
    so_direct_means += mean != NULL;
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
    o = PyArray_BYTES(work);
    aos = PyArray_STRIDE(work, 0);
    if (mean != NULL && (pairs = PyMem_RawMalloc((size_t)size * mean->pair_bytes)) == NULL) {
        Py_DECREF(work);
        return PyErr_NoMemory();
    }
    poll = large ? so_unlock(&u) : NULL;
    if (mean != NULL) mean->start(o, aos, size, pairs);
    run_pieces(&form, mean != NULL ? pairs : o, mean != NULL ? (npy_intp)mean->pair_bytes : aos,
               size, PyArray_BYTES(a->idx), PyArray_ITEMSIZE(a->idx), PyArray_BYTES(a->upd), poll);
    /* stopped, the division still runs: each element holds the mean of the
     * updates applied */
    if (mean != NULL) mean->finish(o, aos, size, pairs, a->include_self);
    if (large) rc = so_relock(&u);
    PyMem_RawFree(pairs);
    if (rc < 0) {
        /* stopped: the updates of the pieces before applied */
        so_note_interrupted(func, work == out);
        Py_DECREF(work);
        return NULL;
    }
    return (PyObject *)work;
}

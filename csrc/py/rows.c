/*
 * py/rows.c: when a call on rows takes the direct form (py/direct.c runs it):
 * a reduction or "none" of rows of contiguous elements along axis 0 -- data
 * (N, ...) into rows of f elements, updates (n, ...) with contiguous rows,
 * indices 1-D and contiguous (scatter_nd's (n, 1)) of any integer dtype -- with
 * its loop by dtype, reduction and index dtype from kernels/rows.c, which
 * reads the indices as given and makes no call per row.
 */
#include "py/py.h"

unsigned long so_rows_direct_calls;

/* The elements of a row of a from dim 1 on, if they are contiguous (C order,
 * steps of the item size), else -1. */
static npy_intp
contiguous_row(PyArrayObject *a)
{
    npy_intp f = 1, step = PyArray_ITEMSIZE(a);
    int d;
    for (d = PyArray_NDIM(a) - 1; d >= 1; d--) {
        if (PyArray_DIM(a, d) != 1 && PyArray_STRIDE(a, d) != step) return -1;
        step *= PyArray_DIM(a, d);
        f *= PyArray_DIM(a, d);
    }
    return f;
}

/* addresses and strides that the unsigned words of "none" may be read at
 * (rows.c): multiples of the word's alignment */
static int
words_aligned(npy_intp isz, PyArrayObject *a)
{
    npy_uintp align = (npy_uintp)(isz < 8 ? isz : 8), bits = (npy_uintp)PyArray_BYTES(a);
    int d;
    for (d = 0; d < PyArray_NDIM(a); d++) {
        if (PyArray_DIM(a, d) > 1) bits |= (npy_uintp)PyArray_STRIDE(a, d);
    }
    return (bits & (align - 1)) == 0;
}

/* On several threads, a call on rows of at most this many bytes keeps the
 * one-thread form rather than the split by index value, whose threads each
 * read every index: (1e5, F) float32 out of place, 4e6 / F rows, on two
 * threads: F = 2 13.9 ms split, 4.3 ms here; F = 8 4.0 / 2.6 ms; F = 16
 * 2.7 / 2.3 ms; F = 32 alike (2.8 ms); F = 64 the split as fast or faster.
 * In place into (1e7, 8), 1e6 rows: 36 ms split, 23 ms here. */
#define SO_ROWS_ONE_THREAD_BYTES 64

int
so_direct_rows(const so_args *a, int nthreads, so_direct_form *form)
{
    PyArrayObject *idx = a->idx, *upd = a->upd, *data = a->data, *out = a->out;
    PyArray_Descr *d = PyArray_DESCR(data);
    int q = PyArray_NDIM(idx), nd = PyArray_NDIM(data);
    npy_intp n, f, isz = PyArray_ITEMSIZE(data);

    if (!a->typed || !a->include_self || a->mean || a->nupd == 0 || nd < 2 || a->axis != 0 ||
            PyArray_NDIM(upd) != nd || a->kn.needs_gil) {
        return 0;
    }
    /* scatter_update: indices (n,); scatter_nd: indices (n, 1) */
    if (!(a->kind == SO_UPDATE && q == 1) &&
            !(a->kind == SO_ND && q == 2 && PyArray_DIM(idx, 1) == 1)) {
        return 0;
    }
    n = PyArray_DIM(idx, 0);
    f = a->nupd / n;
    /* the rows written are out's own, or those of a fresh C-ordered copy of data */
    if ((out != NULL && contiguous_row(out) != f) || contiguous_row(upd) != f ||
            (n > 1 && PyArray_STRIDE(idx, 0) != PyArray_ITEMSIZE(idx)) ||
            !PyArray_ISALIGNED(upd) || !PyArray_ISALIGNED(idx) ||
            (out != NULL && !PyArray_ISALIGNED(out))) {
        return 0;
    }
    if (a->op == SO_NONE && !(words_aligned(isz, upd) && (out == NULL || words_aligned(isz, out)))) {
        return 0;
    }
    form->itype = so_index_type(PyArray_DESCR(idx));
    if (nthreads > 1 && a->nupd >= SO_GIL_RELEASE_MIN &&
            (!so_cost_model_on() || f * isz > SO_ROWS_ONE_THREAD_BYTES)) {
        return 0;
    }
    form->rows = so_rows_kernel(d, a->op, form->itype);
    if (form->rows == NULL) return 0;
    form->n = n;
    form->f = f;
    form->us = n > 1 ? PyArray_STRIDE(upd, 0) : 0;
    so_rows_direct_calls++;
    return 1;
}

/*
 * call/rows_direct.c: when a call on rows takes the direct form (direct.c runs it):
 * a reduction or "none" of rows of contiguous elements along axis 0 -- data
 * (N, ...) into rows of f elements, updates (n, ...) with contiguous rows,
 * indices 1-D and contiguous (scatter_nd's (n, 1), or scatter_elements' index
 * expanded along the rows: its column idx[:, 0, ...]) of any integer dtype --
 * with its loop by dtype, reduction and index dtype from kernels/rows.c, which
 * reads the indices as given and makes no call per row.
 */
#include "call/call.h"

unsigned long so_rows_direct_calls;

/* The elements of a row of a from dim 1 on, if they are contiguous (C order,
 * steps of the item size), else -1. */
static npy_intp
contiguous_row(const so_array *a)
{
    npy_intp f = 1, step = a->itemsize;
    int d;
    for (d = a->ndim - 1; d >= 1; d--) {
        if (a->dims[d] != 1 && a->strides[d] != step) return -1;
        step *= a->dims[d];
        f *= a->dims[d];
    }
    return f;
}

/* addresses and strides that the unsigned words of "none" may be read at
 * (kernels/rows.c): multiples of the word's alignment */
static int
words_aligned(npy_intp isz, const so_array *a)
{
    npy_uintp align = (npy_uintp)(isz < 8 ? isz : 8), bits = (npy_uintp)a->bytes;
    int d;
    for (d = 0; d < a->ndim; d++) {
        if (a->dims[d] > 1) bits |= (npy_uintp)a->strides[d];
    }
    return (bits & (align - 1)) == 0;
}

/* scatter_elements along axis 0 with its index expanded along the rows: every
 * dim after the first of data's size and of size 1 or stride 0 (np.broadcast_to
 * of a row index, or a materialised one as py/fold.c leaves it), so that update
 * row i goes whole to row idx[i, 0, ...] -- the elements of the row in C order,
 * as ufunc.at applies them. */
static int
expanded_rows(const so_call *c)
{
    const so_array *idx = &c->idx;
    int d;
    if (c->kind != SO_ELEMENTS || idx->ndim != c->data.ndim) return 0;
    for (d = 1; d < idx->ndim; d++) {
        if (idx->dims[d] != c->data.dims[d] || (idx->dims[d] != 1 && idx->strides[d] != 0)) {
            return 0;
        }
    }
    return 1;
}

/* Whether the n values of the column of an expanded index are all inside
 * [-size, size).  direct.c's check reports a bad value at its position in the
 * run, which here is row pos of the index, element (pos, 0, ...) of the index
 * the user gave: a column with one leaves the call to the general way, which
 * raises for that element, and writes nothing. */
static int
column_inside(const so_call *c, so_host *h, int itype, npy_intp n)
{
    const char *v = c->idx.bytes;
    npy_intp size = c->data.dims[0], pos;
    if (n >= SO_GIL_RELEASE_MIN) {
        (void)h->unlock(h);     /* not stoppable: one pass at memory bandwidth */
        pos = so_first_bad_run(v, itype, n, size, NULL);
        (void)h->relock(h);
    }
    else {
        pos = so_first_bad_run(v, itype, n, size, NULL);
    }
    return pos < 0;
}

/* On several threads, a call on rows of at most SO_ROWS_ONE_THREAD_BYTES
 * (call/cost.h) keeps the one-thread form rather than the split by index value, whose threads each
 * read every index: (1e5, F) float32 out of place, 4e6 / F rows, on two
 * threads: F = 2 13.9 ms split, 4.3 ms here; F = 8 4.0 / 2.6 ms; F = 16
 * 2.7 / 2.3 ms; F = 32, since the row loop prefetches, 2.6-2.7 / 2.3-2.5 ms
 * (medians of 15, here faster in 23 of 30 pairs); F = 64 3.3-3.5 / 3.6-4.0 ms
 * (the split faster in 23 of 30), and 1e6 rows of 64 (graph messages) 37-38 /
 * 41-42 ms.  In place into (1e7, 8), 1e6 rows: 36 ms split, 23 ms here. */

/* Whether the general way would run this call on several threads: a split
 * applies (walk/split.c's cost model) and is not being backed off (its workers
 * came late: a busy machine, base/threads.c).  Else it would run as one piece,
 * the plain walk, slower than the row loop here on one thread.  With one CPU
 * kept busy, rows of 64 float32, two threads against one (python -m
 * benchmarks.thread_grid --grid kinds --busy, three runs): 1e5 rows into
 * (1e5, 64) in place 1.44-1.67x before this test, 1.08 or below after (a
 * split backed off); 1e4 and 1e5 rows into (1e3, 64), out of place and in
 * place, 1.27-1.50x before (no split: out in L2 and too few rows a thread). */
static int
split_runs(const so_call *c)
{
    so_plan plan;
    if (so_make_plan(&plan, c->kind, so_call_has_out(c) ? &c->out : &c->data, &c->idx, &c->upd,
                     c->axis, NULL) < 0) {
        return 1;               /* the general way fails for it again */
    }
    return so_split_runs(&plan, &c->kn, c->nthreads, &so_walk_cost_model);
}

int
so_direct_rows(const so_call *c, so_host *h, so_direct_form *form)
{
    const so_array *idx = &c->idx, *upd = &c->upd;
    const so_array *out = so_call_has_out(c) ? &c->out : NULL;
    int q = idx->ndim, nd = c->data.ndim, expanded;
    npy_intp n, f, isz = c->data.itemsize;

    if (!c->typed || !c->include_self || c->mean || c->nupd == 0 || nd < 2 || c->axis != 0 ||
            upd->ndim != nd || c->kn.needs_gil) {
        return 0;
    }
    /* scatter_update: indices (n,); scatter_nd: indices (n, 1); scatter_elements:
     * an expanded index (n, ...) */
    expanded = expanded_rows(c);
    if (!(c->kind == SO_UPDATE && q == 1) && !expanded &&
            !(c->kind == SO_ND && q == 2 && idx->dims[1] == 1)) {
        return 0;
    }
    n = idx->dims[0];
    f = c->nupd / n;
    /* the rows written are out's own, or those of a fresh C-ordered copy of data */
    if ((out != NULL && contiguous_row(out) != f) || contiguous_row(upd) != f ||
            (n > 1 && idx->strides[0] != idx->itemsize) || !upd->aligned || !idx->aligned ||
            (out != NULL && !out->aligned)) {
        return 0;
    }
    if (c->op == SO_NONE &&
            !(words_aligned(isz, upd) && (out == NULL || words_aligned(isz, out)))) {
        return 0;
    }
    form->itype = so_index_type(idx->dtype);
    if (c->nthreads > 1 && c->nupd >= SO_GIL_RELEASE_MIN &&
            (!so_cost_model_on() || (f * isz > SO_ROWS_ONE_THREAD_BYTES && split_runs(c)))) {
        return 0;
    }
    form->rows = so_rows_kernel(c->data.dtype, c->op, form->itype);
    if (form->rows == NULL || (expanded && !column_inside(c, h, form->itype, n))) return 0;
    form->n = n;
    form->f = f;
    form->us = n > 1 ? upd->strides[0] : 0;
    so_rows_direct_calls++;
    return 1;
}

/*
 * call/direct.c: the direct form of the commonest call -- a typed reduction of
 * 1-D contiguous updates into a 1-D data through 1-D contiguous indices of any
 * integer dtype, run on one thread, and its form on rows of contiguous elements
 * (rows_direct.c) -- with no plan and no conversion of the indices: their check at
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
#include "call/call.h"

#include <stdlib.h>

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
 * form (the general way then runs it). */
static so_indexed_fn
direct_loop(const so_call *c, int nthreads, int *itype, npy_intp *n)
{
    const so_array *idx = &c->idx, *upd = &c->upd, *data = &c->data;
    const so_array *dst = so_call_has_out(c) ? &c->out : data;
    int q = idx->ndim;
    if (!c->typed || (!c->include_self && !c->mean) || c->op == SO_NONE || c->nupd == 0) {
        return NULL;
    }
    if (data->ndim != 1 || upd->ndim != 1 || !dst->aligned || !upd->aligned || !idx->aligned ||
            upd->strides[0] != upd->itemsize) {
        return NULL;
    }
    /* scatter_nd into 1-D data: indices (n, 1) */
    if (q != 1 && !(c->kind == SO_ND && q == 2 && idx->dims[1] == 1)) return NULL;
    *n = idx->dims[0];
    if (*n != c->nupd || (*n > 1 && idx->strides[0] != idx->itemsize)) return NULL;
    *itype = so_index_type(idx->dtype);
    /* on several threads, where the cost model weighs it the fastest way
     * (walk/split.c): against the owned split into an out in L2 it can be
     * (docs/design.md, "The direct form on several threads") */
    if (nthreads > 1 && c->nupd >= SO_GIL_RELEASE_MIN &&
            so_partial_threads(c, *n, data->dims[0], nthreads) < 2 &&
            !so_direct_form_pays(data->dims[0], dst->strides[0], c->nupd, nthreads) &&
            !so_direct_form_backs_off(data->dims[0],
                                      so_call_has_out(c) ? dst->strides[0] : data->itemsize,
                                      c->nupd)) {
        return NULL;
    }
    return so_indexed_kernel(data->dtype, c->op, *itype);
}

/* A mean's loops (its additions then replace loop), or NULL when the general
 * walk does it: a dtype without them, more updates than a count holds, or an
 * out much larger than the updates (the pairs' two passes over it would cost
 * more than the hits the general walk counts per slice). */
static const so_mean_indexed *
direct_mean(const so_call *c, npy_intp n, npy_intp size, int itype, so_indexed_fn *loop)
{
    const so_mean_indexed *mk = so_mean_indexed_kernel(c->data.dtype);
    if (mk == NULL || n > SO_MEAN_INDEXED_MAX || !so_mean_out_small(size, n)) return NULL;
    *loop = (c->include_self ? mk->self : mk->first)[itype];
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

/* The bad index at position pos of the loop's run, as a position in the index
 * the binding holds: on rows of scatter_elements' expanded index, row pos of
 * the index (its element (pos, 0, ...); only an index rewritten after
 * rows_direct.c checked the column gets here). */
static npy_intp
bad_position(const so_call *c, const so_direct_form *form, npy_intp pos)
{
    if (form->rows != NULL && c->kind == SO_ELEMENTS && form->n > 0) pos *= c->nidx / form->n;
    return pos;
}

/* A mean's pairs started from a (finish 0), or divided into a (finish 1):
 * over all of a, or only where the indices point when a is much larger than
 * the updates (so_mean_pairs_at_hits). */
static void
mean_pairs(const so_call *c, const so_direct_form *form, const so_mean_indexed *mean,
           const so_array *a, char *pairs, int finish)
{
    const npy_intp size = c->data.dims[0];
    if (!so_mean_pairs_at_hits(size, form->n)) {
        if (finish) mean->finish(a->bytes, a->strides[0], size, pairs, c->include_self);
        else mean->start(a->bytes, a->strides[0], size, pairs);
    }
    else if (finish) {
        so_mean_finish_hit(mean, form->itype, c->idx.bytes, form->n, a->bytes, a->strides[0],
                           size, pairs, c->include_self);
    }
    else {
        so_mean_start_hit(mean, form->itype, c->idx.bytes, form->n, a->bytes, a->strides[0],
                          size, pairs);
    }
}

/* The call in one pass (see SO_ONE_PASS_MIN).  Stopped or on a bad index,
 * nothing was written to out.  The host's checked hook runs where the separate
 * check would have ended, before the loop: the tests tell by it which calls
 * read their indices once (the loop then sees the rewritten values and stops
 * at them). */
static so_status
one_pass(const so_call *c, so_host *h, const so_direct_form *form, const so_mean_indexed *mean,
         int partial_threads, so_array *result, npy_intp *bad, int *in_place)
{
    const so_array *data = &c->data, *out = so_call_has_out(c) ? &c->out : NULL;
    const int out_is_data = out != NULL && out->handle == data->handle;
    so_array work = {0};
    npy_intp size = data->dims[0], os, pos;
    int rc = 0, divided = 0;
    char *o, *pairs = NULL;
    so_poll *poll;

    /* the fresh copy of data: the result out of place, else the scratch copy
     * (a mean into out needs none: its pairs are the scratch) */
    if ((mean == NULL || out == NULL) && h->fresh_copy(h, data, &work) < 0) return SO_FAILED;
    if (mean != NULL) {
        pairs = malloc((size_t)size * mean->pair_bytes);
        if (pairs == NULL) {
            if (work.handle != NULL) h->release(h, &work);
            return SO_NO_MEMORY;
        }
        o = pairs;
        os = (npy_intp)mean->pair_bytes;
    }
    else {
        o = work.bytes;
        os = work.strides[0];
    }
    h->checked(h, &c->idx);
    so_direct_calls += form->elems != NULL;
    so_direct_one_pass++;
    poll = c->nupd >= SO_GIL_RELEASE_MIN ? h->unlock(h) : NULL;
    if (mean != NULL) mean_pairs(c, form, mean, data, pairs, 0);
    pos = partial_threads > 1 ? so_run_partials(c, form, o, os, size, partial_threads, poll)
                              : SO_PARTIAL_DECLINED;
    if (pos == SO_PARTIAL_DECLINED) {
        pos = run_pieces(form, o, os, size, c->idx.bytes, c->idx.itemsize, c->upd.bytes, poll);
    }
    if (pos == -1 && mean != NULL && (out == NULL || out_is_data)) {
        /* the division, into the fresh result or into data itself */
        const so_array *dst = out == NULL ? &work : out;
        mean_pairs(c, form, mean, dst, pairs, 1);
        divided = out != NULL;
    }
    if (poll != NULL) rc = h->relock(h);
    if (rc < 0 || pos >= 0) {
        /* stopped or a bad index: out untouched, unless the stop came after
         * the division in place (the whole result then stands) */
        free(pairs);
        if (work.handle != NULL) h->release(h, &work);
        if (rc < 0) {
            *in_place = divided;
            return SO_FAILED;
        }
        *bad = bad_position(c, form, pos);
        return SO_BAD_INDEX;
    }
    so_direct_means += mean != NULL;       /* the means done */
    if (out == NULL) {
        free(pairs);
        *result = work;
        return SO_DONE;
    }
    if (mean == NULL) {
        rc = h->copy(h, out, &work);
        h->release(h, &work);
    }
    else if (!out_is_data) {
        rc = h->copy(h, out, data);
        if (rc == 0) mean_pairs(c, form, mean, out, pairs, 1);
    }
    free(pairs);
    if (rc < 0) {
        *in_place = 1;
        return SO_FAILED;
    }
    *result = *out;
    return SO_DONE;
}

so_status
so_call_direct(const so_call *c, so_host *h, so_array *result, npy_intp *bad, int *in_place)
{
    const so_array *data = &c->data, *out = so_call_has_out(c) ? &c->out : NULL;
    npy_intp size = data->dims[0], pos;
    int large = c->nupd >= SO_GIL_RELEASE_MIN, rc = 0, partial;
    so_direct_form form = {NULL, NULL, -1, 0, 1, c->upd.itemsize};
    const so_mean_indexed *mean = NULL;
    so_array work;
    so_poll *poll;

    *in_place = 0;
    /* a mean takes the direct form on any number of threads: one thread here
     * beats two in the general walk (docs/design.md, "The direct form on
     * several threads") */
    form.elems = direct_loop(c, c->mean ? 1 : c->nthreads, &form.itype, &form.n);
    if (form.elems != NULL && c->mean &&
            (mean = direct_mean(c, form.n, size, form.itype, &form.elems)) == NULL) {
        form.elems = NULL;
    }
    if (form.elems == NULL && !so_direct_rows(c, h, &form)) return SO_NOT_TAKEN;
    /* an order-free reduction on several threads, each into its own partial
     * output (partial_outputs.c), writes only what can be dropped, as one_pass */
    partial = form.elems != NULL && mean == NULL
              ? so_partial_threads(c, form.n, size, c->nthreads) : 1;
    if ((form.elems != NULL &&
         (out == NULL || mean != NULL || partial > 1 ||
          so_scratch_pays(form.n, size, data->itemsize, c->idx.itemsize))) ||
            (form.rows != NULL && out == NULL)) {
        return one_pass(c, h, &form, mean, partial, result, bad, in_place);
    }
    /* else the whole check first, at memory bandwidth, then the loop into out */
    if (large) {
        poll = h->unlock(h);
        pos = so_first_bad_run(c->idx.bytes, form.itype, form.n, size, poll);
        if (h->relock(h) < 0) return SO_FAILED;
    }
    else {
        pos = so_first_bad_run(c->idx.bytes, form.itype, form.n, size, NULL);
    }
    if (pos >= 0) {
        *bad = bad_position(c, &form, pos);
        return SO_BAD_INDEX;
    }
    h->checked(h, &c->idx);
    so_direct_calls += form.elems != NULL;
    if (out == NULL) {
        if (h->fresh_copy(h, data, &work) < 0) return SO_FAILED;
    }
    else {
        if (out->handle != data->handle && h->copy(h, out, data) < 0) {
            *in_place = 1;
            return SO_FAILED;
        }
        work = *out;
    }
    poll = large ? h->unlock(h) : NULL;
    /* an index another thread rewrote after the check stops the loop there:
     * every write stays inside out (the result is then unspecified) */
    (void)run_pieces(&form, work.bytes, work.strides[0], size, c->idx.bytes, c->idx.itemsize,
                     c->upd.bytes, poll);
    if (large) rc = h->relock(h);
    if (rc < 0) {
        /* stopped: the updates of the pieces before applied */
        *in_place = out != NULL;
        if (out == NULL) h->release(h, &work);
        return SO_FAILED;
    }
    *result = work;
    return SO_DONE;
}

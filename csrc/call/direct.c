/*
 * call/direct.c: the direct form of the commonest call -- a typed reduction of
 * 1-D contiguous updates into a 1-D data through 1-D contiguous indices of any
 * integer dtype, run on one thread, and its form on rows of contiguous elements
 * (choose.c says which calls take it) -- with no plan and no conversion of the indices: their check at
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

unsigned long so_direct_calls, so_direct_means, so_direct_one_pass, so_rows_direct_calls;

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
 * the index (its element (pos, 0, ...), the first in C order of that row). */
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

/* Whether the n values of the column of an expanded index are all inside
 * [-size, size); else *bad is the first bad one's row (one pass at memory
 * bandwidth, not stoppable). */
static int
column_inside(const so_call *c, so_host *h, int itype, npy_intp n, npy_intp *bad)
{
    const char *v = c->idx.bytes;
    npy_intp size = c->data.dims[0];
    if (n >= SO_GIL_RELEASE_MIN) {
        (void)h->unlock(h);
        *bad = so_first_bad_run(v, itype, n, size, NULL);
        (void)h->relock(h);
    }
    else {
        *bad = so_first_bad_run(v, itype, n, size, NULL);
    }
    return *bad < 0;
}

so_status
so_call_direct(const so_call *c, so_host *h, const so_choice *ch, so_array *result, npy_intp *bad,
               int *in_place)
{
    const so_array *data = &c->data, *out = so_call_has_out(c) ? &c->out : NULL;
    const so_direct_form form = ch->form;
    npy_intp size = data->dims[0], pos;
    int large = c->nupd >= SO_GIL_RELEASE_MIN, rc = 0;
    so_array work;
    so_poll *poll;

    *in_place = 0;
    if (form.rows != NULL) {
        /* an expanded index: a bad value of its column is reported at element
         * (pos, 0, ...) of the index as given, before anything runs */
        if (ch->expanded && !column_inside(c, h, form.itype, form.n, &pos)) {
            *bad = bad_position(c, &form, pos);
            return SO_BAD_INDEX;
        }
        so_rows_direct_calls++;
    }
    /* where what the loop writes can be dropped: the loop is the check */
    if (ch->one_pass) {
        return one_pass(c, h, &form, ch->mean, ch->partial_threads, result, bad, in_place);
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

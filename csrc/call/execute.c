/*
 * call/execute.c: a checked call run as choose.c decides (so_call_execute),
 * an expanded index folded first (fold.c): the direct forms as they are; for
 * every other strategy the indices made intp where it reads them so, then either the check fused with the walk
 * into a fresh result or the check of every index value first (under mode
 * "raise" the first bad one reported, else any: the binding applies the
 * mode), the tests' hook where the check ends, and the output: a fresh copy
 * of data, or out itself, which the walk or NumPy's ufunc.at (the host's
 * generic, for a dtype without a C loop) then updates.
 */
#include "call/call.h"

/* The first bad index of c (flat C-order), or -1; a long search without the
 * interpreter's lock on up to the call's threads.  -2: the host failed. */
static npy_intp
first_bad(const so_call *c, so_host *h)
{
    npy_intp bounds[SO_MAXDIMS], pos;
    const int nb = so_call_bounds(c, bounds);
    if (c->nidx == 0) return -1;
    if (c->nidx < SO_GIL_RELEASE_MIN) return so_find_bad_index(&c->idx, bounds, nb, 1);
    (void)h->unlock(h);
    pos = so_find_bad_index(&c->idx, bounds, nb, c->nthreads);
    return h->relock(h) < 0 ? -2 : pos;
}

/* The check of every index value before anything is written: SO_DONE if all
 * are inside, SO_BAD_INDEX with *bad (the first under "raise", else the one
 * found first), or SO_FAILED (stopped).  A long check runs without the lock,
 * stoppable, on up to the call's threads. */
static so_status
check(const so_call *c, so_host *h, npy_intp *bad)
{
    npy_intp bounds[SO_MAXDIMS], pos;
    so_poll *poll;
    int nb;
    if (c->nidx < SO_GIL_RELEASE_MIN) {
        pos = first_bad(c, h);
    }
    else {
        nb = so_call_bounds(c, bounds);
        poll = h->unlock(h);
        pos = so_find_bad_index_polled(&c->idx, bounds, nb, c->nthreads, poll);
        if (h->relock(h) < 0) return SO_FAILED;
        /* a bad index, not the first on several threads: "raise" names the first */
        if (pos >= 0 && c->mode == SO_MODE_RAISE) pos = first_bad(c, h);
    }
    if (pos == -2) return SO_FAILED;
    if (pos < 0) return SO_DONE;
    *bad = pos;
    return SO_BAD_INDEX;
}

/* The general way or the fallback: the updates applied to out itself, or to a
 * fresh copy of data (a C-ordered one for the fallback, and for an object
 * reduction into out, whose elements' own methods may raise halfway: out is
 * then written only once all of it succeeded). */
static so_status
into_output(const so_call *c, so_host *h, const so_choice *ch, so_array *result, int *in_place)
{
    const so_array *out = so_call_has_out(c) ? &c->out : NULL;
    const int generic = ch->strategy == SO_RUN_GENERIC;
    so_array work;
    so_status st = SO_DONE;
    int direct_out = out != NULL &&
                     (!generic || (out->c_contiguous && !(c->op != SO_NONE && c->out_refs)));
    if (direct_out) {
        if (out->handle != c->data.handle && h->copy(h, out, &c->data) < 0) {
            *in_place = 1;
            return SO_FAILED;
        }
        work = *out;
    }
    else if (h->fresh_copy(h, &c->data, &work) < 0) {
        return SO_FAILED;
    }
    if (c->nupd > 0) {
        if (!generic) st = so_call_apply(c, h, ch, &work);
        else if (h->generic(h, c, &work) < 0) st = SO_FAILED;
    }
    if (st != SO_DONE) {
        *in_place = direct_out;
        if (!direct_out) h->release(h, &work);
        return st;
    }
    if (out != NULL && !direct_out) {
        int rc = h->copy(h, out, &work);
        h->release(h, &work);
        if (rc < 0) {
            *in_place = 1;
            return SO_FAILED;
        }
        work = *out;
    }
    *result = work;
    return SO_DONE;
}

so_status
so_call_execute(so_call *c, so_host *h, so_array *result, npy_intp *bad, int *in_place)
{
    so_choice ch;
    so_status st;
    npy_intp pos;

    *in_place = 0;
    if (!c->indices_inside && so_call_fold(c, h) < 0) return SO_FAILED;
    so_call_choose(c, &ch);
    if (ch.strategy == SO_RUN_DIRECT || ch.strategy == SO_RUN_DIRECT_ROWS) {
        return so_call_direct(c, h, &ch, result, bad, in_place);
    }
    if (ch.intp_indices && h->intp_indices(h, &c->idx) < 0) return SO_FAILED;
    if (ch.strategy == SO_RUN_CHECKED_BY_OWNERS || ch.strategy == SO_RUN_CHECKED_BESIDE) {
        st = so_call_fresh_checked(c, h, &ch, result);
        if (st != SO_BAD_INDEX) return st;
        /* some index is outside: the check names the first (none found: the
         * check and the general way below decide) */
        pos = first_bad(c, h);
        if (pos == -2) return SO_FAILED;
        if (pos >= 0) {
            *bad = pos;
            return SO_BAD_INDEX;
        }
        ch.strategy = ch.walk;
    }
    if (!c->indices_inside) {
        st = check(c, h, bad);
        if (st != SO_DONE) return st;
    }
    h->checked(h, &c->idx);
    if (ch.strategy == SO_RUN_FUSED_COPY) return so_call_fresh_fused(c, h, result);
    return into_output(c, h, &ch, result, in_place);
}

/*
 * call/choose.c: which strategy runs a checked call, decided in one place
 * (so_call_choose) from the call's facts and the cost model's named
 * thresholds (call/cost.h).  The strategies (call/call.h's so_strategy) run
 * what is chosen and decide nothing about whether the call is theirs; a
 * strategy may still end early (no memory, Ctrl-C, a bad index).
 *
 * The order of the questions is the order of preference: the direct form
 * (element loop, then rows), out of place the index check fused with the
 * walk (the owned split, then the check beside the walk), then, with the
 * indices checked first, the copy of data fused with the walk, the general
 * way, or NumPy's ufunc.at for a dtype without a C loop.
 */
#include "call/call.h"

const char *const so_strategy_names[SO_NSTRATEGIES] = {
    "direct", "direct_rows", "checked_by_owners", "checked_beside", "fused_copy", "general",
    "generic",
};

/* ---- the direct form on elements ------------------------------------------ */

/* The private partial outputs (call/partial_outputs.c) of a direct call on n
 * index values into an out of size elements: the threads, 1 for none (a
 * mean, no include_self, a float or "none", fewer than SO_PARTIAL_MIN_RATIO
 * updates an element of out, less than SO_PARTIAL_MIN_SHARE updates a thread,
 * or an out beyond one core's L2). */
static int
partial_threads(const so_call *c, npy_intp n, npy_intp size, int nthreads)
{
    int t;
    if (nthreads < 2 || c->mean || !c->include_self) return 1;
    /* the counts first: a small call, the commonest, asks no more */
    if (so_cost_model_on()) {
        if (n < SO_PARTIAL_MIN_RATIO * size) return 1;
        t = n / SO_PARTIAL_MIN_SHARE < nthreads ? (int)(n / SO_PARTIAL_MIN_SHARE) : nthreads;
    }
    else {
        /* every split that can be made is made (the tests' setting) */
        t = n / 2 < nthreads ? (int)(n / 2) : nthreads;
    }
    if (t < 2 || so_partial_kernel_for(c->data.dtype, c->op) == NULL ||
            size * c->data.itemsize > so_cache_bytes(2)) {
        return 1;
    }
    return t;
}

/* Whether the call takes the direct form on elements (ch's form, mean,
 * partial threads and one pass set): a typed reduction of 1-D contiguous
 * updates into a 1-D data through 1-D contiguous indices, with a loop for its
 * dtype, reduction and index dtype.  On several threads only where the cost
 * model weighs it the fastest way (a mean always: one thread here beats two
 * in the general walk; docs/design.md, "The direct form on several threads"). */
static int
direct_elements(const so_call *c, so_choice *ch)
{
    const so_array *idx = &c->idx, *upd = &c->upd, *data = &c->data;
    const so_array *dst = so_call_has_out(c) ? &c->out : data;
    const npy_intp size = data->dims[0];
    const int nthreads = c->mean ? 1 : c->nthreads;
    const so_mean_indexed *mk = NULL;
    so_indexed_fn loop;
    npy_intp n;
    int itype, q = idx->ndim;

    if (!c->typed || (!c->include_self && !c->mean) || c->op == SO_NONE || c->nupd == 0) return 0;
    if (data->ndim != 1 || upd->ndim != 1 || !dst->aligned || !upd->aligned || !idx->aligned ||
            upd->strides[0] != upd->itemsize) {
        return 0;
    }
    /* scatter_nd into 1-D data: indices (n, 1) */
    if (q != 1 && !(c->kind == SO_ND && q == 2 && idx->dims[1] == 1)) return 0;
    n = idx->dims[0];
    if (n != c->nupd || (n > 1 && idx->strides[0] != idx->itemsize)) return 0;
    itype = so_index_type(idx->dtype);
    if (nthreads > 1 && c->nupd >= SO_GIL_RELEASE_MIN &&
            partial_threads(c, n, size, nthreads) < 2 &&
            !so_direct_form_pays(size, dst->strides[0], c->nupd, nthreads) &&
            !so_direct_form_backs_off(size, so_call_has_out(c) ? dst->strides[0] : data->itemsize,
                                      c->nupd)) {
        return 0;
    }
    loop = so_indexed_kernel(data->dtype, c->op, itype);
    if (loop == NULL) return 0;
    /* a mean's loops add into scratch pairs of sums and counts: not for a
     * dtype without them, more updates than a count holds, or an out much
     * larger than the updates (the pairs' passes over it cost more than the
     * hits the general walk counts per slice) */
    if (c->mean) {
        mk = so_mean_indexed_kernel(data->dtype);
        if (mk == NULL || n > SO_MEAN_INDEXED_MAX || !so_mean_out_small(size, n)) return 0;
        loop = (c->include_self ? mk->self : mk->first)[itype];
    }
    ch->form.elems = loop;
    ch->form.rows = NULL;
    ch->form.itype = itype;
    ch->form.n = n;
    ch->form.f = 1;
    ch->form.us = upd->itemsize;
    ch->mean = mk;
    ch->partial_threads = mk == NULL ? partial_threads(c, n, size, c->nthreads) : 1;
    /* one pass where what the loop writes can be dropped (direct.c) */
    ch->one_pass = !so_call_has_out(c) || mk != NULL || ch->partial_threads > 1 ||
                   so_scratch_pays(n, size, data->itemsize, idx->itemsize);
    return 1;
}

/* ---- the direct form on rows ----------------------------------------------- */

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
 * of a row index, or a materialised one as the fold leaves it), so that update
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

/* Whether the general way would run this call on several threads: a split
 * applies (walk/split.c's cost model) and is not being backed off (its workers
 * came late: a busy machine, base/threads.c).  Else it would run as one piece,
 * the plain walk, slower than the row loop on one thread (docs/design.md,
 * "How a call runs", has the measurements). */
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

/* Whether the call takes the direct form on rows (ch's form set): a reduction
 * or "none" of rows of contiguous elements along axis 0 -- data (N, ...) into
 * rows of f elements, updates (n, ...) with contiguous rows, indices 1-D and
 * contiguous (scatter_nd's (n, 1), or scatter_elements' index expanded along
 * the rows: its column idx[:, 0, ...]) of any integer dtype.  On several
 * threads, rows of more than SO_ROWS_ONE_THREAD_BYTES go to the general way's
 * split when it runs. */
static int
direct_rows(const so_call *c, so_choice *ch)
{
    const so_array *idx = &c->idx, *upd = &c->upd;
    const so_array *out = so_call_has_out(c) ? &c->out : NULL;
    int q = idx->ndim, nd = c->data.ndim, expanded, itype;
    npy_intp n, f, isz = c->data.itemsize;
    so_rows_fn loop;

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
    itype = so_index_type(idx->dtype);
    if (c->nthreads > 1 && c->nupd >= SO_GIL_RELEASE_MIN &&
            (!so_cost_model_on() || (f * isz > SO_ROWS_ONE_THREAD_BYTES && split_runs(c)))) {
        return 0;
    }
    loop = so_rows_kernel(c->data.dtype, c->op, itype);
    if (loop == NULL) return 0;
    ch->form.elems = NULL;
    ch->form.rows = loop;
    ch->form.itype = itype;
    ch->form.n = n;
    ch->form.f = f;
    ch->form.us = n > 1 ? upd->strides[0] : 0;
    ch->expanded = expanded;
    ch->one_pass = out == NULL;
    return 1;
}

/* ---- the index as the walk reads it ---------------------------------------- */

/* Whether a large call on several threads keeps its 1-D contiguous indices in
 * their own dtype: where the owned split runs it (walk/owned.c reads any
 * dtype; the plain walk of such a plan runs as one owner, plan/validate.c
 * checks it as it is), and the copy to intp is saved (docs/design.md,
 * "Checking while walking"). */
static int
keeps_index_dtype(const so_call *c)
{
    const so_array *idx = &c->idx, *dst = so_call_has_out(c) ? &c->out : &c->data;
    int t = so_index_type(idx->dtype);
    so_plan plan;
    if (c->nthreads < 2 || !c->typed || !c->include_self || c->mean || c->op == SO_NONE ||
            c->kind == SO_ND || c->nupd < SO_GIL_RELEASE_MIN || t < 0 || t == SO_IX_i64 ||
            idx->ndim != 1 || idx->strides[0] != so_index_size(t) || !idx->aligned) {
        return 0;
    }
    if (so_make_plan(&plan, c->kind, dst, idx, &c->upd, c->axis, NULL) < 0) return 0;
    return so_owned_split_applies(&plan, &c->kn, c->nthreads, &so_walk_cost_model);
}

/* *w = the index as the host's conversion to intp leaves it (ch->intp_indices):
 * intp, C-ordered, a dim of stride 0 that repeats its values kept so
 * (py/indices.c's so_as_intp); strides: its storage. */
static void
walked_index(const so_call *c, so_array *w, npy_intp *strides)
{
    const so_array *idx = &c->idx;
    npy_intp step = (npy_intp)sizeof(npy_intp);
    int d, repeated = 0;
    *w = *idx;
    if (so_index_type(idx->dtype) == SO_IX_i64) return;
    for (d = 0; d < idx->ndim; d++) repeated |= idx->strides[d] == 0 && idx->dims[d] > 1;
    for (d = idx->ndim - 1; d >= 0; d--) {
        const int zero = repeated && idx->strides[d] == 0;
        strides[d] = zero ? 0 : step;
        step *= zero ? 1 : idx->dims[d];
    }
    w->strides = strides;
    w->itemsize = (npy_intp)sizeof(npy_intp);
    w->aligned = 1;
    w->c_contiguous = !repeated;
    w->dtype = c->intp_dtype;
}

/* ---- out of place, the check fused with the walk ---------------------------- */

/* The plan of the walk into a fresh result (data's shape, C-ordered: data's
 * own strides, since these strategies need a C-contiguous data) with idx; -1
 * if the arrays do not fit together. */
static int
fresh_plan(const so_call *c, const so_array *idx, so_plan *plan)
{
    return so_make_plan(plan, c->kind, &c->data, idx, &c->upd, c->axis, NULL);
}

/* The owned split checking as it walks: one group dim stepping through
 * indices, one component (run_row_owned's checking loop is then the only one
 * that reads an index); blocks of elements go in lists, rows one by one.  Not
 * while the split's kind is backed off (a busy machine): one owner of
 * everything, checking, is slower than the check and then the plain walk
 * (docs/design.md, "Checking while walking"). */
static int
checked_by_owners(const so_call *c, const so_array *idx)
{
    so_plan plan;
    int bnd;
    if (c->nupd < SO_OVERLAP_MIN || c->nthreads < 2 || fresh_plan(c, idx, &plan) < 0) return 0;
    return so_plan_one_index_run(&plan, &bnd) && !(bnd == 0 && c->kn.list == NULL) &&
           so_owned_split_runs(&plan, &c->kn, c->nthreads, &so_walk_cost_model);
}

/* The check beside the walk on a second thread: element by element into a
 * small out (exactly the walk so_run gives the element kernel), from
 * SO_SIDE_CHECK_MIN index values (below it, it saves less than a worker's
 * wake-up costs). */
static int
checked_beside(const so_call *c, const so_array *idx)
{
    so_plan plan;
    int bnd;
    if (c->kind == SO_UPDATE || c->nthreads < 2 || c->nupd != c->nidx ||
            c->nidx < (so_cost_model_on() ? SO_SIDE_CHECK_MIN : SO_OVERLAP_MIN) ||
            so_array_nbytes(&c->data) >= SO_FUSED_MIN_BYTES || c->kn.elem == NULL ||
            c->kn.needs_gil || fresh_plan(c, idx, &plan) < 0) {
        return 0;
    }
    return so_plan_one_index_run(&plan, &bnd) && bnd == 0;
}

void
so_call_choose(const so_call *c, so_choice *ch)
{
    npy_intp strides[SO_MAXDIMS];
    so_array walked;
    const int fresh = c->typed && !so_call_has_out(c) && c->include_self && !c->mean;

    ch->mean = NULL;
    ch->partial_threads = 1;
    ch->one_pass = 0;
    ch->expanded = 0;
    ch->intp_indices = 0;
    ch->cached_result = 0;
    /* once every index is checked: out of place, a large C-contiguous data is
     * copied by the walk itself; else the general way, or NumPy's ufunc.at for
     * a dtype without a C loop (a small mean into a small out counting its
     * hits element by element) */
    if (fresh && c->nupd > 0 && c->data.c_contiguous &&
            so_array_nbytes(&c->data) >= SO_FUSED_MIN_BYTES) {
        ch->walk = SO_RUN_FUSED_COPY;
    }
    else {
        ch->walk = c->typed ? SO_RUN_GENERAL : SO_RUN_GENERIC;
    }
    ch->mean_counts_small = c->mean && c->nupd < SO_GIL_RELEASE_MIN &&
                            so_mean_out_small(so_array_size(&c->data), c->nupd);
    ch->strategy = ch->walk;
    if (c->indices_inside) return;
    if (direct_elements(c, ch)) {
        ch->strategy = SO_RUN_DIRECT;
        return;
    }
    if (direct_rows(c, ch)) {
        ch->strategy = SO_RUN_DIRECT_ROWS;
        return;
    }
    ch->intp_indices = !keeps_index_dtype(c);
    if (fresh && c->data.c_contiguous) {
        if (ch->intp_indices) walked_index(c, &walked, strides);
        else walked = c->idx;
        if (checked_by_owners(c, &walked)) {
            ch->strategy = SO_RUN_CHECKED_BY_OWNERS;
            ch->cached_result = so_array_nbytes(&c->data) >= SO_FUSED_MIN_BYTES;
        }
        else if (checked_beside(c, &walked)) {
            ch->strategy = SO_RUN_CHECKED_BESIDE;
        }
    }
}

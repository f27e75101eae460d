/*
 * walk/walk.c: the loop that writes memory.
 *
 * Walks the groups of a plan in C order of the update index space, finds each
 * group's destination from its (already validated) index components, and
 * applies the kernel to the block there.  Updates that hit the same element are
 * therefore applied in the order docs/contract.md promises.
 *
 * With a mask (include_self=False) each element's first update is assigned and
 * the following ones combined; the mask records which elements were hit.
 *
 * A long walk goes in pieces of about SO_PIECE elements, in C order (the
 * plan narrowed along its dims), and asks its poll before each: stopped, it
 * has applied the updates of the pieces before, each update whole.
 */
#include "walk/block.h"

#define SO_PREFETCH_AHEAD 8
/* run_winners: prefetch the source run this many winners ahead, if at most
 * this many bytes */
#define SO_WINNER_AHEAD 8
#define SO_WINNER_PREFETCH_MAX 2048

/* The groups along the innermost group dim, starting at the given pointers. */
static void
run_row(const so_plan *p, const so_walk *w, const so_kernel *kn, char *o, const char *u,
        const char *pi, char *m)
{
    npy_intp n = 1, gso = 0, gsu = 0, gsi = 0, gsm = 0, i;
    if (p->gnd > 0) {
        int g = p->gnd - 1;
        n = p->gshape[g];
        gso = p->gs_out[g];
        gsu = p->gs_upd[g];
        gsi = p->gs_idx[g];
        gsm = p->gs_mask[g];
    }
    if (p->bnd == 0 && gsi == 0) {
        /* the index is the same along the row (an expanded index, as in graph
         * message passing): the row is one block at one destination */
        npy_intp oo, mo;
        if (w != NULL && (npy_uintp)(so_clamp(so_load_intp(pi), p->isize[0]) - w->own_lo) >=
                            (npy_uintp)(w->own_hi - w->own_lo)) {
            return;
        }
        dest_offsets(p, pi, &oo, &mo);
        if (m) {
            row_first(kn, o + oo, gso, u, gsu, m + mo, gsm, n);
        }
        else {
            kn->block(o + oo, gso, u, gsu, n, kn->itemsize);
        }
        return;
    }
    if (w != NULL) {
        so_run_row_owned(p, w, kn, o, u, pi, m, n, gso, gsu, gsi, gsm);
        return;
    }
    if (p->bnd == 0 && p->k == 1 && m == NULL && kn->elem != NULL) {
        /* one element per group (scatter_elements, element-wise scatter_nd/update) */
        kn->elem(o, gso, pi, gsi, p->isize[0], p->is_out[0], u, gsu, n, kn->itemsize);
        return;
    }
    if (p->bnd == 0 && p->k == 1 && m != NULL && kn->first != NULL) {
        /* one element per group with include_self=False: the typed loop, not
         * the kernel's block loop called element by element below
         * (docs/design.md, "include_self=False in small calls") */
        kn->first(o, gso, pi, gsi, p->isize[0], p->is_out[0], m, gsm, p->is_mask[0], u, gsu, n);
        return;
    }
    if (p->bnd == 0 && p->k == 1 && m != NULL) {
        /* the same for kernels without that loop */
        const npy_intp size = p->isize[0], ios = p->is_out[0], ims = p->is_mask[0];
        for (i = 0; i < n; i++) {
            npy_intp v = so_clamp(so_load_intp(pi + i * gsi), size);
            char *oi = o + i * gso + v * ios, *mi = m + i * gsm + v * ims;
            const char *ui = u + i * gsu;
            if (*mi) {
                kn->block(oi, 0, ui, 0, 1, kn->itemsize);
            }
            else {
                *mi = 1;
                memcpy(oi, ui, (size_t)kn->itemsize);
            }
        }
        return;
    }
    if (p->bnd == 0 && m == NULL) {
        /* one element per group, several index components (an element-wise
         * scatter_nd): the kernel straight on each, no block loop around it */
        for (i = 0; i < n; i++) {
            npy_intp oo, mo;
            if (i + SO_PREFETCH_AHEAD < n) {
                npy_intp fo, fm;
                dest_offsets(p, pi + (i + SO_PREFETCH_AHEAD) * gsi, &fo, &fm);
                __builtin_prefetch(o + (i + SO_PREFETCH_AHEAD) * gso + fo, 1);
            }
            dest_offsets(p, pi + i * gsi, &oo, &mo);
            kn->block(o + i * gso + oo, 0, u + i * gsu, 0, 1, kn->itemsize);
        }
        return;
    }
    for (i = 0; i < n; i++) {
        npy_intp oo, mo;
        if (i + SO_PREFETCH_AHEAD < n) {
            /* the destination a few groups ahead is a cache miss to start now */
            npy_intp fo, fm;
            dest_offsets(p, pi + (i + SO_PREFETCH_AHEAD) * gsi, &fo, &fm);
            __builtin_prefetch(o + (i + SO_PREFETCH_AHEAD) * gso + fo, 1);
        }
        dest_offsets(p, pi + i * gsi, &oo, &mo);
        run_block(p, kn, o + i * gso + oo, u + i * gsu, m ? m + i * gsm + mo : NULL);
    }
}


/* A deduplicated plan: at every combination of the group dims left, each
 * winner's block once. */
static void
run_winners(const so_plan *p, const so_kernel *kn)
{
    npy_intp w;
    so_nditer it;

    /* a winner's slice comes from anywhere in updates: when it is one short
     * contiguous run, start reading the run a few winners ahead */
    npy_intp span = p->bnd == 1 && p->bs_upd[0] == kn->itemsize ? p->bshape[0] * kn->itemsize : 0;
    if (span > SO_WINNER_PREFETCH_MAX) span = 0;

    so_nd_init(&it, p->gnd, p->gshape, 2, (const npy_intp *const[]){p->gs_out, p->gs_upd});
    do {
        char *o = p->out + it.off[0];
        const char *u = p->upd + it.off[1];
        for (w = 0; w < p->nwin; w++) {
            if (span > 0 && w + SO_WINNER_AHEAD < p->nwin) {
                const char *s = u + p->win[2 * (w + SO_WINNER_AHEAD) + 1];
                npy_intp b;
                for (b = 0; b < span; b += 64) __builtin_prefetch(s + b, 0);
                __builtin_prefetch(s + span - 1, 0);
            }
            run_block(p, kn, o + p->win[2 * w], u + p->win[2 * w + 1], NULL);
        }
    } while (so_nd_next(&it));
}

/* The walk of p; w: NULL, or the owned share (w->owned) to keep to. */
static void
walk_piece(const so_plan *p, const so_walk *w, const so_kernel *kn)
{
    so_nditer it;
    int d;

    for (d = 0; d < p->gnd; d++) {
        if (p->gshape[d] == 0) return;
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bshape[d] == 0) return;
    }
    if (p->nwin >= 0) {
        run_winners(p, kn);
        return;
    }
    if (p->gnd <= 1) {
        /* one row (most calls): no counter for the outer dims */
        run_row(p, w, kn, p->out, p->upd, p->idx, p->mask);
        return;
    }
    /* the outer group dims here, the innermost one in run_row */
    so_nd_init(&it, p->gnd > 0 ? p->gnd - 1 : 0, p->gshape, 4,
               (const npy_intp *const[]){p->gs_out, p->gs_upd, p->gs_idx, p->gs_mask});
    do {
        run_row(p, w, kn, p->out + it.off[0], p->upd + it.off[1], p->idx + it.off[2],
                p->mask ? p->mask + it.off[3] : NULL);
    } while (so_nd_next(&it));
}

void
so_narrow(so_plan *p, int dim, npy_intp lo, npy_intp hi)
{
    if (dim < p->gnd) {
        p->out += lo * p->gs_out[dim];
        p->upd += lo * p->gs_upd[dim];
        p->idx += lo * p->gs_idx[dim];
        if (p->mask) p->mask += lo * p->gs_mask[dim];
        p->gshape[dim] = hi - lo;
    }
    else {
        int b = dim - p->gnd;
        p->out += lo * p->bs_out[b];
        p->upd += lo * p->bs_upd[b];
        if (p->mask) p->mask += lo * p->bs_mask[b];
        p->bshape[b] = hi - lo;
    }
}

/* ---- pieces ------------------------------------------------------------------
 *
 * The dims of a plan, outermost first: its group dims, then (with a winner
 * list) the winners, then its block dims.  A piece is the plan narrowed to a
 * range of one dim with every dim before it narrowed to one coordinate.
 */
typedef struct {
    so_plan *const *plans;     /* narrowed together (the same dims) */
    int n;
    int ndims, cut_last;       /* dims; the last one cut (the others whole) */
    npy_intp after[2 * SO_MAXDIMS + 1];   /* elements of one coordinate of dim d */
    npy_intp piece;            /* elements a piece holds */
    so_poll *poll;
    so_piece_fn fn;
    void *ctx;
} so_cutter;

static npy_intp
dim_extent(const so_plan *p, int d)
{
    if (d < p->gnd) return p->gshape[d];
    if (p->nwin >= 0 && d == p->gnd) return p->nwin;
    return p->bshape[d - p->gnd - (p->nwin >= 0)];
}

static void
narrow_dim(so_plan *p, int d, npy_intp lo, npy_intp hi)
{
    if (p->nwin >= 0 && d == p->gnd) {
        p->win += 2 * lo;
        p->nwin = hi - lo;
    }
    else {
        so_narrow(p, d - (p->nwin >= 0 && d > p->gnd), lo, hi);
    }
}

/* The pieces of dims d.. of c->plans (narrowed to one coordinate of each dim
 * before d); 1 if stopped. */
static int
cut(so_cutter *c, int d)
{
    const npy_intp ext = dim_extent(c->plans[0], d);
    const int whole = d >= c->cut_last || c->after[d] <= c->piece;
    npy_intp step = whole ? c->piece / c->after[d] : 1, i;
    int k;
    if (step < 1) step = 1;
    for (i = 0; i < ext; i += step) {
        int stopped = 0;
        for (k = 0; k < c->n; k++) narrow_dim(c->plans[k], d, i, i + step < ext ? i + step : ext);
        if (whole) {
            stopped = so_stopped(c->poll);
            if (!stopped) c->fn(c->plans, c->ctx);
        }
        else {
            stopped = cut(c, d + 1);
        }
        /* back to the whole of dim d: the same narrowing, the other way */
        for (k = 0; k < c->n; k++) narrow_dim(c->plans[k], d, -i, ext - i);
        if (stopped) return 1;
    }
    return 0;
}

int
so_for_pieces(so_plan *const *plans, int n, npy_intp piece, int whole_groups, so_poll *poll,
              so_piece_fn fn, void *ctx)
{
    so_cutter c;
    const so_plan *p = plans[0];
    int d;
    c.plans = plans;
    c.n = n;
    c.ndims = p->gnd + (p->nwin >= 0) + p->bnd;
    c.cut_last = whole_groups ? p->gnd + (p->nwin >= 0) - 1 : c.ndims - 1;
    c.poll = poll;
    c.fn = fn;
    c.ctx = ctx;
    c.piece = piece;
    if (c.ndims == 0 || c.cut_last < 0) {
        if (so_stopped(poll)) return 1;
        fn(plans, ctx);
        return 0;
    }
    c.after[c.ndims - 1] = 1;
    for (d = c.ndims - 1; d > 0; d--) {
        npy_intp e = dim_extent(p, d);
        c.after[d - 1] = e > 0 && c.after[d] > NPY_MAX_INTP / e ? NPY_MAX_INTP : c.after[d] * e;
    }
    for (d = 0; d < c.ndims; d++) {
        if (dim_extent(p, d) == 0) return so_stopped(poll);
    }
    return cut(&c, 0);
}

typedef struct {
    const so_walk *w;
    const so_kernel *kn;
} so_walk_piece;

static void
walk_one(so_plan *const *piece, void *ctx)
{
    const so_walk_piece *c = (const so_walk_piece *)ctx;
    walk_piece(piece[0], c->w, c->kn);
}

/* The walk of p in pieces when it is long and poll is set; 1 if stopped. */
static int
walk(const so_plan *p, const so_walk *w, const so_kernel *kn, so_poll *poll)
{
    npy_intp work = p->nwin >= 0 ? p->nwin : 1;
    int d;
    if (poll != NULL) {
        for (d = 0; d < p->gnd; d++) work *= p->gshape[d];
        for (d = 0; d < p->bnd; d++) work *= p->bshape[d];
    }
    if (poll == NULL || work <= SO_PIECE) {
        if (so_stopped(poll)) return 1;
        walk_piece(p, w, kn);
        return 0;
    }
    so_plan q = *p;
    so_plan *const plans[1] = {&q};
    so_walk_piece c = {w, kn};
    /* an owner that counts hits counts a group once: its block is never cut */
    return so_for_pieces(plans, 1, SO_PIECE, w != NULL && w->hits != NULL, poll, walk_one, &c);
}

/* The walk of a plan whose indices are not intp: one owner of every value,
 * since only owned.c reads another dtype (a split handed back to one thread). */
static const so_walk *
owner_of_all(const so_plan *p, so_walk *one, so_poll *poll)
{
    if (p->ixtype == SO_IX_i64) return NULL;
    memset(one, 0, sizeof *one);
    one->plan = *p;
    one->owned = 1;
    one->own_hi = p->isize[0];
    one->poll = poll;
    return one;
}

void
so_run(const so_plan *p, const so_kernel *kn)
{
    so_walk one;
    walk_piece(p, owner_of_all(p, &one, NULL), kn);
}

int
so_run_polled(const so_plan *p, const so_kernel *kn, so_poll *poll)
{
    so_walk one;
    return walk(p, owner_of_all(p, &one, poll), kn, poll);
}

void
so_walk_run(const so_walk *w, const so_kernel *kn)
{
    walk(&w->plan, w->owned ? w : NULL, kn, w->poll);
    if (w->owned && w->finish != NULL) w->finish(w, w->finish_ctx);
}

/*
 * plan/plan.c: turn the arrays of a checked call into the group / index / block
 * description that walk/ walks (see plan/plan.h).  The Python layer has
 * already checked everything; the shape checks here only keep a misuse of the
 * private module from reading or writing out of bounds.
 */
#include "plan/plan.h"
#include "base/nditer.h"

/* The arrays do not fit together as the kind says (what: which part): -1,
 * nothing raised (the binding raises for it). */
static int
shape_error(const char *what)
{
    (void)what;
    return -1;
}

static void
add_group(so_plan *p, npy_intp n, npy_intp so, npy_intp su, npy_intp si, npy_intp sm)
{
    if (n == 1) {
        return;                         /* a size-1 dim changes no offset */
    }
    p->gshape[p->gnd] = n;
    p->gs_out[p->gnd] = so;
    p->gs_upd[p->gnd] = su;
    p->gs_idx[p->gnd] = si;
    p->gs_mask[p->gnd] = sm;
    p->gnd++;
}

/* Append a block dim, merging it into the previous one when all three arrays
 * step through both as one (the common case: a C-contiguous trailing slice). */
static void
add_block(so_plan *p, npy_intp n, npy_intp so, npy_intp su, npy_intp sm)
{
    npy_intp *const strides[3] = {p->bs_out, p->bs_upd, p->bs_mask};
    const npy_intp s[3] = {so, su, sm};
    p->bnd = so_nd_push(p->bnd, p->bshape, strides, 3, n, s, 0);
}

/* Innermost group dims along which the index does not change (an expanded
 * index, as in graph message passing) are block dims in disguise: the groups
 * along them share one destination base.  Moving them into the block keeps the
 * C order of the walk and lets the kernels run over whole rows. */
static void
fold_constant_index_dims(so_plan *p)
{
    while (p->gnd > 0 && p->gs_idx[p->gnd - 1] == 0) {
        int g = --p->gnd, b;
        npy_intp n = p->gshape[g], so = p->gs_out[g], su = p->gs_upd[g], sm = p->gs_mask[g];
        if (p->bnd > 0 && so == p->bshape[0] * p->bs_out[0] && su == p->bshape[0] * p->bs_upd[0]
                && sm == p->bshape[0] * p->bs_mask[0]) {
            p->bshape[0] *= n;
            continue;
        }
        for (b = p->bnd; b > 0; b--) {
            p->bshape[b] = p->bshape[b - 1];
            p->bs_out[b] = p->bs_out[b - 1];
            p->bs_upd[b] = p->bs_upd[b - 1];
            p->bs_mask[b] = p->bs_mask[b - 1];
        }
        p->bshape[0] = n;
        p->bs_out[0] = so;
        p->bs_upd[0] = su;
        p->bs_mask[0] = sm;
        p->bnd++;
    }
}

/* Whether two elements of a share bytes: sorted by stride, each dim must step
 * past everything the dims with smaller strides reach (sufficient, and exact
 * for every layout NumPy itself makes). */
static int
self_overlapping(const so_array *a)
{
    npy_intp st[SO_MAXDIMS], sh[SO_MAXDIMS], reach = a->itemsize;
    int n = 0, d, e;
    for (d = 0; d < a->ndim; d++) {
        if (a->dims[d] == 0) return 0;
        if (a->dims[d] > 1) {
            npy_intp s = a->strides[d];
            st[n] = s < 0 ? -s : s;
            sh[n] = a->dims[d];
            for (e = n; e > 0 && st[e - 1] > st[e]; e--) {
                npy_intp t = st[e]; st[e] = st[e - 1]; st[e - 1] = t;
                t = sh[e]; sh[e] = sh[e - 1]; sh[e - 1] = t;
            }
            n++;
        }
    }
    for (d = 0; d < n; d++) {
        if (st[d] < reach) return 1;
        reach += st[d] * (sh[d] - 1);
    }
    return 0;
}

int
so_make_plan(so_plan *p, int kind, const so_array *out, const so_array *idx,
             const so_array *upd, int axis, const so_array *mask)
{
    const int r = out->ndim;
    const int q = idx->ndim;
    const int ur = upd->ndim;
    const npy_intp *dshape = out->dims, *ostr = out->strides;
    const npy_intp *ishape = idx->dims, *istr = idx->strides;
    const npy_intp *ushape = upd->dims, *ustr = upd->strides;
    static const npy_intp zeros[SO_MAXDIMS] = {0};
    const npy_intp *mstr = mask ? mask->strides : zeros;
    int d, j;

    p->gnd = p->bnd = 0;
    p->nwin = -1;
    p->win = NULL;
    p->out = out->bytes;
    p->upd = upd->bytes;
    p->idx = idx->bytes;
    p->ixtype = so_index_type(idx->dtype);
    p->mask = mask ? mask->bytes : NULL;
    p->out_overlaps = r <= SO_MAXDIMS && self_overlapping(out);

    if (r < 1 || r > SO_MAXDIMS || ur > SO_MAXDIMS) {
        return shape_error("rank");
    }
    if (mask && !so_array_same_shape(mask, out)) {
        return shape_error("mask shape");
    }
    if (axis < 0 || axis >= r) {
        return shape_error("axis");
    }

    if (kind == SO_UPDATE) {
        /* updates: data.shape[:axis] + indices.shape + data.shape[axis+1:] */
        if (ur != r - 1 + q) {
            return shape_error("updates rank");
        }
        for (d = 0; d < axis; d++) {
            if (ushape[d] != dshape[d]) return shape_error("updates shape");
            add_group(p, dshape[d], ostr[d], ustr[d], 0, mstr[d]);
        }
        for (j = 0; j < q; j++) {
            if (ushape[axis + j] != ishape[j]) return shape_error("updates shape");
            add_group(p, ishape[j], 0, ustr[axis + j], istr[j], 0);
        }
        p->k = 1;
        p->istep = 0;
        p->isize[0] = dshape[axis];
        p->is_out[0] = ostr[axis];
        p->is_mask[0] = mstr[axis];
        for (d = axis + 1; d < r; d++) {
            if (ushape[d - 1 + q] != dshape[d]) return shape_error("updates shape");
            add_block(p, dshape[d], ostr[d], ustr[d - 1 + q], mstr[d]);
        }
    }
    else if (kind == SO_ND) {
        /* updates: indices.shape[:-1] + data.shape[k:] */
        int k;
        if (q < 1) return shape_error("indices rank");
        k = (int)ishape[q - 1];
        if (ishape[q - 1] > r || ur != q - 1 + r - k) {
            return shape_error("updates rank");
        }
        for (j = 0; j < q - 1; j++) {
            if (ushape[j] != ishape[j]) return shape_error("updates shape");
            add_group(p, ishape[j], 0, ustr[j], istr[j], 0);
        }
        p->k = k;
        p->istep = istr[q - 1];
        for (d = 0; d < k; d++) {
            p->isize[d] = dshape[d];
            p->is_out[d] = ostr[d];
            p->is_mask[d] = mstr[d];
        }
        for (d = k; d < r; d++) {
            if (ushape[q - 1 + d - k] != dshape[d]) return shape_error("updates shape");
            add_block(p, dshape[d], ostr[d], ustr[q - 1 + d - k], mstr[d]);
        }
    }
    else if (kind == SO_ELEMENTS) {
        if (q != r || ur != r) return shape_error("ranks");
        for (d = 0; d < r; d++) {
            if (ushape[d] != ishape[d] || (d != axis && ishape[d] > dshape[d])) return shape_error("shapes");
            add_group(p, ishape[d], d == axis ? 0 : ostr[d], ustr[d], istr[d], d == axis ? 0 : mstr[d]);
        }
        p->k = 1;
        p->istep = 0;
        p->isize[0] = dshape[axis];
        p->is_out[0] = ostr[axis];
        p->is_mask[0] = mstr[axis];
    }
    else {
        return shape_error("kind");
    }
    if (p->gnd + p->bnd > SO_MAXDIMS) {
        return shape_error("too many dims");
    }
    fold_constant_index_dims(p);
    return 0;
}

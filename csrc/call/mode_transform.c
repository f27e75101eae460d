/*
 * call/mode_transform.c: mode= applied to the index values of a call whose
 * check found one outside its axis (py/call.c asks for it before anything is
 * written, then runs the call once more).  "wrap" takes every index modulo
 * its axis size (as numpy.put), "clip" sends one below the axis to 0 and one
 * above to size - 1 (as JAX): both map the values of a fresh intp copy of the
 * indices in place.  "drop" keeps the updates whose index is
 * inside (in scatter_nd: every component of its tuple), in their order: here
 * the mask of them, and for scatter_elements the kept updates' whole index
 * tuples (the axis coordinate from the index, the others from the position),
 * so that the call becomes a scatter_nd of them.  Each value is placed by
 * so_mode_position, the rule _core.route applies too.  An axis of size 0 has
 * no position to wrap or clip to: its indices stay as they are, for the check
 * to report as under "raise".
 */
#include "call/call.h"
#include "base/nditer.h"

/* The loop of so_mode_map, its mode and count in locals: the writes to v
 * could otherwise reach c's fields (the build does not assume strict
 * aliasing), and the compiler would read them again at every value. */
static void
map_values(npy_intp *v, const npy_uint64 *u, npy_intp n, const npy_intp *bounds, int nb,
           int mode)
{
    npy_intp j;
    int k = 0;
    for (j = 0; j < n; j++) {
        const npy_intp s = bounds[k];
        if (s > 0) {
            so_mode_position(u != NULL ? u[j] : (npy_uint64)v[j], u != NULL, s, mode, &v[j]);
        }
        if (++k == nb) k = 0;
    }
}

int
so_mode_map(const so_call *c, npy_intp *v, const npy_uint64 *u)
{
    npy_intp bounds[SO_MAXDIMS];
    const int nb = so_call_bounds(c, bounds);
    int k, empty_axis = 0;
    for (k = 0; k < nb; k++) empty_axis |= bounds[k] == 0;
    if (nb > 0) map_values(v, u, c->nidx, bounds, nb, c->mode);
    return empty_axis;
}

npy_intp
so_mode_keep(const so_call *c, const npy_intp *v, npy_bool *keep)
{
    npy_intp bounds[SO_MAXDIMS], g, kept = 0;
    const int nb = so_call_bounds(c, bounds);
    const npy_intp ngroups = so_mode_groups(c);
    int k;
    for (g = 0; g < ngroups; g++) {
        npy_bool ok = 1;
        for (k = 0; k < nb; k++) {
            ok &= (npy_bool)so_index_inside(v[g * nb + k], bounds[k]);
        }
        keep[g] = ok;
        kept += ok;
    }
    return kept;
}

void
so_mode_kept_tuples(const so_call *c, const npy_intp *v, const npy_bool *keep, npy_intp *t)
{
    const int r = c->idx.ndim;
    npy_intp p;
    int d;
    so_nditer it;               /* its counts are the position's coordinates */
    so_nd_init(&it, r, c->idx.dims, 0, NULL);
    for (p = 0; p < c->nidx; p++) {
        if (keep[p]) {
            for (d = 0; d < r; d++) *t++ = d == c->axis ? v[p] : it.count[d];
        }
        so_nd_next(&it);
    }
}

/*
 * engine.c: the loop that writes memory.
 *
 * Walks the groups of a plan in C order of the update index space, finds each
 * group's destination from its (already validated) index components, and
 * applies the kernel to the block there.  Updates that hit the same element are
 * therefore applied in the order API.md promises.
 *
 * With a mask (include_self=False) each element's first update is assigned and
 * the following ones combined; the mask records which elements were hit.
 */
#include "scatterops.h"

/* Offset of a group's destination in out (and in mask) from its index components. */
static inline void
dest_offsets(const so_plan *p, const char *pi, npy_intp *o_off, npy_intp *m_off)
{
    npy_intp oo = 0, mo = 0;
    int j;
    for (j = 0; j < p->k; j++) {
        npy_intp v = so_wrap(so_load_intp(pi + j * p->istep), p->isize[j]);
        oo += v * p->is_out[j];
        mo += v * p->is_mask[j];
    }
    *o_off = oo;
    *m_off = mo;
}

/* One row of a block with include_self=False: assign on first hit, else combine. */
static void
row_first(const so_kernel *kn, char *o, npy_intp os, const char *u, npy_intp us,
          char *m, npy_intp ms, npy_intp n)
{
    npy_intp i;
    for (i = 0; i < n; i++) {
        char *oi = o + i * os;
        const char *ui = u + i * us;
        char *mi = m + i * ms;
        if (*mi) {
            kn->block(oi, 0, ui, 0, 1, kn->itemsize);
        }
        else {
            *mi = 1;
            memcpy(oi, ui, (size_t)kn->itemsize);
        }
    }
}

/* Apply the kernel to one block: its innermost dim as one kernel call, the outer
 * dims counted here. */
static void
run_block(const so_plan *p, const so_kernel *kn, char *o, const char *u, char *m)
{
    npy_intp cnt[SO_MAXDIMS];
    int last = p->bnd - 1, d;
    npy_intp n, os, us, ms;

    if (p->bnd == 0) {
        if (m) {
            row_first(kn, o, 0, u, 0, m, 0, 1);
        }
        else {
            kn->block(o, 0, u, 0, 1, kn->itemsize);
        }
        return;
    }
    n = p->bshape[last];
    os = p->bs_out[last];
    us = p->bs_upd[last];
    ms = p->bs_mask[last];
    for (d = 0; d < last; d++) {
        cnt[d] = 0;
    }
    for (;;) {
        if (m) {
            row_first(kn, o, os, u, us, m, ms, n);
        }
        else {
            kn->block(o, os, u, us, n, kn->itemsize);
        }
        for (d = last - 1; d >= 0; d--) {
            o += p->bs_out[d];
            u += p->bs_upd[d];
            if (m) m += p->bs_mask[d];
            if (++cnt[d] < p->bshape[d]) {
                break;
            }
            o -= p->bs_out[d] * p->bshape[d];
            u -= p->bs_upd[d] * p->bshape[d];
            if (m) m -= p->bs_mask[d] * p->bshape[d];
            cnt[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

/* The groups along the innermost group dim, starting at the given pointers. */
static void
run_row(const so_plan *p, const so_kernel *kn, char *o, const char *u, const char *pi, char *m)
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
    if (p->bnd == 0 && p->k == 1 && m == NULL && kn->elem != NULL) {
        /* one element per group (scatter_elements, element-wise scatter_nd/update) */
        kn->elem(o, gso, pi, gsi, p->isize[0], p->is_out[0], u, gsu, n, kn->itemsize);
        return;
    }
    for (i = 0; i < n; i++) {
        npy_intp oo, mo;
        dest_offsets(p, pi + i * gsi, &oo, &mo);
        run_block(p, kn, o + i * gso + oo, u + i * gsu, m ? m + i * gsm + mo : NULL);
    }
}

void
so_run(const so_plan *p, const so_kernel *kn)
{
    npy_intp cnt[SO_MAXDIMS];
    char *o = p->out, *m = p->mask;
    const char *u = p->upd, *pi = p->idx;
    int d, outer = p->gnd - 1;

    for (d = 0; d < p->gnd; d++) {
        if (p->gshape[d] == 0) return;
        cnt[d] = 0;
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bshape[d] == 0) return;
    }
    for (;;) {
        run_row(p, kn, o, u, pi, m);
        for (d = outer - 1; d >= 0; d--) {
            o += p->gs_out[d];
            u += p->gs_upd[d];
            pi += p->gs_idx[d];
            if (m) m += p->gs_mask[d];
            if (++cnt[d] < p->gshape[d]) {
                break;
            }
            o -= p->gs_out[d] * p->gshape[d];
            u -= p->gs_upd[d] * p->gshape[d];
            pi -= p->gs_idx[d] * p->gshape[d];
            if (m) m -= p->gs_mask[d] * p->gshape[d];
            cnt[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

/*
 * kernels/group_half.c: the member loops of a group reduction whose computing
 * dtype is float16 (dtype=np.float16 for mean, var, std, logsumexp;
 * group_complex.h).  Every operation is NumPy's float16 one: both sides
 * widened to float, one float operation, the result rounded to float16
 * (npy_float_to_half); max is np.maximum on float16 (the running value stays
 * if it is >= the member or NaN); a count is converted to float16 before it
 * divides, as count.astype(np.float16) is.
 */
#include "kernels/group_complex.h"

#include <numpy/halffloat.h>

#define F(h) npy_half_to_float(h)
#define H(x) npy_float_to_half(x)
#define HALF_NAN ((npy_half)0x7e00)

void
so_gx_half_members(const so_gx_loop *L, npy_intp o, npy_intp n0, npy_intp n1)
{
    const npy_intp inner = L->inner, size = L->size;
    const int op = L->op;
    npy_intp n, i;
    for (n = n0; n < n1; n++) {
        const npy_intp g = L->gid[n];
        const npy_half *x = (const npy_half *)L->v + (o * L->n + n) * inner;
        npy_intp cell;
        npy_half *r;
        if ((npy_uintp)g >= (npy_uintp)size) continue;
        cell = (o * size + g) * inner;
        r = (npy_half *)L->res + cell;
        for (i = 0; i < inner; i++) {
            const npy_half xv = x[i];
            if (L->skipnan && npy_half_isnan(xv)) continue;
            switch (op) {
            case SO_GX_SUM: r[i] = H(F(r[i]) + F(xv)); break;
            case SO_GX_MAX:
                if (L->cnt[cell + i] == 0 || !(npy_half_ge(r[i], xv) || npy_half_isnan(r[i]))) {
                    r[i] = xv;
                }
                break;
            case SO_GX_DEV: {
                const npy_half d = H(F(xv) - F(((const npy_half *)L->mean)[cell + i]));
                r[i] = H(F(r[i]) + F(H(F(d) * F(d))));
                break;
            }
            default: break;
            }
            if (op != SO_GX_DEV) L->cnt[cell + i]++;
        }
    }
}

void
so_gx_half_divide(npy_half *cells, const npy_intp *cnt, npy_intp ncells, npy_intp ddof, int var)
{
    npy_intp c;
    for (c = 0; c < ncells; c++) {
        const npy_intp k = cnt[c] - (var ? ddof : 0);
        if (cnt[c] == 0) continue;
        cells[c] = k > 0 ? H(F(cells[c]) / F(H((float)k))) : HALF_NAN;
    }
}

void
so_gx_half_lse(npy_half *cells, const npy_half *m, npy_intp ncells)
{
    npy_intp c;
    for (c = 0; c < ncells; c++) {
        const npy_half mc = m[c];
        if (npy_half_isnan(mc) || npy_half_isinf(mc)) cells[c] = mc;
        else cells[c] = H(F(mc) + F(cells[c]));
    }
}

npy_intp
so_gx_half_diffs(const so_gx_loop *L, const npy_half *m, npy_half *out, npy_intp o,
                 npy_intp n0, npy_intp n1)
{
    npy_intp n, i, k = 0;
    for (n = n0; n < n1; n++) {
        const npy_intp g = L->gid[n];
        const npy_half *x = (const npy_half *)L->v + (o * L->n + n) * L->inner;
        const npy_half *mc = m + (o * L->size + g) * L->inner;
        if ((npy_uintp)g >= (npy_uintp)L->size) continue;
        for (i = 0; i < L->inner; i++) {
            if (L->skipnan && npy_half_isnan(x[i])) continue;
            out[k++] = H(F(x[i]) - F(mc[i]));
        }
    }
    return k;
}

npy_intp
so_gx_half_add_terms(const so_gx_loop *L, npy_half *sums, const npy_half *terms, npy_intp o,
                     npy_intp n0, npy_intp n1)
{
    const npy_half *t0 = terms;
    npy_intp n, i;
    for (n = n0; n < n1; n++) {
        const npy_intp g = L->gid[n];
        const npy_half *x = (const npy_half *)L->v + (o * L->n + n) * L->inner;
        npy_half *sc = sums + (o * L->size + g) * L->inner;
        if ((npy_uintp)g >= (npy_uintp)L->size) continue;
        for (i = 0; i < L->inner; i++) {
            if (L->skipnan && npy_half_isnan(x[i])) continue;
            sc[i] = H(F(sc[i]) + F(*terms++));
        }
    }
    return terms - t0;
}

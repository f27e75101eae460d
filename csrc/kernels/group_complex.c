/*
 * kernels/group_complex.c: the member loops of a group reduction on complex
 * values (group_complex.h): each is the element operation of NumPy's loop --
 * np.add.at adds the parts, np.multiply.at takes (ar*br - ai*bi) +
 * (ar*bi + ai*br)i, any / all the truth of re != 0 or im != 0 (a NaN part is
 * true) -- and the mean's division by the count as NumPy's complex division.
 */
#include "kernels/group_complex.h"

/* T: the type of a part */
#define COMPLEX_LOOP(NAME, T)                                                            \
static void                                                                              \
members_##NAME(const so_gx_loop *L, npy_intp o, npy_intp n0, npy_intp n1)               \
{                                                                                        \
    const npy_intp inner = L->inner, size = L->size;                                     \
    npy_intp n, i;                                                                       \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = L->gid[n];                                                    \
        const T *x = (const T *)L->v + 2 * (o * L->n + n) * inner;                       \
        T *r;                                                                            \
        npy_bool *b;                                                                     \
        if ((npy_uintp)g >= (npy_uintp)size) continue;                                   \
        r = (T *)L->res + 2 * (o * size + g) * inner;                                    \
        b = (npy_bool *)L->res + (o * size + g) * inner;                                 \
        switch (L->op) {                                                                 \
        case SO_GX_SUM:                                                                  \
            for (i = 0; i < 2 * inner; i++) r[i] = r[i] + x[i];                          \
            break;                                                                       \
        case SO_GX_PROD:                                                                 \
            for (i = 0; i < inner; i++) {                                                \
                const T ar = r[2 * i], ai = r[2 * i + 1], br = x[2 * i], bi = x[2 * i + 1]; \
                r[2 * i] = ar * br - ai * bi;                                            \
                r[2 * i + 1] = ar * bi + ai * br;                                        \
            }                                                                            \
            break;                                                                       \
        case SO_GX_ANY:                                                                  \
            for (i = 0; i < inner; i++) {                                                \
                if (x[2 * i] != 0 || x[2 * i + 1] != 0) b[i] = 1;                        \
            }                                                                            \
            break;                                                                       \
        case SO_GX_ALL:                                                                  \
            for (i = 0; i < inner; i++) {                                                \
                if (!(x[2 * i] != 0 || x[2 * i + 1] != 0)) b[i] = 0;                     \
            }                                                                            \
            break;                                                                       \
        default:                                                                         \
            break;                                                                       \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
static void                                                                              \
divide_##NAME(T *r, const npy_intp *cnt, npy_intp ncells, npy_intp inner)                \
{                                                                                        \
    npy_intp q, i;                                                                       \
    /* NumPy's (a + bi) / (k + 0i), its |k| >= |0| branch, for each group's k */        \
    for (q = 0; q * inner < ncells; q++) {                                               \
        const T kr = (T)cnt[q], ki = 0, rat = ki / kr, scl = (T)1 / (kr + ki * rat);     \
        T *z = r + 2 * q * inner;                                                        \
        for (i = 0; cnt[q] > 0 && i < inner; i++) {                                      \
            const T re = z[2 * i], im = z[2 * i + 1];                                    \
            z[2 * i] = (re + im * rat) * scl;                                            \
            z[2 * i + 1] = (im - re * rat) * scl;                                        \
        }                                                                                \
    }                                                                                    \
}

COMPLEX_LOOP(c64, npy_float)
COMPLEX_LOOP(c128, npy_double)
COMPLEX_LOOP(cld, npy_longdouble)

void
so_gx_members(const so_gx_loop *L, npy_intp o, npy_intp n0, npy_intp n1)
{
    switch (L->type) {
    case SO_GX_C64: members_c64(L, o, n0, n1); break;
    case SO_GX_C128: members_c128(L, o, n0, n1); break;
    case SO_GX_CLD: members_cld(L, o, n0, n1); break;
    default: so_gx_half_members(L, o, n0, n1); break;
    }
}

npy_intp
so_gx_itemsize(int t)
{
    switch (t) {
    case SO_GX_C64: return (npy_intp)(2 * sizeof(npy_float));
    case SO_GX_C128: return (npy_intp)(2 * sizeof(npy_double));
    case SO_GX_CLD: return (npy_intp)(2 * sizeof(npy_longdouble));
    default: return (npy_intp)sizeof(npy_half);
    }
}

void
so_gx_ones(int t, char *cells, npy_intp ncells)
{
    npy_intp c;
    for (c = 0; c < ncells; c++) {
        switch (t) {
        case SO_GX_C64: ((npy_float *)cells)[2 * c] = 1; ((npy_float *)cells)[2 * c + 1] = 0; break;
        case SO_GX_C128: ((npy_double *)cells)[2 * c] = 1; ((npy_double *)cells)[2 * c + 1] = 0; break;
        case SO_GX_CLD:
            ((npy_longdouble *)cells)[2 * c] = 1;
            ((npy_longdouble *)cells)[2 * c + 1] = 0;
            break;
        default: ((npy_half *)cells)[c] = 0x3c00; break;    /* 1.0 */
        }
    }
}

void
so_gx_complex_divide(int t, char *cells, const npy_intp *cnt, npy_intp ncells, npy_intp inner)
{
    switch (t) {
    case SO_GX_C64: divide_c64((npy_float *)cells, cnt, ncells, inner); break;
    case SO_GX_C128: divide_c128((npy_double *)cells, cnt, ncells, inner); break;
    default: divide_cld((npy_longdouble *)cells, cnt, ncells, inner); break;
    }
}

/*
 * kernels/group.c: the member loops of a group reduction (group.h), one
 * function per computing type, the op chosen once per member row.  Each op is
 * NumPy's element operation: integers wrap (computed unsigned), max and min
 * are np.maximum / np.minimum (x if x > y or x is NaN, else y: the later of
 * a ±0 tie, the first NaN), argmax keeps the first best and the first NaN,
 * float16 rounds after every member as np.add.at on float16 does.
 */
#include "kernels/group.h"

#include <numpy/halffloat.h>

#define ROUND_HALF(x) npy_half_to_float(npy_float_to_half(x))

/* NAME: the suffix; T: the type; UT: the type its + and * run in (integers
 * wrap); ISNAN(x): whether x is a NaN (0 for integers). */
#define GROUP_LOOP(NAME, T, UT, ISNAN)                                                   \
static void                                                                              \
members_##NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0) \
{                                                                                        \
    const npy_intp inner = L->inner, si = L->si, size = L->size;                         \
    const int op = L->op, skipnan = L->skipnan;                                          \
    npy_intp n, i;                                                                       \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = g0 >= 0 ? g0 : L->gid[n];                                     \
        const char *x = L->v + o * L->so + n * L->sn;                                    \
        const npy_intp cell = (o * size + g) * inner;                                    \
        T *r = (T *)L->res + cell;                                                       \
        npy_intp *c = L->cnt + (skipnan ? cell : o * size + g);                          \
        int first;                                                                       \
        if ((npy_uintp)g >= (npy_uintp)size) continue;                                   \
        first = !skipnan && c[0] == 0;                                                   \
        if (!skipnan) c[0]++;                                                            \
        for (i = 0; i < inner; i++, x += si) {                                           \
            const T xv = *(const T *)x;                                                  \
            if (skipnan) {                                                               \
                if (ISNAN(xv)) continue;                                                 \
                first = c[i]++ == 0;                                                     \
            }                                                                            \
            switch (op) {                                                                \
            case SO_G_SUM: r[i] = (T)((UT)r[i] + (UT)xv); break;                         \
            case SO_G_PROD: r[i] = (T)((UT)r[i] * (UT)xv); break;                        \
            case SO_G_SUM_HALF: r[i] = (T)ROUND_HALF((float)r[i] + (float)xv); break;    \
            case SO_G_PROD_HALF: r[i] = (T)ROUND_HALF((float)r[i] * (float)xv); break;   \
            case SO_G_MAX:                                                               \
                if (first || !(r[i] > xv || ISNAN(r[i]))) r[i] = xv;                     \
                break;                                                                   \
            case SO_G_MIN:                                                               \
                if (first || !(r[i] < xv || ISNAN(r[i]))) r[i] = xv;                     \
                break;                                                                   \
            case SO_G_FIRST: if (first) r[i] = xv; break;                                \
            case SO_G_LAST: r[i] = xv; break;                                            \
            case SO_G_ARGMAX:                                                            \
                if (first || (!ISNAN(r[i]) && (ISNAN(xv) || xv > r[i]))) {               \
                    r[i] = xv;                                                           \
                    L->pos[cell + i] = n;                                                \
                }                                                                        \
                break;                                                                   \
            case SO_G_ARGMIN:                                                            \
                if (first || (!ISNAN(r[i]) && (ISNAN(xv) || xv < r[i]))) {               \
                    r[i] = xv;                                                           \
                    L->pos[cell + i] = n;                                                \
                }                                                                        \
                break;                                                                   \
            case SO_G_ANY:                                                               \
                if (xv != 0) ((npy_bool *)L->res)[cell + i] = 1;                         \
                break;                                                                   \
            case SO_G_ALL:                                                               \
                if (!(xv != 0)) ((npy_bool *)L->res)[cell + i] = 0;                      \
                break;                                                                   \
            case SO_G_DEV: {                                                             \
                const T d = xv - ((const T *)L->mean)[cell + i];                         \
                r[i] = r[i] + d * d;                                                     \
                break;                                                                   \
            }                                                                            \
            default: break;                                                              \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}

#define NO_NAN(x) ((void)(x), 0)
#define IS_NAN(x) ((x) != (x))
GROUP_LOOP(i64, npy_int64, npy_uint64, NO_NAN)
GROUP_LOOP(u64, npy_uint64, npy_uint64, NO_NAN)
GROUP_LOOP(f32, npy_float, npy_float, IS_NAN)
GROUP_LOOP(f64, npy_double, npy_double, IS_NAN)
GROUP_LOOP(ld, npy_longdouble, npy_longdouble, IS_NAN)

void
so_group_members(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    switch (L->type) {
    case SO_GT_I64: members_i64(L, o, n0, n1, g); break;
    case SO_GT_U64: members_u64(L, o, n0, n1, g); break;
    case SO_GT_F32: members_f32(L, o, n0, n1, g); break;
    case SO_GT_F64: members_f64(L, o, n0, n1, g); break;
    default: members_ld(L, o, n0, n1, g); break;
    }
}

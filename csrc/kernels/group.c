/*
 * kernels/group.c: the member loops of a group reduction (group.h), one
 * function per computing type, the op chosen once per member row.  Each op is
 * NumPy's element operation: integers wrap (computed unsigned), max and min
 * are np.maximum / np.minimum (x if x > y or x is NaN, else y: the later of
 * a ±0 tie, the first NaN), argmax keeps the first best and the first NaN,
 * float16 rounds after every member as np.add.at on float16 does; datetime64
 * and timedelta64 compare as int64 with NaT as the NaN.
 */
#include "kernels/group_types.h"

#include <numpy/halffloat.h>

#define ROUND_HALF(x) npy_half_to_float(npy_float_to_half(x))

/* The member loop with STEP the op on one element: r[i] the cell, xv the
 * member's value, first whether it is the cell's first (present) member. */
#define MEMBERS(T, ISNAN, STEP)                                                          \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = g0 >= 0 ? g0 : so_group_id(L, n);                             \
        const char *x;                                                                   \
        npy_intp cell, *c;                                                               \
        T *r;                                                                            \
        int first;                                                                       \
        if ((npy_uintp)g >= (npy_uintp)size) continue;                                   \
        x = L->v + o * L->so + n * L->sn;                                                \
        cell = (o * size + g) * inner;                                                   \
        r = (T *)L->res + cell;                                                          \
        (void)r;                                                                         \
        if (skipnan) {                                                                   \
            c = L->cnt + cell;                                                           \
            for (i = 0; i < inner; i++, x += si) {                                       \
                const T xv = *(const T *)x;                                              \
                if (ISNAN(xv)) continue;                                                 \
                first = counted && c[i]++ == 0;                                          \
                STEP;                                                                    \
                (void)first;                                                             \
            }                                                                            \
            continue;                                                                    \
        }                                                                                \
        c = L->cnt + o * size + g;                                                       \
        first = counted && c[0]++ == 0;                                                  \
        (void)first;                                                                     \
        if (inner == 1) {                                                                \
            const T xv = *(const T *)x;                                                  \
            i = 0;                                                                       \
            STEP;                                                                        \
            (void)xv;                                                                    \
        }                                                                                \
        else {                                                                           \
            for (i = 0; i < inner; i++, x += si) {                                       \
                const T xv = *(const T *)x;                                              \
                STEP;                                                                    \
                (void)xv;                                                                \
            }                                                                            \
        }                                                                                \
    }

/* NAME: the suffix; T: the type; UT: the type its + and * run in (integers
 * wrap); ISNAN(x): whether x is a NaN (0 for integers); GT(a, b), LT(a, b):
 * a > b, a < b, false when b is a NaN. */
#define GROUP_LOOP(NAME, T, UT, ISNAN, GT, LT)                                           \
static void                                                                              \
members_##NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0) \
{                                                                                        \
    const npy_intp inner = L->inner, si = L->si, size = L->size;                         \
    const int skipnan = L->skipnan, counted = L->counted;                                \
    npy_bool *b = (npy_bool *)L->res;                                                    \
    npy_intp n, i;                                                                       \
    switch (L->op) {                                                                     \
    case SO_G_SUM: MEMBERS(T, ISNAN, r[i] = (T)((UT)r[i] + (UT)xv)); break;              \
    case SO_G_PROD: MEMBERS(T, ISNAN, r[i] = (T)((UT)r[i] * (UT)xv)); break;             \
    case SO_G_SUM_HALF:                                                                  \
        MEMBERS(T, ISNAN, r[i] = (T)ROUND_HALF((float)r[i] + (float)xv)); break;         \
    case SO_G_PROD_HALF:                                                                 \
        MEMBERS(T, ISNAN, r[i] = (T)ROUND_HALF((float)r[i] * (float)xv)); break;         \
    case SO_G_MAX:                                                                       \
        MEMBERS(T, ISNAN, if (first || !(GT(r[i], xv) || ISNAN(r[i]))) r[i] = xv); break; \
    case SO_G_MIN:                                                                       \
        MEMBERS(T, ISNAN, if (first || !(LT(r[i], xv) || ISNAN(r[i]))) r[i] = xv); break; \
    case SO_G_MAX_HALF:                                                                  \
        MEMBERS(T, ISNAN, if (first || !(r[i] >= xv || ISNAN(r[i]))) r[i] = xv); break;  \
    case SO_G_MIN_HALF:                                                                  \
        MEMBERS(T, ISNAN, if (first || !(r[i] <= xv || ISNAN(r[i]))) r[i] = xv); break;  \
    case SO_G_FIRST: MEMBERS(T, ISNAN, if (first) r[i] = xv); break;                     \
    case SO_G_LAST: MEMBERS(T, ISNAN, r[i] = xv); break;                                 \
    case SO_G_ARGMAX:                                                                    \
        MEMBERS(T, ISNAN, if (first || (!ISNAN(r[i]) && (ISNAN(xv) || xv > r[i]))) {     \
            r[i] = xv;                                                                   \
            L->pos[cell + i] = n;                                                        \
        }); break;                                                                       \
    case SO_G_ARGMIN:                                                                    \
        MEMBERS(T, ISNAN, if (first || (!ISNAN(r[i]) && (ISNAN(xv) || xv < r[i]))) {     \
            r[i] = xv;                                                                   \
            L->pos[cell + i] = n;                                                        \
        }); break;                                                                       \
    case SO_G_ANY: MEMBERS(T, ISNAN, if (xv != 0) b[cell + i] = 1); break;               \
    case SO_G_ALL: MEMBERS(T, ISNAN, if (!(xv != 0)) b[cell + i] = 0); break;            \
    case SO_G_DEV:                                                                       \
        MEMBERS(T, ISNAN, const T d = xv - ((const T *)L->mean)[cell + i];               \
                r[i] = r[i] + d * d); break;                                             \
    default: MEMBERS(T, ISNAN, (void)r); break;                                          \
    }                                                                                    \
}

SO_GROUP_TYPES(GROUP_LOOP)

void
so_group_members(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    switch (L->type) {
    case SO_GT_I64: members_i64(L, o, n0, n1, g); break;
    case SO_GT_U64: members_u64(L, o, n0, n1, g); break;
    case SO_GT_F32: members_f32(L, o, n0, n1, g); break;
    case SO_GT_F64: members_f64(L, o, n0, n1, g); break;
    case SO_GT_DT: members_dt(L, o, n0, n1, g); break;
    default: members_ld(L, o, n0, n1, g); break;
    }
}

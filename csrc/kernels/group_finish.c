/*
 * kernels/group_finish.c: the per-cell steps of a group reduction after its
 * member loops (group.h): the division of a mean or a variance, logsumexp's
 * m + log(s), and the exp terms of logsumexp and softmax, each in the
 * computing type, one IEEE operation as the contract writes it.
 */
#include "kernels/group_types.h"

/* A member loop's facts in locals (a store through T * may alias *L for the
 * compiler, which would read L again at every member): c the cells of outer
 * row o in CELLS, v its values, ids int64 (gid) or not (NULL: so_group_id). */
#define MEMBER_LOCALS(T, CELLS)                                                          \
    const npy_intp size = L->size, inner = L->inner, sn = L->sn, si = L->si;             \
    const char *const v = L->v + o * L->so;                                              \
    const npy_intp *const gid = L->gid32 == NULL ? L->gid : NULL;                        \
    T *const c = (CELLS) + o * size * inner;                                             \
    npy_intp n, i
#define ID64(n) (gid[n])

npy_intp
so_group_itemsize(int t)
{
    switch (t) {
    case SO_GT_F32: return (npy_intp)sizeof(npy_float);
    case SO_GT_LD: return (npy_intp)sizeof(npy_longdouble);
    default: return 8;
    }
}

#define ONES(T, cells, n)                                                                \
    do {                                                                                 \
        npy_intp c_;                                                                     \
        for (c_ = 0; c_ < (n); c_++) ((T *)(cells))[c_] = (T)1;                          \
    } while (0)

void
so_group_ones(int t, char *cells, npy_intp ncells)
{
    switch (t) {
    case SO_GT_I64: case SO_GT_DT: ONES(npy_int64, cells, ncells); break;
    case SO_GT_U64: ONES(npy_uint64, cells, ncells); break;
    case SO_GT_F32: ONES(npy_float, cells, ncells); break;
    case SO_GT_F64: ONES(npy_double, cells, ncells); break;
    default: ONES(npy_longdouble, cells, ncells); break;
    }
}

#define FLOAT_FINISH(NAME, T, SQRT, NANV, INF)                                           \
static void                                                                              \
divide_##NAME(T *r, const npy_intp *cnt, npy_intp ncells, npy_intp inner)                \
{                                                                                        \
    npy_intp c;                                                                          \
    for (c = 0; c < ncells; c++) {                                                       \
        const npy_intp k = cnt[c / inner];                                               \
        if (k > 0) r[c] = r[c] / (T)k;                                                   \
    }                                                                                    \
}                                                                                        \
static void                                                                              \
var_##NAME(T *r, const npy_intp *cnt, npy_intp ncells, npy_intp inner, npy_intp ddof,    \
           int sqrt_it)                                                                  \
{                                                                                        \
    npy_intp c;                                                                          \
    for (c = 0; c < ncells; c++) {                                                       \
        const npy_intp k = cnt[c / inner];                                               \
        if (k == 0) continue;                                                            \
        r[c] = k - ddof > 0 ? r[c] / (T)(k - ddof) : (T)NANV;                            \
        if (sqrt_it) r[c] = SQRT(r[c]);                                                  \
    }                                                                                    \
}                                                                                        \
static void                                                                              \
lse_##NAME(T *r, const T *m, npy_intp ncells)                                            \
{                                                                                        \
    npy_intp c;                                                                          \
    for (c = 0; c < ncells; c++) {                                                       \
        const T mc = m[c];                                                               \
        if (mc != mc || mc == (T)INF || mc == -(T)INF) r[c] = mc;                        \
        else r[c] = mc + r[c];                                                           \
    }                                                                                    \
}                                                                                        \
static npy_intp                                                                          \
diffs_##NAME(const so_group_loop *L, const T *mx, T *out, npy_intp o, npy_intp n0,       \
             npy_intp n1)                                                                \
{                                                                                        \
    MEMBER_LOCALS(const T, mx);                                                          \
    npy_intp k = 0;                                                                      \
    if (inner == 1 && gid != NULL) {                                                     \
        for (n = n0; n + 4 <= n1; n += 4)                                                \
            AT_FOUR(ID64, (void)0, out[k++] = *(const T *)(v + m * sn) - c[g])           \
        for (; n < n1; n++)                                                              \
            AT_MEMBER(n, gid[n], (void)0, out[k++] = *(const T *)(v + m * sn) - c[g])    \
        return k;                                                                        \
    }                                                                                    \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = so_group_id(L, n);                                            \
        const char *x = v + n * sn;                                                      \
        if ((npy_uintp)g >= (npy_uintp)size) continue;                                   \
        for (i = 0; i < inner; i++, x += si) out[k++] = *(const T *)x - c[g * inner + i];\
    }                                                                                    \
    return k;                                                                            \
}                                                                                        \
static void                                                                              \
add_terms_##NAME(const so_group_loop *L, T *s, const T *e, npy_intp o, npy_intp n0,      \
                 npy_intp n1)                                                            \
{                                                                                        \
    MEMBER_LOCALS(T, s);                                                                 \
    if (inner == 1 && gid != NULL) {                                                     \
        for (n = n0; n + 4 <= n1; n += 4) AT_FOUR(ID64, (void)0, c[g] = c[g] + *e++)     \
        for (; n < n1; n++) AT_MEMBER(n, gid[n], (void)0, c[g] = c[g] + *e++)            \
        return;                                                                          \
    }                                                                                    \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = so_group_id(L, n);                                            \
        T *sc = c + g * inner;                                                           \
        if ((npy_uintp)g >= (npy_uintp)size) continue;                                   \
        for (i = 0; i < inner; i++) sc[i] = sc[i] + *e++;                                \
    }                                                                                    \
    (void)v; (void)sn; (void)si;                                                         \
}                                                                                        \
static void                                                                              \
scale_##NAME(const so_group_loop *L, T *res, const T *s, int log, npy_intp o,            \
             npy_intp n0, npy_intp n1)                                                   \
{                                                                                        \
    MEMBER_LOCALS(const T, s);                                                           \
    T *xo = res + o * L->n * inner;                                                      \
    if (inner == 1 && gid != NULL && log) {                                              \
        for (n = n0; n + 4 <= n1; n += 4) AT_FOUR(ID64, (void)0, xo[m] = xo[m] - c[g])   \
        for (; n < n1; n++) AT_MEMBER(n, gid[n], (void)0, xo[m] = xo[m] - c[g])          \
        return;                                                                          \
    }                                                                                    \
    if (inner == 1 && gid != NULL) {                                                     \
        for (n = n0; n + 4 <= n1; n += 4) AT_FOUR(ID64, (void)0, xo[m] = xo[m] / c[g])   \
        for (; n < n1; n++) AT_MEMBER(n, gid[n], (void)0, xo[m] = xo[m] / c[g])          \
        return;                                                                          \
    }                                                                                    \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = so_group_id(L, n);                                            \
        const T *sc = c + g * inner;                                                     \
        T *x = xo + n * inner;                                                           \
        if ((npy_uintp)g >= (npy_uintp)size) continue;                                   \
        if (log) for (i = 0; i < inner; i++) x[i] = x[i] - sc[i];                        \
        else for (i = 0; i < inner; i++) x[i] = x[i] / sc[i];                            \
    }                                                                                    \
    (void)v; (void)sn; (void)si;                                                         \
}

FLOAT_FINISH(f32, npy_float, sqrtf, NAN, INFINITY)
FLOAT_FINISH(f64, npy_double, sqrt, NAN, INFINITY)
FLOAT_FINISH(ld, npy_longdouble, sqrtl, NAN, INFINITY)

#define DISPATCH(t, CALL_F32, CALL_F64, CALL_LD)                                         \
    switch (t) {                                                                         \
    case SO_GT_F32: CALL_F32; break;                                                     \
    case SO_GT_F64: CALL_F64; break;                                                     \
    default: CALL_LD; break;                                                             \
    }

void
so_group_divide(int t, char *cells, const npy_intp *cnt, npy_intp ncells, npy_intp inner)
{
    DISPATCH(t, divide_f32((npy_float *)cells, cnt, ncells, inner),
             divide_f64((npy_double *)cells, cnt, ncells, inner),
             divide_ld((npy_longdouble *)cells, cnt, ncells, inner))
}

void
so_group_var(int t, char *cells, const npy_intp *cnt, npy_intp ncells, npy_intp inner,
             npy_intp ddof, int sqrt_it)
{
    DISPATCH(t, var_f32((npy_float *)cells, cnt, ncells, inner, ddof, sqrt_it),
             var_f64((npy_double *)cells, cnt, ncells, inner, ddof, sqrt_it),
             var_ld((npy_longdouble *)cells, cnt, ncells, inner, ddof, sqrt_it))
}

void
so_group_lse(int t, char *cells, const char *m, npy_intp ncells)
{
    DISPATCH(t, lse_f32((npy_float *)cells, (const npy_float *)m, ncells),
             lse_f64((npy_double *)cells, (const npy_double *)m, ncells),
             lse_ld((npy_longdouble *)cells, (const npy_longdouble *)m, ncells))
}

npy_intp
so_group_diffs(const so_group_loop *L, const char *m, char *out, npy_intp o, npy_intp n0,
               npy_intp n1)
{
    npy_intp k;
    DISPATCH(L->type, k = diffs_f32(L, (const npy_float *)m, (npy_float *)out, o, n0, n1),
             k = diffs_f64(L, (const npy_double *)m, (npy_double *)out, o, n0, n1),
             k = diffs_ld(L, (const npy_longdouble *)m, (npy_longdouble *)out, o, n0, n1))
    return k;
}

void
so_group_add_terms(const so_group_loop *L, char *sums, const char *terms, npy_intp o,
                   npy_intp n0, npy_intp n1)
{
    DISPATCH(L->type, add_terms_f32(L, (npy_float *)sums, (const npy_float *)terms, o, n0, n1),
             add_terms_f64(L, (npy_double *)sums, (const npy_double *)terms, o, n0, n1),
             add_terms_ld(L, (npy_longdouble *)sums, (const npy_longdouble *)terms, o, n0, n1))
}

void
so_group_scale(const so_group_loop *L, char *res, const char *s, int log, npy_intp o,
               npy_intp n0, npy_intp n1)
{
    DISPATCH(L->type, scale_f32(L, (npy_float *)res, (const npy_float *)s, log, o, n0, n1),
             scale_f64(L, (npy_double *)res, (const npy_double *)s, log, o, n0, n1),
             scale_ld(L, (npy_longdouble *)res, (const npy_longdouble *)s, log, o, n0, n1))
}

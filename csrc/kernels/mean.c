/*
 * kernels/mean.c: the division loops of reduction="mean" for the typed dtypes:
 * every element that updates hit becomes sum / (count + include_self), divided
 * by kernels/mean_div.h's rule for its dtype.  The other dtypes finish in
 * NumPy (scatterops/_generic.py: mean_divide).  Which elements and counts:
 * walk/mean_walk.c.
 */
#include "kernels/mean_div.h"

#define MEAN_LOOP(NAME, T, BODY)                                                      \
static void                                                                           \
NAME(char *o, npy_intp os, const char *c, npy_intp cs, npy_intp n, npy_intp extra)   \
{                                                                                     \
    npy_intp i, k;                                                                    \
    T x;                                                                              \
    if (cs == 0) {                                                                    \
        /* one count for the whole row: no test per element (it vectorises) */      \
        memcpy(&k, c, sizeof k);                                                      \
        if (k == 0) return;                                                           \
        k += extra;                                                                   \
        for (i = 0; i < n; i++) {                                                     \
            memcpy(&x, o + i * os, sizeof(T));                                        \
            BODY;                                                                     \
            memcpy(o + i * os, &x, sizeof(T));                                        \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        memcpy(&k, c + i * cs, sizeof k);                                             \
        if (k == 0) continue;                                                         \
        k += extra;                                                                   \
        memcpy(&x, o + i * os, sizeof(T));                                            \
        BODY;                                                                         \
        memcpy(o + i * os, &x, sizeof(T));                                            \
    }                                                                                 \
}

#define MEAN_OF(NAME, T) MEAN_LOOP(mean_##NAME, T, x = NAME##_div(x, k))
SO_NUMERIC_TYPES(MEAN_OF)
#undef MEAN_OF

so_mean_fn
so_mean_kernel(PyArray_Descr *d)
{
    static const so_mean_fn rows[SO_NROWS] = {
        mean_i8, mean_i16, mean_i32, mean_i64, mean_u8, mean_u16, mean_u32, mean_u64,
        mean_f16, mean_f32, mean_f64, mean_c64, mean_c128};
    int row = so_typed_row(d);
    return row < 0 ? NULL : rows[row];
}

int
so_has_mean_kernel(PyArray_Descr *d)
{
    return so_mean_kernel(d) != NULL;
}

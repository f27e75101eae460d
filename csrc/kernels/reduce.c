/*
 * kernels/reduce.c: typed reduction kernels, generated from one table of dtypes
 * and for ml_dtypes' bfloat16 (known by its scalar type: its type number is
 * given out at import), on the element operations of kernels/ops.h.
 */
#include "kernels/ops.h"

/* how many elements ahead the element kernels prefetch their destination, and
 * the size of out (bytes along the axis) below which they do not: it is in cache */
#define SO_ELEM_AHEAD 16
#define SO_CACHED_BYTES ((npy_intp)1 << 20)
/* the list kernels (a thread's owned elements, walk/owned.c) prefetch further ahead */
#define SO_LIST_AHEAD 32

/* ---- kernels from the element operations ----------------------------------- */

/* y = the update at src, for every OP but count: the count kernels (the hits of
 * reduction "mean", on npy_intp counts) walk beside updates of another dtype,
 * often narrower than a count, and read none of them.  The test is a constant:
 * an optimised build drops the branch (and before it dropped the unused read,
 * which an unoptimised sanitizer build saw past the end of an int8 update). */
#define SO_READS_UPDATE_add 1
#define SO_READS_UPDATE_sub 1
#define SO_READS_UPDATE_mul 1
#define SO_READS_UPDATE_max 1
#define SO_READS_UPDATE_min 1
#define SO_READS_UPDATE_count 0
#define SO_LOAD_UPDATE(OP, dst, src, size)                                            \
    do {                                                                              \
        if (SO_READS_UPDATE_##OP) memcpy(dst, src, size);                             \
        else memset(dst, 0, size);                                                    \
    } while (0)

#define DEFINE_KERNELS_ATTR(NAME, T, OP, ATTR)                                        \
ATTR static void                                                                      \
NAME##_##OP##_block(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n,     \
                    npy_intp isz)                                                     \
{                                                                                     \
    npy_intp i;                                                                       \
    T x, y;                                                                           \
    if (os == (npy_intp)sizeof(T) && us == (npy_intp)sizeof(T)) {                     \
        for (i = 0; i < n; i++) {                                                     \
            memcpy(&x, o + i * sizeof(T), sizeof(T));                                 \
            SO_LOAD_UPDATE(OP, &y, u + i * sizeof(T), sizeof(T));                     \
            x = SO_OPV(NAME, OP)(x, y);                                               \
            memcpy(o + i * sizeof(T), &x, sizeof(T));                                 \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        memcpy(&x, o + i * os, sizeof(T));                                            \
        SO_LOAD_UPDATE(OP, &y, u + i * us, sizeof(T));                                \
        x = SO_OP1(NAME, OP)(x, y);                                                   \
        memcpy(o + i * os, &x, sizeof(T));                                            \
    }                                                                                 \
}                                                                                     \
ATTR static void                                                                      \
NAME##_##OP##_elem(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size, \
                   npy_intp aos, const char *u, npy_intp us, npy_intp n, npy_intp isz)\
{                                                                                     \
    npy_intp i;                                                                       \
    T x, y;                                                                           \
    if (os == 0 && is == (npy_intp)sizeof(npy_intp) && us == (npy_intp)sizeof(T) &&   \
            size * (aos < 0 ? -aos : aos) <= SO_CACHED_BYTES) {                       \
        /* scattered elements into an out that stays in cache: nothing to prefetch */ \
        for (i = 0; i < n; i++) {                                                     \
            npy_intp j = so_clamp(so_load_intp(idx + i * sizeof(npy_intp)), size);    \
            char *p = o + j * aos;                                                    \
            memcpy(&x, p, sizeof(T));                                                 \
            SO_LOAD_UPDATE(OP, &y, u + i * sizeof(T), sizeof(T));                     \
            x = SO_OP1(NAME, OP)(x, y);                                               \
            memcpy(p, &x, sizeof(T));                                                 \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    if (os == 0 && is == (npy_intp)sizeof(npy_intp) && us == (npy_intp)sizeof(T)) {   \
        /* a run of scattered elements: indices and updates contiguous */             \
        for (i = 0; i < n; i++) {                                                     \
            npy_intp j = so_clamp(so_load_intp(idx + i * sizeof(npy_intp)), size);    \
            char *p = o + j * aos;                                                    \
            if (i + SO_ELEM_AHEAD < n) {                                              \
                npy_intp jf = so_load_intp(idx + (i + SO_ELEM_AHEAD) * sizeof(npy_intp)); \
                __builtin_prefetch(o + so_wrap(jf, size) * aos, 1);                   \
            }                                                                         \
            memcpy(&x, p, sizeof(T));                                                 \
            SO_LOAD_UPDATE(OP, &y, u + i * sizeof(T), sizeof(T));                     \
            x = SO_OP1(NAME, OP)(x, y);                                               \
            memcpy(p, &x, sizeof(T));                                                 \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);                      \
        char *p = o + i * os + j * aos;                                               \
        memcpy(&x, p, sizeof(T));                                                     \
        SO_LOAD_UPDATE(OP, &y, u + i * us, sizeof(T));                                \
        x = SO_OP1(NAME, OP)(x, y);                                                   \
        memcpy(p, &x, sizeof(T));                                                     \
    }                                                                                 \
}                                                                                     \
ATTR static void                                                                      \
NAME##_##OP##_first(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size,\
                    npy_intp aos, char *m, npy_intp ms, npy_intp ams, const char *u,  \
                    npy_intp us, npy_intp n)                                          \
{                                                                                     \
    npy_intp i;                                                                       \
    T x, y;                                                                           \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);                      \
        char *p = o + i * os + j * aos, *mk = m + i * ms + j * ams;                   \
        SO_LOAD_UPDATE(OP, &y, u + i * us, sizeof(T));                                \
        if (*mk) {                                                                    \
            memcpy(&x, p, sizeof(T));                                                 \
            y = SO_OP1(NAME, OP)(x, y);                                               \
        }                                                                             \
        *mk = 1;                                                                      \
        memcpy(p, &y, sizeof(T));                                                     \
    }                                                                                 \
}                                                                                     \
ATTR static void                                                                      \
NAME##_##OP##_list(char *o, const char *u, const npy_intp *oo, const npy_intp *uo,    \
                   npy_intp n, npy_intp isz)                                          \
{                                                                                     \
    npy_intp q;                                                                       \
    T x, y;                                                                           \
    for (q = 0; q < n; q++) {                                                         \
        char *p = o + oo[q];                                                          \
        if (q + SO_LIST_AHEAD < n) __builtin_prefetch(o + oo[q + SO_LIST_AHEAD], 1);  \
        memcpy(&x, p, sizeof(T));                                                     \
        SO_LOAD_UPDATE(OP, &y, u + uo[q], sizeof(T));                                 \
        x = SO_OP1(NAME, OP)(x, y);                                                   \
        memcpy(p, &x, sizeof(T));                                                     \
    }                                                                                 \
}

#define DEFINE_KERNELS(NAME, T, OP) DEFINE_KERNELS_ATTR(NAME, T, OP, )
#define DEFINE_ONE(NAME, T, OP) DEFINE_KERNELS(NAME, T, OP)
#define DEFINE_ALL(NAME, T)                                                           \
    DEFINE_ONE(NAME, T, add) DEFINE_ONE(NAME, T, sub)                                 \
    DEFINE_ONE(NAME, T, mul) DEFINE_ONE(NAME, T, max) DEFINE_ONE(NAME, T, min)
/* an unsigned integer: max and min; add, sub and mul are the signed one's
 * (ops.h's SO_SHARED_LOOP_TYPES) */
#define DEFINE_MAXMIN(NAME, T, SNAME) DEFINE_ONE(NAME, T, max) DEFINE_ONE(NAME, T, min)

SO_OWN_LOOP_TYPES(DEFINE_ALL)
DEFINE_ALL(f16, npy_half)
SO_SHARED_LOOP_TYPES(DEFINE_MAXMIN)
#ifdef SO_HAVE_F16C
DEFINE_KERNELS_ATTR(f16c, npy_half, add, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, sub, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, mul, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, max, SO_F16C)
DEFINE_KERNELS_ATTR(f16c, npy_half, min, SO_F16C)
#endif
DEFINE_ALL(bf16, npy_uint16)
DEFINE_ONE(b, npy_bool, add)
DEFINE_ONE(b, npy_bool, mul)
DEFINE_ONE(b, npy_bool, max)
DEFINE_ONE(b, npy_bool, min)
DEFINE_ONE(cnt, npy_intp, count)

typedef struct {
    so_block_fn block[SO_NOPS];
    so_elem_fn elem[SO_NOPS];
    so_list_fn list[SO_NOPS];
    so_first_fn first[SO_NOPS];
} so_row;

/* the row of dtype NAME, its add, sub and mul those of ARITH (NAME itself, or
 * the signed integer an unsigned one shares them with) */
#define ROW_OF(NAME, ARITH)                                                           \
    static const so_row row_##NAME = {                                                \
        {NULL, ARITH##_add_block, ARITH##_sub_block, ARITH##_mul_block,               \
         NAME##_max_block, NAME##_min_block, NULL},                                   \
        {NULL, ARITH##_add_elem, ARITH##_sub_elem, ARITH##_mul_elem,                  \
         NAME##_max_elem, NAME##_min_elem, NULL},                                     \
        {NULL, ARITH##_add_list, ARITH##_sub_list, ARITH##_mul_list,                  \
         NAME##_max_list, NAME##_min_list, NULL},                                     \
        {NULL, ARITH##_add_first, ARITH##_sub_first, ARITH##_mul_first,               \
         NAME##_max_first, NAME##_min_first, NULL}};
#define ROW(NAME, T) ROW_OF(NAME, NAME)
#define SHARED_ROW(NAME, T, SNAME) ROW_OF(NAME, SNAME)
SO_OWN_LOOP_TYPES(ROW)
ROW(f16, npy_half)
SO_SHARED_LOOP_TYPES(SHARED_ROW)
#ifdef SO_HAVE_F16C
ROW(f16c, npy_half)
#endif
ROW(bf16, npy_uint16)
static const so_row row_b = {
    {NULL, b_add_block, NULL, b_mul_block, b_max_block, b_min_block, NULL},
    {NULL, b_add_elem, NULL, b_mul_elem, b_max_elem, b_min_elem, NULL},
    {NULL, b_add_list, NULL, b_mul_list, b_max_list, b_min_list, NULL},
    {NULL, b_add_first, NULL, b_mul_first, b_max_first, b_min_first, NULL}};


/* Whether descr is ml_dtypes' bfloat16.  ml_dtypes registers its dtypes at
 * import (PyArray_RegisterDataType), so the type number is whatever NumPy gave
 * out; the scalar type is known by its name and the item size, and then by its
 * address, kept for the next call (a module's type lives as long as the
 * process: ml_dtypes is never unloaded). */
int
so_is_bfloat16(PyArray_Descr *descr)
{
    static PyTypeObject *known;
    PyTypeObject *t = descr->typeobj;
    if (t == NULL || PyDataType_ELSIZE(descr) != 2 || descr->kind != 'V') return 0;
    if (t == known) return 1;
    if (known != NULL || strcmp(t->tp_name, "ml_dtypes.bfloat16") != 0) return 0;
    known = t;
    return 1;
}

static const so_row *
row_for(PyArray_Descr *descr)
{
    int tn = descr->type_num;
    int isz = (int)PyDataType_ELSIZE(descr);
    if (tn == NPY_BOOL) return &row_b;
    if (PyTypeNum_ISSIGNED(tn)) {
        switch (isz) {
            case 1: return &row_i8;
            case 2: return &row_i16;
            case 4: return &row_i32;
            case 8: return &row_i64;
        }
        return NULL;
    }
    if (PyTypeNum_ISUNSIGNED(tn)) {
        switch (isz) {
            case 1: return &row_u8;
            case 2: return &row_u16;
            case 4: return &row_u32;
            case 8: return &row_u64;
        }
        return NULL;
    }
    switch (tn) {
        case NPY_HALF:
#ifdef SO_HAVE_F16C
            if (so_cpu_has(SO_CPU_F16C)) return &row_f16c;
#endif
            return &row_f16;
        case NPY_FLOAT: return &row_f32;
        case NPY_DOUBLE: return &row_f64;
        case NPY_CFLOAT: return &row_c64;
        case NPY_CDOUBLE: return &row_c128;
    }
    if (so_is_bfloat16(descr)) return &row_bf16;
    return NULL;
}

void
so_count_kernel(so_kernel *kn)
{
    kn->block = cnt_count_block;
    kn->elem = cnt_count_elem;
    kn->list = cnt_count_list;
    kn->first = NULL;            /* counts are never masked */
    (void)cnt_count_first;
    kn->itemsize = sizeof(npy_intp);
    kn->needs_gil = 0;
}

int
so_reduce_kernel(so_kernel *kn, PyArray_Descr *descr, int op)
{
    const so_row *row;
    if (op == SO_COUNT) {
        if (!PyTypeNum_ISSIGNED(descr->type_num) ||
            PyDataType_ELSIZE(descr) != (npy_intp)sizeof(npy_intp)) return 0;
        so_count_kernel(kn);
        return 1;
    }
    if (op <= SO_NONE || op >= SO_COUNT || !PyArray_ISNBO(descr->byteorder)) {
        return 0;
    }
    row = row_for(descr);
    if (row == NULL || row->block[op] == NULL) {
        return 0;
    }
    kn->block = row->block[op];
    kn->elem = row->elem[op];
    kn->list = row->list[op];
    kn->first = row->first[op];
    kn->itemsize = PyDataType_ELSIZE(descr);
    kn->needs_gil = 0;
    return 1;
}

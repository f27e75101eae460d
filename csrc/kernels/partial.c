/*
 * kernels/partial.c: the two loops that let the reductions whose result does
 * not depend on order be split by updates instead of by output: integer add,
 * sub, mul, max and min.  Integers wrap (ops.h: the arithmetic runs in the
 * unsigned type), so a sum, a product, a max or a min of the same values comes
 * to the same bits in any order and grouping, where a float sum does not.
 *
 * A thread's share of the updates goes into a private partial output that
 * starts at the operation's identity (fill); the element loop of the same
 * operation (indexed.c) then runs into it as into out; merge joins it into
 * out.  For sub the loop leaves 0 - u1 - u2 - ... in the partial, which merge
 * adds: x - u1 - u2 = x + (0 - u1 - u2) modulo 2^bits.
 */
#include "kernels/ops.h"

#include <stdint.h>

/* p[i] = VALUE for i < n: the identity of operation OP */
#define PARTIAL_FILL(NAME, T, OP, VALUE)                                              \
static void NAME##_fill_##OP(char *p, npy_intp n)                                     \
{                                                                                     \
    T *q = (T *)(void *)p;                                                            \
    npy_intp i;                                                                       \
    for (i = 0; i < n; i++) q[i] = (T)(VALUE);                                        \
}

/* The identity of each operation for type T (add's 0, mul's 1, max's T's
 * least value, min's its greatest), and how a partial joins out. */
#define PARTIAL_LOOPS(NAME, T, LEAST, GREATEST)                                       \
PARTIAL_FILL(NAME, T, add, 0)                                                         \
PARTIAL_FILL(NAME, T, mul, 1)                                                         \
PARTIAL_FILL(NAME, T, max, LEAST)                                                     \
PARTIAL_FILL(NAME, T, min, GREATEST)                                                  \
PARTIAL_MERGE(NAME, T, add)                                                           \
PARTIAL_MERGE(NAME, T, mul)                                                           \
PARTIAL_MERGE(NAME, T, max)                                                           \
PARTIAL_MERGE(NAME, T, min)                                                           \
static const so_partial_kernel NAME##_partial[SO_NOPS] = {                           \
    {NULL, NULL},                                                                     \
    {NAME##_fill_add, NAME##_merge_add},   /* add */                                  \
    {NAME##_fill_add, NAME##_merge_add},   /* sub: the partial holds 0 - sum */       \
    {NAME##_fill_mul, NAME##_merge_mul},                                              \
    {NAME##_fill_max, NAME##_merge_max},                                              \
    {NAME##_fill_min, NAME##_merge_min},                                              \
    {NULL, NULL}};

/* o[j*aos] = f(o[j*aos], p[j]) for j < n: f the operation itself */
#define PARTIAL_MERGE(NAME, T, OP)                                                    \
static void NAME##_merge_##OP(char *o, npy_intp aos, const char *p, npy_intp n)       \
{                                                                                     \
    const T *q = (const T *)(const void *)p;                                          \
    npy_intp j;                                                                       \
    if (aos == (npy_intp)sizeof(T)) {                                                 \
        T *r = (T *)(void *)o;                                                        \
        for (j = 0; j < n; j++) r[j] = NAME##_##OP(r[j], q[j]);                       \
        return;                                                                       \
    }                                                                                 \
    for (j = 0; j < n; j++) {                                                         \
        T *r = (T *)(void *)(o + j * aos);                                            \
        *r = NAME##_##OP(*r, q[j]);                                                   \
    }                                                                                 \
}

PARTIAL_LOOPS(i8, npy_int8, INT8_MIN, INT8_MAX)
PARTIAL_LOOPS(i16, npy_int16, INT16_MIN, INT16_MAX)
PARTIAL_LOOPS(i32, npy_int32, INT32_MIN, INT32_MAX)
PARTIAL_LOOPS(i64, npy_int64, INT64_MIN, INT64_MAX)
PARTIAL_LOOPS(u8, npy_uint8, 0, UINT8_MAX)
PARTIAL_LOOPS(u16, npy_uint16, 0, UINT16_MAX)
PARTIAL_LOOPS(u32, npy_uint32, 0, UINT32_MAX)
PARTIAL_LOOPS(u64, npy_uint64, 0, UINT64_MAX)

const so_partial_kernel *
so_partial_kernel_for(PyArray_Descr *d, int op)
{
    static const so_partial_kernel *const rows[] = {
        i8_partial, i16_partial, i32_partial, i64_partial,
        u8_partial, u16_partial, u32_partial, u64_partial};
    int row = so_typed_row(d);
    if (op <= SO_NONE || op > SO_MIN || row < SO_ROW_i8 || row > SO_ROW_u64) return NULL;
    return &rows[row - SO_ROW_i8][op];
}

/*
 * kernels/indexed.c: the element loops of a 1-D scatter, specialised by index
 * dtype: for i < n, o[j] = f(o[j], u[i]) with j = idx[i] read in its own
 * integer type (base.h's SO_INDEX_TYPES: no conversion to intp first), for
 * every typed dtype but float16 and bool (kernels/ops.h) and every reduction.
 * Indices and updates contiguous and aligned; out at any stride.
 *
 * The caller has checked every value (a whole-run min/max, plan/check_run.c),
 * yet each is still wrapped and clamped into [0, size) as it is read (a
 * compare that is never taken; the C model, benchmarks/cmodel, finds it free):
 * a value another thread rewrote after the check lands inside out, never
 * outside it (base.h's so_clamp).
 */
#include "kernels/ops.h"

#define INDEXED(NAME, T, OP, IN, IT, S)                                               \
static void                                                                           \
NAME##_##OP##_by_##IN(char *o, npy_intp aos, npy_intp size, const char *idx,          \
                      const char *u, npy_intp n)                                      \
{                                                                                     \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    const T *restrict up = (const T *)(const void *)u;                                \
    npy_intp i;                                                                       \
    if (aos == (npy_intp)sizeof(T)) {                                                 \
        T *restrict op = (T *)(void *)o;                                              \
        for (i = 0; i < n; i++) {                                                     \
            npy_intp j = SO_IX_CLAMP_##S(ix[i], size);                                \
            op[j] = NAME##_##OP(op[j], up[i]);                                        \
        }                                                                             \
        return;                                                                       \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        T *p = (T *)(void *)(o + SO_IX_CLAMP_##S(ix[i], size) * aos);                 \
        *p = NAME##_##OP(*p, up[i]);                                                  \
    }                                                                                 \
}

/* The loops of one dtype and op, one per index type, and their table. */
#define FOR_INDEX(NAME, T, OP)                                                        \
    INDEXED(NAME, T, OP, i8, npy_int8, 1)                                             \
    INDEXED(NAME, T, OP, i16, npy_int16, 1)                                           \
    INDEXED(NAME, T, OP, i32, npy_int32, 1)                                           \
    INDEXED(NAME, T, OP, i64, npy_int64, 1)                                           \
    INDEXED(NAME, T, OP, u8, npy_uint8, 0)                                            \
    INDEXED(NAME, T, OP, u16, npy_uint16, 0)                                          \
    INDEXED(NAME, T, OP, u32, npy_uint32, 0)                                          \
    INDEXED(NAME, T, OP, u64, npy_uint64, 0)                                          \
    static const so_indexed_fn NAME##_##OP##_by[SO_IX_NTYPES] = {                     \
        NAME##_##OP##_by_i8, NAME##_##OP##_by_i16, NAME##_##OP##_by_i32,              \
        NAME##_##OP##_by_i64, NAME##_##OP##_by_u8, NAME##_##OP##_by_u16,              \
        NAME##_##OP##_by_u32, NAME##_##OP##_by_u64};

#define FOR_OPS(NAME, T)                                                              \
    FOR_INDEX(NAME, T, add) FOR_INDEX(NAME, T, sub) FOR_INDEX(NAME, T, mul)           \
    FOR_INDEX(NAME, T, max) FOR_INDEX(NAME, T, min)                                   \
    static const so_indexed_fn *const NAME##_ops[SO_NOPS] = {                         \
        NULL, NAME##_add_by, NAME##_sub_by, NAME##_mul_by, NAME##_max_by,             \
        NAME##_min_by, NULL};

SO_INDEXED_TYPES(FOR_OPS)

so_indexed_fn
so_indexed_kernel(PyArray_Descr *d, int op, int itype)
{
#define OPS_OF(NAME, T) NAME##_ops,
    static const so_indexed_fn *const *const ops[SO_NINDEXED_TYPES] = {
        SO_INDEXED_TYPES(OPS_OF)};
#undef OPS_OF
    int t = so_indexed_type_of(d);
    if (op <= SO_NONE || op >= SO_COUNT || itype < 0 || itype >= SO_IX_NTYPES || t < 0) {
        return NULL;
    }
    return ops[t][op][itype];
}

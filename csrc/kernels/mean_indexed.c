/*
 * kernels/mean_indexed.c: reduction="mean" in the direct form of a 1-D call
 * (call/direct.c), in one pass over the updates: each element's sum and its
 * count side by side in a scratch array of pairs (one cache line an update,
 * where a sum in out and a count apart touch two: docs/design.md, "A small
 * mean: its pairs where the indices point"), then one pass writing each
 * counted element of out divided (kernels/mean_div.h).  The same additions in
 * the same order as the general walk, the same division: the same bits.
 * Indices read as int32 or int64 (the other index types through one of these,
 * kernels/widen.c), wrapped and tested as in kernels/indexed.c: a loop stops
 * at the first index outside and returns its position, with only the scratch
 * pairs written.
 *
 * The pairs are started from out and divided into it either whole (start,
 * finish) or only where the indices point (start_at, finish_at: a pass over
 * the updates each, for an out much larger than the updates; call/cost.h's
 * so_mean_pairs_at_hits chooses).
 */
#include "kernels/mean_div.h"

/* SELF 1: every update combined with the sum, which starts as out's value;
 * SELF 0: an element's first update assigned, the next ones combined. */
#define MEAN_ADD(NAME, T, IN, IT, S, SELF, SFX)                                       \
static npy_intp                                                                       \
NAME##_mean##SFX##_by_##IN(char *w, npy_intp unused, npy_intp size, const char *idx,  \
                           const char *u, npy_intp n)                                 \
{                                                                                     \
    NAME##_pair *restrict p = (NAME##_pair *)(void *)w;                               \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    const T *restrict up = (const T *)(const void *)u;                                \
    npy_intp i;                                                                       \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = SO_IX_WRAP_##S(ix[i], size);                                     \
        NAME##_pair *q;                                                               \
        if (SO_IX_OUTSIDE(j, size)) return i;                                         \
        q = p + j;                                                                    \
        q->s = (SELF || q->c) ? NAME##_add(q->s, up[i]) : up[i];                      \
        q->c++;                                                                       \
    }                                                                                 \
    return -1;                                                                        \
}

/* the loop of index type IN through that of WIDE (ops.h's so_indexed_widened) */
#define MEAN_WIDENED(NAME, T, IN, WIDE, SFX)                                          \
static npy_intp                                                                       \
NAME##_mean##SFX##_by_##IN(char *w, npy_intp unused, npy_intp size, const char *idx,  \
                           const char *u, npy_intp n)                                 \
{                                                                                     \
    return so_indexed_widened(NAME##_mean##SFX##_by_##WIDE, SO_IX_##IN,               \
                              (npy_intp)sizeof(T), w, unused, size, idx, u, n);       \
}

#define MEAN_BY_INDEX(NAME, T, SELF, SFX)                                             \
    MEAN_ADD(NAME, T, i32, npy_int32, 1, SELF, SFX)                                   \
    MEAN_ADD(NAME, T, i64, npy_int64, 1, SELF, SFX)                                   \
    MEAN_WIDENED(NAME, T, i8, i32, SFX) MEAN_WIDENED(NAME, T, i16, i32, SFX)          \
    MEAN_WIDENED(NAME, T, u8, i32, SFX) MEAN_WIDENED(NAME, T, u16, i32, SFX)          \
    MEAN_WIDENED(NAME, T, u32, i64, SFX) MEAN_WIDENED(NAME, T, u64, i64, SFX)         \
    static const so_indexed_fn NAME##_mean##SFX##_by[SO_IX_NTYPES] = {               \
        NAME##_mean##SFX##_by_i8, NAME##_mean##SFX##_by_i16,                          \
        NAME##_mean##SFX##_by_i32, NAME##_mean##SFX##_by_i64,                         \
        NAME##_mean##SFX##_by_u8, NAME##_mean##SFX##_by_u16,                          \
        NAME##_mean##SFX##_by_u32, NAME##_mean##SFX##_by_u64};

#define MEAN_DTYPE(NAME, T)                                                           \
typedef struct { T s; npy_int32 c; } NAME##_pair;                                     \
static void                                                                           \
NAME##_mean_start(const char *o, npy_intp aos, npy_intp size, char *w)               \
{                                                                                     \
    NAME##_pair *restrict p = (NAME##_pair *)(void *)w;                               \
    npy_intp j;                                                                       \
    for (j = 0; j < size; j++) {                                                      \
        memcpy(&p[j].s, o + j * aos, sizeof(T));                                      \
        p[j].c = 0;                                                                   \
    }                                                                                 \
}                                                                                     \
static void                                                                           \
NAME##_mean_finish(char *o, npy_intp aos, npy_intp size, const char *w,              \
                   int include_self)                                                  \
{                                                                                     \
    const NAME##_pair *restrict p = (const NAME##_pair *)(const void *)w;             \
    npy_intp j;                                                                       \
    for (j = 0; j < size; j++) {                                                      \
        if (p[j].c > 0) {                                                             \
            T x = NAME##_div(p[j].s, (npy_intp)p[j].c + include_self);                \
            memcpy(o + j * aos, &x, sizeof(T));                                       \
        }                                                                             \
    }                                                                                 \
}                                                                                     \
static void                                                                           \
NAME##_mean_start_at(const char *o, npy_intp aos, npy_intp size, const npy_int64 *ix,  \
                     npy_intp n, char *w)                                             \
{                                                                                     \
    NAME##_pair *restrict p = (NAME##_pair *)(void *)w;                               \
    npy_intp i;                                                                       \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = so_wrap((npy_intp)ix[i], size);                                  \
        if (SO_IX_OUTSIDE(j, size)) continue;                                         \
        memcpy(&p[j].s, o + j * aos, sizeof(T));                                      \
        p[j].c = 0;                                                                   \
    }                                                                                 \
}                                                                                     \
static void                                                                           \
NAME##_mean_finish_at(char *o, npy_intp aos, npy_intp size, const npy_int64 *ix,       \
                      npy_intp n, char *w, int include_self)                          \
{                                                                                     \
    NAME##_pair *restrict p = (NAME##_pair *)(void *)w;                               \
    npy_intp i;                                                                       \
    T x;                                                                              \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = so_wrap((npy_intp)ix[i], size);                                  \
        if (SO_IX_OUTSIDE(j, size) || p[j].c <= 0) continue;                          \
        x = NAME##_div(p[j].s, (npy_intp)p[j].c + include_self);                      \
        memcpy(o + j * aos, &x, sizeof(T));                                           \
        p[j].c = 0;             /* a repeated index: divided once */                  \
    }                                                                                 \
}                                                                                     \
MEAN_BY_INDEX(NAME, T, 1, _self)                                                      \
MEAN_BY_INDEX(NAME, T, 0, _first)                                                     \
static const so_mean_indexed NAME##_mean = {                                          \
    NAME##_mean_start, NAME##_mean_self_by, NAME##_mean_first_by,                     \
    NAME##_mean_finish, NAME##_mean_start_at, NAME##_mean_finish_at,                  \
    sizeof(NAME##_pair)};

/* ops.h's table without float16 (its additions convert through F16C, chosen
 * at run time in reduce.c; a float16 mean keeps the general walk) */
#define SO_MEAN_INDEXED_TYPES(X)                                                      \
    X(i8, npy_int8) X(i16, npy_int16) X(i32, npy_int32) X(i64, npy_int64)             \
    X(u8, npy_uint8) X(u16, npy_uint16) X(u32, npy_uint32) X(u64, npy_uint64)         \
    X(f32, npy_float) X(f64, npy_double) X(c64, so_c64) X(c128, so_c128)
SO_MEAN_INDEXED_TYPES(MEAN_DTYPE)

const so_mean_indexed *
so_mean_indexed_kernel(PyArray_Descr *d)
{
    static const so_mean_indexed *const rows[SO_NROWS] = {
        &i8_mean, &i16_mean, &i32_mean, &i64_mean, &u8_mean, &u16_mean, &u32_mean,
        &u64_mean, NULL, &f32_mean, &f64_mean, &c64_mean, &c128_mean};
    int row = so_typed_row(d);
    return row < 0 ? NULL : rows[row];
}

/* The index values of a direct call as int64, in chunks: fn(chunk, m, ctx) for
 * each (int64 indices are read in place). */
static void
for_index_chunks(int itype, const char *idx, npy_intp n,
                 void (*fn)(const npy_int64 *ix, npy_intp m, void *ctx), void *ctx)
{
    npy_int64 w[SO_WIDE_CHUNK];
    const npy_intp isz = so_index_size(itype);
    npy_intp c, m;
    if (itype == SO_IX_i64) {
        fn((const npy_int64 *)(const void *)idx, n, ctx);
        return;
    }
    for (c = 0; c < n; c += m) {
        m = n - c < SO_WIDE_CHUNK ? n - c : SO_WIDE_CHUNK;
        so_widen_index64(itype, (char *)w, idx + c * isz, m);
        fn(w, m, ctx);
    }
}

typedef struct {
    const so_mean_indexed *mk;
    char *o;
    npy_intp aos, size;
    char *w;
    int include_self;
} pairs_at;

static void
start_chunk(const npy_int64 *ix, npy_intp m, void *ctx)
{
    const pairs_at *a = (const pairs_at *)ctx;
    a->mk->start_at(a->o, a->aos, a->size, ix, m, a->w);
}

static void
finish_chunk(const npy_int64 *ix, npy_intp m, void *ctx)
{
    const pairs_at *a = (const pairs_at *)ctx;
    a->mk->finish_at(a->o, a->aos, a->size, ix, m, a->w, a->include_self);
}

void
so_mean_start_hit(const so_mean_indexed *mk, int itype, const char *idx, npy_intp n,
                  const char *o, npy_intp aos, npy_intp size, char *w)
{
    pairs_at a = {mk, (char *)o, aos, size, w, 0};
    for_index_chunks(itype, idx, n, start_chunk, &a);
}

void
so_mean_finish_hit(const so_mean_indexed *mk, int itype, const char *idx, npy_intp n,
                   char *o, npy_intp aos, npy_intp size, char *w, int include_self)
{
    pairs_at a = {mk, o, aos, size, w, include_self};
    for_index_chunks(itype, idx, n, finish_chunk, &a);
}

/*
 * kernels/indexed.c: the element loops of a 1-D scatter, specialised by index
 * dtype: for i < n, o[j] = f(o[j], u[i]) with j = idx[i] read as int32 or
 * int64 (no conversion to intp first; the other index types through one of
 * these, kernels/widen.c), for every typed dtype but float16 and bool
 * (kernels/ops.h) and every reduction.
 * Indices and updates contiguous and aligned; out at any stride.  Into a
 * contiguous out, a chunk whose indices repeat in long runs keeps the element
 * in a register; into a large one the element PREFETCH_AHEAD updates on is
 * prefetched; other chunks take four updates at a time (on AVX2: a branch for
 * each index, no wrap) or eight (on AVX2, after 16 negative ones).  The caller may have checked every value first
 * (plan/check_run.c); each is still wrapped and tested as it is read, so a
 * value another thread rewrote after the check never writes outside out.
 */
#include "kernels/ops.h"

/* Runs of one index (sorted indices: segment sums), chunk by chunk: while the
 * index repeats, the element stays in a register, o[j] = f(f(o[j], u[i]),
 * u[i+1]) and so on, and is stored when the index changes -- the same
 * operations in the same order, so the same bits -- instead of a chain through
 * memory (a store, then its load forwarded, every update).  A branch per
 * update, mispredicted at each change of index: it wins only on long runs.  So
 * each chunk first compares its first RUN_SAMPLES values with the ones RUN_GAP
 * later, and takes the run loop only when most pairs are equal: runs of about
 * 32 or longer.  Only the chunk's head is read, which the loop reads next
 * anyway (docs/design.md, "The element loops": runs). */
#define RUN_CHUNK 2048
#define RUN_SAMPLES 16
#define RUN_GAP 16

/* Into a contiguous out of more than one core's L2 (so_cache_bytes(2)), each
 * update is a cache miss, and the out-of-order window keeps only so many in
 * flight: the loop prefetches, into L2, the element PREFETCH_AHEAD updates on
 * (its index clamped as the loop clamps it; the last PREFETCH_AHEAD updates of
 * the call without).  Into an out in L2 a prefetch costs more than it saves,
 * and into an out that stays in L3 from one call to the next, up to
 * PREFETCH_MIN_BYTES (4 MiB, or half of L3 if less), the loop of four keeps
 * enough misses in flight (docs/design.md, "The element loops": prefetch). */
#define PREFETCH_AHEAD 128
#define PREFETCH_MIN_BYTES ((npy_intp)4 << 20)

static inline int
prefetch_pays(npy_intp size, size_t item)
{
    npy_intp bytes = size * (npy_intp)item, l3;
    if (bytes <= so_cache_bytes(2)) return 0;
    l3 = so_cache_bytes(3);
    return bytes > (l3 / 2 < PREFETCH_MIN_BYTES ? l3 / 2 : PREFETCH_MIN_BYTES);
}

#define LONG_RUNS(IN, IT, S)                                                          \
static inline int                                                                     \
long_runs_##IN(const IT *ix, npy_intp m)                                              \
{                                                                                     \
    int equal = 0, k;                                                                 \
    if (m < 16 * RUN_GAP) return 0;                                                   \
    for (k = 0; k < RUN_SAMPLES; k++) equal += ix[k] == ix[k + RUN_GAP];              \
    return 2 * equal > RUN_SAMPLES;                                                   \
}
SO_INDEX_TYPES(LONG_RUNS)

/* Into an out in cache, the loop takes its updates four at a time: the four
 * indices are read and wrapped, one branch tests all four (gcc folds the four
 * tests into an unsigned max), then the four updates are applied in order, so
 * the same bits.  A group with a bad index leaves to the loop of one update at
 * a time, which stops at the first bad one.  The four loads of an index go out
 * together.  Beyond L2 (the prefetching loop below) four at a time gains
 * nothing, and is not used (docs/design.md, "The element loops": loops of
 * four). */

#define INDEXED(NAME, T, OP, IN, IT, S)                                               \
static npy_intp                                                                       \
NAME##_##OP##_by_##IN(char *o, npy_intp aos, npy_intp size, const char *idx,          \
                      const char *u, npy_intp n)                                      \
{                                                                                     \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    const T *restrict up = (const T *)(const void *)u;                                \
    npy_intp i, c;                                                                    \
    if (aos == (npy_intp)sizeof(T)) {                                                 \
        T *restrict op = (T *)(void *)o;                                              \
        /* the updates that prefetch: i < pf_end, i + PREFETCH_AHEAD < n */           \
        const npy_intp pf_end = prefetch_pays(size, sizeof(T)) ? n - PREFETCH_AHEAD   \
                                                               : 0;                   \
        for (c = 0; c < n; c += RUN_CHUNK) {                                          \
            npy_intp e = n - c < RUN_CHUNK ? n : c + RUN_CHUNK, prev;                 \
            T acc;                                                                    \
            if (!long_runs_##IN(ix + c, e - c)) {                                     \
                npy_intp pe = e < pf_end ? e : pf_end;                                \
                for (i = c; i < pe; i++) {                                            \
                    npy_intp j = SO_IX_WRAP_##S(ix[i], size);                         \
                    if (SO_IX_OUTSIDE(j, size)) return i;                             \
                    __builtin_prefetch(                                               \
                        op + SO_IX_CLAMP_##S(ix[i + PREFETCH_AHEAD], size), 0, 1);    \
                    op[j] = SO_OP1(NAME, OP)(op[j], up[i]);                           \
                }                                                                     \
                for (; i + 4 <= e; i += 4) {                                          \
                    npy_intp j0 = SO_IX_WRAP_##S(ix[i], size);                        \
                    npy_intp j1 = SO_IX_WRAP_##S(ix[i + 1], size);                    \
                    npy_intp j2 = SO_IX_WRAP_##S(ix[i + 2], size);                    \
                    npy_intp j3 = SO_IX_WRAP_##S(ix[i + 3], size);                    \
                    if (SO_IX_OUTSIDE(j0, size) | SO_IX_OUTSIDE(j1, size) |           \
                            SO_IX_OUTSIDE(j2, size) | SO_IX_OUTSIDE(j3, size)) break; \
                    op[j0] = SO_OP1(NAME, OP)(op[j0], up[i]);                         \
                    op[j1] = SO_OP1(NAME, OP)(op[j1], up[i + 1]);                     \
                    op[j2] = SO_OP1(NAME, OP)(op[j2], up[i + 2]);                     \
                    op[j3] = SO_OP1(NAME, OP)(op[j3], up[i + 3]);                     \
                }                                                                     \
                for (; i < e; i++) {                                                  \
                    npy_intp j = SO_IX_WRAP_##S(ix[i], size);                         \
                    if (SO_IX_OUTSIDE(j, size)) return i;                             \
                    op[j] = SO_OP1(NAME, OP)(op[j], up[i]);                           \
                }                                                                     \
                continue;                                                             \
            }                                                                         \
            prev = SO_IX_WRAP_##S(ix[c], size);                                       \
            if (SO_IX_OUTSIDE(prev, size)) return c;                                  \
            acc = SO_OP1(NAME, OP)(op[prev], up[c]);                                  \
            for (i = c + 1; i < e; i++) {                                             \
                npy_intp j = SO_IX_WRAP_##S(ix[i], size);                             \
                if (SO_IX_OUTSIDE(j, size)) {                                         \
                    op[prev] = acc;                                                   \
                    return i;                                                         \
                }                                                                     \
                if (j == prev) {                                                      \
                    acc = SO_OP1(NAME, OP)(acc, up[i]);                               \
                }                                                                     \
                else {                                                                \
                    op[prev] = acc;                                                   \
                    acc = SO_OP1(NAME, OP)(op[j], up[i]);                             \
                    prev = j;                                                         \
                }                                                                     \
            }                                                                         \
            op[prev] = acc;                                                           \
        }                                                                             \
        return -1;                                                                    \
    }                                                                                 \
    for (i = 0; i < n; i++) {                                                         \
        npy_intp j = SO_IX_WRAP_##S(ix[i], size);                                     \
        T *p;                                                                         \
        if (SO_IX_OUTSIDE(j, size)) return i;                                         \
        p = (T *)(void *)(o + j * aos);                                               \
        *p = SO_OP1(NAME, OP)(*p, up[i]);                                             \
    }                                                                                 \
    return -1;                                                                        \
}

/* The table by index type of one dtype and op, BY_i32 and BY_i64 its own loops:
 * the loops NAME_OP_BY (BY: by, v8_by) for the others, each reading through
 * the wider type's. */
#define WIDENED(NAME, T, OP, BY, IN, WIDE)                                            \
static npy_intp                                                                       \
NAME##_##OP##_##BY##_##IN(char *o, npy_intp aos, npy_intp size, const char *idx,      \
                          const char *u, npy_intp n)                                  \
{                                                                                     \
    return so_indexed_widened(NAME##_##OP##_##BY##_##WIDE, SO_IX_##IN,                \
                              (npy_intp)sizeof(T), o, aos, size, idx, u, n);          \
}
#define BY_TABLE(NAME, T, OP, BY)                                                     \
    WIDENED(NAME, T, OP, BY, i8, i32) WIDENED(NAME, T, OP, BY, i16, i32)              \
    WIDENED(NAME, T, OP, BY, u8, i32) WIDENED(NAME, T, OP, BY, u16, i32)              \
    WIDENED(NAME, T, OP, BY, u32, i64) WIDENED(NAME, T, OP, BY, u64, i64)             \
    static const so_indexed_fn NAME##_##OP##_##BY[SO_IX_NTYPES] = {                   \
        NAME##_##OP##_##BY##_i8, NAME##_##OP##_##BY##_i16, NAME##_##OP##_##BY##_i32,  \
        NAME##_##OP##_##BY##_i64, NAME##_##OP##_##BY##_u8, NAME##_##OP##_##BY##_u16,  \
        NAME##_##OP##_##BY##_u32, NAME##_##OP##_##BY##_u64};

/* The loops of one dtype and op, int32 and int64 indices, and their table. */
#define FOR_INDEX(NAME, T, OP)                                                        \
    INDEXED(NAME, T, OP, i32, npy_int32, 1)                                           \
    INDEXED(NAME, T, OP, i64, npy_int64, 1)                                           \
    BY_TABLE(NAME, T, OP, by)

/* A dtype's table by op of its tables by index type NAME_OP_BY (BY: by, v8_by):
 * add, sub and mul those of ARITH, NAME itself or the signed integer an unsigned
 * one shares them with (ops.h's SO_SHARED_LOOP_TYPES). */
#define OPS_TABLE(TABLE, NAME, ARITH, BY)                                             \
    static const so_indexed_fn *const TABLE[SO_NOPS] = {                              \
        NULL, ARITH##_add_##BY, ARITH##_sub_##BY, ARITH##_mul_##BY, NAME##_max_##BY,  \
        NAME##_min_##BY, NULL};
#define FOR_OPS(NAME, T, ARITH)                                                       \
    FOR_INDEX(NAME, T, max) FOR_INDEX(NAME, T, min) OPS_TABLE(NAME##_ops, NAME, ARITH, by)
#define FOR_OWN_OPS(NAME, T)                                                          \
    FOR_INDEX(NAME, T, add) FOR_INDEX(NAME, T, sub) FOR_INDEX(NAME, T, mul)           \
    FOR_OPS(NAME, T, NAME)
SO_OWN_LOOP_TYPES(FOR_OWN_OPS)
SO_SHARED_LOOP_TYPES(FOR_OPS)

/* With int64 indices on a CPU with AVX2 (chosen at run time), the loop into a
 * contiguous out beyond L2 (and within L2 once a call has had many negative
 * indices: V1_NEG_LIMIT below) takes its updates eight at a time: the eight
 * indices are read as two vectors, wrapped and tested there with one branch
 * for the eight, then moved one by one to a general register for their
 * updates, applied in order:
 * the same operations in the same order, so the same bits.  A group with a bad
 * index leaves to the loop of one update at a time, which stops at the first
 * bad one.  Into an out beyond L2 the indices PREFETCH_AHEAD updates on are
 * read as vectors too, clamped, and their elements prefetched.  Two loads for
 * eight indices instead of eight leave the load ports to out and the updates.
 * Chunks with long runs take the loop above (docs/design.md, "The element
 * loops": loops of eight). */
#if SO_X86_VECTOR
/* With int32 indices (only beyond L2, or after many negative indices:
 * V1_NEG_LIMIT below) the eight are one vector, wrapped and tested in 32-bit
 * lanes, then widened to two vectors of int64 for V8_APPLY4: one load
 * for eight indices.  The 32-bit wrap needs size below 2^31; a larger out
 * takes the loop of four (docs/design.md, "The element loops": loops of
 * eight).
 *
 * Per lane width W (64: int64 indices, 32: int32): V8_CONSTS_W the
 * loop's constants; V8_FITS_W(size) whether its wrap holds for size;
 * V8_TAKE_W(IN, p, v, w, ok) the eight indices at p, wrapped, in v and w (int64
 * lanes), ok whether all eight are in [0, size); V8_AHEAD_W(IN, p, v, w) the
 * same eight wrapped and clamped (a bad one to 0), to prefetch. */
#define V8_CONSTS_64                                                                  \
    const __m256i vsize = _mm256_set1_epi64x(size), zero = _mm256_setzero_si256();    \
    const __m256i vflip = _mm256_set1_epi64x(NPY_MIN_INT64);                          \
    const __m256i vlimit = _mm256_xor_si256(vsize, vflip);
#define V8_CONSTS_32                                                                  \
    const __m256i vsize = _mm256_set1_epi32((int)(size > NPY_MAX_INT32 ? 0 : size));  \
    const __m256i zero = _mm256_setzero_si256(), vflip = _mm256_set1_epi32(NPY_MIN_INT32); \
    const __m256i vlimit = _mm256_xor_si256(vsize, vflip);
#define V8_FITS_64(size) 1
#define V8_FITS_32(size) ((size) <= NPY_MAX_INT32)

#define V8_LOAD_i64(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V8_LOAD_i32(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* a negative index from the end; all ones in the lanes in [0, size), compared
 * as unsigned */
#define V8_WRAP_64(v) _mm256_add_epi64(v, _mm256_and_si256(_mm256_cmpgt_epi64(zero, v), vsize))
#define V8_INSIDE_64(v) _mm256_cmpgt_epi64(vlimit, _mm256_xor_si256(v, vflip))
#define V8_WRAP_32(x) _mm256_add_epi32(x, _mm256_and_si256(_mm256_cmpgt_epi32(zero, x), vsize))
#define V8_INSIDE_32(x) _mm256_cmpgt_epi32(vlimit, _mm256_xor_si256(x, vflip))
#define V8_LO(x) _mm256_cvtepu32_epi64(_mm256_castsi256_si128(x))
#define V8_HI(x) _mm256_cvtepu32_epi64(_mm256_extracti128_si256(x, 1))

#define V8_TAKE_64(IN, p, v, w, ok)                                                   \
    {                                                                                 \
        v = V8_WRAP_64(V8_LOAD_##IN(p));                                              \
        w = V8_WRAP_64(V8_LOAD_##IN((p) + 4));                                        \
        ok = _mm256_movemask_pd(_mm256_castsi256_pd(                                  \
                 _mm256_and_si256(V8_INSIDE_64(v), V8_INSIDE_64(w)))) == 0xF;         \
    }
#define V8_AHEAD_64(IN, p, v, w)                                                      \
    {                                                                                 \
        v = V8_WRAP_64(V8_LOAD_##IN(p));                                              \
        w = V8_WRAP_64(V8_LOAD_##IN((p) + 4));                                        \
        v = _mm256_and_si256(v, V8_INSIDE_64(v));                                     \
        w = _mm256_and_si256(w, V8_INSIDE_64(w));                                     \
    }
#define V8_TAKE_32(IN, p, v, w, ok)                                                   \
    {                                                                                 \
        __m256i x_ = V8_WRAP_32(V8_LOAD_##IN(p));                                     \
        ok = _mm256_movemask_ps(_mm256_castsi256_ps(V8_INSIDE_32(x_))) == 0xFF;       \
        v = V8_LO(x_);                                                                \
        w = V8_HI(x_);                                                                \
    }
#define V8_AHEAD_32(IN, p, v, w)                                                      \
    {                                                                                 \
        __m256i x_ = V8_WRAP_32(V8_LOAD_##IN(p));                                     \
        x_ = _mm256_and_si256(x_, V8_INSIDE_32(x_));                                  \
        v = V8_LO(x_);                                                                \
        w = V8_HI(x_);                                                                \
    }

#define V8_APPLY4(NAME, OP, v, k)                                                     \
    do {                                                                              \
        __m128i lo_ = _mm256_castsi256_si128(v), hi_ = _mm256_extracti128_si256(v, 1); \
        npy_intp j0_ = _mm_cvtsi128_si64(lo_), j1_ = _mm_extract_epi64(lo_, 1);       \
        npy_intp j2_ = _mm_cvtsi128_si64(hi_), j3_ = _mm_extract_epi64(hi_, 1);       \
        op[j0_] = SO_OP1(NAME, OP)(op[j0_], up[(k)]);                                 \
        op[j1_] = SO_OP1(NAME, OP)(op[j1_], up[(k) + 1]);                             \
        op[j2_] = SO_OP1(NAME, OP)(op[j2_], up[(k) + 2]);                             \
        op[j3_] = SO_OP1(NAME, OP)(op[j3_], up[(k) + 3]);                             \
    } while (0)
#define V8_PREFETCH4(v)                                                               \
    do {                                                                              \
        __m128i lo_ = _mm256_castsi256_si128(v), hi_ = _mm256_extracti128_si256(v, 1); \
        __builtin_prefetch(op + _mm_cvtsi128_si64(lo_), 0, 1);                        \
        __builtin_prefetch(op + _mm_extract_epi64(lo_, 1), 0, 1);                     \
        __builtin_prefetch(op + _mm_cvtsi128_si64(hi_), 0, 1);                        \
        __builtin_prefetch(op + _mm_extract_epi64(hi_, 1), 0, 1);                     \
    } while (0)

/* With int64 or int32 indices into an out within L2 (no prefetch), the loop
 * of eight gives way to one of four that tests each index as it is read with
 * a single unsigned compare against size and a branch of its own, and no
 * wrap: a negative index fails the compare and goes to the step of one update
 * below (wrapped, tested, applied, or the loop stops there), and the four go
 * on.  The wrap is what costs; four tests folded into one branch are slower
 * (gcc makes an unsigned max of the four, a chain).  Each negative index
 * costs a mispredicted branch here, so after V1_NEG_LIMIT of them in a call
 * the rest of it takes the loop of eight, which wraps in its vectors.  The four indices are read before
 * the first is tested.  The loop of four is a loop of its own inside the one
 * that counts the negative indices, entered only from the top: with one loop
 * for both, gcc places two of the four updates out of line (docs/design.md,
 * "The element loops": the tested loop of four). */
#define V1_NEG_LIMIT 16
/* j, widened to 64 bits here: without it gcc loads an int32 index as 32 bits
 * and sign-extends it in a register after the branch before it, one more
 * instruction an update (docs/design.md, "The element loops": the tested loop
 * of four). */
#define V1_WIDE(j) __asm__("" : "+r"(j))
#define V1_STEP(NAME, OP, j, k)                                                       \
    if (NPY_UNLIKELY((npy_uintp)(j) >= (npy_uintp)size)) {                            \
        i += (k);                                                                     \
        jn = (j);                                                                     \
        goto one;                                                                     \
    }                                                                                 \
    op[j] = SO_OP1(NAME, OP)(op[j], up[i + (k)]);

#define INDEXED_V8(NAME, T, OP, IN, IT, W)                                            \
__attribute__((target("avx2"))) static npy_intp                                       \
NAME##_##OP##_v8_by_##IN(char *o, npy_intp aos, npy_intp size, const char *idx,       \
                         const char *u, npy_intp n)                                   \
{                                                                                     \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    const T *restrict up = (const T *)(const void *)u;                                \
    T *restrict op = (T *)(void *)o;                                                  \
    V8_CONSTS_##W                                                                     \
    /* the groups that prefetch: i < pf_end, so i + PREFETCH_AHEAD + 8 <= n */       \
    const npy_intp pf_end = prefetch_pays(size, sizeof(T)) ? n - PREFETCH_AHEAD - 8   \
                                                           : 0;                       \
    npy_intp i, c, pos, j, jn;                                                        \
    /* the steps of one update left before the call takes the loop of eight */       \
    int neg_left = pf_end == 0 ? V1_NEG_LIMIT : 0;                                    \
    if (aos != (npy_intp)sizeof(T) || !V8_FITS_##W(size)) {                           \
        return NAME##_##OP##_by_##IN(o, aos, size, idx, u, n);                        \
    }                                                                                 \
    for (c = 0; c < n; c += RUN_CHUNK) {                                              \
        npy_intp e = n - c < RUN_CHUNK ? n : c + RUN_CHUNK;                           \
        if (long_runs_##IN(ix + c, e - c)) {                                          \
            pos = NAME##_##OP##_by_##IN(o, aos, size, (const char *)(ix + c),         \
                                        (const char *)(up + c), e - c);               \
            if (pos >= 0) return c + pos;                                             \
            continue;                                                                 \
        }                                                                             \
        i = c;                                                                        \
        while (neg_left > 0) {                                                        \
            /* the loop of four has no other way in, so gcc lays it out straight */  \
            while (i + 4 <= e) {                                                      \
                /* the four read before any is tested: their loads go together */    \
                npy_intp j0 = (npy_intp)ix[i], j1 = (npy_intp)ix[i + 1];              \
                npy_intp j2 = (npy_intp)ix[i + 2], j3 = (npy_intp)ix[i + 3];          \
                V1_WIDE(j0); V1_WIDE(j1); V1_WIDE(j2); V1_WIDE(j3);                   \
                V1_STEP(NAME, OP, j0, 0)                                              \
                V1_STEP(NAME, OP, j1, 1)                                              \
                V1_STEP(NAME, OP, j2, 2)                                              \
                V1_STEP(NAME, OP, j3, 3)                                              \
                i += 4;                                                               \
            }                                                                         \
            break;                                                                    \
        one: /* jn, the index that failed the compare, as it was read */              \
            j = SO_IX_WRAP_1(jn, size);                                               \
            if (SO_IX_OUTSIDE(j, size)) return i;                                     \
            op[j] = SO_OP1(NAME, OP)(op[j], up[i]);                                   \
            i++;                                                                      \
            neg_left--;                                                               \
        }                                                                             \
        for (; i + 8 <= e; i += 8) {                                                  \
            __m256i v, w;                                                             \
            int ok;                                                                   \
            V8_TAKE_##W(IN, ix + i, v, w, ok)                                         \
            if (!ok) break;                                                           \
            if (i < pf_end) {                                                         \
                __m256i pv, pw;                                                       \
                V8_AHEAD_##W(IN, ix + i + PREFETCH_AHEAD, pv, pw)                     \
                V8_PREFETCH4(pv);                                                     \
                V8_PREFETCH4(pw);                                                     \
            }                                                                         \
            V8_APPLY4(NAME, OP, v, i);                                                \
            V8_APPLY4(NAME, OP, w, i + 4);                                            \
        }                                                                             \
        for (; i < e; i++) {                                                          \
            npy_intp j = SO_IX_WRAP_1(ix[i], size);                                   \
            if (SO_IX_OUTSIDE(j, size)) return i;                                     \
            op[j] = SO_OP1(NAME, OP)(op[j], up[i]);                                   \
        }                                                                             \
    }                                                                                 \
    return -1;                                                                        \
}

/* The loops of one dtype and op on AVX2, int32 and int64 indices, and their
 * table. */
#define V8_FOR_INDEX(NAME, T, OP)                                                     \
    INDEXED_V8(NAME, T, OP, i64, npy_int64, 64)                                       \
    INDEXED_V8(NAME, T, OP, i32, npy_int32, 32)                                       \
    BY_TABLE(NAME, T, OP, v8_by)

#define V8_FOR_OPS(NAME, T, ARITH)                                                    \
    V8_FOR_INDEX(NAME, T, max) V8_FOR_INDEX(NAME, T, min)                             \
    OPS_TABLE(NAME##_v8_ops, NAME, ARITH, v8_by)
#define V8_FOR_OWN_OPS(NAME, T)                                                       \
    V8_FOR_INDEX(NAME, T, add) V8_FOR_INDEX(NAME, T, sub) V8_FOR_INDEX(NAME, T, mul)  \
    V8_FOR_OPS(NAME, T, NAME)
/* Only for the dtypes of 4 and 8 bytes with an order (integers and floats):
 * the AVX2 loops are most of this file's build time, and the index reads they
 * save are a smaller part of a complex update or of the loops of the 1- and
 * 2-byte integers, rare as scatter targets (docs/design.md, "Build time"). */
V8_FOR_OWN_OPS(i32, npy_int32)
V8_FOR_OWN_OPS(i64, npy_int64)
V8_FOR_OWN_OPS(f32, npy_float)
V8_FOR_OWN_OPS(f64, npy_double)
V8_FOR_OPS(u32, npy_uint32, i32)
V8_FOR_OPS(u64, npy_uint64, i64)
#endif

so_indexed_fn
so_indexed_kernel(PyArray_Descr *d, int op, int itype)
{
    static const so_indexed_fn *const *const rows[SO_NROWS] = {
        i8_ops, i16_ops, i32_ops, i64_ops, u8_ops, u16_ops, u32_ops, u64_ops,
        NULL, f32_ops, f64_ops, c64_ops, c128_ops};
    int row = so_typed_row(d);
    if (op <= SO_NONE || op >= SO_COUNT || itype < 0 || itype >= SO_IX_NTYPES || row < 0 ||
            rows[row] == NULL) {
        return NULL;
    }
#if SO_X86_VECTOR
    if (so_cpu_has(SO_CPU_AVX2)) {
        static const so_indexed_fn *const *const v8[SO_NROWS] = {
            i8_ops, i16_ops, i32_v8_ops, i64_v8_ops, u8_ops, u16_ops, u32_v8_ops,
            u64_v8_ops, NULL, f32_v8_ops, f64_v8_ops, c64_ops, c128_ops};
        return v8[row][op][itype];
    }
#endif
    return rows[row][op][itype];
}

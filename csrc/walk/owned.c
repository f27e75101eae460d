/*
 * walk/owned.c: a thread's share of a walk by ownership of index values.
 *
 * When no dim of the walk addresses out (an element-wise scatter_nd, a 1-D
 * scatter_elements, graph message passing along axis 0) the threads split the
 * values of the first index component instead (split.c): every thread walks all
 * groups in C order, and applies those whose first component (wrapped) is its
 * own.  Different values of it address different elements of out, so each
 * element has one owner, which applies its updates in the order one thread
 * would.  A row is done in chunks: the destinations of a chunk are computed and
 * the owned ones compacted without a branch (half the tests would be
 * mispredicted; scalar, AVX-512 or AVX2), then applied with their destinations
 * prefetched.  It reads the index values in their own integer dtype (the
 * plan's ixtype): a narrow index needs no copy to intp first.
 */
#include "walk/block.h"

#if SO_X86_VECTOR
#include <immintrin.h>
#endif

#define SO_OWN_CHUNK 2048
#define SO_OWN_AHEAD 16

static inline npy_intp
small_block_bytes(const so_plan *p)
{
    /* the bytes of a block that is one short contiguous run, else 0 */
    if (p->bnd == 1 && p->bs_out[0] > 0 && p->bs_upd[0] > 0 && p->bshape[0] * p->bs_out[0] <= 1024) {
        return p->bshape[0] * p->bs_out[0];
    }
    return 0;
}

/* An index value of type t (base.h's SO_IX_*) as an intp; a uint64 above
 * intp's range becomes NPY_MAX_INTP, outside every axis. */
static inline npy_intp
load_index(const char *p, int t)
{
    npy_uint64 u;
    if (t == SO_IX_u64) {
        memcpy(&u, p, sizeof u);
        return u > (npy_uint64)NPY_MAX_INTP ? NPY_MAX_INTP : (npy_intp)u;
    }
    switch (t) {
#define LOAD(NAME, T, S)                                                              \
    case SO_IX_##NAME: {                                                              \
        T v;                                                                          \
        memcpy(&v, p, sizeof v);                                                      \
        return (npy_intp)v;                                                           \
    }
        SO_INDEX_TYPES(LOAD)
#undef LOAD
    }
    return 0;
}

/* The owned groups among [c0, c1) of a row with one index component: their out
 * offsets (oo) and update offsets (uo), in order; returns how many.  A value
 * outside its axis sets *bad and is taken as 0. */
static npy_intp
compact_one_scalar(const char *pi, int t, npy_intp gsi, npy_intp gso, npy_intp gsu, npy_intp c0,
                   npy_intp c1, npy_intp size, npy_intp ios, npy_intp lo, npy_intp span,
                   npy_intp *oo, npy_intp *uo, npy_intp *vv, int *bad_out)
{
    npy_intp i, cnt = 0;
    int bad = 0;
    for (i = c0; i < c1; i++) {
        npy_intp v0 = load_index(pi + i * gsi, t);
        int ok = so_index_inside(v0, size);
        bad |= !ok;
        v0 = ok ? so_wrap(v0, size) : 0;
        oo[cnt] = i * gso + v0 * ios;
        uo[cnt] = i * gsu;
        if (vv != NULL) vv[cnt] = v0;
        cnt += (npy_uintp)(v0 - lo) < (npy_uintp)span;
    }
    *bad_out |= bad;
    return cnt;
}


#if SO_X86_VECTOR
/* Eight index values of type t from p, widened to int64 (AVX-512). */
__attribute__((target("avx512f,avx512dq")))
static inline __m512i
load8_avx512(const char *p, int t)
{
    switch (t) {
    case SO_IX_i8: return _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i *)p));
    case SO_IX_u8: return _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)p));
    case SO_IX_i16: return _mm512_cvtepi16_epi64(_mm_loadu_si128((const __m128i *)p));
    case SO_IX_u16: return _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)p));
    case SO_IX_i32: return _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)p));
    case SO_IX_u32: return _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)p));
    default: return _mm512_loadu_si512((const void *)p);
    }
}

/* Four index values of type t from p, widened to int64 (AVX2). */
__attribute__((target("avx2")))
static inline __m256i
load4_avx2(const char *p, int t)
{
    int four;
    switch (t) {
    case SO_IX_i8: memcpy(&four, p, 4); return _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(four));
    case SO_IX_u8: memcpy(&four, p, 4); return _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
    case SO_IX_i16: return _mm256_cvtepi16_epi64(_mm_loadl_epi64((const __m128i *)p));
    case SO_IX_u16: return _mm256_cvtepu16_epi64(_mm_loadl_epi64((const __m128i *)p));
    case SO_IX_i32: return _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)p));
    case SO_IX_u32: return _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)p));
    default: return _mm256_loadu_si256((const __m256i *)p);
    }
}

/* The same for contiguous indices with AVX-512 (F, DQ), eight at a time: the
 * scalar loop costs as many instructions as the scatter itself
 * (docs/design.md, "Splitting a walk over threads").  Chosen at run time.
 * A uint64 value with its top bit set is not wrapped: it is outside. */
__attribute__((target("avx512f,avx512dq")))
static npy_intp
compact_one_avx512(const char *pi, int t, npy_intp gsu, npy_intp c0, npy_intp c1, npy_intp size,
                   npy_intp ios, npy_intp lo, npy_intp span, npy_intp *oo, npy_intp *uo,
                   npy_intp *vv, int *bad_out)
{
    const __m512i vsize = _mm512_set1_epi64(size), vlo = _mm512_set1_epi64(lo);
    const __m512i vspan = _mm512_set1_epi64(span), vios = _mm512_set1_epi64(ios);
    const __m512i vstep = _mm512_set1_epi64(8 * gsu), zero = _mm512_setzero_si512();
    __m512i vu = _mm512_mullo_epi64(
        _mm512_add_epi64(_mm512_set1_epi64(c0), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)),
        _mm512_set1_epi64(gsu));
    const npy_intp isz = so_index_size(t);
    const __mmask8 wraps = t == SO_IX_u64 ? 0 : 0xFF;
    npy_intp i = c0, cnt = 0;
    __mmask8 allok = 0xFF;
    for (; i + 8 <= c1; i += 8) {
        __m512i v = load8_avx512(pi + i * isz, t);
        __mmask8 neg = _mm512_cmplt_epi64_mask(v, zero) & wraps, ok, own;
        v = _mm512_mask_add_epi64(v, neg, v, vsize);
        ok = _mm512_cmplt_epu64_mask(v, vsize);
        allok &= ok;
        v = _mm512_maskz_mov_epi64(ok, v);
        own = _mm512_cmplt_epu64_mask(_mm512_sub_epi64(v, vlo), vspan);
        _mm512_storeu_si512((void *)(oo + cnt),
                            _mm512_maskz_compress_epi64(own, _mm512_mullo_epi64(v, vios)));
        _mm512_storeu_si512((void *)(uo + cnt), _mm512_maskz_compress_epi64(own, vu));
        if (vv != NULL) _mm512_storeu_si512((void *)(vv + cnt), _mm512_maskz_compress_epi64(own, v));
        cnt += __builtin_popcount((unsigned)own);
        vu = _mm512_add_epi64(vu, vstep);
    }
    if (allok != 0xFF) *bad_out = 1;
    return cnt + compact_one_scalar(pi, t, isz, 0, gsu, i, c1, size, ios, lo, span,
                                    oo + cnt, uo + cnt, vv ? vv + cnt : NULL, bad_out);
}

/* The same four at a time with AVX2, for CPUs without AVX-512: AVX2 has no
 * compress, so a table of vpermd orders moves the owned lanes to the front of
 * each vector.  It has no 64-bit multiply either: the offset v * ios is
 * vpmuludq of the low halves, exact while 0 <= v < size <= 2^31 and
 * 0 <= ios < 2^31 (avx2_compaction_fits). */
static const int so_avx2_left[16][8] = {
    {0, 1, 0, 1, 0, 1, 0, 1}, {0, 1, 0, 1, 0, 1, 0, 1},
    {2, 3, 0, 1, 0, 1, 0, 1}, {0, 1, 2, 3, 0, 1, 0, 1},
    {4, 5, 0, 1, 0, 1, 0, 1}, {0, 1, 4, 5, 0, 1, 0, 1},
    {2, 3, 4, 5, 0, 1, 0, 1}, {0, 1, 2, 3, 4, 5, 0, 1},
    {6, 7, 0, 1, 0, 1, 0, 1}, {0, 1, 6, 7, 0, 1, 0, 1},
    {2, 3, 6, 7, 0, 1, 0, 1}, {0, 1, 2, 3, 6, 7, 0, 1},
    {4, 5, 6, 7, 0, 1, 0, 1}, {0, 1, 4, 5, 6, 7, 0, 1},
    {2, 3, 4, 5, 6, 7, 0, 1}, {0, 1, 2, 3, 4, 5, 6, 7},
};

__attribute__((target("avx2")))
static npy_intp
compact_one_avx2(const char *pi, int t, npy_intp gsu, npy_intp c0, npy_intp c1, npy_intp size,
                 npy_intp ios, npy_intp lo, npy_intp span, npy_intp *oo, npy_intp *uo,
                 npy_intp *vv, int *bad_out)
{
    const __m256i vsize = _mm256_set1_epi64x(size), vlo = _mm256_set1_epi64x(lo);
    const __m256i vspan = _mm256_set1_epi64x(span), vios = _mm256_set1_epi64x(ios);
    const __m256i vstep = _mm256_set1_epi64x(4 * gsu), zero = _mm256_setzero_si256();
    const __m256i minus1 = _mm256_set1_epi64x(-1);
    __m256i vu = _mm256_set_epi64x((c0 + 3) * gsu, (c0 + 2) * gsu, (c0 + 1) * gsu, c0 * gsu);
    const __m256i wraps = t == SO_IX_u64 ? zero : minus1;
    const npy_intp isz = so_index_size(t);
    __m256i allok = minus1;
    npy_intp i = c0, cnt = 0;
    for (; i + 4 <= c1; i += 4) {
        __m256i v = load4_avx2(pi + i * isz, t);
        __m256i ok, own, d, perm;
        int bits;
        v = _mm256_add_epi64(v, _mm256_and_si256(_mm256_and_si256(_mm256_cmpgt_epi64(zero, v), wraps),
                                                 vsize));
        ok = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, v), _mm256_cmpgt_epi64(vsize, v));
        allok = _mm256_and_si256(allok, ok);
        v = _mm256_and_si256(v, ok);
        d = _mm256_sub_epi64(v, vlo);
        own = _mm256_and_si256(_mm256_cmpgt_epi64(d, minus1), _mm256_cmpgt_epi64(vspan, d));
        bits = _mm256_movemask_pd(_mm256_castsi256_pd(own));
        perm = _mm256_loadu_si256((const __m256i *)so_avx2_left[bits]);
        _mm256_storeu_si256((__m256i *)(oo + cnt),
                            _mm256_permutevar8x32_epi32(_mm256_mul_epu32(v, vios), perm));
        _mm256_storeu_si256((__m256i *)(uo + cnt), _mm256_permutevar8x32_epi32(vu, perm));
        if (vv != NULL) _mm256_storeu_si256((__m256i *)(vv + cnt), _mm256_permutevar8x32_epi32(v, perm));
        cnt += __builtin_popcount((unsigned)bits);
        vu = _mm256_add_epi64(vu, vstep);
    }
    if (_mm256_movemask_pd(_mm256_castsi256_pd(allok)) != 0xF) *bad_out = 1;
    return cnt + compact_one_scalar(pi, t, isz, 0, gsu, i, c1, size, ios, lo, span,
                                    oo + cnt, uo + cnt, vv ? vv + cnt : NULL, bad_out);
}

#endif

/* Whether compact_one_avx2 computes this axis' offsets exactly. */
static int
avx2_compaction_fits(npy_intp size, npy_intp ios)
{
    return so_cpu_has(SO_CPU_AVX2) && size <= ((npy_intp)1 << 31) && ios >= 0 &&
           ios < ((npy_intp)1 << 31);
}

int
so_vector_compaction_fits(npy_intp size, npy_intp ios)
{
    return so_cpu_has(SO_CPU_AVX512) || avx2_compaction_fits(size, ios);
}

/* Whether the rows of this walk are compacted several at a time (compact_one). */
int
so_vector_compaction(const so_plan *p)
{
    return p->k == 1 && p->mask == NULL && p->gnd >= 1 && p->gs_out[p->gnd - 1] == 0 &&
           p->gs_idx[p->gnd - 1] == so_index_size(p->ixtype) &&
           so_vector_compaction_fits(p->isize[0], p->is_out[0]);
}

static npy_intp
compact_one(const char *pi, int t, npy_intp gsi, npy_intp gso, npy_intp gsu, npy_intp c0, npy_intp c1,
            npy_intp size, npy_intp ios, npy_intp lo, npy_intp span, npy_intp *oo, npy_intp *uo,
            npy_intp *vv, int *bad)
{
#if SO_X86_VECTOR
    if (gso == 0 && gsi == so_index_size(t)) {
        if (so_cpu_has(SO_CPU_AVX512)) {
            return compact_one_avx512(pi, t, gsu, c0, c1, size, ios, lo, span, oo, uo, vv, bad);
        }
        if (avx2_compaction_fits(size, ios)) {
            return compact_one_avx2(pi, t, gsu, c0, c1, size, ios, lo, span, oo, uo, vv, bad);
        }
    }
#endif
    return compact_one_scalar(pi, t, gsi, gso, gsu, c0, c1, size, ios, lo, span, oo, uo, vv, bad);
}

void
so_run_row_owned(const so_plan *p, const so_walk *w, const so_kernel *kn, char *o,
                 const char *u, const char *pi, char *m, npy_intp n, npy_intp gso,
                 npy_intp gsu, npy_intp gsi, npy_intp gsm)
{
    /* + 8: the vector compaction stores whole vectors past the last entry */
    npy_intp oo[SO_OWN_CHUNK + 8], uo[SO_OWN_CHUNK + 8], mo[SO_OWN_CHUNK + 8];
    const npy_intp lo = w->own_lo, span = w->own_hi - w->own_lo;
    const npy_intp bb = small_block_bytes(p), ub = bb / (p->bs_out[0] ? p->bs_out[0] : 1) * p->bs_upd[0];
    const int list = p->bnd == 0 && m == NULL && kn->list != NULL;
    /* Each thread prefetches only its own update rows: prefetching every
     * update row in order, the others' too (a stream with no gaps), wins only
     * on a loaded machine, and loses on a quiet one (docs/design.md,
     * "Splitting a walk over threads"). */
    npy_intp c0, c1, i, q, cnt, b;
    int j;
    for (c0 = 0; c0 < n; c0 = c1) {
        c1 = n - c0 > SO_OWN_CHUNK ? c0 + SO_OWN_CHUNK : n;
        cnt = 0;
        if (p->k == 1 && m == NULL) {
            /* the common shape, kept tight: one component, no mask; a value out
             * of range (possible only when the walk checks, w->bad) becomes 0 */
            int bad = 0;
            cnt = compact_one(pi, p->ixtype, gsi, gso, gsu, c0, c1, p->isize[0], p->is_out[0], lo, span,
                              oo, uo, w->hits ? mo : NULL, &bad);
            if (bad && w->bad != NULL) *w->bad = 1;
            if (w->hits != NULL) {
                /* mean: the hits of each index value, here where they are owned */
                for (q = 0; q < cnt; q++) w->hits[mo[q]]++;
            }
        }
        else for (i = c0; i < c1; i++) {
            const char *pj = pi + i * gsi;
            npy_intp v0 = so_clamp(so_load_intp(pj), p->isize[0]);
            npy_intp od = i * gso + v0 * p->is_out[0], md = i * gsm + v0 * p->is_mask[0];
            for (j = 1; j < p->k; j++) {
                npy_intp v = so_clamp(so_load_intp(pj + j * p->istep), p->isize[j]);
                od += v * p->is_out[j];
                md += v * p->is_mask[j];
            }
            oo[cnt] = od;
            uo[cnt] = i * gsu;
            mo[cnt] = md;
            cnt += (npy_uintp)(v0 - lo) < (npy_uintp)span;
        }
        if (list) {
            kn->list(o, u, oo, uo, cnt, kn->itemsize);
            continue;
        }
        for (q = 0; q < cnt; q++) {
            if (q + SO_OWN_AHEAD < cnt) {
                const char *fo = o + oo[q + SO_OWN_AHEAD];
                __builtin_prefetch(fo, 1);
                if (bb > 0) {
                    const char *fu = u + uo[q + SO_OWN_AHEAD];
                    for (b = 64; b < bb; b += 64) __builtin_prefetch(fo + b, 1);
                    /* the update rows are read once: into L2 only (prefetcht2), which
                     * leaves L1's few fill buffers to out's rows (into L1 as well, the
                     * prefetches stall; docs/design.md, "Splitting a walk over threads") */
                    for (b = 0; b < ub; b += 64) __builtin_prefetch(fu + b, 0, 1);
                }
            }
            if (bb > 0 && m == NULL) {
                kn->block(o + oo[q], p->bs_out[0], u + uo[q], p->bs_upd[0], p->bshape[0],
                          kn->itemsize);
            }
            else {
                run_block(p, kn, o + oo[q], u + uo[q], m ? m + mo[q] : NULL);
            }
        }
    }
}

/*
 * engine.c: the loop that writes memory.
 *
 * Walks the groups of a plan in C order of the update index space, finds each
 * group's destination from its (already validated) index components, and
 * applies the kernel to the block there.  Updates that hit the same element are
 * therefore applied in the order API.md promises.
 *
 * With a mask (include_self=False) each element's first update is assigned and
 * the following ones combined; the mask records which elements were hit.
 */
#include "scatterops.h"

#define SO_PREFETCH_AHEAD 8
/* run_winners: prefetch the source run this many winners ahead, if at most
 * this many bytes */
#define SO_WINNER_AHEAD 8
#define SO_WINNER_PREFETCH_MAX 2048

/* Offset of a group's destination in out (and in mask) from its index components. */
static inline void
dest_offsets(const so_plan *p, const char *pi, npy_intp *o_off, npy_intp *m_off)
{
    npy_intp oo = 0, mo = 0;
    int j;
    for (j = 0; j < p->k; j++) {
        npy_intp v = so_wrap(so_load_intp(pi + j * p->istep), p->isize[j]);
        oo += v * p->is_out[j];
        mo += v * p->is_mask[j];
    }
    *o_off = oo;
    *m_off = mo;
}

/* One row of a block with include_self=False: assign on first hit, else combine. */
static void
row_first(const so_kernel *kn, char *o, npy_intp os, const char *u, npy_intp us,
          char *m, npy_intp ms, npy_intp n)
{
    npy_intp i;
    for (i = 0; i < n; i++) {
        char *oi = o + i * os;
        const char *ui = u + i * us;
        char *mi = m + i * ms;
        if (*mi) {
            kn->block(oi, 0, ui, 0, 1, kn->itemsize);
        }
        else {
            *mi = 1;
            memcpy(oi, ui, (size_t)kn->itemsize);
        }
    }
}

/* Apply the kernel to one block: its innermost dim as one kernel call, the outer
 * dims counted here. */
static void
run_block(const so_plan *p, const so_kernel *kn, char *o, const char *u, char *m)
{
    npy_intp cnt[SO_MAXDIMS];
    int last = p->bnd - 1, d;
    npy_intp n, os, us, ms;

    if (p->bnd == 0) {
        if (m) {
            row_first(kn, o, 0, u, 0, m, 0, 1);
        }
        else {
            kn->block(o, 0, u, 0, 1, kn->itemsize);
        }
        return;
    }
    n = p->bshape[last];
    os = p->bs_out[last];
    us = p->bs_upd[last];
    ms = p->bs_mask[last];
    for (d = 0; d < last; d++) {
        cnt[d] = 0;
    }
    for (;;) {
        if (m) {
            row_first(kn, o, os, u, us, m, ms, n);
        }
        else {
            kn->block(o, os, u, us, n, kn->itemsize);
        }
        for (d = last - 1; d >= 0; d--) {
            o += p->bs_out[d];
            u += p->bs_upd[d];
            if (m) m += p->bs_mask[d];
            if (++cnt[d] < p->bshape[d]) {
                break;
            }
            o -= p->bs_out[d] * p->bshape[d];
            u -= p->bs_upd[d] * p->bshape[d];
            if (m) m -= p->bs_mask[d] * p->bshape[d];
            cnt[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

/* ---- a thread's share by ownership of index values ---------------------------
 *
 * When no dim of the walk addresses out (an element-wise scatter_nd, a 1-D
 * scatter_elements, graph message passing along axis 0) the threads split the
 * values of the first index component instead: every thread walks all groups
 * in C order, and applies those whose first component (wrapped) is its own.
 * Different values of it address different elements of out, so each element
 * has one owner, which applies its updates in the order one thread would.  A
 * row is done in chunks: the destinations of a chunk are computed and the owned
 * ones compacted without a branch (half the tests would be mispredicted), then
 * applied with their destinations prefetched. */
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

/* The owned groups among [c0, c1) of a row with one index component: their out
 * offsets (oo) and update offsets (uo), in order; returns how many.  A value
 * outside its axis sets *bad and is taken as 0. */
static npy_intp
compact_one_scalar(const char *pi, npy_intp gsi, npy_intp gso, npy_intp gsu, npy_intp c0,
                   npy_intp c1, npy_intp size, npy_intp ios, npy_intp lo, npy_intp span,
                   npy_intp *oo, npy_intp *uo, npy_intp *vv, int *bad_out)
{
    npy_intp i, cnt = 0;
    int bad = 0;
    for (i = c0; i < c1; i++) {
        npy_intp v0 = so_wrap(so_load_intp(pi + i * gsi), size);
        int ok = (npy_uintp)v0 < (npy_uintp)size;
        bad |= !ok;
        v0 = ok ? v0 : 0;
        oo[cnt] = i * gso + v0 * ios;
        uo[cnt] = i * gsu;
        if (vv != NULL) vv[cnt] = v0;
        cnt += (npy_uintp)(v0 - lo) < (npy_uintp)span;
    }
    *bad_out |= bad;
    return cnt;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <cpuid.h>
/* The same for contiguous indices with AVX-512 (F, DQ), eight at a time: the
 * scalar loop was a third of a thread's time in a random scatter-add of 1e7
 * (perf), as many instructions as the scatter itself.  Chosen at run time. */
__attribute__((target("avx512f,avx512dq")))
static npy_intp
compact_one_avx512(const char *pi, npy_intp gsu, npy_intp c0, npy_intp c1, npy_intp size,
                   npy_intp ios, npy_intp lo, npy_intp span, npy_intp *oo, npy_intp *uo,
                   npy_intp *vv, int *bad_out)
{
    const __m512i vsize = _mm512_set1_epi64(size), vlo = _mm512_set1_epi64(lo);
    const __m512i vspan = _mm512_set1_epi64(span), vios = _mm512_set1_epi64(ios);
    const __m512i vstep = _mm512_set1_epi64(8 * gsu), zero = _mm512_setzero_si512();
    __m512i vu = _mm512_mullo_epi64(
        _mm512_add_epi64(_mm512_set1_epi64(c0), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)),
        _mm512_set1_epi64(gsu));
    npy_intp i = c0, cnt = 0;
    __mmask8 allok = 0xFF;
    for (; i + 8 <= c1; i += 8) {
        __m512i v = _mm512_loadu_si512((const void *)(pi + i * (npy_intp)sizeof(npy_intp)));
        __mmask8 neg = _mm512_cmplt_epi64_mask(v, zero), ok, own;
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
    return cnt + compact_one_scalar(pi, sizeof(npy_intp), 0, gsu, i, c1, size, ios, lo, span,
                                    oo + cnt, uo + cnt, vv ? vv + cnt : NULL, bad_out);
}

/* The same four at a time with AVX2, for CPUs without AVX-512 (this project's
 * AMD machines): AVX2 has no compress, so a table of vpermd orders moves the
 * owned lanes to the front of each vector.  It has no 64-bit multiply either:
 * the offset v * ios is vpmuludq of the low halves, exact while
 * 0 <= v < size <= 2^31 and 0 <= ios < 2^31 (avx2_compaction_fits). */
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
compact_one_avx2(const char *pi, npy_intp gsu, npy_intp c0, npy_intp c1, npy_intp size,
                 npy_intp ios, npy_intp lo, npy_intp span, npy_intp *oo, npy_intp *uo,
                 npy_intp *vv, int *bad_out)
{
    const __m256i vsize = _mm256_set1_epi64x(size), vlo = _mm256_set1_epi64x(lo);
    const __m256i vspan = _mm256_set1_epi64x(span), vios = _mm256_set1_epi64x(ios);
    const __m256i vstep = _mm256_set1_epi64x(4 * gsu), zero = _mm256_setzero_si256();
    const __m256i minus1 = _mm256_set1_epi64x(-1);
    __m256i vu = _mm256_set_epi64x((c0 + 3) * gsu, (c0 + 2) * gsu, (c0 + 1) * gsu, c0 * gsu);
    __m256i allok = minus1;
    npy_intp i = c0, cnt = 0;
    for (; i + 4 <= c1; i += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(pi + i * (npy_intp)sizeof(npy_intp)));
        __m256i ok, own, d, perm;
        int bits;
        v = _mm256_add_epi64(v, _mm256_and_si256(_mm256_cmpgt_epi64(zero, v), vsize));
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
    return cnt + compact_one_scalar(pi, sizeof(npy_intp), 0, gsu, i, c1, size, ios, lo, span,
                                    oo + cnt, uo + cnt, vv ? vv + cnt : NULL, bad_out);
}

#endif

/* Whether the CPU has the instructions and the OS saves the registers they use,
 * asked with CPUID and XGETBV, which every compiler here knows (clang 14 has no
 * __builtin_cpu_supports("f16c")).  SCATTEROPS_NO_F16C=1 / SCATTEROPS_NO_AVX512=1
 * turn one off (the tests compare both ways).  The answer is kept: every thread
 * that races to it writes the same value. */
int
so_cpu_has(int feature)
{
    static int known[3] = {-1, -1, -1};
    if (known[feature] < 0) {
        const char *env = getenv(feature == SO_CPU_F16C     ? "SCATTEROPS_NO_F16C"
                                 : feature == SO_CPU_AVX2   ? "SCATTEROPS_NO_AVX2"
                                                            : "SCATTEROPS_NO_AVX512");
        int have = 0;
#if defined(__GNUC__) && defined(__x86_64__)
        unsigned int a = 0, b = 0, c = 0, d = 0, xlo = 0, xhi = 0, state = 0;
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
            if (feature == SO_CPU_F16C) {
                have = (c & bit_F16C) && (c & bit_AVX);
                state = 0x6;       /* XMM and YMM */
            }
            else if (feature == SO_CPU_AVX2) {
                have = (c & bit_AVX) && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
                state = 0x6;
            }
            else {
                have = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
                       (b & bit_AVX512DQ);
                state = 0xE6;      /* XMM, YMM, opmask and ZMM */
            }
            if (have) {
                __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
                have = (xlo & state) == state;
            }
        }
#endif
        known[feature] = have && !(env != NULL && env[0] == '1');
    }
    return known[feature];
}

/* Whether compact_one_avx2 computes this axis' offsets exactly. */
static int
avx2_compaction_fits(npy_intp size, npy_intp ios)
{
    return so_cpu_has(SO_CPU_AVX2) && size <= ((npy_intp)1 << 31) && ios >= 0 &&
           ios < ((npy_intp)1 << 31);
}

/* Whether the rows of this walk are compacted several at a time (compact_one). */
static int
vector_compaction(const so_plan *p)
{
    return p->k == 1 && p->mask == NULL && p->gnd >= 1 && p->gs_out[p->gnd - 1] == 0 &&
           p->gs_idx[p->gnd - 1] == (npy_intp)sizeof(npy_intp) &&
           (so_cpu_has(SO_CPU_AVX512) || avx2_compaction_fits(p->isize[0], p->is_out[0]));
}

static npy_intp
compact_one(const char *pi, npy_intp gsi, npy_intp gso, npy_intp gsu, npy_intp c0, npy_intp c1,
            npy_intp size, npy_intp ios, npy_intp lo, npy_intp span, npy_intp *oo, npy_intp *uo,
            npy_intp *vv, int *bad)
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (gso == 0 && gsi == (npy_intp)sizeof(npy_intp)) {
        if (so_cpu_has(SO_CPU_AVX512)) {
            return compact_one_avx512(pi, gsu, c0, c1, size, ios, lo, span, oo, uo, vv, bad);
        }
        if (avx2_compaction_fits(size, ios)) {
            return compact_one_avx2(pi, gsu, c0, c1, size, ios, lo, span, oo, uo, vv, bad);
        }
    }
#endif
    return compact_one_scalar(pi, gsi, gso, gsu, c0, c1, size, ios, lo, span, oo, uo, vv, bad);
}

static void
run_row_owned(const so_plan *p, const so_kernel *kn, char *o, const char *u, const char *pi,
              char *m, npy_intp n, npy_intp gso, npy_intp gsu, npy_intp gsi, npy_intp gsm)
{
    /* + 8: the vector compaction stores whole vectors past the last entry */
    npy_intp oo[SO_OWN_CHUNK + 8], uo[SO_OWN_CHUNK + 8], mo[SO_OWN_CHUNK + 8];
    const npy_intp lo = p->own_lo, span = p->own_hi - p->own_lo;
    const npy_intp bb = small_block_bytes(p), ub = bb / (p->bs_out[0] ? p->bs_out[0] : 1) * p->bs_upd[0];
    const int list = p->bnd == 0 && m == NULL && kn->list != NULL;
    /* a thread that owns a third of the values or more prefetches every update
     * row in order, its own and the others': the hardware prefetcher pulls in
     * the others' rows between its own anyway, and a stream with no gaps goes
     * faster.  Bare C, 1e6 rows of 256 B, 2 threads: reading the owned rows
     * 12.8-14.8 ms, reading all of them 8.8-12.9 ms; graph add and max in the
     * library, 8 alternations: 58.9 -> 54.6 and 60.1 -> 54.0 ms (medians) */
    const int seq = gsu > 0 && 3 * span >= p->isize[0];
    npy_intp c0, c1, i, q, cnt, b;
    int j;
    for (c0 = 0; c0 < n; c0 = c1) {
        c1 = n - c0 > SO_OWN_CHUNK ? c0 + SO_OWN_CHUNK : n;
        cnt = 0;
        if (p->k == 1 && m == NULL) {
            /* the common shape, kept tight: one component, no mask; a value out
             * of range (possible only when the walk checks, p->bad) becomes 0 */
            int bad = 0;
            cnt = compact_one(pi, gsi, gso, gsu, c0, c1, p->isize[0], p->is_out[0], lo, span,
                              oo, uo, p->hits ? mo : NULL, &bad);
            if (bad && p->bad != NULL) *p->bad = 1;
            if (p->hits != NULL) {
                /* mean: the hits of each index value, here where they are owned */
                for (q = 0; q < cnt; q++) p->hits[mo[q]]++;
            }
        }
        else for (i = c0; i < c1; i++) {
            const char *pj = pi + i * gsi;
            npy_intp v0 = so_wrap(so_load_intp(pj), p->isize[0]);
            npy_intp od = i * gso + v0 * p->is_out[0], md = i * gsm + v0 * p->is_mask[0];
            for (j = 1; j < p->k; j++) {
                npy_intp v = so_wrap(so_load_intp(pj + j * p->istep), p->isize[j]);
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
        npy_intp pfo = c0 * gsu;         /* the next update row to prefetch in order */
        for (q = 0; q < cnt; q++) {
            if (q + SO_OWN_AHEAD < cnt) {
                const char *fo = o + oo[q + SO_OWN_AHEAD];
                __builtin_prefetch(fo, 1);
                if (bb > 0) {
                    const char *fu = u + uo[q + SO_OWN_AHEAD];
                    for (b = 64; b < bb; b += 64) __builtin_prefetch(fo + b, 1);
                    /* the update rows are read once: into L2 only (prefetcht2), which
                     * leaves L1's few fill buffers to out's rows (graph add, 2 threads:
                     * 26.2 -> 25.2 ms; into L1 as well: the prefetches stall) */
                    if (seq) {
                        for (; pfo <= uo[q + SO_OWN_AHEAD]; pfo += gsu) {
                            for (b = 0; b < ub; b += 64) __builtin_prefetch(u + pfo + b, 0, 1);
                        }
                    }
                    else {
                        for (b = 0; b < ub; b += 64) __builtin_prefetch(fu + b, 0, 1);
                    }
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

/* The groups along the innermost group dim, starting at the given pointers. */
static void
run_row(const so_plan *p, const so_kernel *kn, char *o, const char *u, const char *pi, char *m)
{
    npy_intp n = 1, gso = 0, gsu = 0, gsi = 0, gsm = 0, i;
    if (p->gnd > 0) {
        int g = p->gnd - 1;
        n = p->gshape[g];
        gso = p->gs_out[g];
        gsu = p->gs_upd[g];
        gsi = p->gs_idx[g];
        gsm = p->gs_mask[g];
    }
    if (p->bnd == 0 && gsi == 0) {
        /* the index is the same along the row (an expanded index, as in graph
         * message passing): the row is one block at one destination */
        npy_intp oo, mo;
        if (p->owned && (npy_uintp)(so_wrap(so_load_intp(pi), p->isize[0]) - p->own_lo) >=
                            (npy_uintp)(p->own_hi - p->own_lo)) {
            return;
        }
        dest_offsets(p, pi, &oo, &mo);
        if (m) {
            row_first(kn, o + oo, gso, u, gsu, m + mo, gsm, n);
        }
        else {
            kn->block(o + oo, gso, u, gsu, n, kn->itemsize);
        }
        return;
    }
    if (p->owned) {
        run_row_owned(p, kn, o, u, pi, m, n, gso, gsu, gsi, gsm);
        return;
    }
    if (p->bnd == 0 && p->k == 1 && m == NULL && kn->elem != NULL) {
        /* one element per group (scatter_elements, element-wise scatter_nd/update) */
        kn->elem(o, gso, pi, gsi, p->isize[0], p->is_out[0], u, gsu, n, kn->itemsize);
        return;
    }
    for (i = 0; i < n; i++) {
        npy_intp oo, mo;
        if (i + SO_PREFETCH_AHEAD < n) {
            /* the destination a few groups ahead is a cache miss to start now */
            npy_intp fo, fm;
            dest_offsets(p, pi + (i + SO_PREFETCH_AHEAD) * gsi, &fo, &fm);
            __builtin_prefetch(o + (i + SO_PREFETCH_AHEAD) * gso + fo, 1);
        }
        dest_offsets(p, pi + i * gsi, &oo, &mo);
        run_block(p, kn, o + i * gso + oo, u + i * gsu, m ? m + i * gsm + mo : NULL);
    }
}

/* A deduplicated plan: at every combination of the group dims left, each
 * winner's block once. */
static void
run_winners(const so_plan *p, const so_kernel *kn)
{
    npy_intp cnt[SO_MAXDIMS], w;
    char *o = p->out;
    const char *u = p->upd;
    int d;

    /* a winner's slice comes from anywhere in updates: when it is one short
     * contiguous run, start reading the run a few winners ahead */
    npy_intp span = p->bnd == 1 && p->bs_upd[0] == kn->itemsize ? p->bshape[0] * kn->itemsize : 0;
    if (span > SO_WINNER_PREFETCH_MAX) span = 0;

    for (d = 0; d < p->gnd; d++) {
        cnt[d] = 0;
    }
    for (;;) {
        for (w = 0; w < p->nwin; w++) {
            if (span > 0 && w + SO_WINNER_AHEAD < p->nwin) {
                const char *s = u + p->win[2 * (w + SO_WINNER_AHEAD) + 1];
                npy_intp b;
                for (b = 0; b < span; b += 64) __builtin_prefetch(s + b, 0);
                __builtin_prefetch(s + span - 1, 0);
            }
            run_block(p, kn, o + p->win[2 * w], u + p->win[2 * w + 1], NULL);
        }
        for (d = p->gnd - 1; d >= 0; d--) {
            o += p->gs_out[d];
            u += p->gs_upd[d];
            if (++cnt[d] < p->gshape[d]) break;
            o -= p->gs_out[d] * p->gshape[d];
            u -= p->gs_upd[d] * p->gshape[d];
            cnt[d] = 0;
        }
        if (d < 0) return;
    }
}

void
so_run(const so_plan *p, const so_kernel *kn)
{
    npy_intp cnt[SO_MAXDIMS];
    char *o = p->out, *m = p->mask;
    const char *u = p->upd, *pi = p->idx;
    int d, outer = p->gnd - 1;

    for (d = 0; d < p->gnd; d++) {
        if (p->gshape[d] == 0) return;
        cnt[d] = 0;
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bshape[d] == 0) return;
    }
    if (p->nwin >= 0) {
        run_winners(p, kn);
        return;
    }
    for (;;) {
        run_row(p, kn, o, u, pi, m);
        for (d = outer - 1; d >= 0; d--) {
            o += p->gs_out[d];
            u += p->gs_upd[d];
            pi += p->gs_idx[d];
            if (m) m += p->gs_mask[d];
            if (++cnt[d] < p->gshape[d]) {
                break;
            }
            o -= p->gs_out[d] * p->gshape[d];
            u -= p->gs_upd[d] * p->gshape[d];
            pi -= p->gs_idx[d] * p->gshape[d];
            if (m) m -= p->gs_mask[d] * p->gshape[d];
            cnt[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

/* ---- threads ------------------------------------------------------------------
 *
 * A call is split by output ownership: along a group dim whose coordinate is
 * part of the destination (scatter_update's leading dims, scatter_elements'
 * non-axis dims) or along a block dim.  Every output element then belongs to one
 * thread, which applies its updates in the same order as one thread would: the
 * result is bit-identical for every thread count.  Calls with no such dim (an
 * element-wise scatter_nd) and small calls run on the calling thread.  Threads
 * are made per call and joined before it returns, so nothing outlives a call
 * (and a child after fork() starts clean).
 */
#include <pthread.h>

int
so_run_tasks(void *(*fn)(void *), void *tasks, size_t size, int n)
{
    pthread_t tids_small[16], *tids = tids_small;
    int started_small[16], *started = started_small;
    int t, used = 1;
    char *base = (char *)tasks;
    if (n > 16) {
        tids = malloc(sizeof *tids * (size_t)n);
        started = malloc(sizeof *started * (size_t)n);
        if (tids == NULL || started == NULL) {
            free(tids == tids_small ? NULL : tids);
            free(started == started_small ? NULL : started);
            for (t = 0; t < n; t++) fn(base + (size_t)t * size);
            return 1;
        }
    }
    for (t = 1; t < n; t++) {
        started[t] = pthread_create(&tids[t], NULL, fn, base + (size_t)t * size) == 0;
        used += started[t];
    }
    if (n > 0) fn(base);
    for (t = 1; t < n; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else fn(base + (size_t)t * size);          /* no thread to be had: here */
    }
    if (tids != tids_small) free(tids);
    if (started != started_small) free(started);
    return used;
}

#define SO_MIN_WORK_PER_THREAD ((npy_intp)1 << 15)

typedef struct {
    so_plan plan;
    const so_kernel *kn;
} so_task;

/* A thread's walk; an owner of a mean then divides its own blocks. */
static void
run_task(const so_plan *p, const so_kernel *kn)
{
    so_run(p, kn);
    if (p->owned && p->hits != NULL && p->mean_descr != NULL) so_mean_finish_owned(p);
}

static void *
task_main(void *arg)
{
    so_task *t = (so_task *)arg;
    run_task(&t->plan, t->kn);
    return NULL;
}

/* The dim to split: 0..gnd-1 a group dim, gnd+b a block dim, -1 none.  A
 * group dim that addresses out directly is best: each thread reads its own
 * updates and writes its own part of out.  A block dim is split only when each
 * thread gets long runs of it.  Walks with neither (element-wise scatters, an
 * expanded-row index) split the index values instead (SO_SPLIT_OWNED, above):
 * each thread reads every index but only its own updates and destinations.
 * Measured on this project's 2-core Intel machine, C loop, two threads against
 * one: a random scatter-add of 1e7 float32 into 1e7, 75 -> 40 ms; 1e6 rows of
 * 64 float32 added into 1e5 rows, 34 -> 20 ms.  (An earlier AMD machine gave
 * no gain for a branchy version that tested ownership update by update.) */
#define SO_MIN_BLOCK_RUN 256
/* split_dim found none: split the values of the first index component, when
 * the part of out they address is too large for the cache, or when the
 * compaction is vectorised (into an out that stays in cache, 1e6 updates into
 * 1e5 float16 or int64 elements, every thread reading every index with the
 * scalar compaction made two threads slower than one: 2.0 -> 2.2-2.4 ms; on the
 * AMD EPYC with AVX2, against a walk on one thread beside the index check:
 * float16 add 3.3-3.5 -> 2.5-3.0 ms, int64 max 3.5-3.6 -> 2.6-3.5 ms) */
#define SO_SPLIT_OWNED (-2)
#define SO_MIN_OWNED_BYTES ((npy_intp)4 << 20)

static int
split_dim(const so_plan *p, int nthreads)
{
    int d;
    for (d = 0; d < p->gnd; d++) {
        if (p->gs_out[d] != 0 && p->gshape[d] >= nthreads) {
            return d;
        }
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] != 0 && p->bshape[d] >= nthreads * SO_MIN_BLOCK_RUN) {
            return p->gnd + d;
        }
    }
    return -1;
}

static void
narrow(so_plan *p, int dim, npy_intp lo, npy_intp hi)
{
    if (dim < p->gnd) {
        p->out += lo * p->gs_out[dim];
        p->upd += lo * p->gs_upd[dim];
        p->idx += lo * p->gs_idx[dim];
        if (p->mask) p->mask += lo * p->gs_mask[dim];
        p->gshape[dim] = hi - lo;
    }
    else {
        int b = dim - p->gnd;
        p->out += lo * p->bs_out[b];
        p->upd += lo * p->bs_upd[b];
        if (p->mask) p->mask += lo * p->bs_mask[b];
        p->bshape[b] = hi - lo;
    }
}

/* The threads a call may use, and the dim to split (-1: none). */
static int
choose_split(const so_plan *p, const so_kernel *kn, int *nthreads_io)
{
    npy_intp work = 1;
    int d, dim, nthreads = *nthreads_io;

    for (d = 0; d < p->gnd; d++) work *= p->gshape[d];
    for (d = 0; d < p->bnd; d++) work *= p->bshape[d];
    if (kn->needs_gil || work == 0 || p->out_overlaps) {
        nthreads = 1;
    }
    if (nthreads > 1 && work / nthreads < SO_MIN_WORK_PER_THREAD) {
        nthreads = (int)(work / SO_MIN_WORK_PER_THREAD);
    }
    dim = nthreads > 1 ? split_dim(p, nthreads) : -1;
    if (dim == -1 && nthreads > 1 && p->nwin < 0 && p->k >= 1 && p->isize[0] >= nthreads &&
            (vector_compaction(p) ||
             p->isize[0] * (p->is_out[0] < 0 ? -p->is_out[0] : p->is_out[0]) >= SO_MIN_OWNED_BYTES)) {
        dim = SO_SPLIT_OWNED;
    }
    *nthreads_io = nthreads;
    return dim;
}

int
so_owned_split_applies(const so_plan *p, const so_kernel *kn, int nthreads)
{
    return choose_split(p, kn, &nthreads) == SO_SPLIT_OWNED;
}

static int run_split(const so_plan *p, const so_kernel *kn, int nthreads, int dim, int check);

int
so_run_owned_checked(const so_plan *p, const so_kernel *kn, int nthreads)
{
    int dim = choose_split(p, kn, &nthreads);
    if (dim != SO_SPLIT_OWNED || p->k != 1 || p->mask != NULL) {
        return -1;          /* not this walk: the caller checks the indices first */
    }
    return run_split(p, kn, nthreads, dim, 1);
}

int
so_run_threaded(const so_plan *p, const so_kernel *kn, int nthreads)
{
    int dim = choose_split(p, kn, &nthreads);
    if (dim == -1) {
        so_run(p, kn);
        return 1;
    }
    return run_split(p, kn, nthreads, dim, 0);
}

/* The walk split along dim on nthreads threads.  With check (SO_SPLIT_OWNED
 * only), returns 0 if a thread saw a bad index, else 1; without, the threads
 * that ran. */
static int
run_split(const so_plan *p, const so_kernel *kn, int nthreads, int dim, int check)
{
    npy_intp extent;
    so_task *tasks;
    int *bad;
    int t, used, ok = 1;

    if (nthreads < 1) nthreads = 1;
    extent = dim == SO_SPLIT_OWNED ? p->isize[0]
             : dim < p->gnd ? p->gshape[dim] : p->bshape[dim - p->gnd];
    tasks = malloc(sizeof *tasks * (size_t)nthreads);
    bad = calloc((size_t)nthreads, sizeof *bad);
    if (tasks == NULL || bad == NULL) {
        free(tasks); free(bad);
        if (check || p->hits != NULL) {
            /* one owner of everything, still checking (counting) */
            so_plan one = *p;
            int b = 0;
            one.owned = 1;
            one.own_lo = 0;
            one.own_hi = p->isize[0];
            one.bad = check ? &b : NULL;
            run_task(&one, kn);
            return check ? !b : 1;
        }
        so_run(p, kn);
        return 1;
    }
    for (t = 0; t < nthreads; t++) {
        npy_intp lo = extent * t / nthreads, hi = extent * (t + 1) / nthreads;
        tasks[t].plan = *p;
        tasks[t].kn = kn;
        if (dim == SO_SPLIT_OWNED) {
            tasks[t].plan.owned = 1;
            tasks[t].plan.own_lo = lo;
            tasks[t].plan.own_hi = hi;
            tasks[t].plan.bad = check ? &bad[t] : NULL;
        }
        else {
            narrow(&tasks[t].plan, dim, lo, hi);
        }
    }
    used = so_run_tasks(task_main, tasks, sizeof *tasks, nthreads);
    for (t = 0; t < nthreads; t++) {
        if (bad[t]) ok = 0;
    }
    free(tasks); free(bad);
    return check ? ok : used;
}

/* ---- copying data into a fresh out -------------------------------------------
 *
 * An out-of-place call starts with a copy of data into memory never touched
 * before; its page faults and its bandwidth both go faster on several threads.
 */
#define SO_MIN_COPY_PER_THREAD ((size_t)4 << 20)

typedef struct {
    char *dst;
    const char *src;
    size_t n;
} so_copy_task;

static void *
copy_main(void *arg)
{
    so_copy_task *t = (so_copy_task *)arg;
    memcpy(t->dst, t->src, t->n);
    return NULL;
}

void
so_parallel_copy(char *dst, const char *src, size_t nbytes, int nthreads)
{
    so_copy_task tasks[16];
    int t;
    if ((size_t)nthreads > nbytes / SO_MIN_COPY_PER_THREAD) {
        nthreads = (int)(nbytes / SO_MIN_COPY_PER_THREAD);
    }
    if (nthreads > 16) nthreads = 16;
    if (nthreads <= 1) {
        memcpy(dst, src, nbytes);
        return;
    }
    for (t = 0; t < nthreads; t++) {
        /* cut at 4 KiB so no two threads fault the same page */
        size_t lo = (nbytes / (size_t)nthreads * (size_t)t) & ~(size_t)4095;
        size_t hi = t + 1 == nthreads ? nbytes
                    : (nbytes / (size_t)nthreads * (size_t)(t + 1)) & ~(size_t)4095;
        tasks[t].dst = dst + lo;
        tasks[t].src = src + lo;
        tasks[t].n = hi - lo;
    }
    so_run_tasks(copy_main, tasks, sizeof *tasks, nthreads);
}

/* ---- a transposed data into a C-ordered out -----------------------------------
 *
 * An out-of-place result is C-contiguous (API.md) even when data is a
 * transposed view.  NumPy's strided copy walks one side with a large stride and
 * misses the cache on every element.  Here the threads take bands of out's
 * rows, and a band goes in strips one cache line of out wide (SO_TR_LINE bytes
 * of columns) and SO_TR_ROWS rows long: every line of out is written whole, at
 * once, and each of the strip's source columns is read as one stream.  Square
 * 32 x 32 tiles, with both strides a power of two (a (2048, 4096) float32),
 * kept too many lines of one cache set alive and missed L1 on most items.
 * Inside a strip, 4-, 8- and 2-byte items move as 8 x 8, 4 x 4 and 8 x 8
 * blocks transposed in vector registers, when the CPU has AVX2 (shuffles only:
 * every bit, NaN payloads included, is copied as is).  (2048, 4096) float32, 2 threads, bare C on the
 * AMD EPYC: 18.4-19.7 ms with the square scalar tiles, 14 ms with scalar strips,
 * 5.3-7.5 ms with vector blocks in strips; memcpy of the same bytes 3.0-3.9 ms.
 */
#define SO_TR_LINE 64
#define SO_TR_ROWS 128
#define SO_TR_BAND 8            /* a thread's band of rows: a multiple of this */

typedef struct {
    char *dst;
    const char *src;
    npy_intp r0, r1, rows, cols, isz;
} so_transpose_task;

typedef struct { npy_uint64 lo, hi; } so_u128;

/* out[r, c] = src[c, r] for r in [r0, r1), c in [c0, c1), item by item */
#define TRANSPOSE_SCALAR(T)                                                           \
    for (r = r0; r < r1; r++) {                                                       \
        T *d = (T *)(void *)(t->dst + (r * t->cols) * (npy_intp)sizeof(T));           \
        const T *s = (const T *)(const void *)(t->src + r * (npy_intp)sizeof(T));     \
        for (c = c0; c < c1; c++) d[c] = s[c * t->rows];                              \
    }

static void
transpose_scalar(const so_transpose_task *t, npy_intp r0, npy_intp r1, npy_intp c0, npy_intp c1)
{
    npy_intp r, c;
    switch (t->isz) {
        case 1: TRANSPOSE_SCALAR(npy_uint8) break;
        case 2: TRANSPOSE_SCALAR(npy_uint16) break;
        case 4: TRANSPOSE_SCALAR(npy_uint32) break;
        case 8: TRANSPOSE_SCALAR(npy_uint64) break;
        case 16: TRANSPOSE_SCALAR(so_u128) break;
        default:
            for (r = r0; r < r1; r++) {
                for (c = c0; c < c1; c++) {
                    memcpy(t->dst + (r * t->cols + c) * t->isz,
                           t->src + (c * t->rows + r) * t->isz, (size_t)t->isz);
                }
            }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
/* One block: d[i * ds + j] = s[j * ss + i], strides in items. */
__attribute__((target("avx2")))
static inline void
transpose_8x8_4(char *dp, npy_intp ds, const char *sp, npy_intp ss)
{
    float *d = (float *)(void *)dp;
    const float *s = (const float *)(const void *)sp;
    __m256 a0 = _mm256_loadu_ps(s), a1 = _mm256_loadu_ps(s + ss);
    __m256 a2 = _mm256_loadu_ps(s + 2 * ss), a3 = _mm256_loadu_ps(s + 3 * ss);
    __m256 a4 = _mm256_loadu_ps(s + 4 * ss), a5 = _mm256_loadu_ps(s + 5 * ss);
    __m256 a6 = _mm256_loadu_ps(s + 6 * ss), a7 = _mm256_loadu_ps(s + 7 * ss);
    __m256 b0 = _mm256_unpacklo_ps(a0, a1), b1 = _mm256_unpackhi_ps(a0, a1);
    __m256 b2 = _mm256_unpacklo_ps(a2, a3), b3 = _mm256_unpackhi_ps(a2, a3);
    __m256 b4 = _mm256_unpacklo_ps(a4, a5), b5 = _mm256_unpackhi_ps(a4, a5);
    __m256 b6 = _mm256_unpacklo_ps(a6, a7), b7 = _mm256_unpackhi_ps(a6, a7);
    a0 = _mm256_shuffle_ps(b0, b2, 0x44);
    a1 = _mm256_shuffle_ps(b0, b2, 0xEE);
    a2 = _mm256_shuffle_ps(b1, b3, 0x44);
    a3 = _mm256_shuffle_ps(b1, b3, 0xEE);
    a4 = _mm256_shuffle_ps(b4, b6, 0x44);
    a5 = _mm256_shuffle_ps(b4, b6, 0xEE);
    a6 = _mm256_shuffle_ps(b5, b7, 0x44);
    a7 = _mm256_shuffle_ps(b5, b7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(a0, a4, 0x20));
    _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(a1, a5, 0x20));
    _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(a2, a6, 0x20));
    _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(a3, a7, 0x20));
    _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(a0, a4, 0x31));
    _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(a1, a5, 0x31));
    _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(a2, a6, 0x31));
    _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(a3, a7, 0x31));
}

__attribute__((target("avx2")))
static inline void
transpose_4x4_8(char *dp, npy_intp ds, const char *sp, npy_intp ss)
{
    double *d = (double *)(void *)dp;
    const double *s = (const double *)(const void *)sp;
    __m256d a0 = _mm256_loadu_pd(s), a1 = _mm256_loadu_pd(s + ss);
    __m256d a2 = _mm256_loadu_pd(s + 2 * ss), a3 = _mm256_loadu_pd(s + 3 * ss);
    __m256d b0 = _mm256_unpacklo_pd(a0, a1), b1 = _mm256_unpackhi_pd(a0, a1);
    __m256d b2 = _mm256_unpacklo_pd(a2, a3), b3 = _mm256_unpackhi_pd(a2, a3);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(b0, b2, 0x20));
    _mm256_storeu_pd(d + ds, _mm256_permute2f128_pd(b1, b3, 0x20));
    _mm256_storeu_pd(d + 2 * ds, _mm256_permute2f128_pd(b0, b2, 0x31));
    _mm256_storeu_pd(d + 3 * ds, _mm256_permute2f128_pd(b1, b3, 0x31));
}

__attribute__((target("avx2")))
static inline void
transpose_8x8_2(char *dp, npy_intp ds, const char *sp, npy_intp ss)
{
    npy_uint16 *d = (npy_uint16 *)(void *)dp;
    const npy_uint16 *s = (const npy_uint16 *)(const void *)sp;
    __m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(s + ss));
    __m128i a2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 2 * ss));
    __m128i a3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 3 * ss));
    __m128i a4 = _mm_loadu_si128((const __m128i *)(const void *)(s + 4 * ss));
    __m128i a5 = _mm_loadu_si128((const __m128i *)(const void *)(s + 5 * ss));
    __m128i a6 = _mm_loadu_si128((const __m128i *)(const void *)(s + 6 * ss));
    __m128i a7 = _mm_loadu_si128((const __m128i *)(const void *)(s + 7 * ss));
    __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
    __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
    __m128i b4 = _mm_unpacklo_epi16(a4, a5), b5 = _mm_unpackhi_epi16(a4, a5);
    __m128i b6 = _mm_unpacklo_epi16(a6, a7), b7 = _mm_unpackhi_epi16(a6, a7);
    a0 = _mm_unpacklo_epi32(b0, b2);
    a1 = _mm_unpackhi_epi32(b0, b2);
    a2 = _mm_unpacklo_epi32(b1, b3);
    a3 = _mm_unpackhi_epi32(b1, b3);
    a4 = _mm_unpacklo_epi32(b4, b6);
    a5 = _mm_unpackhi_epi32(b4, b6);
    a6 = _mm_unpacklo_epi32(b5, b7);
    a7 = _mm_unpackhi_epi32(b5, b7);
    _mm_storeu_si128((__m128i *)(void *)d, _mm_unpacklo_epi64(a0, a4));
    _mm_storeu_si128((__m128i *)(void *)(d + ds), _mm_unpackhi_epi64(a0, a4));
    _mm_storeu_si128((__m128i *)(void *)(d + 2 * ds), _mm_unpacklo_epi64(a1, a5));
    _mm_storeu_si128((__m128i *)(void *)(d + 3 * ds), _mm_unpackhi_epi64(a1, a5));
    _mm_storeu_si128((__m128i *)(void *)(d + 4 * ds), _mm_unpacklo_epi64(a2, a6));
    _mm_storeu_si128((__m128i *)(void *)(d + 5 * ds), _mm_unpackhi_epi64(a2, a6));
    _mm_storeu_si128((__m128i *)(void *)(d + 6 * ds), _mm_unpacklo_epi64(a3, a7));
    _mm_storeu_si128((__m128i *)(void *)(d + 7 * ds), _mm_unpackhi_epi64(a3, a7));
}

/* The whole b x b blocks of a strip [r0, r1) x [c0, c1); returns the rows and
 * columns they cover (*rv, *cv), the rest is left to the scalar loop. */
#define TRANSPOSE_BLOCKS(FN)                                                          \
    for (r = r0; r < *rv; r += b) {                                                   \
        for (c = c0; c < *cv; c += b) {                                               \
            FN(t->dst + (r * t->cols + c) * t->isz, t->cols,                          \
               t->src + (c * t->rows + r) * t->isz, t->rows);                         \
        }                                                                             \
    }

__attribute__((target("avx2")))
static void
transpose_vector(const so_transpose_task *t, npy_intp r0, npy_intp r1, npy_intp c0, npy_intp c1,
                 npy_intp *rv, npy_intp *cv)
{
    npy_intp r, c, b = t->isz == 8 ? 4 : 8;
    *rv = r0 + (r1 - r0) / b * b;
    *cv = c0 + (c1 - c0) / b * b;
    switch (t->isz) {
        case 2: TRANSPOSE_BLOCKS(transpose_8x8_2) break;
        case 4: TRANSPOSE_BLOCKS(transpose_8x8_4) break;
        case 8: TRANSPOSE_BLOCKS(transpose_4x4_8) break;
    }
}
#endif

static void *
transpose_main(void *arg)
{
    so_transpose_task *t = (so_transpose_task *)arg;
    const npy_intp width = t->isz < SO_TR_LINE ? SO_TR_LINE / t->isz : 1;
    int vec = 0;
    npy_intp rt, ct;
#if defined(__GNUC__) && defined(__x86_64__)
    vec = (t->isz == 2 || t->isz == 4 || t->isz == 8) && so_cpu_has(SO_CPU_AVX2);
#endif
    for (rt = t->r0; rt < t->r1; rt += SO_TR_ROWS) {
        npy_intp re = rt + SO_TR_ROWS < t->r1 ? rt + SO_TR_ROWS : t->r1;
        for (ct = 0; ct < t->cols; ct += width) {
            npy_intp ce = ct + width < t->cols ? ct + width : t->cols, rv = rt, cv = ct;
#if defined(__GNUC__) && defined(__x86_64__)
            if (vec) transpose_vector(t, rt, re, ct, ce, &rv, &cv);
#endif
            /* what the blocks left: the columns past them, then the rows */
            transpose_scalar(t, rt, rv, cv, ce);
            transpose_scalar(t, rv, re, ct, ce);
        }
    }
    return NULL;
}

void
so_transpose_copy(char *dst, const char *src, npy_intp rows, npy_intp cols, npy_intp isz,
                  int nthreads)
{
    so_transpose_task tasks[16];
    int t;
    size_t nbytes = (size_t)rows * (size_t)cols * (size_t)isz;
    if (nthreads > 16) nthreads = 16;
    if ((size_t)nthreads > nbytes / SO_MIN_COPY_PER_THREAD) {
        nthreads = (int)(nbytes / SO_MIN_COPY_PER_THREAD);
    }
    if (nthreads > rows / SO_TR_BAND) nthreads = (int)(rows / SO_TR_BAND);
    if (nthreads < 1) nthreads = 1;
    for (t = 0; t < nthreads; t++) {
        tasks[t].dst = dst;
        tasks[t].src = src;
        tasks[t].r0 = rows / SO_TR_BAND * t / nthreads * SO_TR_BAND;
        tasks[t].r1 = t + 1 == nthreads ? rows : rows / SO_TR_BAND * (t + 1) / nthreads * SO_TR_BAND;
        tasks[t].rows = rows;
        tasks[t].cols = cols;
        tasks[t].isz = isz;
    }
    so_run_tasks(transpose_main, tasks, sizeof *tasks, nthreads);
}

/* ---- out of place: the copy of data fused into the walk ----------------------
 *
 * A fresh out must first hold data, then take the updates.  Done as two passes,
 * out is written twice and read back once from memory.  When the outermost
 * group dim owns a band of out (every destination of the groups at coordinate c
 * lies in [c*S, (c+1)*S), S its stride), each thread instead takes a range of
 * bands and, a few bands at a time, copies them from data and applies their
 * updates while they are still in cache.  Under reduction "none" with a winner
 * list (dedup.c) the bytes a winner overwrites are not copied at all: only the
 * gaps between the winners' slices are.  The walk inside a band is so_run, so
 * the result is the one the two passes give.
 */
#define SO_TILE_BYTES ((npy_intp)256 << 10)
#define SO_MIN_FUSED_PER_THREAD ((npy_intp)4 << 20)

typedef struct {
    so_plan plan;          /* narrowed to this task's bands */
    const so_kernel *kn;
    const char *src;       /* data at the task's first band */
    npy_intp lo, hi;       /* bands [lo, hi) of the whole plan */
    npy_intp band;         /* S */
    const npy_intp *gaps;  /* (start, end) byte pairs within a band to copy */
    npy_intp ngaps;
} so_fused_task;

static void
copy_bands(char *o, const char *s, npy_intp nbands, npy_intp band, const npy_intp *gaps,
           npy_intp ngaps)
{
    npy_intp b, g;
    if (ngaps == 1 && gaps[0] == 0 && gaps[1] == band) {
        memcpy(o, s, (size_t)(nbands * band));
        return;
    }
    for (b = 0; b < nbands; b++) {
        for (g = 0; g < ngaps; g++) {
            memcpy(o + b * band + gaps[2 * g], s + b * band + gaps[2 * g],
                   (size_t)(gaps[2 * g + 1] - gaps[2 * g]));
        }
    }
}

static void *
fused_main(void *arg)
{
    so_fused_task *t = (so_fused_task *)arg;
    npy_intp per = SO_TILE_BYTES / t->band, lo;
    if (per < 1) per = 1;
    for (lo = t->lo; lo < t->hi; lo += per) {
        npy_intp hi = lo + per < t->hi ? lo + per : t->hi;
        so_plan tile = t->plan;
        narrow(&tile, 0, lo - t->lo, hi - t->lo);
        copy_bands(tile.out, t->src + (lo - t->lo) * t->band, hi - lo, t->band, t->gaps,
                   t->ngaps);
        so_run(&tile, t->kn);
    }
    return NULL;
}

/* The bytes within a band that no winner overwrites, as (start, end) pairs in a
 * malloc'd array; the whole band when there is no winner list or the winners'
 * slices are not contiguous runs in order.  NULL if memory is short. */
static npy_intp *
band_gaps(const so_plan *p, npy_intp band, npy_intp itemsize, npy_intp *ngaps)
{
    npy_intp *gaps, pos = 0, run, w, n = 0;
    int whole = p->nwin < 0 || p->gnd > 1 || p->bnd != 1 || p->bs_out[0] != itemsize;
    gaps = malloc(sizeof *gaps * (size_t)(2 * (whole ? 1 : p->nwin + 1)));
    if (gaps == NULL) return NULL;
    if (!whole) {
        run = p->bshape[0] * itemsize;
        for (w = 0; w < p->nwin && !whole; w++) {
            npy_intp at = p->win[2 * w];
            if (at < pos || at + run > band) {
                whole = 1;
            }
            else {
                if (at > pos) {
                    gaps[2 * n] = pos;
                    gaps[2 * n + 1] = at;
                    n++;
                }
                pos = at + run;
            }
        }
        if (!whole && pos < band) {
            gaps[2 * n] = pos;
            gaps[2 * n + 1] = band;
            n++;
        }
    }
    if (whole) {
        gaps[0] = 0;
        gaps[1] = band;
        n = 1;
    }
    *ngaps = n;
    return gaps;
}

/* The band stride S if the outermost group dim owns bands of out, else 0. */
static npy_intp
owned_band(const so_plan *p, npy_intp itemsize)
{
    npy_intp reach = itemsize, w;
    int d, j;
    if (p->gnd < 1 || p->gs_out[0] <= 0 || p->mask != NULL) return 0;
    for (d = 1; d < p->gnd; d++) {
        if (p->gs_out[d] < 0) return 0;
        reach += (p->gshape[d] - 1) * p->gs_out[d];
    }
    if (p->nwin >= 0) {
        for (w = 0; w < p->nwin; w++) {
            if (p->win[2 * w] < 0) return 0;
        }
        if (p->nwin > 0) reach += p->win[2 * (p->nwin - 1)];   /* sorted by offset */
    }
    else {
        for (j = 0; j < p->k; j++) {
            if (p->is_out[j] < 0) return 0;
            reach += (p->isize[j] - 1) * p->is_out[j];
        }
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] < 0) return 0;
        reach += (p->bshape[d] - 1) * p->bs_out[d];
    }
    return reach <= p->gs_out[0] ? p->gs_out[0] : 0;
}

int
so_run_copying(const so_plan *p, const so_kernel *kn, int nthreads, const char *src,
               npy_intp nbytes)
{
    npy_intp band, nb, gap_n, *gaps;
    so_fused_task tasks[16];
    int d, t;

    for (d = 0; d < p->gnd; d++) if (p->gshape[d] == 0) return 0;
    for (d = 0; d < p->bnd; d++) if (p->bshape[d] == 0) return 0;
    if (kn->needs_gil) return 0;
    band = owned_band(p, kn->itemsize);
    if (band == 0 || p->gshape[0] * band > nbytes) return 0;
    nb = p->gshape[0];
    gaps = band_gaps(p, band, kn->itemsize, &gap_n);
    if (gaps == NULL) return 0;

    if (nthreads > 16) nthreads = 16;
    if ((npy_intp)nthreads > nbytes / SO_MIN_FUSED_PER_THREAD) {
        nthreads = (int)(nbytes / SO_MIN_FUSED_PER_THREAD);
    }
    if (nthreads > nb) nthreads = (int)nb;
    if (nthreads < 1) nthreads = 1;
    for (t = 0; t < nthreads; t++) {
        so_fused_task *k = &tasks[t];
        k->lo = nb * t / nthreads;
        k->hi = nb * (t + 1) / nthreads;
        k->plan = *p;
        narrow(&k->plan, 0, k->lo, k->hi);
        k->kn = kn;
        k->src = src + k->lo * band;
        k->band = band;
        k->gaps = gaps;
        k->ngaps = gap_n;
    }
    so_run_tasks(fused_main, tasks, sizeof *tasks, nthreads);
    /* the bytes past the last band: no group writes them */
    if (nb * band < nbytes) {
        memcpy(p->out + nb * band, src + nb * band, (size_t)(nbytes - nb * band));
    }
    free(gaps);
    return 1;
}

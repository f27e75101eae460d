/*
 * base/copy.c: the large copies of an out-of-place call, on threads: a plain
 * memcpy cut in page-aligned parts, and a transposed 2-D data into a C-ordered
 * out in strips, with AVX2 register blocks where the CPU has them.
 */
#include "base/base.h"

#include <stdint.h>
#include <stdlib.h>
#if SO_X86_VECTOR
#include <immintrin.h>
#endif

/* ---- copying data into a fresh out -------------------------------------------
 *
 * An out-of-place call starts with a copy of data into memory never touched
 * before (or kept by the output cache); its page faults and its bandwidth both
 * go faster on several threads.
 */
#define SO_MIN_COPY_PER_THREAD ((size_t)4 << 20)

/* a copy asks its poll every this many bytes */
#define SO_COPY_PIECE ((size_t)8 << 20)

/* A copy larger than a quarter of L3, and than SO_STREAM_FLOOR, stores past the
 * caches (non-temporal stores): memcpy in pieces stores through them, and each
 * line of out is read before it is written.  A copy that large stays in cache
 * for the scatter that follows only in part, and the streams pay.  Below it
 * they lose: the scatter reads back from memory what the streams kept out of
 * cache.  The floor keeps that off a machine whose L3 says less
 * (docs/design.md, "The copy of data").  so_set_stream_min changes the rule
 * (tests: every copy streamed). */
#define SO_STREAM_FLOOR ((size_t)32 << 20)
static npy_intp stream_min_set = -1;

npy_intp
so_set_stream_min(npy_intp nbytes)
{
    npy_intp old = stream_min_set;
    stream_min_set = nbytes;
    return old;
}

#if SO_X86_VECTOR
static size_t
stream_min(void)
{
    size_t l3 = (size_t)so_cache_bytes(3) / 4;
    if (stream_min_set >= 0) return (size_t)stream_min_set;
    return l3 > SO_STREAM_FLOOR ? l3 : SO_STREAM_FLOOR;
}
#endif

typedef struct {
    char *dst;
    const char *src;
    size_t n;
    int stream;                 /* 0: memcpy; 1, 2: streamed by 16 or 32 bytes */
    so_poll *poll;
} so_copy_task;

#if SO_X86_VECTOR
/* n bytes from src to dst, 64 a step, stored past the caches into dst aligned
 * to the store's width (memcpy does the two ends).  The caller fences. */
static void
stream_sse2(char *dst, const char *src, size_t n)
{
    size_t i = (size_t)(-(uintptr_t)dst & 15);
    if (i > n) i = n;
    memcpy(dst, src, i);
    for (; i + 64 <= n; i += 64) {
        const __m128i *s = (const __m128i *)(const void *)(src + i);
        __m128i *d = (__m128i *)(void *)(dst + i);
        __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
        __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
        _mm_stream_si128(d, a);
        _mm_stream_si128(d + 1, b);
        _mm_stream_si128(d + 2, c);
        _mm_stream_si128(d + 3, e);
    }
    memcpy(dst + i, src + i, n - i);
}

__attribute__((target("avx2")))
static void
stream_avx2(char *dst, const char *src, size_t n)
{
    size_t i = (size_t)(-(uintptr_t)dst & 31);
    if (i > n) i = n;
    memcpy(dst, src, i);
    for (; i + 64 <= n; i += 64) {
        const __m256i *s = (const __m256i *)(const void *)(src + i);
        __m256i *d = (__m256i *)(void *)(dst + i);
        __m256i a = _mm256_loadu_si256(s), b = _mm256_loadu_si256(s + 1);
        _mm256_stream_si256(d, a);
        _mm256_stream_si256(d + 1, b);
    }
    memcpy(dst + i, src + i, n - i);
}
#endif

static void *
copy_main(void *arg)
{
    so_copy_task *t = (so_copy_task *)arg;
    size_t at, n;
    for (at = 0; at < t->n; at += n) {
        n = t->n - at < SO_COPY_PIECE ? t->n - at : SO_COPY_PIECE;
        if (so_stopped(t->poll)) break;
#if SO_X86_VECTOR
        if (t->stream == 2) {
            stream_avx2(t->dst + at, t->src + at, n);
            continue;
        }
        if (t->stream == 1) {
            stream_sse2(t->dst + at, t->src + at, n);
            continue;
        }
#endif
        memcpy(t->dst + at, t->src + at, n);
    }
#if SO_X86_VECTOR
    /* the streamed stores are seen before the pool says this task is done */
    if (t->stream) _mm_sfence();
#endif
    return NULL;
}

int
so_parallel_copy(char *dst, const char *src, size_t nbytes, int nthreads, so_poll *poll)
{
    so_copy_task one = {dst, src, nbytes, 0, poll}, *tasks;
    int t, stream = 0;
#if SO_X86_VECTOR
    if (nbytes > 0 && nbytes >= stream_min()) stream = so_cpu_has(SO_CPU_AVX2) ? 2 : 1;
#endif
    if ((size_t)nthreads > nbytes / SO_MIN_COPY_PER_THREAD) {
        nthreads = (int)(nbytes / SO_MIN_COPY_PER_THREAD);
    }
    tasks = so_task_array(&one, sizeof one, &nthreads);
    for (t = 0; t < nthreads; t++) {
        /* cut at 4 KiB so no two threads fault the same page */
        size_t lo = (nbytes / (size_t)nthreads * (size_t)t) & ~(size_t)4095;
        size_t hi = t + 1 == nthreads ? nbytes
                    : (nbytes / (size_t)nthreads * (size_t)(t + 1)) & ~(size_t)4095;
        tasks[t].dst = dst + lo;
        tasks[t].src = src + lo;
        tasks[t].n = hi - lo;
        tasks[t].stream = stream;
        tasks[t].poll = poll;
    }
    so_run_tasks_kind(copy_main, tasks, sizeof *tasks, nthreads, poll,
                      SO_JOB_KIND_COPY + so_log2((npy_intp)nbytes));
    so_task_array_free(tasks, &one);
    return so_stopped(poll);
}

/* ---- a transposed data into a C-ordered out -----------------------------------
 *
 * An out-of-place result is C-contiguous (docs/contract.md) even when data is a
 * transposed view.  NumPy's strided copy walks one side with a large stride and
 * misses the cache on every element.  Here the threads take bands of out's
 * rows, and a band goes in strips one cache line of out wide (SO_TR_LINE bytes
 * of columns) and SO_TR_ROWS rows long: every line of out is written whole, at
 * once, and each of the strip's source columns is read as one stream.  Square
 * 32 x 32 tiles, with both strides a power of two (a (2048, 4096) float32),
 * keep too many lines of one cache set alive and miss L1 on most items.
 * Inside a strip, 4-, 8- and 2-byte items move as 8 x 8, 4 x 4 and 8 x 8
 * blocks transposed in vector registers, when the CPU has AVX2 (shuffles only:
 * every bit, NaN payloads included, is copied as is).  docs/design.md, "The
 * copy of data", compares the three.
 */
#define SO_TR_LINE 64
#define SO_TR_ROWS 128
#define SO_TR_BAND 8            /* a thread's band of rows: a multiple of this */

typedef struct {
    char *dst;
    const char *src;
    npy_intp r0, r1, rows, cols, isz;
    so_poll *poll;
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

#if SO_X86_VECTOR
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
    npy_intp rt, ct;
#if SO_X86_VECTOR
    const int vec = (t->isz == 2 || t->isz == 4 || t->isz == 8) && so_cpu_has(SO_CPU_AVX2);
#endif
    for (rt = t->r0; rt < t->r1; rt += SO_TR_ROWS) {
        npy_intp re = rt + SO_TR_ROWS < t->r1 ? rt + SO_TR_ROWS : t->r1;
        if (so_stopped(t->poll)) break;
        for (ct = 0; ct < t->cols; ct += width) {
            npy_intp ce = ct + width < t->cols ? ct + width : t->cols, rv = rt, cv = ct;
#if SO_X86_VECTOR
            if (vec) transpose_vector(t, rt, re, ct, ce, &rv, &cv);
#endif
            /* what the blocks left: the columns past them, then the rows */
            transpose_scalar(t, rt, rv, cv, ce);
            transpose_scalar(t, rv, re, ct, ce);
        }
    }
    return NULL;
}

int
so_transpose_copy(char *dst, const char *src, npy_intp rows, npy_intp cols, npy_intp isz,
                  int nthreads, so_poll *poll)
{
    so_transpose_task one, *tasks;
    int t;
    size_t nbytes = (size_t)rows * (size_t)cols * (size_t)isz;
    if ((size_t)nthreads > nbytes / SO_MIN_COPY_PER_THREAD) {
        nthreads = (int)(nbytes / SO_MIN_COPY_PER_THREAD);
    }
    if (nthreads > rows / SO_TR_BAND) nthreads = (int)(rows / SO_TR_BAND);
    tasks = so_task_array(&one, sizeof one, &nthreads);
    for (t = 0; t < nthreads; t++) {
        tasks[t].dst = dst;
        tasks[t].src = src;
        tasks[t].r0 = rows / SO_TR_BAND * t / nthreads * SO_TR_BAND;
        tasks[t].r1 = t + 1 == nthreads ? rows : rows / SO_TR_BAND * (t + 1) / nthreads * SO_TR_BAND;
        tasks[t].rows = rows;
        tasks[t].cols = cols;
        tasks[t].isz = isz;
        tasks[t].poll = poll;
    }
    so_run_tasks_polled(transpose_main, tasks, sizeof *tasks, nthreads, poll);
    so_task_array_free(tasks, &one);
    return so_stopped(poll);
}

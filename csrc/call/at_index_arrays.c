/*
 * call/at_index_arrays.c: _core.at_apply, scatterops.at's call for an index
 * array on every axis of a view of a (a[i, j, ...]; py/at_offsets.c reads the
 * arguments): every index value checked in a first pass over the index
 * arrays, then the element offsets of the indexed elements made chunk by
 * chunk in a second, and the updates applied there.
 *
 * NumPy's indexing reads each index array as intp (an unsafe cast: a uint64
 * value past intp's range wraps) and broadcasts the arrays together; a value v
 * on an axis of size n is valid when -n <= v < n and counts from the end when
 * negative.  The offset of a tuple of values is base + sum_j wrap(v_j) * step_j,
 * with step_j the axis' stride in elements; base is what the negative steps
 * would take below the view's first element, so that offsets count from the
 * lowest element of memory (a 1-d view of the view's elements) and are >= 0.
 * Each index array is read in its own integer type (no conversion to intp
 * first), a chunk of values at a time, so that the offsets of a chunk stay in
 * the L1 cache while every array adds to them.  Two passes over the index
 * arrays, and no array of offsets: the first checks every value (nothing is
 * written on a bad one), the second makes each chunk's offsets again and
 * applies the chunk's updates there with the typed kernel, in C order of the
 * broadcast shape.  No array of offsets is made: it would write and read 8
 * bytes more per update (docs/design.md, "scatterops.at on index arrays").
 * The broadcast shape is walked by base/nditer.h's counter over all its dims
 * but the last (its dims merged first where every operand allows), the last
 * dim being the run the chunks cut (short runs gathered, several to a chunk).
 */
#include "call/call.h"
#include "base/nditer.h"

/* index values per chunk: the chunk's offsets (8 KiB) stay in the L1 cache */
#define SO_AT_CHUNK 1024

/* The loops over the n values v_i of one index array (byte stride is, read in
 * its own type): "check", nonzero if one is outside [-size, size); "add",
 * out[i] += wrap(v_i) * step (the values checked).  The add loops come in two
 * builds: "wide" for any size and step, "narrow" for sizes and steps that fit
 * in 31 bits, whose product is a 32 x 32 -> 64-bit multiply that vectorises,
 * and "unit" for a step of 1 (no multiply).  Where the CPU has AVX2, both run
 * with it (docs/design.md, "scatterops.at on index arrays"). */
typedef int (*so_at_loop_fn)(npy_intp *restrict out, const char *in, npy_intp is, npy_intp n,
                             npy_intp size, npy_intp step);
#define SO_AT_FOR(T, STMT)                                                             \
    if (is == (npy_intp)sizeof(T)) {                                                   \
        const T *restrict v = (const T *)in;                                           \
        for (i = 0; i < n; i++) {                                                      \
            const npy_intp x = (npy_intp)v[i];                                         \
            STMT;                                                                      \
        }                                                                              \
    }                                                                                  \
    else {                                                                             \
        for (i = 0; i < n; i++) {                                                      \
            const npy_intp x = (npy_intp) * (const T *)(in + i * is);                  \
            STMT;                                                                      \
        }                                                                              \
    }
#define SO_AT_CHECK(name, T, MUL, ATTR)                                                \
    ATTR static int                                                                    \
    name(npy_intp *restrict out, const char *in, npy_intp is, npy_intp n, npy_intp size, \
         npy_intp step)                                                                \
    {                                                                                  \
        npy_intp bad = 0, i;                                                           \
        SO_AT_FOR(T, bad |= !so_index_inside(x, size))                                 \
        return bad != 0;                                                               \
    }
#define SO_AT_ADD(name, T, MUL, ATTR)                                                  \
    ATTR static int                                                                    \
    name(npy_intp *restrict out, const char *in, npy_intp is, npy_intp n, npy_intp size, \
         npy_intp step)                                                                \
    {                                                                                  \
        npy_intp i;                                                                    \
        SO_AT_FOR(T, out[i] += MUL(x + (x < 0 ? size : 0), step))                      \
        return 0;                                                                      \
    }
#define SO_AT_WIDE_MUL(w, s) ((w) * (s))
#define SO_AT_NARROW_MUL(w, s) ((npy_intp)(npy_int32)(w) * (npy_intp)(npy_int32)(s))
#define SO_AT_UNIT_MUL(w, s) (w)
/* a loop for the eight integer types, as a table in the order of loop_index */
#define SO_AT_LOOPS(table, LOOP, MUL, ATTR)                                            \
    LOOP(table##_i8, npy_int8, MUL, ATTR)                                              \
    LOOP(table##_i16, npy_int16, MUL, ATTR)                                            \
    LOOP(table##_i32, npy_int32, MUL, ATTR)                                            \
    LOOP(table##_i64, npy_int64, MUL, ATTR)                                            \
    LOOP(table##_u8, npy_uint8, MUL, ATTR)                                             \
    LOOP(table##_u16, npy_uint16, MUL, ATTR)                                           \
    LOOP(table##_u32, npy_uint32, MUL, ATTR)                                           \
    LOOP(table##_u64, npy_uint64, MUL, ATTR)                                           \
    static const so_at_loop_fn table[8] = {table##_i8, table##_i16, table##_i32,       \
                                           table##_i64, table##_u8, table##_u16,       \
                                           table##_u32, table##_u64};
SO_AT_LOOPS(check_loops, SO_AT_CHECK, , )
SO_AT_LOOPS(wide_loops, SO_AT_ADD, SO_AT_WIDE_MUL, )
SO_AT_LOOPS(narrow_loops, SO_AT_ADD, SO_AT_NARROW_MUL, )
SO_AT_LOOPS(unit_loops, SO_AT_ADD, SO_AT_UNIT_MUL, )
#if SO_X86_VECTOR
#define SO_AT_AVX2 __attribute__((target("avx2")))
SO_AT_LOOPS(check_avx2_loops, SO_AT_CHECK, , SO_AT_AVX2)
SO_AT_LOOPS(narrow_avx2_loops, SO_AT_ADD, SO_AT_NARROW_MUL, SO_AT_AVX2)
SO_AT_LOOPS(unit_avx2_loops, SO_AT_ADD, SO_AT_UNIT_MUL, SO_AT_AVX2)
#endif

/* the loops of an index array of index type t (base.h's SO_INDEX_TYPES order)
 * on an axis of this size and step: *check, *add */
static void
loops_for(int t, npy_intp size, npy_intp step, so_at_loop_fn *check, so_at_loop_fn *add)
{
    const npy_intp narrow = (npy_intp)1 << 31;
    const int wide = size > narrow || step >= narrow || step <= -narrow;
#if SO_X86_VECTOR
    if (so_cpu_has(SO_CPU_AVX2)) {
        *check = check_avx2_loops[t];
        *add = step == 1 ? unit_avx2_loops[t] : wide ? wide_loops[t] : narrow_avx2_loops[t];
        return;
    }
#endif
    *check = check_loops[t];
    *add = step == 1 ? unit_loops[t] : wide ? wide_loops[t] : narrow_loops[t];
}

/* The walk of one call: the loops of each index array, its base and the
 * shape walked (its dims merged), each operand's byte strides over it (the k
 * index arrays, then the updates). */
typedef struct {
    const so_at_arrays *c;
    so_at_loop_fn check[SO_AT_MAX_ARRAYS], add[SO_AT_MAX_ARRAYS];
    npy_intp base;
    int nd;
    npy_intp shape[SO_MAXDIMS];
    npy_intp strides[SO_AT_MAX_ARRAYS + 1][SO_MAXDIMS];
    npy_intp given[SO_AT_MAX_ARRAYS + 1][SO_MAXDIMS];  /* before the merge */
} at_walk;

/* The byte strides of a (dims broadcasting to the shape nd, dims as NumPy
 * broadcasts: 0 along a dim a has not, or has of extent 1) into strides; -1
 * if it does not broadcast. */
static int
broadcast_strides(const so_array *a, int nd, const npy_intp *dims, npy_intp *strides)
{
    int d;
    if (a->ndim > nd) return -1;
    for (d = 0; d < nd; d++) {
        const int e = d - (nd - a->ndim);
        if (e >= 0 && a->dims[e] != 1 && a->dims[e] != dims[d]) return -1;
        strides[d] = e < 0 || a->dims[e] == 1 ? 0 : a->strides[e];
    }
    return 0;
}

/* w's loops, base, merged shape and strides for c: 0, or -1 if an operand
 * does not broadcast to c's shape or has no index type */
static int
make_walk(const so_at_arrays *c, at_walk *w)
{
    npy_intp (*s)[SO_MAXDIMS] = w->given, col[SO_AT_MAX_ARRAYS + 1];
    npy_intp *rows[SO_AT_MAX_ARRAYS + 1];
    const int nop = c->k + 1;
    int j, d;
    w->c = c;
    w->base = 0;
    for (j = 0; j < c->k; j++) {
        const int t = so_index_type(c->arrays[j].dtype);
        if (t < 0 || broadcast_strides(&c->arrays[j], c->nd, c->dims, s[j]) < 0) return -1;
        if (c->step[j] < 0) w->base -= (c->size[j] - 1) * c->step[j];
        loops_for(t, c->size[j], c->step[j], &w->check[j], &w->add[j]);
    }
    if (broadcast_strides(&c->upd, c->nd, c->dims, s[c->k]) < 0) return -1;
    for (j = 0; j < nop; j++) rows[j] = w->strides[j];
    w->nd = 0;
    for (d = 0; d < c->nd; d++) {
        for (j = 0; j < nop; j++) col[j] = s[j][d];
        w->nd = so_nd_push(w->nd, w->shape, rows, nop, c->dims[d], col, 0);
    }
    if (w->nd == 0) {               /* one element: a run of 1 */
        w->shape[0] = 1;
        for (j = 0; j < nop; j++) w->strides[j][0] = 0;
        w->nd = 1;
    }
    return 0;
}

/* The n tuples from position i0 of a run (its operands at data, their byte
 * strides st): checked (nonzero if a value is out of range), or their offsets
 * made into buf. */
static int
chunk_offsets(const at_walk *w, char *const *data, const npy_intp *st, npy_intp i0,
              npy_intp n, npy_intp *buf)
{
    const so_at_arrays *c = w->c;
    int bad = 0, j;
    npy_intp i;
    if (buf == NULL) {
        for (j = 0; j < c->k; j++) {
            bad |= w->check[j](NULL, data[j] + i0 * st[j], st[j], n, c->size[j], 0);
        }
        return bad;
    }
    for (i = 0; i < n; i++) buf[i] = w->base;
    for (j = 0; j < c->k; j++) {
        w->add[j](buf, data[j] + i0 * st[j], st[j], n, c->size[j], c->step[j]);
    }
    return 0;
}

/* n items of isz bytes from src (byte stride ss) to the contiguous dst */
static void
gather_items(char *dst, const char *src, npy_intp ss, npy_intp n, npy_intp isz)
{
    npy_intp i;
#define GATHER(B)                                                                      \
    for (i = 0; i < n; i++) memcpy(dst + i * (B), src + i * ss, B);                    \
    return;
    switch (isz) {
    case 1: GATHER(1)
    case 2: GATHER(2)
    case 4: GATHER(4)
    case 8: GATHER(8)
    case 16: GATHER(16)
    default: GATHER((size_t)isz)
    }
#undef GATHER
}

/* The largest item a chunk's updates are gathered for, in bytes */
#define SO_AT_GATHER_ITEM 16

/* One pass over the shape, run by run and chunk by chunk: with apply, the
 * updates (operand k) applied at each chunk's offsets in memory; without,
 * only the values checked.  Where the runs are short (a broadcast last dim
 * of a few values), a chunk is made of several runs: their offsets side by
 * side and their updates gathered into a contiguous buffer, so that the
 * kernel runs once a chunk, not once a run.  0, -1 if a value is out of
 * range, -2 if poll stopped it (in the second pass, memory holds the updates
 * of a C-order prefix). */
static int
run_chunks(const at_walk *w, int apply, so_poll *poll)
{
    const so_at_arrays *c = w->c;
    const int nop = c->k + 1, outer = w->nd - 1;
    const npy_intp run = w->shape[outer], isz = c->kn.itemsize;
    const int gather = apply && outer > 0 && run < SO_AT_CHUNK / 4 && isz <= SO_AT_GATHER_ITEM;
    char *data[SO_AT_MAX_ARRAYS + 1];
    npy_intp st[SO_AT_MAX_ARRAYS + 1], buf[SO_AT_CHUNK], since_poll = 0, filled = 0, i0, n;
    npy_longdouble ubuf[SO_AT_CHUNK * SO_AT_GATHER_ITEM / sizeof(npy_longdouble)];
    so_nditer it;
    int j, d;
    for (j = 0; j < nop; j++) st[j] = w->strides[j][outer];
    so_nd_init(&it, outer, w->shape, 0, NULL);
    do {
        for (j = 0; j < nop; j++) {
            const so_array *a = j < c->k ? &c->arrays[j] : &c->upd;
            npy_intp off = 0;
            for (d = 0; d < outer; d++) off += it.count[d] * w->strides[j][d];
            data[j] = a->bytes + off;
        }
        for (i0 = 0; i0 < run; i0 += n) {
            n = run - i0 < SO_AT_CHUNK - filled ? run - i0 : SO_AT_CHUNK - filled;
            if (chunk_offsets(w, data, st, i0, n, apply ? buf + filled : NULL)) return -1;
            since_poll += n;
            if (gather) {
                gather_items((char *)ubuf + filled * isz, data[c->k] + i0 * st[c->k], st[c->k],
                             n, isz);
                filled += n;
                if (filled < SO_AT_CHUNK) continue;
                c->kn.elem(c->memory, 0, (const char *)buf, sizeof(npy_intp), c->span, isz,
                           (const char *)ubuf, isz, filled, isz);
                filled = 0;
            }
            else if (apply) {
                c->kn.elem(c->memory, 0, (const char *)buf, sizeof(npy_intp), c->span, isz,
                           data[c->k] + i0 * st[c->k], st[c->k], n, isz);
            }
            if (since_poll >= SO_PIECE) {
                since_poll = 0;
                if (so_stopped(poll)) return -2;
            }
        }
    } while (so_nd_next(&it));
    if (filled > 0) {
        c->kn.elem(c->memory, 0, (const char *)buf, sizeof(npy_intp), c->span, isz,
                   (const char *)ubuf, isz, filled, isz);
    }
    return 0;
}

/* Where the runs are short (a broadcast last dim of a few values, under
 * SO_AT_SHORT_RUN), each operand's values copied in C order of the shape into
 * one contiguous buffer (blocks[j], freed by the caller), and flat made the
 * call on those: one run of every value.  0, or -1 without memory. */
#define SO_AT_SHORT_RUN 16
static int
flatten(const so_at_arrays *c, const at_walk *w, so_at_arrays *flat, char **blocks)
{
    const int nop = c->k + 1;
    npy_intp n = 1, i;
    int j, d;
    for (d = 0; d < w->nd; d++) n *= w->shape[d];
    *flat = *c;
    flat->nd = 1;
    flat->dims[0] = n;
    for (j = 0; j < nop; j++) {
        const so_array *a = j < c->k ? &c->arrays[j] : &c->upd;
        so_array *f = j < c->k ? &flat->arrays[j] : &flat->upd;
        const npy_intp isz = a->itemsize;
        const npy_intp *stride = w->strides[j];
        so_nditer it;
        char *dst = blocks[j] = (char *)malloc((size_t)(n * isz));
        if (dst == NULL) return -1;
        so_nd_init(&it, w->nd, w->shape, 1, &stride);
        i = 0;
        do {
            memcpy(dst + i * isz, a->bytes + it.off[0], (size_t)isz);
            i++;
        } while (so_nd_next(&it));
        f->bytes = dst;
        f->ndim = 1;
        f->dims = &flat->dims[0];
        f->strides = &f->itemsize;
        f->c_contiguous = 1;
        f->aligned = 1;
    }
    return 0;
}

static so_status at_arrays_run(const so_at_arrays *c, so_host *h);

so_status
so_call_at_arrays(const so_at_arrays *c, so_host *h)
{
    at_walk *w;
    so_at_arrays *flat;
    char *blocks[SO_AT_MAX_ARRAYS + 1] = {NULL};
    so_status st;
    int j;
    if (c->nd < 2 || c->dims[c->nd - 1] >= SO_AT_SHORT_RUN) return at_arrays_run(c, h);
    w = malloc(sizeof *w);
    flat = malloc(sizeof *flat);
    if (w == NULL || flat == NULL) st = SO_NO_MEMORY;
    else if (make_walk(c, w) < 0) st = SO_FAILED;
    else if (w->nd < 2 || w->shape[w->nd - 1] >= SO_AT_SHORT_RUN) st = at_arrays_run(c, h);
    else if (flatten(c, w, flat, blocks) < 0) st = SO_NO_MEMORY;
    else st = at_arrays_run(flat, h);
    for (j = 0; j <= c->k; j++) free(blocks[j]);
    free(flat);
    free(w);
    return st;
}

static so_status
at_arrays_run(const so_at_arrays *c, so_host *h)
{
    at_walk *w = malloc(sizeof *w);
    so_poll *poll;
    int rc;
    if (w == NULL) return SO_NO_MEMORY;
    if (make_walk(c, w) < 0) {
        free(w);
        return SO_FAILED;
    }
    poll = h->unlock(h);
    rc = run_chunks(w, 0, poll);
    if (rc == 0) rc = run_chunks(w, 1, poll);
    if (h->relock(h) < 0) rc = -2;
    free(w);
    return rc == 0 ? SO_DONE : rc == -1 ? SO_BAD_INDEX : SO_FAILED;
}

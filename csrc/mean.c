/*
 * mean.c: the last step of reduction="mean" for the real typed dtypes: every
 * element that updates hit becomes sum / (count + include_self), as API.md
 * says: floats divide in double (long double never reaches here) and round once
 * to the dtype; integers floor-divide.  Complex and the generic dtypes finish in
 * NumPy (scatterops/_args.py: mean_divide), whose complex division this does not
 * copy.
 */
#include "scatterops.h"
#include <numpy/halffloat.h>

typedef void (*so_mean_fn)(char *o, npy_intp os, const char *c, npy_intp cs, npy_intp n,
                           npy_intp extra);

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

/* floor division of a signed value by k >= 1 */
static inline npy_int64 floor_div(npy_int64 s, npy_int64 k)
{
    npy_int64 q = s / k;
    return (s % k != 0 && s < 0) ? q - 1 : q;
}

MEAN_LOOP(mean_i8, npy_int8, x = (npy_int8)floor_div(x, k))
MEAN_LOOP(mean_i16, npy_int16, x = (npy_int16)floor_div(x, k))
MEAN_LOOP(mean_i32, npy_int32, x = (npy_int32)floor_div(x, k))
MEAN_LOOP(mean_i64, npy_int64, x = floor_div(x, k))
MEAN_LOOP(mean_u8, npy_uint8, x = (npy_uint8)(x / (npy_uint64)k))
MEAN_LOOP(mean_u16, npy_uint16, x = (npy_uint16)(x / (npy_uint64)k))
MEAN_LOOP(mean_u32, npy_uint32, x = (npy_uint32)(x / (npy_uint64)k))
MEAN_LOOP(mean_u64, npy_uint64, x = x / (npy_uint64)k)
MEAN_LOOP(mean_f16, npy_half, x = npy_double_to_half(npy_half_to_double(x) / (double)k))
MEAN_LOOP(mean_f32, npy_float, x = (npy_float)((double)x / (double)k))
MEAN_LOOP(mean_f64, npy_double, x = x / (double)k)

static so_mean_fn
mean_fn(PyArray_Descr *d)
{
    int tn = d->type_num;
    npy_intp isz = PyDataType_ELSIZE(d);
    if (!PyArray_ISNBO(d->byteorder)) return NULL;
    if (PyTypeNum_ISSIGNED(tn)) {
        switch (isz) {
            case 1: return mean_i8;
            case 2: return mean_i16;
            case 4: return mean_i32;
            case 8: return mean_i64;
        }
    }
    else if (PyTypeNum_ISUNSIGNED(tn)) {
        switch (isz) {
            case 1: return mean_u8;
            case 2: return mean_u16;
            case 4: return mean_u32;
            case 8: return mean_u64;
        }
    }
    switch (tn) {
        case NPY_HALF: return mean_f16;
        case NPY_FLOAT: return mean_f32;
        case NPY_DOUBLE: return mean_f64;
    }
    return NULL;
}

int
so_has_mean_kernel(PyArray_Descr *d)
{
    return mean_fn(d) != NULL;
}

/* out: any strides; counts: npy_intp of out's shape. */
void
so_mean_finish(PyArrayObject *out, PyArrayObject *counts, int include_self)
{
    so_mean_fn fn = mean_fn(PyArray_DESCR(out));
    npy_intp shape[SO_MAXDIMS], so_[SO_MAXDIMS], sc[SO_MAXDIMS], cnt[SO_MAXDIMS];
    char *o = PyArray_BYTES(out);
    const char *c = PyArray_BYTES(counts);
    int d, nd = 0;

    if (fn == NULL || PyArray_SIZE(out) == 0) {
        return;
    }
    for (d = 0; d < PyArray_NDIM(out); d++) {
        npy_intp n = PyArray_DIM(out, d), a = PyArray_STRIDE(out, d), b = PyArray_STRIDE(counts, d);
        if (n == 1) continue;
        if (nd > 0 && so_[nd - 1] == n * a && sc[nd - 1] == n * b) {
            shape[nd - 1] *= n;
            so_[nd - 1] = a;
            sc[nd - 1] = b;
            continue;
        }
        shape[nd] = n; so_[nd] = a; sc[nd] = b; cnt[nd] = 0;
        nd++;
    }
    if (nd == 0) {
        fn(o, 0, c, 0, 1, include_self);
        return;
    }
    for (;;) {
        fn(o, so_[nd - 1], c, sc[nd - 1], shape[nd - 1], include_self);
        for (d = nd - 2; d >= 0; d--) {
            o += so_[d];
            c += sc[d];
            if (++cnt[d] < shape[d]) break;
            o -= so_[d] * shape[d];
            c -= sc[d] * shape[d];
            cnt[d] = 0;
        }
        if (d < 0) return;
    }
}

/* Apply fn to every row of the block at o, with one count for all of it. */
static void
finish_block(const so_plan *p, so_mean_fn fn, char *o, npy_intp k, int include_self)
{
    npy_intp cnt[SO_MAXDIMS];
    int last = p->bnd - 1, d;
    if (p->bnd == 0) {
        fn(o, 0, (const char *)&k, 0, 1, include_self);
        return;
    }
    for (d = 0; d < last; d++) cnt[d] = 0;
    for (;;) {
        fn(o, p->bs_out[last], (const char *)&k, 0, p->bshape[last], include_self);
        for (d = last - 1; d >= 0; d--) {
            o += p->bs_out[d];
            if (++cnt[d] < p->bshape[d]) break;
            o -= p->bs_out[d] * p->bshape[d];
            cnt[d] = 0;
        }
        if (d < 0) return;
    }
}

/* The destinations in hits are distinct: with no lead dims, threads take
 * ranges of them. */
#define SO_MEAN_WORK_PER_THREAD ((npy_intp)1 << 16)

typedef struct {
    const so_plan *p;
    so_mean_fn fn;
    const npy_intp *hits;
    npy_intp nhits;
    int include_self;
} so_finish_task;

static void *
finish_main(void *arg)
{
    so_finish_task *t = (so_finish_task *)arg;
    npy_intp w;
    for (w = 0; w < t->nhits; w++) {
        finish_block(t->p, t->fn, t->p->out + t->hits[2 * w], t->hits[2 * w + 1], t->include_self);
    }
    return NULL;
}

static int
finish_threaded(const so_plan *p, so_mean_fn fn, const npy_intp *hits, npy_intp nhits,
                int include_self)
{
    so_finish_task tasks[16];
    npy_intp block = 1;
    int nt = so_get_num_threads(), t, d;
    for (d = 0; d < p->bnd; d++) block *= p->bshape[d];
    if (nt > 16) nt = 16;
    if (nt > nhits * block / SO_MEAN_WORK_PER_THREAD) nt = (int)(nhits * block / SO_MEAN_WORK_PER_THREAD);
    if (nt > nhits) nt = (int)nhits;
    if (nt <= 1) return 0;
    for (t = 0; t < nt; t++) {
        npy_intp lo = nhits * t / nt, hi = nhits * (t + 1) / nt;
        tasks[t].p = p;
        tasks[t].fn = fn;
        tasks[t].hits = hits + 2 * lo;
        tasks[t].nhits = hi - lo;
        tasks[t].include_self = include_self;
    }
    so_run_tasks(finish_main, tasks, sizeof *tasks, nt);
    return 1;
}

void
so_mean_finish_owned(const so_plan *p)
{
    so_mean_fn fn = mean_fn(p->mean_descr);
    npy_intp v;
    if (fn == NULL) return;
    for (v = p->own_lo; v < p->own_hi; v++) {
        if (p->hits[v] > 0) {
            finish_block(p, fn, p->out + v * p->is_out[0], p->hits[v], p->mean_include_self);
        }
    }
}

void
so_mean_finish_hits(const so_plan *p, PyArray_Descr *descr, int lead, const npy_intp *hits,
                    npy_intp nhits, int include_self)
{
    so_mean_fn fn = mean_fn(descr);
    npy_intp cnt[SO_MAXDIMS], w;
    char *o = p->out;
    int d;

    if (fn == NULL) return;
    if (lead == 0 && !p->out_overlaps && finish_threaded(p, fn, hits, nhits, include_self)) return;
    for (d = 0; d < lead; d++) {
        if (p->gshape[d] == 0) return;
        cnt[d] = 0;
    }
    for (;;) {
        for (w = 0; w < nhits; w++) {
            finish_block(p, fn, o + hits[2 * w], hits[2 * w + 1], include_self);
        }
        for (d = lead - 1; d >= 0; d--) {
            o += p->gs_out[d];
            if (++cnt[d] < p->gshape[d]) break;
            o -= p->gs_out[d] * p->gshape[d];
            cnt[d] = 0;
        }
        if (d < 0) return;
    }
}

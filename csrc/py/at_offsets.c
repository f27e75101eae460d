/*
 * py/at_offsets.c: _core.at_apply, scatterops.at's call for an index array on
 * every axis of a view of a (a[i, j, ...]): every index value checked in a
 * first pass over the index arrays, then the element offsets of the indexed
 * elements made chunk by chunk in a second, and the updates applied there.
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
 */
#include "py/py.h"

/* the largest number of index arrays (NumPy's iterator may allow fewer: it raises) */
#define SO_AT_MAX_ARRAYS SO_MAXDIMS
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

/* the loops of an index array (native order, as the iterator gives it) on an
 * axis of this size and step: *check, *add */
static void
loops_for(PyArray_Descr *d, npy_intp size, npy_intp step, so_at_loop_fn *check,
          so_at_loop_fn *add)
{
    const npy_intp narrow = (npy_intp)1 << 31, e = PyDataType_ELSIZE(d);
    const int i = (PyDataType_ISUNSIGNED(d) ? 4 : 0) + (e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : 3);
    const int wide = size > narrow || step >= narrow || step <= -narrow;
#if SO_X86_VECTOR
    if (so_cpu_has(SO_CPU_AVX2)) {
        *check = check_avx2_loops[i];
        *add = step == 1 ? unit_avx2_loops[i] : wide ? wide_loops[i] : narrow_avx2_loops[i];
        return;
    }
#endif
    *check = check_loops[i];
    *add = step == 1 ? unit_loops[i] : wide ? wide_loops[i] : narrow_loops[i];
}

/* One call: the k index arrays (iterator operands 0..k-1) with the size, the
 * step and the loop of each, and what the walk needs. */
typedef struct {
    int k;
    npy_intp size[SO_AT_MAX_ARRAYS], step[SO_AT_MAX_ARRAYS], base;
    so_at_loop_fn check[SO_AT_MAX_ARRAYS], add[SO_AT_MAX_ARRAYS];
    npy_intp span;              /* memory's elements */
    so_kernel kn;
} so_at_call;

/* The n tuples from position i0 of the inner run: checked (nonzero if a value
 * is out of range), or their offsets made into buf. */
static int
chunk_offsets(const so_at_call *c, char **data, const npy_intp *strides, npy_intp i0,
              npy_intp n, npy_intp *buf)
{
    int bad = 0, j;
    npy_intp i;
    if (buf == NULL) {
        for (j = 0; j < c->k; j++) {
            bad |= c->check[j](NULL, data[j] + i0 * strides[j], strides[j], n, c->size[j], 0);
        }
        return bad;
    }
    for (i = 0; i < n; i++) buf[i] = c->base;
    for (j = 0; j < c->k; j++) {
        c->add[j](buf, data[j] + i0 * strides[j], strides[j], n, c->size[j], c->step[j]);
    }
    return 0;
}

/* Walks the iterator chunk by chunk: with target, applying the updates
 * (operand k) at each chunk's offsets in target; without, only checking them.
 * 0, -1 if a value is out of range, -2 if poll stopped it. */
static int
run_chunks(const so_at_call *c, NpyIter *it, char *target, so_poll *poll)
{
    NpyIter_IterNextFunc *next = NpyIter_GetIterNext(it, NULL);
    char **data = NpyIter_GetDataPtrArray(it);
    npy_intp *strides = NpyIter_GetInnerStrideArray(it);
    npy_intp *count = NpyIter_GetInnerLoopSizePtr(it);
    npy_intp buf[SO_AT_CHUNK], since_poll = 0, i0, n;
    const npy_intp isz = c->kn.itemsize, us = strides[c->k];
    if (next == NULL) return -1;
    do {
        for (i0 = 0; i0 < *count; i0 += n) {
            n = *count - i0 < SO_AT_CHUNK ? *count - i0 : SO_AT_CHUNK;
            if (chunk_offsets(c, data, strides, i0, n, target ? buf : NULL)) return -1;
            if (target != NULL) {
                c->kn.elem(target, 0, (const char *)buf, sizeof(npy_intp), c->span, isz,
                           data[c->k] + i0 * us, us, n, isz);
            }
            since_poll += n;
            if (since_poll >= SO_PIECE) {
                since_poll = 0;
                if (so_stopped(poll)) return -2;
            }
        }
    } while (next(it));
    return 0;
}

/* The two passes without the GIL (when the iterator needs no Python), stoppable
 * between pieces (stopped in the second, memory holds the updates of a C-order
 * prefix).  0, or -1 raised (IndexError, KeyboardInterrupt). */
static int
run_unlocked(const so_at_call *c, NpyIter *it, PyArrayObject *memory)
{
    char *errmsg = NULL;
    so_unlocked u;
    so_poll *poll;
    int rc, needs_api = NpyIter_IterationNeedsAPI(it);
    poll = needs_api ? NULL : so_unlock(&u);
    rc = run_chunks(c, it, NULL, poll);
    if (rc == 0) {
        rc = NpyIter_Reset(it, &errmsg) == NPY_SUCCEED
             ? run_chunks(c, it, PyArray_BYTES(memory), poll) : -3;
    }
    if (!needs_api && so_relock(&u) < 0) rc = -2;
    if (rc == -3) PyErr_SetString(PyExc_RuntimeError, errmsg);
    if (rc == -1 && !PyErr_Occurred()) {
        PyErr_SetString(PyExc_IndexError, "at_apply: an index is out of range");
    }
    return rc < 0 ? -1 : 0;
}

/* The strides of updates (u) broadcast to the shape (nd, dims) as NumPy
 * broadcasts it, or -1 raised if it does not broadcast. */
static int
broadcast_strides(PyArrayObject *u, int nd, const npy_intp *dims, npy_intp *strides)
{
    const int ud = PyArray_NDIM(u);
    int d;
    for (d = 0; d < nd && ud <= nd; d++) {
        const int e = d - (nd - ud);
        if (e >= 0 && PyArray_DIM(u, e) != 1 && PyArray_DIM(u, e) != dims[d]) break;
        strides[d] = e < 0 || PyArray_DIM(u, e) == 1 ? 0 : PyArray_STRIDE(u, e);
    }
    if (ud <= nd && d == nd) return 0;
    PyErr_SetString(PyExc_ValueError, "at_apply: updates do not broadcast to the index shape");
    return -1;
}

/* The iterator over the index arrays and updates (operand k), in C order of
 * the broadcast shape; NULL raised. */
static NpyIter *
make_iter(PyArrayObject **ops, int k)
{
    PyArray_Descr *dtypes[SO_AT_MAX_ARRAYS + 1] = {NULL};
    npy_uint32 flags[SO_AT_MAX_ARRAYS + 1];
    int j;
    for (j = 0; j <= k; j++) flags[j] = NPY_ITER_READONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED;
    dtypes[k] = PyArray_DESCR(ops[k]);
    return NpyIter_MultiNew(k + 1, ops,
                            NPY_ITER_EXTERNAL_LOOP | NPY_ITER_BUFFERED | NPY_ITER_GROWINNER |
                            NPY_ITER_ZEROSIZE_OK | NPY_ITER_DELAY_BUFALLOC,
                            NPY_CORDER, NPY_UNSAFE_CASTING, flags, dtypes);
}

/* Runs the call on ops (the iterator made, reset, run and freed); 0 or -1 raised. */
static int
run_call(const so_at_call *c, PyArrayObject **ops, PyArrayObject *memory)
{
    NpyIter *it = make_iter(ops, c->k);
    int rc = 0;
    if (it == NULL) return -1;
    if (NpyIter_GetIterSize(it) > 0) {
        rc = NpyIter_Reset(it, NULL) == NPY_SUCCEED ? run_unlocked(c, it, memory) : -1;
    }
    if (NpyIter_Deallocate(it) != NPY_SUCCEED) rc = -1;
    return rc;
}

/* _core.at_apply(memory, arrays, sizes, steps, shape, updates, reduction): see
 * the file comment.  memory: a writeable contiguous 1-d ndarray with a typed
 * kernel for reduction; arrays: a tuple of integer ndarrays broadcasting to
 * shape; sizes, steps: the size and the stride in elements (of memory) of the
 * axis each addresses; updates: memory's dtype, broadcasting to shape.  An
 * IndexError (nothing written) if a value is out of range. */
PyObject *
so_py_at_apply(PyObject *self, PyObject *args)
{
    PyObject *arrays, *sizes, *steps, *shape, *reduction, *canonical;
    PyArrayObject *memory, *upd, *ops[SO_AT_MAX_ARRAYS + 1];
    npy_intp dims[SO_MAXDIMS], ustrides[SO_MAXDIMS], n = 1;
    so_at_call c;
    Py_ssize_t nd, j;
    int entry, op, mean, rc, m;
    (void)self;

    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O:at_apply", &PyArray_Type, &memory,
                          &PyTuple_Type, &arrays, &PyTuple_Type, &sizes, &PyTuple_Type, &steps,
                          &PyTuple_Type, &shape, &PyArray_Type, &upd, &reduction)) {
        return NULL;
    }
    c.k = (int)PyTuple_GET_SIZE(arrays);
    nd = PyTuple_GET_SIZE(shape);
    if (c.k < 1 || c.k > SO_AT_MAX_ARRAYS || PyTuple_GET_SIZE(sizes) != c.k ||
            PyTuple_GET_SIZE(steps) != c.k || nd > SO_MAXDIMS || PyArray_NDIM(memory) != 1 ||
            !PyArray_ISWRITEABLE(memory) || !PyArray_EquivTypes(PyArray_DESCR(memory),
                                                                 PyArray_DESCR(upd))) {
        PyErr_SetString(PyExc_ValueError, "at_apply: arrays, sizes and steps must be tuples of "
                        "one length (1 to 64), shape a tuple of at most 64 sizes, memory a "
                        "writeable 1-d array of the updates' dtype");
        return NULL;
    }
    entry = so_parse_reduction("at_apply", reduction);
    if (entry < 0) return NULL;
    so_reduction_info(entry, &canonical, &op, &mean);
    if (mean || op == SO_NONE || !so_reduce_kernel(&c.kn, PyArray_DESCR(memory), op) ||
            c.kn.needs_gil || c.kn.elem == NULL) {
        PyErr_SetString(PyExc_ValueError, "at_apply: no typed kernel for this reduction");
        return NULL;
    }
    if (PyArray_STRIDE(memory, 0) != c.kn.itemsize) {
        PyErr_SetString(PyExc_ValueError, "at_apply: memory must be contiguous");
        return NULL;
    }
    c.span = PyArray_DIM(memory, 0);
    c.base = 0;
    for (j = 0; j < nd; j++) {
        dims[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, j));
        if (dims[j] < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "at_apply: negative size");
            return NULL;
        }
        n *= dims[j];
    }
    for (j = 0; j < c.k; j++) {
        PyObject *a = PyTuple_GET_ITEM(arrays, j);
        if (!PyArray_Check(a) || !PyArray_ISINTEGER((PyArrayObject *)a)) {
            PyErr_SetString(PyExc_TypeError, "at_apply: arrays must hold integer ndarrays");
            return NULL;
        }
        c.size[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, j));
        c.step[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(steps, j));
        if (PyErr_Occurred()) return NULL;
        if (c.size[j] < 1) {
            PyErr_SetString(PyExc_ValueError, "at_apply: every size must be >= 1");
            return NULL;
        }
        if (c.step[j] < 0) c.base -= (c.size[j] - 1) * c.step[j];
        loops_for(PyArray_DESCR((PyArrayObject *)a), c.size[j], c.step[j], &c.check[j], &c.add[j]);
        ops[j] = (PyArrayObject *)a;
    }
    /* the iterator would widen the index arrays to updates' shape */
    if (broadcast_strides(upd, (int)nd, dims, ustrides) < 0) return NULL;
    if (n == 0) Py_RETURN_NONE;
    /* what the second pass reads must not be what it writes: a copy of the
     * arrays that share memory (as if they were copied first) */
    ops[c.k] = upd;
    for (m = 0; m <= c.k; m++) {
        ops[m] = so_may_overlap(memory, ops[m])
                 ? (PyArrayObject *)PyArray_NewCopy(ops[m], NPY_CORDER)
                 : (Py_INCREF(ops[m]), ops[m]);
        if (ops[m] == NULL) break;
    }
    rc = m <= c.k ? -1 : run_call(&c, ops, memory);
    while (m-- > 0) Py_DECREF(ops[m]);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

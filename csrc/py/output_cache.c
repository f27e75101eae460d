/*
 * py/output_cache.c: a small cache of the memory behind large out-of-place
 * results (an output cache, not a pool: blocks are handed back by NumPy).
 *
 * A fresh output is paid for in page faults: the kernel zeroes every page on
 * first touch, a large share of the copy of data itself (docs/design.md, "The
 * output cache").  A program that calls scatterops in a loop drops each result
 * before the next call; this cache keeps a few of those blocks, already faulted
 * in, and hands them out again -- what ONNX Runtime's arena and OpenVINO's
 * preallocated outputs do.
 *
 * It is a NumPy memory handler (PyDataMem_SetHandler), set only around the
 * allocation of a large output (py/call.c, and so_fresh_copy at the end of
 * this file: a C-ordered copy of data).  The array records the handler, so it
 * owns its data as any NumPy array does (resize, owndata, tracemalloc all as
 * usual) and NumPy gives the block back through pool_free when the array
 * dies.  Blocks of SO_OUTPUT_CACHE_MIN bytes or more are 2 MiB aligned and advised for
 * huge pages, like NumPy's own; smaller ones are plain malloc.  At most
 * SO_POOL_SLOTS blocks and so_pool_limit bytes are kept (SCATTEROPS_OUTPUT_CACHE
 * bytes, 0 to turn the cache off, set by scatterops/_settings.py at import);
 * the oldest go first.  The cached memory is
 * never shown to the user uninitialised in a way NumPy's is not: every result
 * is fully written (data copied, updates applied) before it is returned.
 *
 * NumPy allocates and frees array data with the GIL held, and the GIL is never
 * released in here: it guards the slots.
 */
#include "py/py.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SO_POOL_HDR 64                       /* keeps the data 64-byte aligned */
#define SO_POOL_ALIGN ((size_t)2 << 20)      /* a huge page */
#define SO_POOL_SLOTS 4

/* Stored at the start of every block, SO_POOL_HDR bytes before the data. */
typedef struct {
    size_t cap;    /* bytes of the block (header included) if pooled, else 0 */
    size_t size;   /* bytes of data the owner asked for */
} so_pool_hdr;

static struct {
    char *base;
    size_t cap;
    unsigned long age;
} slots[SO_POOL_SLOTS];

static size_t cached_bytes;
static unsigned long clock_now;
static size_t so_pool_limit = (size_t)256 << 20;
static unsigned long pool_hits, pool_misses;

static void *
block_new(size_t size)
{
    char *base = NULL;
    so_pool_hdr *h;
    if (size > SIZE_MAX - SO_POOL_ALIGN - SO_POOL_HDR) return NULL;
    if (size < SO_OUTPUT_CACHE_MIN) {
        base = malloc(size + SO_POOL_HDR);
        if (base == NULL) return NULL;
        h = (so_pool_hdr *)base;
        h->cap = 0;
    }
    else {
        size_t cap = (size + SO_POOL_HDR + SO_POOL_ALIGN - 1) & ~(SO_POOL_ALIGN - 1);
        int i, best = -1;
        /* the smallest cached block that fits and wastes under a quarter */
        for (i = 0; i < SO_POOL_SLOTS; i++) {
            if (slots[i].base != NULL && slots[i].cap >= cap && slots[i].cap - cap <= cap / 4 &&
                    (best < 0 || slots[i].cap < slots[best].cap)) {
                best = i;
            }
        }
        if (best >= 0) {
            base = slots[best].base;
            cap = slots[best].cap;
            slots[best].base = NULL;
            cached_bytes -= cap;
            pool_hits++;
        }
        else {
            void *p;
            if (posix_memalign(&p, SO_POOL_ALIGN, cap) != 0) return NULL;
            base = p;
#ifdef MADV_HUGEPAGE
            (void)madvise(base, cap, MADV_HUGEPAGE);   /* advice only */
#endif
            pool_misses++;
        }
        h = (so_pool_hdr *)base;
        h->cap = cap;
    }
    h->size = size;
    return base + SO_POOL_HDR;
}

static void
drop_oldest(void)
{
    int i, old = -1;
    for (i = 0; i < SO_POOL_SLOTS; i++) {
        if (slots[i].base != NULL && (old < 0 || slots[i].age < slots[old].age)) old = i;
    }
    if (old >= 0) {
        free(slots[old].base);
        cached_bytes -= slots[old].cap;
        slots[old].base = NULL;
    }
}

static void
block_free(void *ptr)
{
    char *base;
    size_t cap;
    int i, used = 0;
    if (ptr == NULL) return;
    base = (char *)ptr - SO_POOL_HDR;
    cap = ((so_pool_hdr *)base)->cap;
    if (cap == 0 || cap > so_pool_limit) {
        free(base);
        return;
    }
    for (i = 0; i < SO_POOL_SLOTS; i++) used += slots[i].base != NULL;
    while (used > 0 && (used == SO_POOL_SLOTS || cached_bytes + cap > so_pool_limit)) {
        drop_oldest();
        used--;
    }
    for (i = 0; i < SO_POOL_SLOTS; i++) {
        if (slots[i].base == NULL) {
            slots[i].base = base;
            slots[i].cap = cap;
            slots[i].age = ++clock_now;
            cached_bytes += cap;
            return;
        }
    }
    free(base);   /* not reached: a slot was freed above */
}

static void *
pool_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return block_new(size);
}

static void *
pool_calloc(void *ctx, size_t nelem, size_t elsize)
{
    void *p;
    (void)ctx;
    if (elsize != 0 && nelem > SIZE_MAX / elsize) return NULL;
    p = block_new(nelem * elsize);
    if (p != NULL) memset(p, 0, nelem * elsize);
    return p;
}

static void *
pool_realloc(void *ctx, void *ptr, size_t size)
{
    so_pool_hdr *h;
    void *q;
    (void)ctx;
    if (ptr == NULL) return block_new(size);
    h = (so_pool_hdr *)((char *)ptr - SO_POOL_HDR);
    if (h->cap == 0 && size < SO_OUTPUT_CACHE_MIN) {
        char *base = realloc(h, size + SO_POOL_HDR);
        if (base == NULL) return NULL;
        ((so_pool_hdr *)base)->size = size;
        return base + SO_POOL_HDR;
    }
    q = block_new(size);
    if (q == NULL) return NULL;
    memcpy(q, ptr, h->size < size ? h->size : size);
    block_free(ptr);
    return q;
}

static void
pool_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    block_free(ptr);
}

static PyDataMem_Handler so_pool_handler = {
    "scatterops_output_cache",
    1,
    {NULL, pool_malloc, pool_calloc, pool_realloc, pool_free},
};

static PyObject *pool_capsule;

int
so_output_cache_init(void)
{
    if (pool_capsule == NULL) {
        pool_capsule = PyCapsule_New(&so_pool_handler, "mem_handler", NULL);
        if (pool_capsule == NULL) return -1;
    }
    return 0;
}

PyArrayObject *
so_output_cache_new_array(PyArray_Descr *descr, int nd, npy_intp const *dims)
{
    PyObject *prev, *again;
    PyArrayObject *a;
    if (pool_capsule == NULL || so_pool_limit == 0) {
        return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, NULL, NULL,
                                                     0, NULL);
    }
    prev = PyDataMem_SetHandler(pool_capsule);
    if (prev == NULL) {
        Py_DECREF(descr);
        return NULL;
    }
    a = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, NULL, NULL, 0,
                                              NULL);
    again = PyDataMem_SetHandler(prev);
    Py_DECREF(prev);
    if (again == NULL) {
        Py_XDECREF(a);
        return NULL;
    }
    Py_DECREF(again);
    return a;
}

/* _core.set_output_cache_limit(nbytes): SCATTEROPS_OUTPUT_CACHE, as parsed by
 * scatterops/_settings.py at import (0: no cache); blocks already kept stay
 * until the next free drops the oldest. */
PyObject *
so_output_cache_set_limit(PyObject *self, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    (void)self;
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core.set_output_cache_limit: bytes >= 0");
        return NULL;
    }
    so_pool_limit = (size_t)n;
    Py_RETURN_NONE;
}

PyObject *
so_output_cache_info(PyObject *self, PyObject *noargs)
{
    int i, n = 0;
    (void)self;
    (void)noargs;
    for (i = 0; i < SO_POOL_SLOTS; i++) n += slots[i].base != NULL;
    return Py_BuildValue("{s:n,s:n,s:n,s:k,s:k}", "limit", (Py_ssize_t)so_pool_limit,
                         "blocks", (Py_ssize_t)n, "bytes", (Py_ssize_t)cached_bytes,
                         "hits", pool_hits, "misses", pool_misses);
}

PyObject *
so_output_cache_copy(PyObject *arg, int nthreads)
{
    PyArrayObject *a = (PyArrayObject *)arg, *r;
    if (!PyArray_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "copy: expected an ndarray");
        return NULL;
    }
    if ((size_t)PyArray_NBYTES(a) < SO_OUTPUT_CACHE_MIN) {
        return PyArray_NewCopy(a, NPY_CORDER);
    }
    Py_INCREF(PyArray_DESCR(a));
    r = so_output_cache_new_array(PyArray_DESCR(a), PyArray_NDIM(a), PyArray_DIMS(a));
    if (r == NULL || so_copy_to_c(r, a, nthreads) < 0) {
        Py_XDECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

int
so_copy_to_c(PyArrayObject *dst, PyArrayObject *src, int nthreads)
{
    PyArray_Descr *d = PyArray_DESCR(src);
    npy_intp isz = PyArray_ITEMSIZE(src);
    if (PyArray_NDIM(src) == 2 && !PyArray_IS_C_CONTIGUOUS(src) && PyArray_IS_F_CONTIGUOUS(src) &&
            PyArray_ISALIGNED(src) && !PyDataType_REFCHK(d) &&
            PyArray_EquivTypes(d, PyArray_DESCR(dst)) && PyArray_IS_C_CONTIGUOUS(dst) &&
            PyArray_SIZE(src) > 0) {
        npy_intp rows = PyArray_DIM(src, 0), cols = PyArray_DIM(src, 1);
        so_unlocked u;
        so_poll *poll = so_unlock(&u);
        so_transpose_copy(PyArray_BYTES(dst), PyArray_BYTES(src), rows, cols, isz, nthreads, poll);
        return so_relock(&u);
    }
    if (so_same_bytes_apart(dst, src)) return so_copy_apart(dst, src, nthreads);
    return so_copy_into(dst, src);
}

/* A new C-ordered copy of data: large ones in the output cache's memory. */
PyArrayObject *
so_fresh_copy(PyArrayObject *data, int nthreads)
{
    PyArray_Descr *dd = PyArray_DESCR(data);
    PyArrayObject *r;
    size_t nbytes = (size_t)so_size(data) * (size_t)PyArray_ITEMSIZE(data);
    if (nbytes >= SO_OUTPUT_CACHE_MIN) {
        Py_INCREF(dd);
        r = so_output_cache_new_array(dd, PyArray_NDIM(data), PyArray_DIMS(data));
        if (r == NULL || so_copy_to_c(r, data, nthreads) < 0) {
            Py_XDECREF(r);
            return NULL;
        }
        return r;
    }
    if (PyArray_IS_C_CONTIGUOUS(data) && !PyDataType_REFCHK(dd)) {
        /* one memcpy (NumPy's copy looks up a cast) */
        Py_INCREF(dd);
        r = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, PyArray_NDIM(data),
                                                  PyArray_DIMS(data), NULL, NULL, 0, NULL);
        if (r != NULL) memcpy(PyArray_BYTES(r), PyArray_BYTES(data), nbytes);
        return r;
    }
    /* a plain ndarray, whatever subclass data is */
    return (PyArrayObject *)PyArray_FromArray(data, NULL, NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY |
                                                          NPY_ARRAY_ENSUREARRAY);
}

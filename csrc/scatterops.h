/*
 * scatterops: shared declarations of the C core.
 *
 * The three operations are one walk.  Every update is a *group* (a position in
 * the update index space outside the copied block) plus a *block* (the slice of
 * data it addresses, one element for scatter_elements).  A group's destination
 * in `out` is
 *
 *     group offset (from its coordinates) + sum_j wrap(idx_j) * axis_stride_j
 *
 * and its source in `updates` comes from the same coordinates.  plan.c turns
 * the arrays of a checked call into such a plan; engine.c walks it in C order
 * and calls a kernel (assign.c for reduction "none", reduce.c for the typed
 * reductions) on each block.  Kernels see trusted byte offsets only: no bounds
 * checks and no Python objects (the object-dtype assignment kernel aside).
 */
#ifndef SCATTEROPS_H
#define SCATTEROPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL scatterops_ARRAY_API
#ifndef SCATTEROPS_MODULE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <string.h>

/* Group dims: up to the updates' rank; block dims: up to data's rank. */
#define SO_MAXDIMS 64

enum so_kind { SO_UPDATE = 0, SO_ND = 1, SO_ELEMENTS = 2 };
enum so_op { SO_NONE = 0, SO_ADD, SO_SUB, SO_MUL, SO_MAX, SO_MIN, SO_COUNT, SO_NOPS };

/*
 * block(o, os, u, us, n, isz): for i < n, o[i*os] = f(o[i*os], u[i*us]).
 * elem(o, os, idx, is, size, aos, u, us, n, isz): for i < n, with
 *     j = idx[i*is] (wrapped into [0, size)), o[i*os + j*aos] = f(..., u[i*us]).
 * Byte strides throughout; isz is the item size (used by the assignment kernels).
 */
typedef void (*so_block_fn)(char *o, npy_intp os, const char *u, npy_intp us,
                            npy_intp n, npy_intp isz);
typedef void (*so_elem_fn)(char *o, npy_intp os, const char *idx, npy_intp is,
                           npy_intp size, npy_intp aos, const char *u, npy_intp us,
                           npy_intp n, npy_intp isz);

/*
 * list(o, u, oo, uo, n): for q < n, o[oo[q]] = f(o[oo[q]], u[uo[q]]) (byte
 * offsets), in order: the owned elements of a thread's share (engine.c).
 */
typedef void (*so_list_fn)(char *o, const char *u, const npy_intp *oo, const npy_intp *uo,
                           npy_intp n, npy_intp isz);

typedef struct {
    so_block_fn block;
    so_elem_fn elem;      /* may be NULL: the engine then calls block per element */
    so_list_fn list;      /* may be NULL: the engine then calls block per element */
    npy_intp itemsize;
    int needs_gil;        /* object dtype: reference counts need the GIL */
} so_kernel;

typedef struct {
    char *out;
    const char *upd;
    const char *idx;
    char *mask;           /* NULL, or a uint8 array: 0 until an element is first hit */

    int gnd;              /* group dims, in C order of the update index space */
    npy_intp gshape[SO_MAXDIMS];
    npy_intp gs_out[SO_MAXDIMS], gs_upd[SO_MAXDIMS], gs_idx[SO_MAXDIMS], gs_mask[SO_MAXDIMS];

    int k;                /* index components per group */
    npy_intp istep;       /* byte stride between the components in idx */
    npy_intp isize[SO_MAXDIMS], is_out[SO_MAXDIMS], is_mask[SO_MAXDIMS];

    int bnd;              /* block dims (coalesced) */
    npy_intp bshape[SO_MAXDIMS];
    npy_intp bs_out[SO_MAXDIMS], bs_upd[SO_MAXDIMS], bs_mask[SO_MAXDIMS];

    /* dedup.c: with nwin >= 0 the index dims are gone from the group dims and
     * each group combination applies the blocks at win[2w] (out offset) from
     * win[2w + 1] (updates offset), w < nwin: the visible writes only. */
    npy_intp nwin;
    npy_intp *win;

    /* out has elements that share bytes (a view made with as_strided): writes to
     * different coordinates may then collide, so nothing reorders them (no
     * winner lists, no hit counts per slice, one thread) */
    int out_overlaps;

    /* engine.c, a thread's share when no dim of the walk addresses out: with
     * owned set, only the groups whose first index component (wrapped) lies in
     * [own_lo, own_hi) are applied; the others belong to another thread. */
    int owned;
    npy_intp own_lo, own_hi;
    /* with owned: when not NULL, every index value is checked as it is read
     * (k == 1, no mask), a bad one sets *bad and is applied as 0 (fast.c drops
     * the fresh result then) */
    int *bad;
    /* with owned, one component, no mask: when not NULL, hits[v] counts the
     * applied groups whose index value is v (reduction "mean", module.c) */
    npy_intp *hits;
    /* with hits: when not NULL, each owner divides its own values' blocks right
     * after its walk (so_mean_finish_owned), while they are still in its cache:
     * no scan of the counts and no division pass afterwards (module.c) */
    PyArray_Descr *mean_descr;
    int mean_include_self;
} so_plan;

/* engine.c: whether the CPU can run the F16C conversions or the AVX-512 (F, DQ)
 * or AVX2 compaction, and the OS saves their registers; 0 off x86-64 */
enum { SO_CPU_F16C = 0, SO_CPU_AVX512 = 1, SO_CPU_AVX2 = 2 };
int so_cpu_has(int feature);

/* plan.c: fills *p, or sets a Python exception and returns -1. */
int so_make_plan(so_plan *p, int kind, PyArrayObject *out, PyArrayObject *idx,
                 PyArrayObject *upd, int axis, PyArrayObject *mask);

/* dedup.c: for reduction "none" on slices, keep only the last write to each
 * slice (returns 1 if the plan now holds a winner list to free()). */
int so_dedup(so_plan *p, npy_intp itemsize);
/* dedup.c: (destination offset, hits) pairs sorted by offset, for the index
 * dims after the first *lead group dims; NULL if the plan is not of that shape. */
npy_intp *so_count_hits(const so_plan *p, int *lead, npy_intp *n);

/* engine.c: the walk. No Python calls unless the kernel needs the GIL. */
void so_run(const so_plan *p, const so_kernel *kn);
/* engine.c: the walk split over up to nthreads threads by output ownership;
 * returns the number of threads that ran. */
int so_run_threaded(const so_plan *p, const so_kernel *kn, int nthreads);
/* engine.c: whether so_run_threaded splits this plan by index value, and that
 * split with every index checked as it is read (only for plans with one index
 * component and no mask): returns 0 if an index was out of range, the out
 * then holds garbage. */
int so_owned_split_applies(const so_plan *p, const so_kernel *kn, int nthreads);
int so_run_owned_checked(const so_plan *p, const so_kernel *kn, int nthreads);
/* engine.c: out of place, out fresh and laid out as data (src, nbytes): copy
 * data into out and run the plan in one pass over bands of out, on up to
 * nthreads threads; returns 0, having done nothing, if the plan does not own
 * bands of out (copy, then so_run_threaded). */
int so_run_copying(const so_plan *p, const so_kernel *kn, int nthreads, const char *src,
                   npy_intp nbytes);
/* engine.c: fn on each of the n tasks (size bytes apart from tasks): task 0 on
 * the calling thread, the others on new threads, joined before it returns (a
 * task whose thread cannot be made runs on the calling thread).  Returns the
 * number of threads that ran. */
int so_run_tasks(void *(*fn)(void *), void *tasks, size_t size, int n);
/* engine.c: memcpy on up to nthreads threads (large copies only). */
void so_parallel_copy(char *dst, const char *src, size_t nbytes, int nthreads);
/* engine.c: dst (rows, cols) C-ordered = src, a (cols, rows) C-ordered array,
 * transposed; items of isz bytes (no references). */
void so_transpose_copy(char *dst, const char *src, npy_intp rows, npy_intp cols, npy_intp isz,
                       int nthreads);

/* assign.c: the kernel for reduction "none" on any dtype of this item size. */
void so_assign_kernel(so_kernel *kn, npy_intp itemsize, int is_object);

/* reduce.c: the typed kernel for (dtype, op), or 0 if there is none. */
int so_reduce_kernel(so_kernel *kn, PyArray_Descr *descr, int op);
/* reduce.c: the type characters that have typed reduction kernels. */
extern const char so_typed_chars[];

/* module.c: threads a large call may use. */
int so_get_num_threads(void);

/* module.c (for now): the whole mean on p where the hits can be counted per
 * slice or by owners; 0, having done nothing, otherwise */
int so_mean_run(so_plan *p, const so_kernel *kn, PyArray_Descr *descr, int include_self,
                int nthreads);

/* mean.c: finish a mean in place for the real typed dtypes (else does nothing). */
int so_has_mean_kernel(PyArray_Descr *d);
void so_mean_finish(PyArrayObject *out, PyArrayObject *counts, int include_self);
/* mean.c: divide the block at each destination of hits (from so_count_hits) by
 * its count + include_self, at every combination of the first lead group dims. */
void so_mean_finish_hits(const so_plan *p, PyArray_Descr *d, int lead, const npy_intp *hits,
                         npy_intp nhits, int include_self);
/* mean.c: an owner's finish (p->owned, p->hits, p->mean_descr): divide the block
 * of each value v in [own_lo, own_hi) with hits[v] > 0.  No GIL needed. */
void so_mean_finish_owned(const so_plan *p);

/* pool.c: outputs of SO_POOL_MIN bytes or more come from a cache of freed
 * output blocks (a NumPy memory handler).  so_pool_new_array steals descr as
 * PyArray_NewFromDescr does. */
#define SO_POOL_MIN ((size_t)1 << 20)
int so_pool_init(void);
PyArrayObject *so_pool_new_array(PyArray_Descr *descr, int nd, npy_intp const *dims);
/* pool.c: dst (C-contiguous, fresh) = src, as PyArray_CopyInto; a 2-D transposed
 * src without references is copied tile by tile, without the GIL. */
int so_copy_to_c(PyArrayObject *dst, PyArrayObject *src);
PyObject *so_pool_info(PyObject *self, PyObject *noargs);
/* _core.copy(a): a C-ordered copy of the ndarray a, large ones in cached memory */
PyObject *so_pool_copy(PyObject *self, PyObject *arg);

/* validate.c: flat C-order position of the first index out of range, or -1. */
npy_intp so_find_bad_index(PyArrayObject *idx, const npy_intp *bounds, int nbounds);

/* An index value, wherever it lies (user index arrays need not be aligned). */
static inline npy_intp so_load_intp(const char *p)
{
    npy_intp v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline npy_intp so_wrap(npy_intp j, npy_intp size)
{
    return j + (j < 0 ? size : 0);
}

/* so_wrap, and any value still outside [0, size) becomes 0: the element kernels
 * use it, so that a walk whose indices are checked at the same time as it runs
 * (fast.c) cannot write outside out.  For checked indices it is so_wrap. */
static inline npy_intp so_clamp(npy_intp j, npy_intp size)
{
    j = so_wrap(j, size);
    return (npy_uintp)j < (npy_uintp)size ? j : 0;
}

#endif

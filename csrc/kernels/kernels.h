/*
 * kernels/kernels.h: what one update does to the elements it hits -- the
 * kernels the walk (walk/) calls on each block, and the division loops that
 * finish a mean.  Kernels see trusted byte offsets only: no bounds checks and
 * no Python objects (the object-dtype assignment kernel aside).
 */
#ifndef SO_KERNELS_H
#define SO_KERNELS_H

#include "base/base.h"

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
 * offsets), in order: the owned elements of a thread's share (walk/owned.c).
 */
typedef void (*so_list_fn)(char *o, const char *u, const npy_intp *oo, const npy_intp *uo,
                           npy_intp n, npy_intp isz);

/*
 * first(o, os, idx, is, size, aos, m, ms, ams, u, us, n): elem with
 * include_self=False -- with m the mask of hit elements (uint8, byte strides
 * ms per group and ams per index step like os and aos), an element whose
 * mask byte is 0 takes the update and is marked, a marked one combines.
 */
typedef void (*so_first_fn)(char *o, npy_intp os, const char *idx, npy_intp is,
                            npy_intp size, npy_intp aos, char *m, npy_intp ms, npy_intp ams,
                            const char *u, npy_intp us, npy_intp n);

typedef struct {
    so_block_fn block;
    so_elem_fn elem;      /* may be NULL: the walk then calls block per element */
    so_list_fn list;      /* may be NULL: the walk then calls block per element */
    so_first_fn first;    /* may be NULL: the walk then calls block per element */
    npy_intp itemsize;
    int needs_gil;        /* object dtype: reference counts need the GIL */
} so_kernel;

/* assign.c: the kernel for reduction "none" on any dtype of this item size. */
void so_assign_kernel(so_kernel *kn, npy_intp itemsize, int is_object);

/* reduce.c: the typed kernel for (dtype, op), or 0 if there is none (the typed
 * dtypes of ops.h's table, bool, and ml_dtypes' bfloat16). */
int so_reduce_kernel(so_kernel *kn, PyArray_Descr *descr, int op);
/* reduce.c: the kernel SO_COUNT (+1 per update) on npy_intp counts */
void so_count_kernel(so_kernel *kn);
/* reduce.c: descr is ml_dtypes' bfloat16 (registered at run time: known by its
 * scalar type) */
int so_is_bfloat16(PyArray_Descr *descr);

/* indexed.c: indexed(o, aos, size, idx, u, n): for i < n, with j = idx[i] read
 * in index type itype (base.h; a negative one counts from the end),
 * o[j*aos] = f(o[j*aos], u[i]); idx and u contiguous and aligned.  It stops at
 * the first j outside [0, size) and returns its i (nothing written for it or
 * after it), else -1.
 * so_indexed_kernel: the loop for (dtype, op, itype), or NULL (float16, bool,
 * byte-swapped and generic dtypes, op "none"). */
typedef npy_intp (*so_indexed_fn)(char *o, npy_intp aos, npy_intp size, const char *idx,
                                  const char *u, npy_intp n);
so_indexed_fn so_indexed_kernel(PyArray_Descr *d, int op, int itype);

/* mean_indexed.c: reduction="mean" in the direct form, over a scratch array w
 * of size pairs (a sum, an int32 count; pair_bytes each):
 *   start(o, aos, size, w): each pair's sum from o[j*aos], its count 0;
 *   self[itype], first[itype]: indexed loops (above) with w as their out: for
 *     i < n, pair j = idx[i]'s sum combined with u[i] and counted (first: an
 *     element's first update assigned, as with include_self=False);
 *   finish(o, aos, size, w, include_self): each counted element of o becomes
 *     sum / (count + include_self), kernels/mean_div.h's division;
 *   start_at, finish_at: the same for the pairs that int64 index values ix[0..n)
 *     name only (wrapped as the loops wrap them, values outside skipped), each
 *     element divided once, its count then 0: a pass over the updates instead
 *     of one over out.  so_mean_start_hit and so_mean_finish_hit run them on a
 *     call's indices of any index type.
 * At most SO_MEAN_INDEXED_MAX updates a call (the count's range).
 * so_mean_indexed_kernel: the loops for this dtype, or NULL (float16, bool,
 * byte-swapped and generic dtypes). */
typedef struct {
    void (*start)(const char *o, npy_intp aos, npy_intp size, char *w);
    const so_indexed_fn *self, *first;
    void (*finish)(char *o, npy_intp aos, npy_intp size, const char *w, int include_self);
    void (*start_at)(const char *o, npy_intp aos, npy_intp size, const npy_int64 *ix,
                     npy_intp n, char *w);
    void (*finish_at)(char *o, npy_intp aos, npy_intp size, const npy_int64 *ix, npy_intp n,
                      char *w, int include_self);
    size_t pair_bytes;
} so_mean_indexed;
#define SO_MEAN_INDEXED_MAX ((npy_intp)0x7fffffff)
const so_mean_indexed *so_mean_indexed_kernel(PyArray_Descr *d);
void so_mean_start_hit(const so_mean_indexed *mk, int itype, const char *idx, npy_intp n,
                       const char *o, npy_intp aos, npy_intp size, char *w);
void so_mean_finish_hit(const so_mean_indexed *mk, int itype, const char *idx, npy_intp n,
                        char *o, npy_intp aos, npy_intp size, char *w, int include_self);
/* partial.c: for a reduction whose result does not depend on the order of the
 * updates (integer dtypes; add, sub, mul, max, min), the loops of a private
 * partial output that a share of the updates is reduced into by the
 * operation's own indexed loop:
 *   fill(p, n): n contiguous elements at p set to the operation's identity;
 *   merge(o, aos, p, n): for j < n, o[j*aos] joined with p[j] (add for add and
 *     sub, the operation itself for the others).
 * so_partial_kernel_for: the loops for (dtype, op), or NULL (every other dtype,
 * byte-swapped ones included, and op). */
typedef struct {
    void (*fill)(char *p, npy_intp n);
    void (*merge)(char *o, npy_intp aos, const char *p, npy_intp n);
} so_partial_kernel;
const so_partial_kernel *so_partial_kernel_for(PyArray_Descr *d, int op);
/* rows.c: rows(o, ros, size, idx, u, us, n, f): for i < n, with j = idx[i] read
 * in index type itype (a negative one wrapped), the f contiguous elements at
 * o + j*ros take f(o[j*ros + k], u[i*us + k]) for k < f, in order; an index
 * outside [-size, size) stops the loop there: it returns that i (-1: none).
 * idx contiguous, idx, u and o aligned.  so_rows_kernel: the loop for (dtype,
 * op, itype) -- op "none" for any dtype without references, by item size (1, 2,
 * 4, 8, 16; the caller sees that o, u, ros and us suit a word of that size,
 * up to 8 bytes) --, or NULL (float16 and bool but under "none", byte-swapped
 * and generic dtypes). */
typedef npy_intp (*so_rows_fn)(char *o, npy_intp ros, npy_intp size, const char *idx,
                               const char *u, npy_intp us, npy_intp n, npy_intp f);
so_rows_fn so_rows_kernel(PyArray_Descr *d, int op, int itype);

/* mean.c: the division that finishes a mean, for the real typed dtypes:
 * fn(o, os, c, cs, n, extra): for i < n with k = c[i*cs] (npy_intp) > 0,
 * o[i*os] = o[i*os] / (k + extra) (floats in double, integers floored).
 * so_mean_kernel: the loop for this dtype, or NULL (complex, generic dtypes). */
typedef void (*so_mean_fn)(char *o, npy_intp os, const char *c, npy_intp cs, npy_intp n,
                           npy_intp extra);
so_mean_fn so_mean_kernel(PyArray_Descr *d);
int so_has_mean_kernel(PyArray_Descr *d);

#endif

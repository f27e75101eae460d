/*
 * py/py.h: the CPython layer -- the module scatterops._core (module.c), the
 * whole plain call in C and the public functions (fast.c), the fast path's
 * calls that check indices while they walk (checked.c), and the cache of freed
 * output blocks (output_cache.c).  The thread count set from Python lives in
 * module.c and is read once at each entry point, then passed down.
 */
#ifndef SO_PY_H
#define SO_PY_H

#include "base/base.h"
#include "kernels/kernels.h"
#include "plan/plan.h"
#include "walk/walk.h"

/* fast.c: the whole call for the plain case, or NotImplemented (nothing written). */
PyObject *so_fast(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* fast.c: make_public(name, kind, fallback, doc, module), the public functions */
PyObject *so_make_public(PyObject *self, PyObject *args);
/* fast.c: where its entry points read the thread count (module.c's setting),
 * given once when the module is made. */
void so_fast_init(const int *num_threads);

/* data from this size on is copied into a fresh out by the walk itself
 * (walk/fused.c), in the output cache's memory */
#define SO_FUSED_MIN_BYTES ((npy_intp)1 << 20)

/* checked.c: out of place, the indices checked while the walk runs, by the
 * owners of an index-value split (so_checked_by_owners) or by a second thread
 * beside a one-thread element walk (so_checked_while_walking).  The fresh
 * result, or NULL: with an exception set on an error, with *bad set when an
 * index is bad, with neither when the call is not of that shape. */
PyObject *so_checked_by_owners(int kind, PyArrayObject *data, PyArrayObject *idx,
                               PyArrayObject *upd, int axis, const so_kernel *kn, int nthreads,
                               int *bad);
PyObject *so_checked_while_walking(int kind, PyArrayObject *data, PyArrayObject *idx,
                                   PyArrayObject *upd, int axis, const so_kernel *kn,
                                   const npy_intp *bounds, int nbounds, int nthreads, int *bad);

/* output_cache.c: outputs of SO_OUTPUT_CACHE_MIN bytes or more come from a
 * cache of freed output blocks (a NumPy memory handler).
 * so_output_cache_new_array steals descr as PyArray_NewFromDescr does. */
#define SO_OUTPUT_CACHE_MIN ((size_t)1 << 20)
int so_output_cache_init(void);
PyArrayObject *so_output_cache_new_array(PyArray_Descr *descr, int nd, npy_intp const *dims);
/* data from this size on is copied into a fresh out by the walk itself
 * (walk/fused.c), in the output cache's memory */
#define SO_FUSED_MIN_BYTES ((npy_intp)1 << 20)

/* checked.c: out of place, the indices checked while the walk runs, by the
 * owners of an index-value split (so_checked_by_owners) or by a second thread
 * beside a one-thread element walk (so_checked_while_walking).  The fresh
 * result, or NULL: with an exception set on an error, with *bad set when an
 * index is bad, with neither when the call is not of that shape. */
PyObject *so_checked_by_owners(int kind, PyArrayObject *data, PyArrayObject *idx,
                               PyArrayObject *upd, int axis, const so_kernel *kn, int nthreads,
                               int *bad);
PyObject *so_checked_while_walking(int kind, PyArrayObject *data, PyArrayObject *idx,
                                   PyArrayObject *upd, int axis, const so_kernel *kn,
                                   const npy_intp *bounds, int nbounds, int nthreads, int *bad);

/* output_cache.c: dst (C-contiguous, fresh) = src, as PyArray_CopyInto; a 2-D
 * transposed src without references is copied tile by tile on up to nthreads
 * threads, without the GIL. */
int so_copy_to_c(PyArrayObject *dst, PyArrayObject *src, int nthreads);
/* _core.output_cache_info() */
PyObject *so_output_cache_info(PyObject *self, PyObject *noargs);
/* _core.copy(a): a C-ordered copy of the ndarray a, large ones in cached memory */
PyObject *so_output_cache_copy(PyObject *arg, int nthreads);

#endif

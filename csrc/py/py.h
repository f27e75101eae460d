/*
 * py/py.h: the CPython layer, the binding -- Python objects in, a checked
 * call described for the call layer (call/call.h), exceptions out.
 *
 * public.c binds the argument list of the three public functions as Python
 * would bind their signature and reads the thread count once (settings.c);
 * args.c turns the arguments, as the user wrote them, into arrays the layers
 * below can trust (so_args), or raises the error that says what is wrong;
 * host.c gives the checked call's arrays to its description (so_call) and
 * the call layer what needs NumPy (so_host: arrays, copies, the GIL, the
 * indices as intp, the fallback); call.c hands the call to the call layer,
 * which decides and runs it (so_call_execute), and turns the outcome into the
 * result, the IndexError, or mode's transform and the call run once more;
 * errors.c raises the exceptions (their text lives in
 * scatterops/_messages.py); output_cache.c keeps freed large outputs for the
 * next call; module.c is the module scatterops._core.
 */
#ifndef SO_PY_H
#define SO_PY_H

#include "base/base.h"
#include "call/call.h"

/* A checked call: the call layer's description of it (c: kind, reduction,
 * mode, counts, kernel; its so_array views are filled by so_call_sync from
 * the arrays below) and the Python objects it holds. */
typedef struct {
    so_call c;
    PyObject *reduction;    /* borrowed: the canonical name ("add" for "sum", ...) */
    PyArrayObject *data;    /* owned: rank >= 1 */
    PyArrayObject *idx;     /* owned: native-order integers (negatives not wrapped), as
                             * given, until the call layer folds them or has them made
                             * intp (the host's index_view, intp_indices); their values
                             * are checked by the call layer */
    PyArrayObject *given_idx; /* owned: indices as given (an integer array), for the message */
    PyArrayObject *upd;     /* owned: data's dtype and the required shape (maybe a broadcast view) */
    PyArrayObject *out;     /* owned: the user's out (checked), or NULL */
} so_args;

/* convert.c: the public names of the operations, by kind */
extern const char *const so_func_names[3];

/* args.c: fill *a from the user's arguments (axis may be NULL for scatter_nd),
 * or raise and return -1 (nothing written anywhere).  Every rule but the range
 * of the index values, which the call layer checks (call/execute.c), before
 * or while it runs.  so_args_clear frees it. */
int so_args_parse(so_args *a, int kind, PyObject *data, PyObject *indices, PyObject *updates,
                  PyObject *axis, PyObject *reduction, PyObject *include_self, PyObject *mode,
                  PyObject *out);
void so_args_clear(so_args *a);
/* indices.c: the outcome of a bad index at flat C-order position pos: under
 * mode="raise", its IndexError (-1 raised); under another mode,
 * SO_OUT_OF_RANGE with nothing raised: the caller applies the mode
 * (so_args_apply_mode) and goes on.  so_args_check_indices: the check of every
 * index value against its axis, 0 all inside, else that outcome for the first
 * one outside (mode.c's last word on an axis of size 0). */
#define SO_OUT_OF_RANGE 1
int so_args_check_indices(const so_args *a, int nthreads);
int so_args_out_of_range(const so_args *a, npy_intp pos);
/* indices.c: the size each index component is checked against; their number */
int so_args_bounds(const so_args *a, npy_intp *bounds);
/* convert.c: numpy.asarray, raising for argument name: always a plain ndarray
 * (a subclass as a view of its memory; a numpy.ma.MaskedArray raises, since
 * its mask cannot be honoured); so_plain_array does the same for an ndarray
 * (out).  A plain ndarray, the usual argument, is taken here, inline, with no
 * call (docs/design.md, "The cost of a small call"). */
PyArrayObject *so_as_array_converted(const char *func, const char *name, PyObject *o);
PyArrayObject *so_plain_subclass(const char *func, const char *name, PyArrayObject *a);
static inline PyArrayObject *
so_as_array(const char *func, const char *name, PyObject *o)
{
    if (PyArray_CheckExact(o)) {
        Py_INCREF(o);
        return (PyArrayObject *)o;
    }
    return so_as_array_converted(func, name, o);
}
static inline PyArrayObject *
so_plain_array(const char *func, const char *name, PyArrayObject *a)
{
    if (PyArray_CheckExact(a)) {
        Py_INCREF(a);
        return a;
    }
    return so_plain_subclass(func, name, a);
}
/* convert.c: a shape as a tuple */
PyObject *so_shape_tuple(int nd, const npy_intp *dims);
#define SHAPE(a) so_shape_tuple(PyArray_NDIM(a), PyArray_DIMS(a))

/* The number of elements of a (PyArray_SIZE without a call into NumPy: the
 * small calls count every nanosecond). */
static inline npy_intp
so_size(const PyArrayObject *a)
{
    npy_intp n = 1;
    int d;
    for (d = 0; d < PyArray_NDIM(a); d++) n *= PyArray_DIM(a, d);
    return n;
}

/* reductions.c: the entry of the reduction table for the name r, or -1 raised;
 * its canonical name (borrowed), kernel op and whether it is the mean */
int so_parse_reduction(const char *func, PyObject *r);
void so_reduction_info(int entry, PyObject **canonical, int *op, int *mean);
/* reductions.c: NumPy's ufunc for a kernel op (borrowed; None for SO_NONE) */
PyObject *so_reduction_ufunc(int op);
/* reductions.c: raise (-1) unless the reduction of entry is defined for d;
 * else 1 with *kn its C kernel (reduction "none": the assignment kernel of d's
 * item size), or 0 if d has no C loop for it (the NumPy fallback runs it) */
int so_check_reduction(const char *func, int entry, PyObject *given, PyArray_Descr *d,
                       so_kernel *kn);
/* reductions.c: the reduction names, {accepted name: canonical name} (module
 * constant), made by so_args_init (once, at import) */
PyObject *so_reduction_table(void);
int so_args_init(void);

/* indices.c: the indices argument as an integer array (NULL raised); as native
 * intp (uint64 values past intp's range become its max, still out of range) */
PyArrayObject *so_parse_indices(const char *func, PyObject *indices);
/* indices.c: scatter_nd's indices given as a Python tuple: one of arrays or
 * sequences is np.add.at's spelling, (rows, cols) meaning the pairs
 * (rows[j], cols[j]), which read as an array would be len(tuple) index tuples
 * instead, silently: refused (-1 raised).  A tuple of scalars is one index
 * tuple, as a list would be (0). */
int so_check_nd_tuple(const char *func, PyObject *indices);
PyArrayObject *so_as_intp(const char *func, PyArrayObject *i);
/* indices.c: a read-only view of a's memory (a its base) with the given descr
 * (a reference stolen), dims and strides, a's ndim; NULL raised */
PyArrayObject *so_view_of(PyArrayObject *a, PyArray_Descr *descr, const npy_intp *dims,
                          const npy_intp *strides);

/* mode.c: mode= (NULL: the default), as SO_MODE_*, or -1 raised; and a->mode
 * applied to a parsed call by call/mode_transform.c (the indices wrapped or
 * clipped, or the updates whose index is outside dropped), after which a->mode
 * is "raise": 0, or -1 raised
 * (also the IndexError of a value that wrap or clip cannot map: an axis of
 * size 0 has no position).  The check a call makes
 * anyway (SO_OUT_OF_RANGE) is what calls for it, before anything is written,
 * so a call whose indices are all inside costs what it costs under "raise". */
/* mode.c: the names of the modes, by SO_MODE_* number */
extern const char *const so_mode_names[SO_NMODES];
int so_parse_mode(const char *func, PyObject *mode);
int so_args_apply_mode(so_args *a);
/* call.c: run a checked call; the result (a new reference), or NULL with an
 * exception set.  _core._choose(kind, data, indices, updates, axis, reduction,
 * include_self, mode, out, nthreads): the name of the strategy
 * (call/call.h's so_strategy_names) the call would take. */
PyObject *so_call_run(so_args *a, int nthreads);
PyObject *so_py_choose(PyObject *self, PyObject *args);
/* generic.c: the updates of a, a call of a dtype without a C loop, applied to
 * work (which holds data) by NumPy's ufunc.at in scatterops/_generic.py: 0, or
 * -1 raised */
int so_apply_generic(const so_args *a, PyArrayObject *work);
/* generic.c: how many calls went to the Python fallback for dtypes without a C
 * loop (scatterops/_generic.py), since the module was loaded */
extern unsigned long so_generic_calls;

/* errors.c: raise the exception named code for the public function func, with
 * the fields given as a Py_BuildValue format for a dict (NULL: no fields);
 * returns -1.  The Python side (scatterops/_messages.py) holds the text. */
int so_fail(const char *code, const char *func, const char *fmt, ...);
/* errors.c: an exception is set while converting argument name: re-raise it as
 * scatterops/_messages.py says (a clear message, or the caller's own with a note) */
int so_fail_converting(const char *func, const char *name);
/* errors.c: the Python helpers the C core calls back: the message maker and
 * the fallback for dtypes without a C loop (set once, at import) */
extern PyObject *so_hook_error, *so_hook_generic;
PyObject *so_set_hooks(PyObject *self, PyObject *args);

/* public.c: make_public(name, kind, doc, module), the public functions */
PyObject *so_make_public(PyObject *self, PyObject *args);

/* settings.c: the thread count of a call made now by this thread: its
 * scatterops.threads(n) count inside such a block, else the process-wide one
 * (scatterops.set_num_threads); at most the cap.  Read once at each entry
 * point and passed down, never by the layers below. */
int so_settings_threads(void);
/* settings.c: _core.set_thread_cap(n), set_num_threads(n) (the count used, at
 * most the cap), swap_local_threads(n) (this thread's count, 0: none; returns
 * the one before), get_num_threads(process_wide) */
PyObject *so_py_set_thread_cap(PyObject *self, PyObject *arg);
PyObject *so_py_set_num_threads(PyObject *self, PyObject *arg);
PyObject *so_py_swap_local_threads(PyObject *self, PyObject *arg);
PyObject *so_py_get_num_threads(PyObject *self, PyObject *process_wide);
/* settings.c: _core.disable_cpu_feature(i), _core.cpu_features() (whether
 * calls use F16C, AVX-512, AVX2) */
PyObject *so_py_disable_cpu_feature(PyObject *self, PyObject *arg);
PyObject *so_py_cpu_features(PyObject *self, PyObject *unused);
PyObject *so_py_cache_bytes(PyObject *self, PyObject *level);
/* settings.c: _core._test_rewrite_indices(value or None): from then on, every
 * call rewrites its (intp) indices to value right after checking them */
PyObject *so_py_test_rewrite_indices(PyObject *self, PyObject *arg);
void so_test_rewrite(PyArrayObject *idx);

/* output_cache.c: outputs of SO_OUTPUT_CACHE_MIN bytes or more come from a
 * cache of freed output blocks (a NumPy memory handler).
 * so_output_cache_new_array steals descr as PyArray_NewFromDescr does. */
#define SO_OUTPUT_CACHE_MIN ((size_t)1 << 20)
int so_output_cache_init(void);
PyArrayObject *so_output_cache_new_array(PyArray_Descr *descr, int nd, npy_intp const *dims);
/* output_cache.c: dst (C-contiguous, fresh) = src, as PyArray_CopyInto; a 2-D
 * transposed src without references is copied tile by tile on up to nthreads
 * threads, without the GIL; -1 with the exception set if it failed or Ctrl-C
 * stopped it. */
int so_copy_to_c(PyArrayObject *dst, PyArrayObject *src, int nthreads);
/* _core.output_cache_info(), _core.set_output_cache_limit(nbytes) */
PyObject *so_output_cache_info(PyObject *self, PyObject *noargs);
PyObject *so_output_cache_set_limit(PyObject *self, PyObject *arg);
/* _core.copy(a): a C-ordered copy of the ndarray a, large ones in cached memory */
PyObject *so_output_cache_copy(PyObject *arg, int nthreads);

/* interrupt.c: a long phase of a call, without the GIL and stoppable by
 * Ctrl-C: so_unlock releases the GIL and gives the poll to pass down (its check
 * re-takes the GIL for a moment on the main thread); so_relock takes the GIL
 * back and returns -1, the exception set, if the poll stopped the phase, else 0.
 * so_poll_signals is the same poll for a phase that keeps the GIL
 * (so_poll_raised then says whether it stopped). */
typedef struct {
    so_poll poll;
    PyThreadState *saved;   /* while the GIL is released */
} so_unlocked;
so_poll *so_unlock(so_unlocked *u);
int so_relock(so_unlocked *u);
so_poll *so_poll_signals(so_unlocked *u);
int so_poll_raised(so_unlocked *u);
/* interrupt.c: an interrupt raised by a call into out (in_place): the
 * exception gets the note that says what out may hold; returns -1 */
int so_note_interrupted(const char *func, int in_place);
/* interrupt.c: PyArray_CopyInto, a large one in slabs with the signals
 * checked between them, or in copy.c's pieces if so_same_bytes_apart;
 * so_same_bytes_apart: whether dst and src are C-ordered arrays of one dtype
 * without references, of the same bytes, that do not overlap (so one memcpy
 * makes dst = src); so_copy_apart: such a copy in copy.c's pieces on up to
 * nthreads threads, the GIL released (-1 with KeyboardInterrupt set if a
 * signal stopped it) */
int so_copy_into(PyArrayObject *dst, PyArrayObject *src);
int so_same_bytes_apart(PyArrayObject *dst, PyArrayObject *src);
int so_copy_apart(PyArrayObject *dst, PyArrayObject *src, int nthreads);
/* at_offsets.c: _core.at_apply(memory, arrays, sizes, steps, shape, updates,
 * reduction), scatterops.at's call for index arrays on every axis, run by
 * call/at_index_arrays.c */
PyObject *so_py_at_apply(PyObject *self, PyObject *args);
/* route.c: _core.route(indices, sizes, starts, mode, local_dtype, payloads,
 * elements), scatterops.dask's routing of a chunk of updates to the blocks of
 * data: a stable counting sort by block, without the GIL (call/route_blocks.c) */
PyObject *so_py_route(PyObject *self, PyObject *args);
/* tables.c: the module constants KINDS, MODES, UFUNC_REDUCTIONS and
 * TYPED_DTYPES added to m (reductions: the REDUCTIONS constant), -1 raised;
 * _core.check_call(kind, data, indices, updates, axis, reduction,
 * include_self, mode), every rule of a call but its index values, returning
 * (the updates shape required, the axis in [0, ndim)) */
int so_tables_add(PyObject *m, PyObject *reductions);
PyObject *so_py_check_call(PyObject *self, PyObject *args);

/* output_cache.c: a new C-ordered copy of data (large ones in the cache's memory) */
PyArrayObject *so_fresh_copy(PyArrayObject *data, int nthreads);
/* indices.c: a->idx as native intp (args.c keeps native integer indices as
 * given, for the direct form), -1 raised; the IndexError for the value at flat
 * C-order position pos of a->idx (-1). */
int so_args_intp_indices(so_args *a);
int so_args_index_error(const so_args *a, npy_intp pos);

/* convert.c: the byte range of an array's elements overlaps the other's
 * (NumPy's may_share_memory) */
int so_may_overlap(PyArrayObject *a, PyArrayObject *b);

/* The so_array of a (borrowed: a outlives it), for the layers below. */
static inline void
so_array_of(PyArrayObject *a, so_array *s)
{
    s->bytes = PyArray_BYTES(a);
    s->ndim = PyArray_NDIM(a);
    s->dims = PyArray_DIMS(a);
    s->strides = PyArray_STRIDES(a);
    s->itemsize = PyArray_ITEMSIZE(a);
    s->aligned = PyArray_ISALIGNED(a) != 0;
    s->c_contiguous = PyArray_IS_C_CONTIGUOUS(a) != 0;
    s->dtype = PyArray_DESCR(a);
    s->handle = a;
}

/* host.c: a->c's arrays set to a's (borrowed) and its thread count to nthreads */
void so_call_sync(so_args *a, int nthreads);
/* host.c: what the call layer asks of the binding (call/call.h's so_host),
 * with NumPy's arrays and the interpreter's lock: so_py_host_init makes one
 * for a call on nthreads threads */
typedef struct {
    so_host h;
    so_unlocked u;
    so_args *a;             /* the call's arguments (its indices made intp, its fallback),
                             * set by the caller of so_call_execute; NULL by so_py_host_init */
    int nthreads;
} so_py_host;
void so_py_host_init(so_py_host *ph, int nthreads);

#endif

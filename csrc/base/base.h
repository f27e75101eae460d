/*
 * base/base.h: the bottom layer of the C core -- what every other layer may use.
 *
 * The C core is layered, each layer in its own folder of csrc/ and each folder
 * including only its own header and the headers of the layers below it:
 *
 *     base     threads, CPU features, copies, index loads, N-d counting (nditer.h),
 *              an array without Python (array.h)
 *     kernels  what one update does to one element (assign, reduce, mean division)
 *     plan     the arrays of a checked call as a geometry; index checks; dedup
 *     walk     the walk of a plan (threads, ownership, the fused copy, the mean)
 *     call     how a checked call runs, without Python: its strategies and the
 *              cost model's thresholds (call.h, cost.h)
 *     py       the CPython module: arguments in, the call described, exceptions out
 *
 * The general way to run a call, for all three operations, is a plan and its
 * walk: every update is a *group* (a position in the update index space
 * outside the copied block) plus a *block* (the slice of data it addresses,
 * one element for scatter_elements).  plan/ turns the arrays of a checked call
 * into such a plan; walk/ walks it in C order and calls a kernel (kernels/) on
 * each block.  Other strategies (the direct loops of a 1-D call, scatterops.at's
 * offsets, the Dask routing) call the kernels without a plan; each gives the
 * bits of that walk.  Kernels see trusted byte offsets only.
 *
 * Base knows nothing of plans, kernels or Python objects; it includes NumPy's
 * headers for npy_intp and friends (and with them Python.h).
 */
#ifndef SO_BASE_H
#define SO_BASE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* NumPy's C-API table: defined (and imported) in numpy_api.c only */
#define PY_ARRAY_UNIQUE_SYMBOL scatterops_ARRAY_API
#ifndef SCATTEROPS_MODULE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <pthread.h>
#include <string.h>

/* Group dims: up to the updates' rank; block dims: up to data's rank. */
#define SO_MAXDIMS 64

/* numpy_api.c: import NumPy's C API into the table (0, or -1 with an exception). */
int so_import_numpy(void);

/* Whether the x86-64 vector paths (AVX-512 and AVX2 compaction, AVX2
 * transposed copy, F16C conversions, CPUID) are compiled in: with GCC or clang
 * on x86-64, unless the build is portable (SCATTEROPS_PORTABLE=1 in setup.py
 * defines SCATTEROPS_PORTABLE).  Without them only the scalar loops exist, as
 * on any other machine. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(SCATTEROPS_PORTABLE)
#define SO_X86_VECTOR 1
#else
#define SO_X86_VECTOR 0
#endif

/* cpu.c: whether the CPU can run the F16C conversions or the AVX-512 (F, DQ)
 * or AVX2 compaction, and the OS saves their registers (0 without
 * SO_X86_VECTOR, or once turned off by so_cpu_disable) */
enum { SO_CPU_F16C = 0, SO_CPU_AVX512 = 1, SO_CPU_AVX2 = 2, SO_CPU_NFEATURES = 3 };
int so_cpu_has(int feature);
void so_cpu_disable(int feature);
/* cpu.c: the bytes of one core's L1 data (level 1) or L2 (level 2) cache, or
 * of the L3 (level 3) that core is in (32 MiB when nothing says) */
npy_intp so_cache_bytes(int level);

/* threads.c: the most worker threads the pool keeps; a thread count is capped
 * below it (py/settings.c) */
#define SO_POOL_MAX 1024
/*
 * threads.c: how a long call stops early (Ctrl-C).  Work is done in pieces of
 * about SO_PIECE elements; before each piece a thread asks so_stopped(poll).
 * On the calling thread (the one that made the poll) that runs check(ctx), at
 * most every SO_POLL_INTERVAL_NS; a nonzero answer sets stop, which every
 * thread of the call reads: each stops at its next piece.  check is the upper
 * layer's (py/interrupt.c: the signals); a NULL poll never stops.
 */
#define SO_PIECE ((npy_intp)1 << 18)
#define SO_POLL_INTERVAL_NS ((npy_int64)5000000)
typedef struct {
    int (*check)(void *ctx);
    void *ctx;
    pthread_t caller;
    int stop;               /* read and set atomically */
    npy_int64 next_ns;      /* the caller's next check (monotonic clock) */
} so_poll;
void so_poll_init(so_poll *poll, int (*check)(void *), void *ctx);
/* a function, not an inline in this header: it runs once a piece, and a header
 * that calls into its own layer's files would tie them in a circle */
int so_stopped(so_poll *poll);

/* threads.c: fn on each of the n tasks (size bytes apart from tasks): task 0 on
 * the calling thread, the others on new threads, joined before it returns (a
 * task whose thread cannot be made runs on the calling thread).  Returns the
 * number of threads that ran. */
int so_run_tasks(void *(*fn)(void *), void *tasks, size_t size, int n);
/* threads.c: so_run_tasks whose caller, once its own tasks are done, keeps
 * asking poll while it waits for the others (poll may be NULL). */
int so_run_tasks_polled(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll);
/* threads.c: so_run_tasks_polled for a kind of job (0 <= kind < SO_JOB_KINDS,
 * chosen by the caller; -1: none) that learns whether threads pay for it.
 * Returns 0, having run nothing, when the caller should run its call on its
 * own thread in one piece: another call has the pool, or jobs of this kind
 * came late (the caller ran every task itself, the job took more than three
 * quarters of what the caller alone would have at its own pace, or the caller
 * was off its CPU a fifth of its time) and the
 * pool is backing off: each late job doubles the number of the kind's next
 * jobs declined (2, 4, ... SO_LATE_BACKOFF_MAX), each on time halves it.
 * Else the threads that ran. */
#define SO_JOB_KINDS 1024
/* threads.c: whether the next job of this kind would run on its caller alone
 * (the pool backing off it); if so it counts as that job: for a caller with
 * a faster one-thread form than the job's tasks run one after another. */
int so_backing_off(int kind);
#define SO_LATE_BACKOFF_MAX 64
int so_run_tasks_report(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll,
                        int kind);
/* threads.c: so_run_tasks_report, and when it ran nothing, the tasks one after
 * another on the caller (for tasks that split work evenly, as a copy's) */
void so_run_tasks_kind(void *(*fn)(void *), void *tasks, size_t size, int n, so_poll *poll,
                       int kind);
/* The kinds: walk/split.c's splits below SO_JOB_KIND_PARTIAL; call/partial_outputs.c's
 * shares by the power of two of the updates; the check beside the walk
 * (call/checked_walk.c); a parallel copy and index check by the power of two of their
 * bytes; call/fold.c's pass by the power of two of its values. */
#define SO_JOB_KIND_PARTIAL 640
#define SO_JOB_KIND_SIDE_CHECK 768
#define SO_JOB_KIND_COPY 832
#define SO_JOB_KIND_CHECK 896
#define SO_JOB_KIND_FOLD 960
/* threads.c: turn the cost model (walk/split.c's choice, the pool's back-off)
 * on or off -- tests only: off, every split that can be made is made and no
 * kind backs off; either way what the back-off learnt is forgotten; returns
 * the state before.  so_cost_model_on: whether on. */
int so_set_cost_model(int on);
int so_cost_model_on(void);
/* threads.c: what became of the jobs of a kind since the module loaded, into
 * out[SO_TALLY_*]: jobs run on the pool; of those, late because the caller ran
 * every task, because it waited too long, because it was off its CPU; jobs
 * declined while the kind backed off; jobs handed back because another call
 * had the pool.  Returns whether any is nonzero. */
enum {
    SO_TALLY_JOBS, SO_TALLY_CALLER_RAN_ALL, SO_TALLY_WAITED, SO_TALLY_OFF_CPU,
    SO_TALLY_DECLINED, SO_TALLY_POOL_BUSY, SO_TALLY_FIELDS
};
int so_job_tally(int kind, long out[SO_TALLY_FIELDS]);
/* the power of two of n (0 for n < 2), for a kind */
static inline int so_log2(npy_intp n)
{
    int lg = 0;
    while (lg < 62 && ((npy_intp)1 << (lg + 1)) <= n) lg++;
    return lg;
}
/* threads.c: the most tasks one set of tasks of this calling thread was split
 * into (n of a so_run_tasks*, whoever ran them; 0 for none, or only sets of one
 * task) since it last asked; resets it to 0 */
int so_threads_asked_take(void);
/* threads.c: an array of *n tasks of size bytes for so_run_tasks, or -- when
 * *n <= 1 or memory is short -- the caller's single task one, with *n set to 1;
 * so_task_array_free(tasks, one) frees what it allocated. */
void *so_task_array(void *one, size_t size, int *n);
void so_task_array_free(void *tasks, void *one);

/* copy.c: memcpy on up to nthreads threads (large copies only; the largest
 * stored past the caches); returns 1 if poll stopped it (dst then holds part of
 * src), else 0.  dst and src must not overlap.  so_set_stream_min: copies of at
 * least nbytes are streamed from now on (-1: the rule in copy.c); the last
 * value set. */
int so_parallel_copy(char *dst, const char *src, size_t nbytes, int nthreads, so_poll *poll);
npy_intp so_set_stream_min(npy_intp nbytes);
/* copy.c: dst (rows, cols) C-ordered = src, a (cols, rows) C-ordered array,
 * transposed; items of isz bytes (no references); 1 if poll stopped it. */
int so_transpose_copy(char *dst, const char *src, npy_intp rows, npy_intp cols, npy_intp isz,
                      int nthreads, so_poll *poll);

/* The integer dtypes an index array may have, read as they are (native byte
 * order; no conversion to intp): X(name, C type, signed). */
#define SO_INDEX_TYPES(X)         \
    X(i8, npy_int8, 1)            \
    X(i16, npy_int16, 1)          \
    X(i32, npy_int32, 1)          \
    X(i64, npy_int64, 1)          \
    X(u8, npy_uint8, 0)           \
    X(u16, npy_uint16, 0)         \
    X(u32, npy_uint32, 0)         \
    X(u64, npy_uint64, 0)
#define SO_IX_ENUM(NAME, T, S) SO_IX_##NAME,
enum so_index_type { SO_INDEX_TYPES(SO_IX_ENUM) SO_IX_NTYPES };
#undef SO_IX_ENUM

/* The index type of an array of dtype d, or -1 (byte-swapped, not an integer). */
static inline int
so_index_type(PyArray_Descr *d)
{
    int tn = d->type_num, sz = (int)PyDataType_ELSIZE(d);
    int k = sz == 1 ? 0 : sz == 2 ? 1 : sz == 4 ? 2 : sz == 8 ? 3 : -1;
    if (k < 0 || !PyArray_ISNBO(d->byteorder)) return -1;
    if (PyTypeNum_ISSIGNED(tn)) return SO_IX_i8 + k;
    if (PyTypeNum_ISUNSIGNED(tn)) return SO_IX_u8 + k;
    return -1;
}

/* The bytes of a value of index type t (the order of SO_INDEX_TYPES: 1, 2, 4,
 * 8 bytes, signed then unsigned). */
static inline npy_intp so_index_size(int t)
{
    return (npy_intp)1 << (t & 3);
}

/* An index value, wherever it lies (user index arrays need not be aligned). */
static inline npy_intp so_load_intp(const char *p)
{
    npy_intp v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The rule of an index value, the one every check applies: a value v of a
 * signed dtype names a position on an axis of size s (0 <= s) when
 * -s <= v < s, a negative one counting from the end (so_wrap); one of an
 * unsigned dtype when v < s.  The signed test is one unsigned compare: v + s,
 * taken modulo 2^64, is below 2s exactly when -s <= v < s, for every int64 v
 * and every s below 2^63.  The kernels' element loops test the wrapped value
 * instead, (npy_uintp)so_wrap(v, s) < s, the same set (tests/test_mode.py's
 * boundary values hold every check to it). */
static inline int so_index_inside(npy_int64 v, npy_intp s)
{
    return (npy_uint64)v + (npy_uint64)s < 2 * (npy_uint64)s;
}

static inline int so_index_inside_unsigned(npy_uint64 v, npy_intp s)
{
    return v < (npy_uint64)s;
}

static inline npy_intp so_wrap(npy_intp j, npy_intp size)
{
    return j + (j < 0 ? size : 0);
}

/* so_wrap, and any value still outside [0, size) becomes 0.  Every walk and
 * kernel reads an index through it: the values were checked before the walk
 * (or are checked while it writes a result nobody sees yet), but another thread
 * or a __del__ that the call runs may rewrite them in between; a rewritten
 * index then lands somewhere inside out, never outside it.  For checked
 * indices it is so_wrap. */
static inline npy_intp so_clamp(npy_intp j, npy_intp size)
{
    j = so_wrap(j, size);
    return (npy_uintp)j < (npy_uintp)size ? j : 0;
}

#endif

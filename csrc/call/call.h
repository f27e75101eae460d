/*
 * call/call.h: the call layer -- a checked call described without Python
 * (so_call), the interface through which it asks the binding for what needs
 * NumPy or the interpreter (so_host), and the strategies that run such a call.
 *
 * The binding (py/) parses and converts the arguments, fills an so_call from
 * them and hands it here with an so_host; the call layer chooses a strategy
 * (the thresholds: call/cost.h), builds its plans (plan/) and runs them (walk/)
 * or its own loops (kernels/).  It makes no Python call and raises nothing:
 * every outcome comes back as an so_status, a bad index with its position,
 * and the binding turns it into a result or an exception.
 *
 * direct.c          the direct form of a 1-D call: its check, its loop, its one pass
 * rows_direct.c     when a call on rows takes the direct form
 * partial_outputs.c the direct form on several threads in private partial outputs
 * checked_walk.c    out of place, the index check fused with the walk
 * general_way.c     the plan and its walk, the mean, the fused copy of data
 * flat_targets.c    where each update lands, for the dtypes without a C loop
 * cost.c            the cost model's numbers as the walk takes them
 */
#ifndef SO_CALL_H
#define SO_CALL_H

#include "base/base.h"
#include "base/array.h"
#include "kernels/kernels.h"
#include "kernels/at_wide.h"
#include "plan/plan.h"
#include "walk/walk.h"
#include "call/cost.h"

/* mode=: what an index outside its axis means (py/mode.c applies it) */
enum { SO_MODE_RAISE, SO_MODE_WRAP, SO_MODE_CLIP, SO_MODE_DROP, SO_NMODES };

/* A checked call: every argument normalised, its index values not yet known
 * to be in range. */
typedef struct {
    int kind;               /* SO_UPDATE, SO_ND, SO_ELEMENTS */
    int op;                 /* the kernel's op: SO_NONE .. SO_MIN (SO_ADD for a mean) */
    int mean;               /* reduction "mean": the sums are divided at the end */
    int include_self;
    int axis;               /* in [0, data.ndim); 0 for scatter_nd */
    int mode;               /* SO_MODE_*: what an index outside means (the binding applies it) */
    so_array data;          /* rank >= 1 */
    so_array idx;           /* integers, native byte order, of any width */
    so_array upd;           /* data's dtype and the shape the kind requires */
    so_array out;           /* the user's out, or handle NULL: none */
    npy_intp nupd, nidx;    /* the number of update elements and of index values */
    int typed;              /* kn is the C kernel of this call; 0: none (the NumPy fallback) */
    so_kernel kn;
    int nthreads;           /* the threads the call may use */
} so_call;

/* Whether the call writes into an out of the user's (else into a fresh result). */
static inline int
so_call_has_out(const so_call *c)
{
    return c->out.handle != NULL;
}

/* What the call layer asks of the binding.  Every function returns 0, or -1
 * with the binding's error recorded (no memory, or Ctrl-C during a copy):
 * the call then ends with SO_FAILED.  An array the binding makes comes with
 * a handle the call layer gives back (release) unless it is the result. */
typedef struct so_host so_host;
struct so_host {
    /* *copy = a fresh C-ordered copy of src */
    int (*fresh_copy)(so_host *h, const so_array *src, so_array *copy);
    /* *a = a fresh C-ordered array of like's shape and dtype, its elements
     * unwritten (cached: in the output cache's memory, for a large one) */
    int (*new_array)(so_host *h, const so_array *like, int cached, so_array *a);
    /* dst = src, element by element (dst is the user's out) */
    int (*copy)(so_host *h, const so_array *dst, const so_array *src);
    void (*release)(so_host *h, so_array *a);
    /* a long phase without the interpreter's lock, stoppable by Ctrl-C: unlock
     * gives the poll to pass down; relock returns -1 if it stopped the phase */
    so_poll *(*unlock)(so_host *h);
    int (*relock)(so_host *h);
    /* the same poll for a phase that keeps the lock (a kernel that needs it),
     * ended by relock as well */
    so_poll *(*poll)(so_host *h);
    /* called where the check of the index values ends (the tests' hook) */
    void (*checked)(so_host *h, const so_array *idx);
};

/* The outcome of a strategy. */
typedef enum {
    SO_DONE,                /* *result holds the result (a fresh array, or out) */
    SO_NOT_TAKEN,           /* the call is not of this strategy's form: nothing done */
    SO_BAD_INDEX,           /* an index outside at flat C-order position *bad; nothing written */
    SO_NO_MEMORY,           /* nothing written */
    SO_FAILED               /* the host's error; *in_place: out may hold part of the call */
} so_status;

/* The size each index component is checked against (the axis of data it
 * indexes) for a call of kind along axis with indices of idx_ndim dims
 * idx_dims into data of dims data_dims; returns their number. */
static inline int
so_index_bounds(int kind, int axis, int idx_ndim, const npy_intp *idx_dims,
                const npy_intp *data_dims, npy_intp *bounds)
{
    int nbounds = 1, d;
    if (kind == SO_ND) {
        nbounds = (int)idx_dims[idx_ndim - 1];
        for (d = 0; d < nbounds; d++) bounds[d] = data_dims[d];
    }
    else {
        bounds[0] = data_dims[axis];
    }
    return nbounds;
}

static inline int
so_call_bounds(const so_call *c, npy_intp *bounds)
{
    return so_index_bounds(c->kind, c->axis, c->idx.ndim, c->idx.dims, c->data.dims, bounds);
}

/* A C-ordered scratch array of the call layer's own (a mask, counts): zeroed
 * memory of like's shape, itemsize bytes an element, freed with free(a.bytes);
 * so_scratch_zeros returns -1 without memory.  It lives where it was made
 * (a.strides points into it). */
typedef struct {
    so_array a;
    npy_intp strides[SO_MAXDIMS];
} so_scratch;
int so_scratch_zeros(so_scratch *s, const so_array *like, npy_intp itemsize);

/* A call in its direct form: the loop (by element, direct.c's gate; by row of
 * f elements, rows_direct.c's), the index type, the number n of index values
 * and the byte step us from one update (row) to the next. */
typedef struct {
    so_indexed_fn elems;
    so_rows_fn rows;
    int itype;
    npy_intp n, f, us;
} so_direct_form;

/* rows_direct.c: 1 with *form's rows, f, n, us and itype set if the call takes
 * the direct form on rows, else 0 (-1: the host failed); so_rows_direct_calls
 * counts the calls that did */
int so_direct_rows(const so_call *c, so_host *h, so_direct_form *form);
extern unsigned long so_rows_direct_calls;

/* partial_outputs.c: the threads a call of the direct form on n index values
 * into an out of size elements runs on in private partial outputs (an
 * order-free reduction: integer add, sub, mul, max, min with include_self), 1
 * for none; so_run_partials runs form's loop so into o (step os, a work array
 * the call may drop): -1 done, the position of the first bad index,
 * SO_CHECK_STOPPED, or SO_PARTIAL_DECLINED with nothing written (the pool
 * declined, no memory: the caller runs its loop on one thread).
 * so_partial_calls counts the calls that ran so. */
#define SO_PARTIAL_DECLINED ((npy_intp)-3)
int so_partial_threads(const so_call *c, npy_intp n, npy_intp size, int nthreads);
npy_intp so_run_partials(const so_call *c, const so_direct_form *form, char *o, npy_intp os,
                         npy_intp size, int nthreads, so_poll *poll);
extern unsigned long so_partial_calls;

/* direct.c: the call in its direct form (1-D or on rows, typed, indices of any
 * integer dtype read as they are): SO_DONE with *result, SO_NOT_TAKEN,
 * SO_BAD_INDEX (*bad: the position in the index as the binding holds it),
 * SO_NO_MEMORY or SO_FAILED (*in_place set). */
so_status so_call_direct(const so_call *c, so_host *h, so_array *result, npy_intp *bad,
                         int *in_place);
/* direct.c: how many calls (and of them means, and one-pass calls) ran in the
 * direct form */
extern unsigned long so_direct_calls, so_direct_means, so_direct_one_pass;

/* checked_walk.c: out of place, a typed call with include_self and no mean,
 * its index check fused with the walk into a fresh result: SO_DONE with
 * *result; SO_NOT_TAKEN (not of these shapes: the binding checks first);
 * SO_BAD_INDEX with nothing written, *result dropped (some index is outside:
 * the binding's check finds the first); SO_FAILED. */
so_status so_call_fresh_checked(const so_call *c, so_host *h, so_array *result);

/* general_way.c: the updates applied by the plan's walk to out (the user's
 * out, or a fresh copy of data), which already holds data: SO_DONE,
 * SO_NO_MEMORY, or SO_FAILED (stopped: out holds a C-order prefix of the
 * updates, or for a mean in place the mean of those applied). */
so_status so_call_apply(const so_call *c, so_host *h, const so_array *out);
/* general_way.c: whether the call runs out of place with the copy of data
 * fused into its walk (a large C-contiguous data: SO_FUSED_MIN_BYTES), and
 * that run: SO_DONE with *result, or SO_FAILED */
int so_call_fuses_copy(const so_call *c);
so_status so_call_fresh_fused(const so_call *c, so_host *h, so_array *result);
/* general_way.c: whether a large call on several threads keeps its 1-D
 * contiguous indices in their own dtype: where the owned split runs it
 * (walk/owned.c reads any dtype; the plain walk of such a plan runs as one
 * owner, plan/validate.c checks it as it is), and the copy to intp is saved
 * (docs/design.md, "Checking while walking"). */
int so_call_keeps_index_dtype(const so_call *c);

/* flat_targets.c: targets (npy_intp, of the updates' shape) = the flat C-order
 * position in work (the call's output, C-ordered) of each update element:
 * SO_DONE, or SO_FAILED (poll stopped it; or the arrays do not fit together) */
so_status so_call_flat_targets(const so_call *c, const so_array *work, const so_array *targets,
                               so_poll *poll);

/* at_wide_run.c: _core.at with b one float64 value (py/at_scalar_b.c reads
 * the index, kernels/at_wide.h's so_wide_kernel gives the loop): whether a
 * value of p[0..n) is outside an axis of this size; and the loop's run over
 * the checked positions p[0..n) (each with the m byte offsets rest): 0, or
 * -1 if the poll stopped it. */
int so_call_any_outside(const npy_intp *p, npy_intp n, npy_intp size);
int so_call_run_wide(char *o, npy_intp aos, npy_intp size, const npy_intp *p, npy_intp n,
                     const npy_intp *rest, npy_intp m, double b, so_wide_fn wide, so_host *h);

#endif

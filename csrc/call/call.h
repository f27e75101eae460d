/*
 * call/call.h: the call layer -- a checked call described without Python
 * (so_call), the interface through which it asks the binding for what needs
 * NumPy or the interpreter (so_host), and the strategies that run such a call.
 *
 * The binding (py/) parses and converts the arguments, fills an so_call from
 * them and hands it here with an so_host; the call layer chooses a strategy
 * in one function (choose.c, from the thresholds of call/cost.h), builds its
 * plans (plan/) and runs them (walk/) or its own loops (kernels/).  It makes no Python call and raises nothing:
 * every outcome comes back as an so_status, a bad index with its position,
 * and the binding turns it into a result or an exception.
 *
 * fold.c            an expanded index written out in full, recognised: its column
 * choose.c          which strategy runs a call (so_call_choose): the one decision
 * execute.c         the call run as chosen: the index check, the output, the mode's
 *                   bad index reported (so_call_execute)
 * direct.c          the direct form, on elements or on rows: its check, its loop,
 *                   its one pass
 * partial_outputs.c the direct form on several threads in private partial outputs
 * checked_walk.c    out of place, the index check fused with the walk
 * general_way.c     the plan and its walk, the mean, the fused copy of data
 * flat_targets.c    where each update lands, for the dtypes without a C loop
 * cost.c            the cost model's numbers as the walk takes them
 * at_wide_run.c     _core.at with b one float64 value: the check, the loop's run
 * mode_transform.c  mode= applied to the index values the check found outside
 * route_blocks.c    _core.route: scatterops.dask's chunk of updates grouped by block
 * at_index_arrays.c _core.at_apply: scatterops.at with an index array on every axis
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

/* mode=: what an index outside its axis means (mode_transform.c applies it) */
enum { SO_MODE_RAISE, SO_MODE_WRAP, SO_MODE_CLIP, SO_MODE_DROP, SO_NMODES };

/* The position in [0, s) of a value on an axis of size s under mode= (raw: its
 * bits as uint64, is_unsigned: of an unsigned dtype): 0 with *pos set, 1 if
 * mode="drop" skips its update, -1 if it raises (any value outside under
 * "raise"; under "wrap" and "clip" on an axis of size 0: nothing to map to).
 * mode_transform.c and route_blocks.c place every value by it. */
static inline int
so_mode_position(npy_uint64 raw, int is_unsigned, npy_intp s, int mode, npy_intp *pos)
{
    const npy_int64 v = (npy_int64)raw;
    if (is_unsigned ? so_index_inside_unsigned(raw, s) : so_index_inside(v, s)) {
        *pos = (npy_intp)(v < 0 ? v + s : v);
        return 0;
    }
    if (mode == SO_MODE_RAISE) return -1;
    if (mode == SO_MODE_DROP) return 1;
    if (s == 0) return -1;
    if (mode == SO_MODE_WRAP) {
        npy_int64 r;
        if (is_unsigned) {
            *pos = (npy_intp)(raw % (npy_uint64)s);
            return 0;
        }
        r = v % (npy_int64)s;
        *pos = (npy_intp)(r < 0 ? r + s : r);
    }
    else {                          /* clip: below -s to 0, at or above s to s - 1 */
        *pos = !is_unsigned && v < 0 ? 0 : s - 1;
    }
    return 0;
}

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
    int indices_inside;     /* every index value is known to be inside (the mode's transform made
                             * them so): no check, no strategy that checks as it runs */
    int out_refs;           /* out's dtype holds references (object elements) */
    void *intp_dtype;       /* the dtype of intp indices (so_array's dtype), for choose.c */
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
    /* *idx = a read-only view, of the index's dims and these strides, of kept's
     * memory (kept, which the binding made, is handed over): the call's index
     * from now on */
    int (*index_view)(so_host *h, so_array *kept, const npy_intp *strides, so_array *idx);
    /* *idx = the call's indices as native intp (its handle the binding's) */
    int (*intp_indices)(so_host *h, so_array *idx);
    /* the updates of c applied to work (which holds data) by NumPy's ufunc.at
     * on the flat targets of so_call_flat_targets: a dtype without a C loop */
    int (*generic)(so_host *h, const so_call *c, const so_array *work);
};

/* The outcome of a strategy. */
typedef enum {
    SO_DONE,                /* *result holds the result (a fresh array, or out) */
    SO_BAD_INDEX,           /* an index outside at flat C-order position *bad; nothing written */
    SO_NO_MEMORY,           /* nothing written */
    SO_FAILED               /* the host's error; *in_place: out may hold part of the call */
} so_status;

/* The size each index component is checked against (the axis of data it
 * indexes) for a call of kind along axis with indices of idx_ndim dims
 * idx_dims into data of data_ndim dims data_dims; returns their number.  Only
 * an empty scatter_nd index array may have more components than data has
 * axes: it holds no index to check, and gets none (0). */
static inline int
so_index_bounds(int kind, int axis, int idx_ndim, const npy_intp *idx_dims,
                int data_ndim, const npy_intp *data_dims, npy_intp *bounds)
{
    int nbounds = 1, d;
    if (kind == SO_ND) {
        if (idx_dims[idx_ndim - 1] > data_ndim) return 0;
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
    return so_index_bounds(c->kind, c->axis, c->idx.ndim, c->idx.dims, c->data.ndim, c->data.dims,
                           bounds);
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

/* A call in its direct form: the loop (by element, or by row of f elements),
 * the index type, the number n of index values and the byte step us from one
 * update (row) to the next. */
typedef struct {
    so_indexed_fn elems;
    so_rows_fn rows;
    int itype;
    npy_intp n, f, us;
} so_direct_form;

/* The strategies, in choose.c's order of preference: the direct form on
 * elements or on rows (direct.c), out of place the check fused with the walk
 * by the owned split or beside the walk (checked_walk.c), the copy of data
 * fused with the walk, the general way (general_way.c), NumPy's ufunc.at for
 * a dtype without a C loop (the host's generic); so_strategy_names: their
 * names, as _core._choose gives them. */
typedef enum {
    SO_RUN_DIRECT,
    SO_RUN_DIRECT_ROWS,
    SO_RUN_CHECKED_BY_OWNERS,
    SO_RUN_CHECKED_BESIDE,
    SO_RUN_FUSED_COPY,
    SO_RUN_GENERAL,
    SO_RUN_GENERIC,
    SO_NSTRATEGIES
} so_strategy;
extern const char *const so_strategy_names[SO_NSTRATEGIES];

/* What choose.c decided for a call: the strategy and how it runs. */
typedef struct {
    so_strategy strategy;
    so_strategy walk;               /* what runs once every index is checked: the fused
                                     * copy, the general way or the fallback */
    so_direct_form form;            /* the direct forms' loop */
    const so_mean_indexed *mean;    /* SO_RUN_DIRECT of a mean: its loops, else NULL */
    int partial_threads;            /* SO_RUN_DIRECT: private partial outputs on this many
                                     * threads (partial_outputs.c), 1: none */
    int one_pass;                   /* the direct forms: the loop is the only reader of the
                                     * indices (direct.c), else the check runs first */
    int expanded;                   /* SO_RUN_DIRECT_ROWS: an expanded index, its column checked first */
    int intp_indices;               /* the strategies after the direct form: the host makes
                                     * the indices intp first */
    int cached_result;              /* SO_RUN_CHECKED_BY_OWNERS: the fresh result in the output
                                     * cache's memory */
    int mean_counts_small;          /* the general way's mean counts hits element by element */
} so_choice;

/* choose.c: the strategy for c and how it runs, into *ch */
void so_call_choose(const so_call *c, so_choice *ch);

/* fold.c: scatter_elements' indices constant along each row of their last dim
 * (an expanded index written out) become a stride-0 view of a copy of their
 * first column (the host's index_view): 1 if folded, 0 if not, -1 the host
 * failed; so_folded_calls counts the folds */
int so_call_fold(so_call *c, so_host *h);
extern unsigned long so_folded_calls;

/* execute.c: c run as so_call_choose decides, its index folded first (fold.c): SO_DONE with *result,
 * SO_BAD_INDEX with nothing written (*bad: a bad index's flat C-order position
 * in the index as the binding holds it, the first under mode "raise"; the
 * binding raises, or applies the mode and runs the call again with
 * indices_inside), SO_NO_MEMORY, or SO_FAILED (*in_place: out may hold part of
 * the call).  The host may replace c->idx (its intp form). */
so_status so_call_execute(so_call *c, so_host *h, so_array *result, npy_intp *bad, int *in_place);

/* direct.c: how many calls (and of them means, and one-pass calls) ran in the
 * direct form on elements; how many on rows */
extern unsigned long so_direct_calls, so_direct_means, so_direct_one_pass;
extern unsigned long so_rows_direct_calls;

/* partial_outputs.c: the direct form's loop so (step os, a work array the call
 * may drop) on nthreads threads in private partial outputs (an order-free
 * reduction: integer add, sub, mul, max, min with include_self): -1 done, the
 * position of the first bad index, SO_CHECK_STOPPED, or SO_PARTIAL_DECLINED
 * with nothing written (the pool declined, no memory: the caller runs its loop
 * on one thread).  so_partial_calls counts the calls that ran so. */
#define SO_PARTIAL_DECLINED ((npy_intp)-3)
npy_intp so_run_partials(const so_call *c, const so_direct_form *form, char *o, npy_intp os,
                         npy_intp size, int nthreads, so_poll *poll);
extern unsigned long so_partial_calls;

/* direct.c: the call in its direct form as ch says: SO_DONE with *result,
 * SO_BAD_INDEX (*bad: the position in the index as the binding holds it),
 * SO_NO_MEMORY or SO_FAILED (*in_place set). */
so_status so_call_direct(const so_call *c, so_host *h, const so_choice *ch, so_array *result,
                         npy_intp *bad, int *in_place);

/* checked_walk.c: out of place, a typed call with include_self and no mean,
 * its index check fused with the walk into a fresh result (ch's strategy
 * says which way): SO_DONE with *result; SO_BAD_INDEX with nothing written,
 * *result dropped (some index is outside: execute.c's check finds the first);
 * SO_FAILED. */
so_status so_call_fresh_checked(const so_call *c, so_host *h, const so_choice *ch,
                                so_array *result);

/* general_way.c: the updates applied by the plan's walk to out (the user's
 * out, or a fresh copy of data), which already holds data (a mean's hits
 * counted element by element if ch says so): SO_DONE, SO_NO_MEMORY, or
 * SO_FAILED (stopped: out holds a C-order prefix of the updates, or for a mean
 * in place the mean of those applied). */
so_status so_call_apply(const so_call *c, so_host *h, const so_choice *ch, const so_array *out);
/* general_way.c: out of place, the copy of a large C-contiguous data fused
 * into the walk: SO_DONE with *result, or SO_FAILED */
so_status so_call_fresh_fused(const so_call *c, so_host *h, so_array *result);

/* flat_targets.c: targets (npy_intp, of the updates' shape) = the flat C-order
 * position in work (the call's output, C-ordered) of each update element:
 * SO_DONE, or SO_FAILED (poll stopped it; or the arrays do not fit together) */
so_status so_call_flat_targets(const so_call *c, const so_array *work, const so_array *targets,
                               so_poll *poll);

/* at_wide_run.c: _core.at with b one float64 value (py/at_scalar_b.c reads
 * the index, kernels/at_wide.h's so_wide_kernel gives the loop): whether a
 * value of p[0..n) is outside an axis of this size (plan/check_run.c's check);
 * and the loop's run over
 * the checked positions p[0..n) (each with the m byte offsets rest): 0, or
 * -1 if the poll stopped it. */
int so_call_any_outside(const npy_intp *p, npy_intp n, npy_intp size);
int so_call_run_wide(char *o, npy_intp aos, npy_intp size, const npy_intp *p, npy_intp n,
                     const npy_intp *rest, npy_intp m, double b, so_wide_fn wide, so_host *h);

/* mode_transform.c: c->mode ("wrap", "clip" or "drop") applied to the values
 * of c's indices, given as v: a fresh C-ordered intp copy of them (c->idx's
 * shape).  so_mode_map: "wrap" or "clip", v mapped in place (u: the same
 * values as uint64 where the user's dtype was uint64, whose values above
 * intp's range were clamped in v; else NULL); returns 1 if an axis of size 0
 * left its values as they are (the check then reports them), else 0.
 * so_mode_keep: "drop", keep[g] = every component of index tuple g inside (the
 * so_mode_groups(c) tuples: index values, or scatter_nd's rows), returns how
 * many are kept.  so_mode_kept_tuples: scatter_elements under "drop", t (kept
 * x c->idx.ndim) = the kept updates' whole index tuples in C order of their
 * positions: the call as a scatter_nd. */
static inline npy_intp
so_mode_groups(const so_call *c)
{
    npy_intp bounds[SO_MAXDIMS];
    const int nb = so_call_bounds(c, bounds);
    return c->kind == SO_ND ? (nb > 0 ? c->nidx / nb : 0) : c->nidx;
}
int so_mode_map(const so_call *c, npy_intp *v, const npy_uint64 *u);
npy_intp so_mode_keep(const so_call *c, const npy_intp *v, npy_bool *keep);
void so_mode_kept_tuples(const so_call *c, const npy_intp *v, const npy_bool *keep, npy_intp *t);

/* route_blocks.c: _core.route's passes, scatterops.dask's routing of one chunk
 * of updates to the blocks of data (py/route.c reads the arguments into an
 * so_route and its payloads). */
/* What the passes read: n rows of k index components, and how each component
 * maps to a block of its axis.  scatter_elements (elements != 0) has k == 1
 * and writes, instead of the local component, the flat offset in the block. */
typedef struct {
    const char *idx;
    npy_intp n, row_stride, col_stride;
    int item, is_unsigned;          /* the index dtype: item size, signedness */
    int k, mode;
    npy_intp size[SO_MAXDIMS], nblocks[SO_MAXDIMS];
    npy_uint64 recip[SO_MAXDIMS];   /* equal chunks: 2^64 / width, rounded up; 0: search */
    const npy_intp *starts[SO_MAXDIMS];     /* nblocks + 1 block starts */
    int elements;
    const npy_intp *pre_map, *post_map, *axis_len;
    npy_intp naxis, npost, block_post;
} so_route;

/* A payload: pre x n x post items of item bytes, any strides, copied into a
 * C-ordered pre x nkept x post array with the rows grouped as the indices. */
typedef struct {
    const char *in;
    char *out;
    npy_intp pre, post, item, spre, srow, spost;
} so_payload;

/* so_route_axis: axis j of r, of this size, cut into blocks at the nstarts
 * block starts st (0 .. size, non-decreasing; st outlives r), *ntargets
 * multiplied by its number of blocks: 0, or the SO_ROUTE_* fault.
 * so_route_count: pass 1, count[t] += the rows of block t (count zeroed,
 * *ntargets values): the rows kept, -1 at the first value in C order that
 * raises (*bad_row, *bad_j; so_route_value gives its raw bits), -2 the host
 * stopped it.  so_route_place: pass 2, the kept rows at their block's places:
 * their local index (k components, or scatter_elements' flat offset in the
 * block) into local_out (int32 if narrow, else intp), their rows of each
 * payload into its out: 0, -1 no memory (nothing written), -2 the host
 * stopped it part way. */
enum { SO_ROUTE_BAD_ENDS = 1, SO_ROUTE_DECREASING, SO_ROUTE_TOO_MANY_BLOCKS };
int so_route_axis(so_route *r, int j, npy_intp size, const npy_intp *st, npy_intp nstarts,
                  npy_intp *ntargets);
npy_uint64 so_route_value(const so_route *r, npy_intp row, int j);
npy_intp so_route_count(const so_route *r, npy_intp *count, npy_intp *bad_row, int *bad_j,
                        so_host *h);
int so_route_place(const so_route *r, const npy_intp *count, npy_intp ntargets, char *local_out,
                   int narrow, const so_payload *pay, int npay, npy_intp kept, so_host *h);

/* at_index_arrays.c: _core.at_apply, scatterops.at with an index array on
 * every axis of a view (py/at_offsets.c reads the arguments into an
 * so_at_arrays): every index value checked first (nothing written on a bad
 * one), then the updates applied by the typed kernel at the offsets of the
 * indexed elements in the view's memory, in C order of the broadcast shape,
 * without the interpreter's lock (the host's unlock).  SO_DONE; SO_BAD_INDEX,
 * nothing written; SO_NO_MEMORY; SO_FAILED: the host stopped it (memory holds
 * the updates of a C-order prefix), or with no host error an array does not
 * broadcast to dims or has no index type (nothing written). */
#define SO_AT_MAX_ARRAYS SO_MAXDIMS
typedef struct {
    int k;                                  /* index arrays, one per axis of the view */
    so_array arrays[SO_AT_MAX_ARRAYS];      /* integers of native byte order, aligned */
    npy_intp size[SO_AT_MAX_ARRAYS];        /* the size (>= 1) of the axis each addresses */
    npy_intp step[SO_AT_MAX_ARRAYS];        /* and its stride in elements of memory */
    int nd;                                 /* the arrays' broadcast shape, not empty */
    npy_intp dims[SO_MAXDIMS];
    so_array upd;                           /* memory's dtype, aligned, broadcasting to dims */
    char *memory;                           /* the view's elements from its lowest... */
    npy_intp span;                          /* ...span of them, contiguous */
    so_kernel kn;                           /* memory's typed kernel, needing no lock */
} so_at_arrays;
so_status so_call_at_arrays(const so_at_arrays *c, so_host *h);

#endif

/*
 * walk/walk.h: the walk of a plan -- the loop that writes memory -- on one
 * thread or split over several by output ownership, the copy of data fused into
 * it, and the mean's driver.  No Python calls unless the kernel needs the GIL;
 * every thread count is a parameter.
 *
 * walk.c     so_run: the groups in C order, a kernel call per block row
 * owned.c    a thread's share by index value: branch-free compaction of the
 *            owned groups (scalar, AVX-512, AVX2) and their walk
 * split.c    choosing the split, the tasks, the checked owned walk
 * fused.c    out of place: the copy of data and the walk in one pass
 * mean_walk.c reduction "mean": counting hits, the division of the hit blocks
 */
#ifndef SO_WALK_H
#define SO_WALK_H

#include "base/base.h"
#include "kernels/kernels.h"
#include "plan/plan.h"

/*
 * The per-call state of one walk (one thread's share): a copy of the plan,
 * narrowed to the share, and what the walk does besides applying updates.
 * With owned set, only the groups whose first index component (wrapped) lies
 * in [own_lo, own_hi) are applied; the others belong to another thread.
 */
typedef struct so_walk so_walk;
/* called by each owner after its walk, with its own walk (finish_ctx beside) */
typedef void (*so_walk_hook)(const so_walk *w, void *ctx);

struct so_walk {
    so_plan plan;
    int owned;
    npy_intp own_lo, own_hi;
    /* with owned: when not NULL, every index value is checked as it is read
     * (k == 1, no mask), a bad one sets *bad and is applied as 0 (call/checked_walk.c drops
     * the fresh result then) */
    int *bad;
    /* with owned, one component, no mask: when not NULL, hits[v] counts the
     * applied groups whose index value is v (reduction "mean", walk/mean_walk.c) */
    npy_intp *hits;
    /* with owned: when not NULL, run by the owner right after its walk, while
     * its blocks are still in its cache (the mean's division, walk/mean_walk.c) */
    so_walk_hook finish;
    void *finish_ctx;
    /* NULL, or asked between the pieces of a long walk (base.h) */
    so_poll *poll;
};

/* The numbers of the walk's cost model: how many threads a walk takes and
 * how it is split (split.c, fused.c, mean_walk.c read them).  The call layer
 * owns the values (call/cost.h: so_walk_cost_model) and passes them down with
 * the thread count, as it passes the thread count itself. */
typedef struct {
    npy_intp min_work_per_thread;   /* any split: update elements a thread */
    npy_intp min_block_run;         /* a split along a block dim: its elements a thread */
    npy_intp owned_min_near;        /* by index value into an out in L2: groups a thread */
    npy_intp min_owned_bytes;       /* by index value, scalar compaction: out's bytes */
    npy_intp owned_far_bytes;       /* by index value, AVX2, single elements: out beyond
                                     * this (or half of L3) */
    npy_intp mean_owners_ratio;     /* a mean's owners count hits per index value unless
                                     * the values outnumber the groups this many times */
    npy_intp mean_finish_per_thread; /* a mean's division: elements a thread */
    npy_intp fused_per_thread;      /* the fused copy: bytes of data a thread */
} so_walk_costs;

/* walk.c: the walk of the whole plan on this thread. */
void so_run(const so_plan *p, const so_kernel *kn);
/* walk.c: so_run in pieces asking poll (NULL: never stops); 1 if stopped
 * (the updates of a C-order prefix of the pieces applied), else 0. */
int so_run_polled(const so_plan *p, const so_kernel *kn, so_poll *poll);
/* walk.c: fn(pieces, ctx) on the pieces of the plans[0..n) (plans of the same
 * dims, narrowed together) in C order, each of about
 * piece elements, asking poll before each; with whole_groups a piece has
 * whole blocks (cut along group dims and winners only).  The plans are
 * restored after.  Returns 1 if stopped, else 0. */
typedef void (*so_piece_fn)(so_plan *const *piece, void *ctx);
int so_for_pieces(so_plan *const *plans, int n, npy_intp piece, int whole_groups, so_poll *poll,
                  so_piece_fn fn, void *ctx);
/* walk.c: the walk of w->plan with w's state (its share, checks, counts), then
 * w's finish hook if it is an owner. */
void so_walk_run(const so_walk *w, const so_kernel *kn);

/* split.c: where out of that many bytes lives: 0 in L1, 1 in L2, 2 beyond;
 * whether the owned split of single elements pays into an out of that many
 * bytes beyond L2 (the call layer's so_direct_form_pays weighs them too). */
int so_out_place(npy_intp bytes);
int so_owned_far_pays(npy_intp bytes, const so_walk_costs *c);
/* split.c: whether the owned split that a call of nupd single-element updates
 * into a 1-D out of size elements stride bytes apart would take is being
 * backed off (its workers came late: base/threads.c), counting this call as one it
 * declined; the direct form then runs it, faster on one thread than the
 * split's tasks one after another (docs/design.md, "Splitting a walk over
 * threads"). */
int so_direct_form_backs_off(npy_intp size, npy_intp stride, npy_intp nupd);
/* split.c: whether so_run_threaded would run this plan on several threads
 * now: a split applies, and its kind is not being backed off (if it is, this
 * call counts as one it declined).  For a caller with a one-thread form of its
 * own, faster than the walk on one thread (call/choose.c). */
int so_split_runs(const so_plan *p, const so_kernel *kn, int nthreads,
                  const so_walk_costs *c);
/* split.c: so_split_runs for the owned split alone: whether so_run_threaded
 * would split this plan by index value now (and so_owned_split_applies holds);
 * one choice of split, where the two asked one after the other make two. */
int so_owned_split_runs(const so_plan *p, const so_kernel *kn, int nthreads,
                        const so_walk_costs *c);
/* owned.c: whether the owned split compacts an axis of size elements, ios
 * bytes apart, several indices at a time (AVX-512, or AVX2 where its offsets
 * are exact). */
int so_vector_compaction_fits(npy_intp size, npy_intp ios);
/* split.c: the walk split over up to nthreads threads by output ownership,
 * each thread's share in pieces asking poll; returns the number of threads
 * that ran. */
int so_run_threaded(const so_plan *p, const so_kernel *kn, int nthreads,
                    const so_walk_costs *c, so_poll *poll);
/* split.c: whether so_run_threaded splits this plan by index value, and that
 * split with every index checked as it is read (only for plans with one index
 * component and no mask): returns 0 if an index was out of range, the out
 * then holds garbage; -1 (nothing done) if the plan is not split that way. */
int so_owned_split_applies(const so_plan *p, const so_kernel *kn, int nthreads,
                           const so_walk_costs *c);
int so_run_owned_checked(const so_plan *p, const so_kernel *kn, int nthreads,
                         const so_walk_costs *c, so_poll *poll);
/* split.c: that split with each owner counting the hits of its index values
 * in hits (isize[0] entries, zeroed) and then calling finish(w, ctx); returns
 * 1, or 0 (nothing done) if the plan is not split that way. */
int so_run_owned_counting(const so_plan *p, const so_kernel *kn, int nthreads,
                          const so_walk_costs *c, npy_intp *hits, so_walk_hook finish,
                          void *ctx, so_poll *poll);
/* walk.c: p narrowed to [lo, hi) of dim (a group dim, or gnd + a block dim). */
void so_narrow(so_plan *p, int dim, npy_intp lo, npy_intp hi);

/* fused.c: out of place, out fresh and laid out as data (src, nbytes): copy
 * data into out and run the plan in one pass over bands of out, on up to
 * nthreads threads; returns 0, having done nothing, if the plan does not own
 * bands of out (copy, then so_run_threaded). */
int so_run_copying(const so_plan *p, const so_kernel *kn, int nthreads,
                   const so_walk_costs *c, const char *src, npy_intp nbytes, so_poll *poll);

/* mean_walk.c: reduction "mean" on p->out with the add kernel: counts the hits per
 * destination slice or index value, adds, divides.  Returns 1 having done the
 * mean (or been stopped by poll: then, in_place, every element hit holds the
 * mean of the updates applied to it), 0 having done nothing (the plan is not
 * of that shape, or in_place with a poll needs the count in step with the add:
 * the caller counts per element, so_mean_counted). */
int so_mean_run(const so_plan *p, const so_kernel *add, PyArray_Descr *d, int include_self,
                int nthreads, const so_walk_costs *c, so_poll *poll, int in_place);
/* mean_walk.c: the counts per element (cp, into an npy_intp array of out's shape,
 * with the count kernel) and the add (p) on up to nthreads threads; in_place
 * with a poll, piece by piece in step, whole groups each, so that stopped the
 * counts are those of the updates applied.  Returns 1 if stopped. */
int so_mean_counted(const so_plan *p, const so_plan *cp, const so_kernel *add,
                    const so_kernel *count, int nthreads, const so_walk_costs *c,
                    so_poll *poll, int in_place);
/* mean_walk.c: divide the block at each destination of hits (from so_count_hits) by
 * its count + include_self, at every combination of the first lead group dims. */
void so_mean_finish_hits(const so_plan *p, PyArray_Descr *d, int lead, const npy_intp *hits,
                         npy_intp nhits, int include_self, int nthreads,
                         const so_walk_costs *c);
/* mean_walk.c: out (any strides) /= counts + include_self where counts (npy_intp, of
 * out's shape) > 0, for the dtypes with a division loop (else does nothing). */
void so_mean_finish(const so_array *out, const so_array *counts, int include_self);

#endif

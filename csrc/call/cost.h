/*
 * call/cost.h: the call layer's cost model -- every threshold that chooses how
 * a checked call runs (the GIL release, the direct form and its one pass, the
 * private partial outputs, the direct form on rows, the fused copy, the index
 * check while walking, the fold of an expanded index, the mean's counts), each
 * by name, with the predicates that read them.  The values are tuned on this
 * project's machines; docs/design.md ("How a call runs", "How many threads a
 * call uses", "Measurements behind the code") says why each is what it is.
 *
 * The walk's split over threads is decided below this layer, for every walk
 * (walk/split.c: along which dim, and whether the split by index value pays),
 * from numbers this layer owns: so_walk_cost_model (below), passed down with
 * the thread count.
 */
#ifndef SO_CALL_COST_H
#define SO_CALL_COST_H

#include "base/base.h"
#include "walk/walk.h"

/* Calls with at least this many indices or updates release the GIL and poll
 * for Ctrl-C; below it a call runs in one piece with the GIL. */
#define SO_GIL_RELEASE_MIN ((npy_intp)1 << 14)

/* The direct form (call/direct.c) reads its indices once, its loop testing each
 * as it reads it, from this many updates on; below it the check first. */
#define SO_ONE_PASS_MIN SO_GIL_RELEASE_MIN

/* Into out, the direct form's scratch copy of data (the one pass writes there,
 * copied into out once every index was good) pays for an out of at most one
 * core's L2, at least SO_ONE_PASS_MIN updates and twice out's elements; into an
 * out in L1 only with indices of 4 bytes or more (a narrower index's second
 * read costs little).  n updates into size elements of item bytes. */
static inline int
so_scratch_pays(npy_intp n, npy_intp size, npy_intp item, npy_intp index_item)
{
    npy_intp bytes = size * item;
    return n >= SO_ONE_PASS_MIN && n >= 2 * size && bytes <= so_cache_bytes(2) &&
           (index_item >= 4 || bytes > so_cache_bytes(1));
}

/* Private partial outputs (call/partial_outputs.c): a thread's share is at least
 * SO_PARTIAL_MIN_SHARE updates, and the updates at least SO_PARTIAL_MIN_RATIO
 * times out's elements (each partial output is filled and merged whole). */
#define SO_PARTIAL_MIN_SHARE ((npy_intp)1 << 15)
#define SO_PARTIAL_MIN_RATIO 4

/* A group reduction's pass (call/groups.c) on several threads, each into its
 * own partial result joined in member order, pays when the members are at
 * least SO_PARTIAL_MIN_RATIO times the cells and a partial (bytes) fits in a
 * quarter of one core's L2: beyond it the two threads' tables crowd the
 * caches and 10^6 members into 10^5 cells ran slower on two threads than on
 * one.  Argmax and argmin (heavy), whose members cost more, need only the
 * ratio. */
static inline int
so_group_partials_pay(npy_intp work, npy_intp ncells, npy_intp bytes, int heavy)
{
    return ncells * SO_PARTIAL_MIN_RATIO <= work && (heavy || bytes <= so_cache_bytes(2) / 4);
}

/* The direct form on rows (call/choose.c) on several threads: rows of more
 * than this many bytes go to the general way's split when it runs; narrower
 * rows stay on one thread (each owner of a split reads every index). */
#define SO_ROWS_ONE_THREAD_BYTES 128

/* Out of place, data from this many bytes on is copied into the fresh result
 * by the walk itself (walk/fused.c), in the output cache's memory. */
#define SO_FUSED_MIN_BYTES ((npy_intp)1 << 20)

/* Out of place, a fresh result of at least this many updates may have its
 * indices checked while the walk runs (the result dropped unseen on a bad
 * one); the check beside the walk on a second thread from SO_SIDE_CHECK_MIN
 * (below it, it saves less than a worker's wake-up costs). */
#define SO_OVERLAP_MIN ((npy_intp)1 << 16)
#define SO_SIDE_CHECK_MIN ((npy_intp)1 << 18)

/* The fold of an expanded index (call/fold.c): below SO_FOLD_MIN index values
 * the pass costs more than it can save; on several threads, a share of at
 * least SO_FOLD_PER_THREAD values each. */
#define SO_FOLD_MIN ((npy_intp)1 << 12)
#define SO_FOLD_PER_THREAD ((npy_intp)1 << 20)

/* A mean of n updates into an out of size elements counts its hits element by
 * element (the direct form's scratch pairs, or a count array on one thread)
 * while out is this small next to the updates; a larger out costs more in
 * passes over it than counting the hits per slice does. */
static inline int
so_mean_out_small(npy_intp size, npy_intp n)
{
    return size <= 4 * n + 1024;
}

/* The direct form's mean starts its scratch pairs from out and divides them
 * into it only where the indices point (a pass over the updates each, at
 * random) when out has more than 1.5 elements an update, else over all of out
 * (a pass over out each, in order).  docs/design.md, "A small mean: its pairs
 * where the indices point". */
static inline int
so_mean_pairs_at_hits(npy_intp size, npy_intp n)
{
    return 2 * size > 3 * n;
}

/* ---- the walk's split over threads (walk/split.c applies them) ------------
 *
 * Any split needs SO_MIN_WORK_PER_THREAD update elements a thread (less does
 * not pay for a worker's wake-up); a split along a block dim
 * SO_MIN_BLOCK_RUN elements of it a thread.  The split by index value makes
 * every thread read every index: into an out in L2 (vectorised compaction
 * only) it needs SO_OWNED_MIN_NEAR groups a thread; without the vectorised
 * compaction an out of SO_MIN_OWNED_BYTES; with AVX2's, single elements an out
 * beyond SO_OWNED_FAR_BYTES (or half of L3).  A mean's owners count hits per
 * index value unless the values outnumber the groups SO_MEAN_OWNERS_RATIO
 * times; its division takes SO_MEAN_FINISH_PER_THREAD elements a thread, the
 * fused copy SO_FUSED_PER_THREAD bytes of data a thread.  docs/design.md ("How
 * many threads a call uses: the cost model") has the measurements. */
#define SO_MIN_WORK_PER_THREAD ((npy_intp)1 << 15)
#define SO_MIN_BLOCK_RUN ((npy_intp)256)
#define SO_OWNED_MIN_NEAR ((npy_intp)1 << 18)
#define SO_MIN_OWNED_BYTES ((npy_intp)4 << 20)
#define SO_OWNED_FAR_BYTES ((npy_intp)12 << 20)
#define SO_MEAN_OWNERS_RATIO ((npy_intp)32)
#define SO_MEAN_FINISH_PER_THREAD ((npy_intp)1 << 16)
#define SO_FUSED_PER_THREAD ((npy_intp)4 << 20)

/* cost.c: the numbers above, as the walk takes them */
extern const so_walk_costs so_walk_cost_model;

/* cost.c: whether a call of nupd single-element updates into a 1-D out of size
 * elements stride bytes apart that has the direct form (call/direct.c: its
 * indices checked in their own dtype, then one typed loop, on one thread) runs
 * it rather than the general way on nthreads threads: into an out in L1 or L2
 * always, beyond L2 unless the split by index value pays.  0 with the model
 * off (tests), so that every split is run. */
int so_direct_form_pays(npy_intp size, npy_intp stride, npy_intp nupd, int nthreads);

#endif

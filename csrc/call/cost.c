/*
 * call/cost.c: the cost model's numbers as the walk takes them, and the
 * direct form's weighing against the general way on several threads (the
 * thresholds and why: call/cost.h).
 */
#include "call/cost.h"

const so_walk_costs so_walk_cost_model = {
    SO_MIN_WORK_PER_THREAD,
    SO_MIN_BLOCK_RUN,
    SO_OWNED_MIN_NEAR,
    SO_MIN_OWNED_BYTES,
    SO_OWNED_FAR_BYTES,
    SO_MEAN_OWNERS_RATIO,
    SO_MEAN_FINISH_PER_THREAD,
    SO_FUSED_PER_THREAD,
};

int
so_direct_form_pays(npy_intp size, npy_intp stride, npy_intp nupd, int nthreads)
{
    const npy_intp bytes = size * (stride < 0 ? -stride : stride);
    int place;
    if (!so_cost_model_on()) return 0;
    if (nupd / nthreads < SO_MIN_WORK_PER_THREAD) return 1;     /* no split would run */
    place = so_out_place(bytes);
    if (place < 2) return 1;
    if (so_vector_compaction_fits(size, stride)) {
        return !so_owned_far_pays(bytes, &so_walk_cost_model);
    }
    return bytes < SO_MIN_OWNED_BYTES;
}

/*
 * call/flat_targets.c: where each update of a call lands, as the flat C-order
 * position in its output of every update element, in update order.  The calls
 * of dtypes without a C loop run NumPy's own ufunc.at on these positions
 * (py/generic.c); the walk that finds them is the walk every other call takes.
 */
#include "call/call.h"

/* the "kernel" that writes, at each update element's place in targets, the
 * address in out it would update */
static void
record_block(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n, npy_intp isz)
{
    npy_intp i;
    (void)isz;
    for (i = 0; i < n; i++) {
        npy_intp at = (npy_intp)(o + i * os);
        memcpy((char *)u + i * us, &at, sizeof at);
    }
}

so_status
so_call_flat_targets(const so_call *c, const so_array *work, const so_array *targets,
                     so_poll *poll)
{
    so_plan plan;
    so_kernel rec = {record_block, NULL, NULL, NULL, sizeof(npy_intp), 0};
    npy_intp n = so_array_size(targets), j, *v = (npy_intp *)(void *)targets->bytes;
    const npy_intp base = (npy_intp)work->bytes, isz = work->itemsize;
    if (so_make_plan(&plan, c->kind, work, &c->idx, targets, c->axis, NULL) < 0) {
        return SO_FAILED;
    }
    if (so_run_polled(&plan, &rec, poll)) return SO_FAILED;
    for (j = 0; j < n; j++) v[j] = (v[j] - base) / isz;
    return SO_DONE;
}

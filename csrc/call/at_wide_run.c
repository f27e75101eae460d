/*
 * call/at_wide_run.c: _core.at's call with b one float64 value on a float64,
 * float32, float16 or bfloat16 a (py/at_entry.c chooses it, py/at_scalar_b.c
 * reads its index): the check of every index value before anything is
 * written (plan/check_run.c's, the one check of a contiguous run), and
 * kernels/at_wide.c's loop run over the indexed positions, in
 * pieces between polls (without the interpreter's lock) when large.
 */
#include "call/call.h"

int
so_call_any_outside(const npy_intp *p, npy_intp n, npy_intp size)
{
    return so_first_bad_run((const char *)p, SO_IX_i64, n, size, NULL) >= 0;
}

int
so_call_run_wide(char *o, npy_intp aos, npy_intp size, const npy_intp *p, npy_intp n,
                 const npy_intp *rest, npy_intp m, double b, so_wide_fn wide, so_host *h)
{
    so_poll *poll;
    npy_intp q, step;
    int rc = 0;
    if (n * m <= SO_PIECE) {           /* a small call keeps the lock: no poll */
        wide(o, aos, size, p, n, rest, m, b);
        return 0;
    }
    step = m >= SO_PIECE ? 1 : SO_PIECE / m;
    poll = h->unlock(h);
    for (q = 0; q < n && rc == 0; q += step) {
        if (q > 0 && so_stopped(poll)) rc = -1;
        else wide(o, aos, size, p + q, n - q < step ? n - q : step, rest, m, b);
    }
    if (h->relock(h) < 0) rc = -1;
    return rc;
}

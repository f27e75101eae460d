/*
 * call/groups.h: a group reduction as the call layer sees it -- a Python-free
 * description (so_group_call) that the binding (py/groups.c) fills from
 * checked arguments, and the run that chooses the passes, the order of the
 * loops and the threads, and runs them (call/groups.c).
 *
 * The description reads the values as (outer, n, inner) of one computing type
 * (kernels/group.h), and each member's group from gid (ids outside [0, size)
 * take no part) or, for segments, from indptr.  The result cells are the
 * binding's array, C-ordered (outer, size, inner), or (outer, n, inner) for
 * softmax; the count of each cell stays with the call until so_group_free so
 * that the binding can fill the empty cells once it has cast the result.
 */
#ifndef SO_CALL_GROUPS_H
#define SO_CALL_GROUPS_H

#include "base/base.h"
#include "kernels/group.h"

/* The largest group table a call takes: size groups times the feature
 * positions (each position of the other axes).  The result and every scratch
 * array of the table (at most 32 bytes a cell, a few arrays) then count their
 * bytes in intp without overflow. */
#define SO_GROUP_MAX_CELLS (NPY_MAX_INTP / 64)

/* A NumPy ufunc's inner loop for one type (np.exp, np.log), run on a
 * contiguous buffer in place: the same bits as the ufunc called on it. */
typedef struct {
    void (*fn)(char **args, npy_intp const *dims, npy_intp const *steps, void *data);
    void *data;
} so_group_ufunc_loop;

/* The functions of the contract's table (a nan-variant is skipnan). */
enum so_group_func {
    SO_GF_SUM, SO_GF_PROD, SO_GF_MAX, SO_GF_MIN, SO_GF_MEAN, SO_GF_VAR, SO_GF_STD,
    SO_GF_ARGMAX, SO_GF_ARGMIN, SO_GF_FIRST, SO_GF_LAST, SO_GF_ANY, SO_GF_ALL, SO_GF_COUNT,
    SO_GF_LOGSUMEXP, SO_GF_SOFTMAX, SO_GF_LOG_SOFTMAX, SO_GF_N
};

typedef struct {
    so_group_loop L;            /* values, gid, size, type, skipnan; res: the result cells */
    int func;                   /* SO_GF_* */
    int half;                   /* sum, prod: float16 in float32 cells; max, min: float16's or longdouble's rule */
    int fill_is_start;          /* an empty cell's fill is the value its cells start at
                                 * (sum, prod, any with their default fill): no counts */
    const npy_intp *indptr;     /* segments: size + 1 offsets (gid is NULL), else NULL */
    npy_intp ddof;
    int check_ids;              /* an id outside [0, size) stops the call (mode="raise") */
    so_group_ufunc_loop exp, log;
    npy_intp bad;               /* so_group_run's 2: the first member of a bad id */
    /* owned by the call (so_group_free) */
    npy_bool *seen;             /* whether each cnt entry has a member, where the loops
                                 * keep that instead of counts (then it decides the fill) */
    npy_intp *cnt;
    char *scratch;              /* maxima, means or the best values of the cells */
    npy_intp ncnt;
} so_group_call;

/* groups.c: run the call on up to nthreads threads (poll may stop it): 0 done,
 * 1 stopped by the poll, 2 stopped by a bad id (check_ids: the first one's
 * member in bad), -1 out of memory.  The ids are checked a piece at a time,
 * each piece before its members are taken, so only the result cells (never
 * out, which the binding writes afterwards) hold anything of a stopped call. */
int so_group_run(so_group_call *c, int nthreads, so_poll *poll);
/* groups.c: each cell of the (outer, size, inner) C-ordered result of item
 * size isz with no member (or no non-NaN member) set to fill's bytes (nothing
 * when fill_is_start: those cells hold it already). */
void so_group_fill_empty(const so_group_call *c, char *result, npy_intp isz, const char *fill);
void so_group_free(so_group_call *c);
/* groups.c: whether a call of n members and cells result cells is large
 * enough to release the GIL and poll for Ctrl-C */
int so_group_unlocks(npy_intp n, npy_intp cells);

#endif

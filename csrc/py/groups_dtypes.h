/*
 * py/groups_dtypes.h: the group reductions of the dtypes the real loops do not
 * read -- complex, string, void and object values, a complex dtype= for sum,
 * prod and mean, a complex, string, void or object dtype= for max, min, first
 * and last, and a float16 computing dtype for mean, var, std and logsumexp
 * (groups_dtypes.c, groups_object.c).  py/groups.c hands them over.
 */
#ifndef SO_PY_GROUPS_DTYPES_H
#define SO_PY_GROUPS_DTYPES_H

#include "py/groups_args.h"

/* groups_dtypes.c: whether the checked call a is one of these */
int so_group_dtypes_takes(const so_group_args *a);
/* groups_dtypes.c: the whole call (the dtype table, out, the fill, the ids,
 * the run, out written): the result (new reference), or NULL raised */
PyObject *so_group_dtypes_run(so_group_args *a, PyObject *out, int nthreads);
/* groups_object.c: sum, prod, max, min, any, all of the object values v (a
 * C-ordered (outer, n, inner) array) with Python's operators, each cell from
 * its group's first member (first[g]) in member order, the GIL held: a new
 * array of shape dims (object; bool for any / all), or NULL with the
 * operator's exception (or Ctrl-C's) raised */
PyArrayObject *so_group_object_reduce(int func, PyArrayObject *v, npy_intp outer, npy_intp n,
                                      npy_intp inner,
                                      const npy_intp *gid, npy_intp size, const npy_intp *first,
                                      int nd, const npy_intp *dims);

#endif

/*
 * py/groups_args.h: the arguments of a group reduction, checked (groups_args.c)
 * -- every rule of the contract's "Group reductions" but the values' dtype
 * table, which py/groups.c applies when it chooses the computing type.
 */
#ifndef SO_PY_GROUPS_ARGS_H
#define SO_PY_GROUPS_ARGS_H

#include "py/py.h"
#include "call/groups.h"

/* The four public functions, by the kind _groups.py passes. */
enum { SO_GK_GROUP, SO_GK_SEGMENT, SO_GK_GROUP_SOFTMAX, SO_GK_SEGMENT_SOFTMAX, SO_GK_N };
extern const char *const so_group_names[SO_GK_N];

typedef struct {
    const char *name;           /* the public function */
    int kind;                   /* SO_GK_* */
    int func, skipnan;          /* SO_GF_*, a nan-variant */
    PyObject *func_name;        /* borrowed or owned in owned_name: for messages */
    PyObject *owned_name;
    PyArrayObject *values;      /* owned */
    int axis;
    PyArrayObject *gid;         /* owned: C-contiguous intp or int32 ids, or NULL (segments) */
    PyArrayObject *given_ids;   /* owned: groups as given (the value a message names), or NULL */
    int implied_size;           /* size= left out: the largest id + 1 */
    int size_overflow;          /* that largest id + 1 is past intp */
    PyArrayObject *indptr;      /* owned: C-contiguous intp offsets (a copy), or NULL */
    npy_intp size;
    npy_intp ddof;
    int drop;                   /* mode="drop" */
    PyArray_Descr *dtype;       /* owned: dtype=, or NULL */
    PyObject *fill_value;       /* borrowed: None for the default */
    PyArrayObject *out;         /* owned: the checked out, or NULL */
} so_group_args;

/* groups_args.c: everything but the dtype rules and out (which need the
 * result dtype): 0, or -1 raised.  so_group_args_clear frees it. */
int so_group_args_parse(so_group_args *a, int kind, PyObject *values, PyObject *ids,
                        PyObject *func, PyObject *size, PyObject *axis, PyObject *ddof,
                        PyObject *dtype, PyObject *mode, PyObject *out, int log);
void so_group_args_clear(so_group_args *a);
/* groups_args.c: the IndexError of the first id outside [0, size), member k
 * (the call layer finds it: call/groups.h), -1 -- the last check, as the
 * reference makes it */
int so_group_bad_id_error(const so_group_args *a, npy_intp k);
/* groups_args.c: groups' length, or indptr's offsets, checked against values
 * (after the func and dtype checks, as the reference orders them): 0, or -1
 * raised */
int so_group_check_ids(const so_group_args *a);
/* groups_args.c: out (a->out) checked against the result's shape and dtype */
int so_group_check_out(so_group_args *a, PyObject *out, int nd, const npy_intp *dims,
                       PyArray_Descr *rd);
/* groups_args.c: the fill value's bytes as dtype rd (a 0-d array, new
 * reference): fill_value, or the func's default; NULL raised */
PyArrayObject *so_group_fill(const so_group_args *a, PyArray_Descr *rd);
/* groups_args.c: a cast to rd (a new C-ordered array) under
 * np.errstate(all="ignore"): a result or a fill value rounds or overflows
 * without a warning, as the loops do */
PyArrayObject *so_group_quiet_cast(PyArrayObject *a, PyArray_Descr *rd);

#endif

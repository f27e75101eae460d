/*
 * py/at.h: what the files of _core.at share (py/at_entry.c decides and runs
 * a call, py/at_index.c reads and checks its index, py/at_scalar_b.c runs a
 * float64 scalar b on a float a): the index forms read in C.
 */
#ifndef SO_PY_AT_H
#define SO_PY_AT_H

#include "py/py.h"

/* the forms of index read in C: an integer array along one axis of a (the
 * other axes taken whole), or integer arrays of one shape, one per axis of a */
enum { AT_ALONG, AT_ELEMENT_TUPLES };

typedef struct {
    int form;
    int axis;                          /* AT_ALONG: the axis the array indexes */
    PyArrayObject *idx;                /* AT_ALONG: owned, the index array */
    PyArrayObject *arrays[SO_MAXDIMS]; /* AT_ELEMENT_TUPLES: borrowed, one per axis of a */
    int nd;                            /* the shape of a[indices] */
    npy_intp dims[SO_MAXDIMS];
} at_index;

/* at_index.c: indices read as one of the forms into *ix: 1, 0 when it is not
 * one (nothing owned), -1 raised. */
int so_at_read_index(PyArrayObject *a, PyObject *indices, at_index *ix);
/* at_index.c: b (rank bnd; its shape read from it when bnd > 0) broadcasts to
 * a[indices]'s shape, which is not empty */
int so_at_b_broadcasts(PyObject *b, int bnd, const at_index *ix);
/* at_index.c: NumPy's IndexError for the first value of index array x outside
 * an axis of size n (-1 raised), or 0 if every value is inside */
int so_at_raise_first_bad(PyArrayObject *x, npy_intp n, int axis);
/* at_index.c: element tuples as flat offsets in elements into a's memory (a
 * contiguous: its first element is its lowest), a new intp array of
 * a[indices]'s shape (size elements), every value checked on its axis; NULL
 * raised (NumPy's IndexError for a value outside). */
PyArrayObject *so_at_flat_offsets(PyArrayObject *a, const at_index *ix, npy_intp size);

/* at_scalar_b.c: the call with b one float64 value and wide a's loop (a
 * contiguous, every index value checked here first: NumPy's IndexError with
 * nothing written).  0, or -1 raised. */
int so_at_run_wide(PyArrayObject *a, const at_index *ix, double b, so_wide_fn wide);

#endif

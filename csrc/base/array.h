/*
 * base/array.h: an array as the layers below the binding see it -- its memory,
 * shape and strides, and its dtype as the kernel tables look it up -- with no
 * Python object to own, convert or raise.
 *
 * The binding (py/) fills one from each NumPy array of a checked call
 * (so_array_of in py/py.h); plan/ turns them into a plan, call/ chooses and runs
 * a strategy on them.  The dims and strides point into the binding's array,
 * which outlives every use here.
 */
#ifndef SO_ARRAY_H
#define SO_ARRAY_H

#include "base/base.h"

typedef struct {
    char *bytes;                /* the first element */
    int ndim;
    const npy_intp *dims;       /* ndim extents */
    const npy_intp *strides;    /* ndim byte strides */
    npy_intp itemsize;
    int aligned;                /* every element at its dtype's alignment */
    int c_contiguous;
    PyArray_Descr *dtype;       /* borrowed: read by the kernel tables and so_index_type only */
    void *handle;               /* the binding's object for this array: opaque below it */
} so_array;

/* The number of elements of a. */
static inline npy_intp
so_array_size(const so_array *a)
{
    npy_intp n = 1;
    int d;
    for (d = 0; d < a->ndim; d++) n *= a->dims[d];
    return n;
}

/* The bytes a's elements span when it is C-contiguous (its size times its
 * item size). */
static inline npy_intp
so_array_nbytes(const so_array *a)
{
    return so_array_size(a) * a->itemsize;
}

/* Whether a and b have the same shape. */
static inline int
so_array_same_shape(const so_array *a, const so_array *b)
{
    int d;
    if (a->ndim != b->ndim) return 0;
    for (d = 0; d < a->ndim; d++) {
        if (a->dims[d] != b->dims[d]) return 0;
    }
    return 1;
}

#endif

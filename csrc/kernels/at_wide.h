/*
 * kernels/at_wide.h: ufunc.at's loops for a float element (float64, or the
 * narrower float32, float16 and ml_dtypes' bfloat16) and one float64 operand
 * b, the same for every update: what NumPy's ufunc.at does when b is a Python
 * float (numpy.asarray makes it a float64 array, and the ufunc's loop is then
 * the float64 one): the element widened exactly, the float64 operation, the
 * result rounded once back to the element's dtype.
 */
#ifndef SO_KERNELS_AT_WIDE_H
#define SO_KERNELS_AT_WIDE_H

#include "kernels/kernels.h"

/* wide(o, aos, size, idx, n, rest, m, b): for q < n and r < m, with
 * j = idx[q] (checked: in [-size, size), a negative one counting from the
 * end), the element at o + j*aos + rest[r] (byte strides and offsets,
 * aligned) becomes f(element, b) as above.  Every update has the same b, so
 * the order of the elements does not change the result: an element reached
 * k times takes f k times. */
typedef void (*so_wide_fn)(char *o, npy_intp aos, npy_intp size, const npy_intp *idx,
                           npy_intp n, const npy_intp *rest, npy_intp m, double b);

/* The loop for (dtype, op), op SO_ADD .. SO_MIN; NULL for every other dtype
 * (byte-swapped ones too) and op. */
so_wide_fn so_wide_kernel(PyArray_Descr *d, int op);

#endif

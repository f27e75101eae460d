/*
 * py/convert.c: the small conversions every part of a call shares: an
 * argument to an array as numpy.asarray does it (raising for that argument),
 * a shape as a tuple for a message, and whether two arrays' bytes overlap
 * (as numpy.may_share_memory says).
 */
#include "py/py.h"

const char *const so_func_names[3] = {"scatter_update", "scatter_nd", "scatter_elements"};

PyObject *
so_shape_tuple(int nd, const npy_intp *dims)
{
    PyObject *t = PyTuple_New(nd);
    int d;
    if (t == NULL) return NULL;
    for (d = 0; d < nd; d++) {
        PyObject *n = PyLong_FromSsize_t(dims[d]);
        if (n == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, d, n);
    }
    return t;
}

/* numpy.asarray, an ndarray (subclasses too) as it is. */
PyArrayObject *
so_as_array(const char *func, const char *name, PyObject *o)
{
    PyObject *a;
    if (PyArray_Check(o)) {
        Py_INCREF(o);
        return (PyArrayObject *)o;
    }
    a = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (a == NULL) so_fail_converting(func, name);
    return (PyArrayObject *)a;
}

static void
extent(PyArrayObject *a, char **lo, char **hi)
{
    char *l = PyArray_BYTES(a), *h = PyArray_BYTES(a);
    int d;
    for (d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp span = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (span < 0) l += span; else h += span;
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

int
so_may_overlap(PyArrayObject *a, PyArrayObject *b)
{
    char *al, *ah, *bl, *bh;
    if (PyArray_SIZE(a) == 0 || PyArray_SIZE(b) == 0) return 0;
    extent(a, &al, &ah);
    extent(b, &bl, &bh);
    return al < bh && bl < ah;
}

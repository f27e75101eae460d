/*
 * py/convert.c: the small conversions every part of a call shares: an
 * argument to a plain ndarray as numpy.asarray does it (raising for that
 * argument; a numpy.ma.MaskedArray is refused, its mask cannot be honoured),
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

/* A numpy.ma.MaskedArray (0 or 1; -1 raised).  numpy.ma is not imported by
 * numpy itself: while numpy.ma.core is not loaded no such array exists, so
 * nothing is imported here. */
static int
is_masked(PyObject *o)
{
    static PyObject *masked_type;
    if (masked_type == NULL) {
        PyObject *name = PyUnicode_FromString("numpy.ma.core"), *core;
        if (name == NULL) return -1;
        core = PyImport_GetModule(name);
        Py_DECREF(name);
        if (core == NULL) return PyErr_Occurred() ? -1 : 0;
        masked_type = PyObject_GetAttrString(core, "MaskedArray");
        Py_DECREF(core);
        if (masked_type == NULL) return -1;
    }
    return PyObject_IsInstance(o, masked_type);
}

/* The slow half of so_plain_array (py.h): an ndarray subclass. */
PyArrayObject *
so_plain_subclass(const char *func, const char *name, PyArrayObject *a)
{
    int masked = is_masked((PyObject *)a);
    if (masked) {
        if (masked > 0) {
            so_fail("masked", func, "{ss}", "name", name);
        }
        return NULL;
    }
    /* a view of the same memory, whatever the subclass does with indexing */
    return (PyArrayObject *)PyArray_View(a, NULL, &PyArray_Type);
}

/* The slow half of so_as_array (py.h): anything but a plain ndarray. */
PyArrayObject *
so_as_array_converted(const char *func, const char *name, PyObject *o)
{
    PyObject *a;
    if (PyArray_Check(o)) return so_plain_subclass(func, name, (PyArrayObject *)o);
    a = PyArray_FromAny(o, NULL, 0, 0, NPY_ARRAY_ENSUREARRAY, NULL);
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

/*
 * py/at_offsets.c: _core.at_apply, scatterops.at's call for an index array on
 * every axis of a view of a (a[i, j, ...]): the arguments read and checked
 * into an so_at_arrays (the index arrays and the updates made native and
 * aligned, a copy of those that share memory with the view), the call layer's
 * two passes run (call/at_index_arrays.c: every value checked, then the
 * updates applied at the offsets of the indexed elements, without the GIL),
 * and the outcome turned into None or an exception.
 */
#include "py/py.h"

/* a, or a native, aligned copy of it (dtype: NULL for a's own type) that does
 * not share memory with the view's memory (a new reference); NULL raised */
static PyArrayObject *
readable(PyArrayObject *a, PyArray_Descr *dtype, PyArrayObject *memory)
{
    const int overlaps = so_may_overlap(memory, a);
    if (!overlaps && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a)) {
        Py_INCREF(a);
        return a;
    }
    if (dtype == NULL) dtype = PyArray_DescrFromType(PyArray_TYPE(a));
    else Py_INCREF(dtype);
    return (PyArrayObject *)PyArray_FromAny((PyObject *)a, dtype, 0, 0,
                                            NPY_ARRAY_ALIGNED | (overlaps ? NPY_ARRAY_ENSURECOPY
                                                                          : 0), NULL);
}

/* _core.at_apply(memory, arrays, sizes, steps, shape, updates, reduction): see
 * the file comment.  memory: a writeable contiguous 1-d ndarray with a typed
 * kernel for reduction; arrays: a tuple of integer ndarrays broadcasting to
 * shape; sizes, steps: the size and the stride in elements (of memory) of the
 * axis each addresses; updates: memory's dtype, broadcasting to shape.  An
 * IndexError (nothing written) if a value is out of range. */
PyObject *
so_py_at_apply(PyObject *self, PyObject *args)
{
    PyObject *arrays, *sizes, *steps, *shape, *reduction, *canonical;
    PyArrayObject *memory, *upd, *ops[SO_AT_MAX_ARRAYS + 1];
    so_at_arrays c;
    so_py_host host;
    so_status st = SO_DONE;
    npy_intp n = 1;
    Py_ssize_t nd, j;
    int entry, op, mean, m;
    (void)self;

    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O:at_apply", &PyArray_Type, &memory,
                          &PyTuple_Type, &arrays, &PyTuple_Type, &sizes, &PyTuple_Type, &steps,
                          &PyTuple_Type, &shape, &PyArray_Type, &upd, &reduction)) {
        return NULL;
    }
    c.k = (int)PyTuple_GET_SIZE(arrays);
    nd = PyTuple_GET_SIZE(shape);
    if (c.k < 1 || c.k > SO_AT_MAX_ARRAYS || PyTuple_GET_SIZE(sizes) != c.k ||
            PyTuple_GET_SIZE(steps) != c.k || nd > SO_MAXDIMS || PyArray_NDIM(memory) != 1 ||
            !PyArray_ISWRITEABLE(memory) || !PyArray_EquivTypes(PyArray_DESCR(memory),
                                                                 PyArray_DESCR(upd))) {
        PyErr_SetString(PyExc_ValueError, "at_apply: arrays, sizes and steps must be tuples of "
                        "one length (1 to 64), shape a tuple of at most 64 sizes, memory a "
                        "writeable 1-d array of the updates' dtype");
        return NULL;
    }
    entry = so_parse_reduction("at_apply", reduction);
    if (entry < 0) return NULL;
    so_reduction_info(entry, &canonical, &op, &mean);
    if (mean || op == SO_NONE || !so_reduce_kernel(&c.kn, PyArray_DESCR(memory), op) ||
            c.kn.needs_gil || c.kn.elem == NULL) {
        PyErr_SetString(PyExc_ValueError, "at_apply: no typed kernel for this reduction");
        return NULL;
    }
    if (PyArray_STRIDE(memory, 0) != c.kn.itemsize) {
        PyErr_SetString(PyExc_ValueError, "at_apply: memory must be contiguous");
        return NULL;
    }
    c.memory = PyArray_BYTES(memory);
    c.span = PyArray_DIM(memory, 0);
    c.nd = (int)nd;
    for (j = 0; j < nd; j++) {
        c.dims[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, j));
        if (c.dims[j] < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "at_apply: negative size");
            return NULL;
        }
        n *= c.dims[j];
    }
    for (j = 0; j < c.k; j++) {
        PyObject *a = PyTuple_GET_ITEM(arrays, j);
        if (!PyArray_Check(a) || !PyArray_ISINTEGER((PyArrayObject *)a)) {
            PyErr_SetString(PyExc_TypeError, "at_apply: arrays must hold integer ndarrays");
            return NULL;
        }
        c.size[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, j));
        c.step[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(steps, j));
        if (PyErr_Occurred()) return NULL;
        if (c.size[j] < 1) {
            PyErr_SetString(PyExc_ValueError, "at_apply: every size must be >= 1");
            return NULL;
        }
    }
    if (n == 0) Py_RETURN_NONE;
    /* what the second pass reads must not be what it writes: a copy of the
     * arrays that share memory (as if they were copied first) */
    for (m = 0; m <= c.k; m++) {
        ops[m] = m < c.k ? readable((PyArrayObject *)PyTuple_GET_ITEM(arrays, m), NULL, memory)
                         : readable(upd, PyArray_DESCR(memory), memory);
        if (ops[m] == NULL) break;
        so_array_of(ops[m], m < c.k ? &c.arrays[m] : &c.upd);
    }
    if (m > c.k) {
        so_py_host_init(&host, 1);
        st = so_call_at_arrays(&c, &host.h);
    }
    while (m-- > 0) Py_DECREF(ops[m]);
    if (st == SO_DONE && !PyErr_Occurred()) Py_RETURN_NONE;
    if (PyErr_Occurred()) return NULL;
    if (st == SO_NO_MEMORY) return PyErr_NoMemory();
    if (st == SO_BAD_INDEX) {
        PyErr_SetString(PyExc_IndexError, "at_apply: an index is out of range");
        return NULL;
    }
    PyErr_SetString(PyExc_ValueError, "at_apply: the index arrays and updates must broadcast "
                    "to shape");
    return NULL;
}

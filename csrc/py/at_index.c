/*
 * py/at_index.c: _core.at's index, read and checked: the forms of py/at.h
 * recognised in NumPy's index syntax (an integer array or a list of Python
 * ints, along axis 0; a tuple of full slices `:` and one integer array, along
 * its axis; a tuple of integer arrays of one shape, one per axis of a),
 * a[indices]'s shape, and every value's range with NumPy's IndexError text.
 * uint64 arrays are not read here: NumPy's indexing wraps their values past
 * intp's range, which scatterops/_at.py's reading does as NumPy does.
 */
#include "py/at.h"

/* x is an index array this file takes: an integer ndarray of rank >= 1, not
 * empty, not uint64 (NumPy's indexing wraps values past intp's range). */
static int
int_array(PyObject *x)
{
    PyArray_Descr *d;
    if (!PyArray_CheckExact(x) || PyArray_NDIM((PyArrayObject *)x) < 1 ||
            so_size((PyArrayObject *)x) == 0) {
        return 0;
    }
    d = PyArray_DESCR((PyArrayObject *)x);
    return d->kind == 'i' || (d->kind == 'u' && PyDataType_ELSIZE(d) < 8);
}

/* A non-empty list of Python ints (not bools) that fit in intp as a new intp
 * array; NULL with nothing raised if the list is not one, NULL raised on failure. */
static PyArrayObject *
int_list(PyObject *list)
{
    const Py_ssize_t n = PyList_GET_SIZE(list);
    npy_intp dim = n, *v;
    PyArrayObject *arr;
    Py_ssize_t j;
    int ovf;
    if (n == 0) return NULL;
    for (j = 0; j < n; j++) {
        if (!PyLong_CheckExact(PyList_GET_ITEM(list, j))) return NULL;
    }
    arr = (PyArrayObject *)PyArray_SimpleNew(1, &dim, NPY_INTP);
    if (arr == NULL) return NULL;
    v = (npy_intp *)PyArray_DATA(arr);
    for (j = 0; j < n; j++) {
        long long x = PyLong_AsLongLongAndOverflow(PyList_GET_ITEM(list, j), &ovf);
        if (ovf || x < NPY_MIN_INTP || x > NPY_MAX_INTP) {
            Py_DECREF(arr);
            return NULL;
        }
        v[j] = (npy_intp)x;
    }
    return arr;
}

static int
full_slice(PyObject *x)
{
    PySliceObject *s = (PySliceObject *)x;
    return PySlice_Check(x) && s->start == Py_None && s->stop == Py_None && s->step == Py_None;
}

int
so_at_read_index(PyArrayObject *a, PyObject *indices, at_index *ix)
{
    const int a_nd = PyArray_NDIM(a);
    const npy_intp *ad = PyArray_DIMS(a);
    PyObject *x = NULL;
    Py_ssize_t n, j;
    int d, xnd, axis = 0;
    ix->idx = NULL;
    if (PyTuple_CheckExact(indices)) {
        n = PyTuple_GET_SIZE(indices);
        if (n < 1 || n > a_nd) return 0;
        for (j = 0; j < n; j++) {
            PyObject *item = PyTuple_GET_ITEM(indices, j);
            if (full_slice(item)) continue;
            if (x != NULL || !int_array(item)) break;
            x = item;
            axis = (int)j;
        }
        if (j < n || x == NULL) {
            /* not `:`s and one array: element tuples, or another form */
            const PyArrayObject *first = (PyArrayObject *)PyTuple_GET_ITEM(indices, 0);
            if (n != a_nd || n < 2) return 0;
            for (j = 0; j < n; j++) {
                PyArrayObject *item = (PyArrayObject *)PyTuple_GET_ITEM(indices, j);
                if (!int_array((PyObject *)item) || PyArray_NDIM(item) != PyArray_NDIM(first)) {
                    return 0;
                }
                for (d = 0; d < PyArray_NDIM(item); d++) {
                    if (PyArray_DIM(item, d) != PyArray_DIM(first, d)) return 0;
                }
                ix->arrays[j] = item;
            }
            ix->form = AT_ELEMENT_TUPLES;
            ix->nd = PyArray_NDIM(first);
            for (d = 0; d < ix->nd; d++) ix->dims[d] = PyArray_DIM(first, d);
            return 1;
        }
        Py_INCREF(x);
        ix->idx = (PyArrayObject *)x;
    }
    else if (int_array(indices)) {
        Py_INCREF(indices);
        ix->idx = (PyArrayObject *)indices;
    }
    else if (PyList_CheckExact(indices)) {
        ix->idx = int_list(indices);
        if (ix->idx == NULL) return PyErr_Occurred() ? -1 : 0;
    }
    else {
        return 0;
    }
    /* a[indices]'s shape: the array's shape in place of the indexed axis */
    xnd = PyArray_NDIM(ix->idx);
    if (a_nd - 1 + xnd > SO_MAXDIMS) {
        Py_CLEAR(ix->idx);
        return 0;
    }
    ix->form = AT_ALONG;
    ix->axis = axis;
    ix->nd = 0;
    for (d = 0; d < a_nd; d++) {
        if (d != axis) {
            ix->dims[ix->nd++] = ad[d];
            continue;
        }
        memcpy(ix->dims + ix->nd, PyArray_DIMS(ix->idx), xnd * sizeof(npy_intp));
        ix->nd += xnd;
    }
    return 1;
}

int
so_at_b_broadcasts(PyObject *b, int bnd, const at_index *ix)
{
    npy_intp size = 1;
    int d;
    for (d = 0; d < ix->nd; d++) size *= ix->dims[d];
    if (size == 0 || bnd > ix->nd) return 0;
    for (d = 0; d < bnd; d++) {
        npy_intp have = PyArray_DIM((PyArrayObject *)b, d), want = ix->dims[ix->nd - bnd + d];
        if (have != want && have != 1) return 0;
    }
    return 1;
}

int
so_at_raise_first_bad(PyArrayObject *x, npy_intp n, int axis)
{
    PyArrayObject *v = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)x, PyArray_DescrFromType(NPY_INTP), 0, 0, NPY_ARRAY_CARRAY_RO, NULL);
    const npy_intp *p;
    npy_intp i, size;
    if (v == NULL) return -1;
    p = (const npy_intp *)PyArray_DATA(v);
    size = so_size(v);
    for (i = 0; i < size && so_index_inside(p[i], n); i++) continue;
    if (i < size) {
        PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis %d with size %zd",
                     (Py_ssize_t)p[i], axis, (Py_ssize_t)n);
    }
    Py_DECREF(v);
    return i < size ? -1 : 0;
}

PyArrayObject *
so_at_flat_offsets(PyArrayObject *a, const at_index *ix, npy_intp size)
{
    PyArrayObject *t = (PyArrayObject *)PyArray_ZEROS(ix->nd, ix->dims, NPY_INTP, 0), *v;
    npy_intp *out, i;
    int j, bad = 0;
    if (t == NULL) return NULL;
    out = (npy_intp *)PyArray_DATA(t);
    for (j = 0; j < PyArray_NDIM(a) && !bad; j++) {
        const npy_intp n = PyArray_DIM(a, j);
        const npy_intp step = n == 1 ? 0 : PyArray_STRIDE(a, j) / PyArray_ITEMSIZE(a), *p;
        v = (PyArrayObject *)PyArray_FromAny((PyObject *)ix->arrays[j],
                                             PyArray_DescrFromType(NPY_INTP), 0, 0,
                                             NPY_ARRAY_CARRAY_RO, NULL);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        p = (const npy_intp *)PyArray_DATA(v);
        for (i = 0; i < size; i++) {
            const npy_intp x = p[i];
            const int inside = so_index_inside(x, n);
            bad |= !inside;
            out[i] += inside ? so_wrap(x, n) * step : 0;
        }
        Py_DECREF(v);
    }
    if (!bad) return t;
    Py_DECREF(t);
    for (j = 0; j < PyArray_NDIM(a); j++) {
        if (so_at_raise_first_bad(ix->arrays[j], PyArray_DIM(a, j), j) < 0) return NULL;
    }
    PyErr_SetString(PyExc_IndexError, "at: an index is out of range");
    return NULL;
}

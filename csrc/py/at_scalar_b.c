/*
 * py/at_scalar_b.c: _core.at's call with b one float64 value on a float64,
 * float32, float16 or bfloat16 a (py/at_entry.c decides it): every index value
 * checked first (NumPy's IndexError, nothing written), then the loop run over
 * the indexed positions by the call layer (call/at_wide_run.c).  Along an axis, each position covers the elements of the other axes
 * (their byte offsets made once); element tuples are their flat offsets.
 * Every update has the same b, so an element's result depends only on how
 * many updates reach it, not on their order.
 */
#include "py/at.h"

/* The byte offsets of the elements of a with the index on axis fixed at 0,
 * in C order of the other axes: a new buffer of *m values (PyMem), NULL
 * raised. */
static npy_intp *
covered_offsets(PyArrayObject *a, int axis, npy_intp *m)
{
    npy_intp count = 1, *out;
    int d;
    for (d = 0; d < PyArray_NDIM(a); d++) count *= d == axis ? 1 : PyArray_DIM(a, d);
    out = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof(npy_intp));
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    /* each axis in turn: every offset made so far followed by its n steps
     * (written from the end, so that no offset is overwritten before it is read) */
    *m = 1;
    out[0] = 0;
    for (d = 0; d < PyArray_NDIM(a); d++) {
        const npy_intp n = PyArray_DIM(a, d), s = PyArray_STRIDE(a, d);
        npy_intp k, r;
        if (d == axis) continue;
        for (r = *m - 1; r >= 0; r--) {
            for (k = n - 1; k >= 0; k--) out[r * n + k] = out[r] + k * s;
        }
        *m *= n;
    }
    return out;
}

/* x (an integer array of a[indices]) as a C-contiguous intp array (a new
 * reference, maybe x itself), every value checked on an axis of this size;
 * NULL raised (NumPy's IndexError for the first value outside). */
static PyArrayObject *
checked_intp(PyArrayObject *x, npy_intp size, int axis)
{
    PyArrayObject *v;
    if (PyArray_TYPE(x) == NPY_INTP && PyArray_ISNBO(PyArray_DESCR(x)->byteorder) &&
            PyArray_IS_C_CONTIGUOUS(x) && PyArray_ISALIGNED(x)) {
        /* already what the loop reads: no conversion to ask NumPy for */
        Py_INCREF(x);
        v = x;
    }
    else {
        v = (PyArrayObject *)PyArray_FromAny((PyObject *)x, PyArray_DescrFromType(NPY_INTP), 0,
                                             0, NPY_ARRAY_CARRAY_RO, NULL);
        if (v == NULL) return NULL;
    }
    if (!so_call_any_outside((const npy_intp *)PyArray_DATA(v), so_size(v), size)) return v;
    Py_DECREF(v);
    if (so_at_raise_first_bad(x, size, axis) == 0) {
        PyErr_SetString(PyExc_IndexError, "at: an index is out of range");
    }
    return NULL;
}

int
so_at_run_wide(PyArrayObject *a, const at_index *ix, double b, so_wide_fn wide)
{
    npy_intp *rest = NULL, m = 1, zero = 0, n, q, aos, size;
    PyArrayObject *v;
    so_py_host ph;
    int rc;
    if (ix->form == AT_ELEMENT_TUPLES) {
        for (n = 1, q = 0; q < ix->nd; q++) n *= ix->dims[q];
        v = so_at_flat_offsets(a, ix, n);      /* in [0, size) */
        size = so_size(a);
        aos = PyArray_ITEMSIZE(a);
    }
    else {
        size = PyArray_DIM(a, ix->axis);
        aos = PyArray_STRIDE(a, ix->axis);
        v = checked_intp(ix->idx, size, ix->axis);
        /* a 1-d a: each position is one element, at offset 0 (no buffer) */
        if (v != NULL && PyArray_NDIM(a) > 1 &&
                (rest = covered_offsets(a, ix->axis, &m)) == NULL) {
            Py_CLEAR(v);
        }
    }
    if (v == NULL) return -1;
    so_py_host_init(&ph, 1);
    rc = so_call_run_wide(PyArray_BYTES(a), aos, size, (const npy_intp *)PyArray_DATA(v),
                          so_size(v), rest != NULL ? rest : &zero, m, b, wide, &ph.h);
    Py_DECREF(v);
    PyMem_Free(rest);
    return rc;
}

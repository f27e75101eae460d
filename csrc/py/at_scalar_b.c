/*
 * py/at_scalar_b.c: _core.at's call with b one float64 value on a float64,
 * float32, float16 or bfloat16 a (py/at_entry.c decides it): every index value
 * checked first (NumPy's IndexError, nothing written), then kernels/at_wide.c's
 * loop run over the indexed positions (without the GIL and stoppable when
 * large).  Along an axis, each position covers the elements of the other axes
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

/* Nonzero if a value of p[0..n) is outside an axis of this size (so_index_inside).
 * The loop vectorises, with AVX2 where the CPU has it: at 1000 values the plain
 * build took 0.76 us, the AVX2 one 0.11 (docs/design.md, "scatterops.at: one
 * float64 b"). */
#define SO_ANY_OUTSIDE(NAME, ATTR)                                                     \
    ATTR static int                                                                    \
    NAME(const npy_intp *p, npy_intp n, npy_intp size)                                 \
    {                                                                                  \
        npy_intp bad = 0, i;                                                           \
        for (i = 0; i < n; i++) bad |= !so_index_inside(p[i], size);                   \
        return bad != 0;                                                               \
    }
SO_ANY_OUTSIDE(any_outside, )
#if SO_X86_VECTOR
SO_ANY_OUTSIDE(any_outside_avx2, __attribute__((target("avx2"))))
#endif

/* x (an integer array of a[indices]) as a C-contiguous intp array (a new
 * reference, maybe x itself), every value checked on an axis of this size;
 * NULL raised (NumPy's IndexError for the first value outside). */
static PyArrayObject *
checked_intp(PyArrayObject *x, npy_intp size, int axis)
{
    PyArrayObject *v = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)x, PyArray_DescrFromType(NPY_INTP), 0, 0, NPY_ARRAY_CARRAY_RO, NULL);
    int bad;
    if (v == NULL) return NULL;
#if SO_X86_VECTOR
    if (so_cpu_has(SO_CPU_AVX2)) {
        bad = any_outside_avx2((const npy_intp *)PyArray_DATA(v), so_size(v), size);
    }
    else
#endif
    bad = any_outside((const npy_intp *)PyArray_DATA(v), so_size(v), size);
    if (!bad) return v;
    Py_DECREF(v);
    if (so_at_raise_first_bad(x, size, axis) == 0) {
        PyErr_SetString(PyExc_IndexError, "at: an index is out of range");
    }
    return NULL;
}

int
so_at_run_wide(PyArrayObject *a, const at_index *ix, double b, so_wide_fn wide)
{
    npy_intp *rest = NULL, m = 1, zero = 0, n, q, step, aos, size;
    PyArrayObject *v;
    const npy_intp *p;
    so_unlocked u;
    so_poll *poll;
    int rc = 0;
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
        if (v != NULL && (rest = covered_offsets(a, ix->axis, &m)) == NULL) Py_CLEAR(v);
    }
    if (v == NULL) return -1;
    p = (const npy_intp *)PyArray_DATA(v);
    n = so_size(v);
    if (n * m <= SO_PIECE) {           /* a small call keeps the GIL: no poll */
        wide(PyArray_BYTES(a), aos, size, p, n, rest != NULL ? rest : &zero, m, b);
        Py_DECREF(v);
        PyMem_Free(rest);
        return 0;
    }
    /* pieces of about SO_PIECE updates between polls */
    step = m >= SO_PIECE ? 1 : SO_PIECE / m;
    poll = so_unlock(&u);
    for (q = 0; q < n && rc == 0; q += step) {
        if (q > 0 && so_stopped(poll)) rc = -1;
        else wide(PyArray_BYTES(a), aos, size, p + q, n - q < step ? n - q : step,
                  rest != NULL ? rest : &zero, m, b);
    }
    if (so_relock(&u) < 0) rc = -1;
    Py_DECREF(v);
    PyMem_Free(rest);
    return rc;
}

/*
 * py/module.c: scatterops._core, the private C module.
 *
 * Positional, already-checked arguments only (scatterops/_args.py checks
 * everything a user can get wrong, before anything is written).  This file
 * converts the arguments, picks the kernel, builds the plan and runs the walk
 * with the GIL released.  It keeps the thread count set from Python, read once
 * at each entry point and passed down (nothing below reads it).
 */
#include "py/py.h"

/* How many threads a large call may use (set from Python: scatterops.set_num_threads). */
static int so_num_threads = 1;

static int
as_array(PyObject *obj, const char *name, PyArrayObject **arr)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "scatterops._core: %s must be an ndarray", name);
        return -1;
    }
    *arr = (PyArrayObject *)obj;
    return 0;
}

static int
check_indices_array(PyArrayObject *idx)
{
    PyArray_Descr *d = PyArray_DESCR(idx);
    if (!PyTypeNum_ISSIGNED(d->type_num) || PyDataType_ELSIZE(d) != (npy_intp)sizeof(npy_intp) ||
            !PyArray_ISNBO(d->byteorder)) {
        PyErr_SetString(PyExc_TypeError, "scatterops._core: indices must be native intp");
        return -1;
    }
    if (PyArray_NDIM(idx) > SO_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: indices has too many dimensions");
        return -1;
    }
    return 0;
}

/* The arrays of a scatter call: out, indices (native intp), updates, and mask
 * (None, or writeable uint8). */
static int
call_arrays(PyObject *o_obj, PyObject *i_obj, PyObject *u_obj, PyObject *m_obj,
            PyArrayObject **out, PyArrayObject **idx, PyArrayObject **upd, PyArrayObject **mask)
{
    if (as_array(o_obj, "out", out) < 0 || as_array(i_obj, "indices", idx) < 0 ||
        as_array(u_obj, "updates", upd) < 0 || check_indices_array(*idx) < 0) {
        return -1;
    }
    *mask = NULL;
    if (m_obj != Py_None) {
        if (as_array(m_obj, "mask", mask) < 0) return -1;
        if (PyArray_TYPE(*mask) != NPY_UINT8 || !PyArray_ISWRITEABLE(*mask)) {
            PyErr_SetString(PyExc_TypeError, "scatterops._core: mask must be writeable uint8");
            return -1;
        }
    }
    return 0;
}

/* A plan on the heap (it is large), or NULL with an exception set. */
static so_plan *
new_plan(int kind, PyArrayObject *out, PyArrayObject *idx, PyArrayObject *upd, int axis,
         PyArrayObject *mask)
{
    so_plan *plan = PyMem_RawMalloc(sizeof *plan);
    if (plan == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    if (so_make_plan(plan, kind, out, idx, upd, axis, mask) < 0) {
        PyMem_RawFree(plan);
        return NULL;
    }
    return plan;
}

PyDoc_STRVAR(scatter_doc,
"scatter(kind, out, indices, updates, axis, op, mask, /)\n--\n\n"
"Apply a checked scatter in place on out. kind: 0 update, 1 nd, 2 elements;\n"
"op: 0 none, 1 add, 2 sub, 3 mul, 4 max, 5 min, 6 count (out is intp counts);\n"
"mask: None or a zeroed uint8 array of out's shape (include_self=False).\n"
"indices must be native intp and already validated.");

static PyObject *
so_scatter(PyObject *self, PyObject *args)
{
    int kind, axis, op;
    PyObject *o_obj, *i_obj, *u_obj, *m_obj;
    PyArrayObject *out, *idx, *upd, *mask = NULL;
    PyArray_Descr *od;
    so_kernel kn;
    so_plan *plan;

    if (!PyArg_ParseTuple(args, "iOOOiiO:scatter", &kind, &o_obj, &i_obj, &u_obj,
                          &axis, &op, &m_obj)) {
        return NULL;
    }
    if (call_arrays(o_obj, i_obj, u_obj, m_obj, &out, &idx, &upd, &mask) < 0) {
        return NULL;
    }
    if (!PyArray_ISWRITEABLE(out)) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: out is read-only");
        return NULL;
    }
    od = PyArray_DESCR(out);
    if (op == SO_NONE) {
        int is_object = od->type_num == NPY_OBJECT;
        if (PyDataType_REFCHK(od) && !is_object) {
            PyErr_SetString(PyExc_TypeError,
                            "scatterops._core: structured dtypes holding objects take the generic path");
            return NULL;
        }
        so_assign_kernel(&kn, PyDataType_ELSIZE(od), is_object);
    }
    else if (!so_reduce_kernel(&kn, od, op)) {
        PyErr_Format(PyExc_TypeError, "scatterops._core: no typed kernel for op %d on this dtype", op);
        return NULL;
    }
    if (op != SO_COUNT && !PyArray_EquivTypes(od, PyArray_DESCR(upd))) {
        PyErr_SetString(PyExc_TypeError, "scatterops._core: updates must have out's dtype");
        return NULL;
    }
    if (mask && op == SO_NONE) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: mask needs a reduction");
        return NULL;
    }

    plan = new_plan(kind, out, idx, upd, axis, mask);
    if (plan == NULL) {
        return NULL;
    }
    if (kn.needs_gil) {
        if (op == SO_NONE) so_dedup(plan, kn.itemsize);
        so_run(plan, &kn);
    }
    else {
        int nthreads = so_num_threads;
        Py_BEGIN_ALLOW_THREADS
        if (op == SO_NONE) so_dedup(plan, kn.itemsize);
        so_run_threaded(plan, &kn, nthreads);
        Py_END_ALLOW_THREADS
    }
    free(plan->win);
    PyMem_RawFree(plan);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(find_bad_index_doc,
"find_bad_index(indices, bounds, /)\n--\n\n"
"Flat C-order position of the first value of indices (native intp) outside\n"
"[-b, b), or -1. bounds: a tuple of one size, or of indices.shape[-1] sizes.");

static PyObject *
so_find_bad_index_py(PyObject *self, PyObject *args)
{
    PyObject *i_obj, *b_obj;
    PyArrayObject *idx;
    npy_intp bounds[SO_MAXDIMS], pos;
    Py_ssize_t nb, j;

    if (!PyArg_ParseTuple(args, "OO!:find_bad_index", &i_obj, &PyTuple_Type, &b_obj)) {
        return NULL;
    }
    if (as_array(i_obj, "indices", &idx) < 0 || check_indices_array(idx) < 0) {
        return NULL;
    }
    nb = PyTuple_GET_SIZE(b_obj);
    if (nb < 1 || nb > SO_MAXDIMS ||
        (nb > 1 && (PyArray_NDIM(idx) < 1 || PyArray_DIM(idx, PyArray_NDIM(idx) - 1) != nb))) {
        PyErr_SetString(PyExc_ValueError,
                        "scatterops._core: bounds must be one size or one per entry of indices' last dim");
        return NULL;
    }
    for (j = 0; j < nb; j++) {
        bounds[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(b_obj, j));
        if (bounds[j] == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (bounds[j] < 0) {
            PyErr_SetString(PyExc_ValueError, "scatterops._core: bounds must be >= 0");
            return NULL;
        }
    }
    {
        int nthreads = so_num_threads;
        Py_BEGIN_ALLOW_THREADS
        pos = so_find_bad_index(idx, bounds, (int)nb, nthreads);
        Py_END_ALLOW_THREADS
    }
    return PyLong_FromSsize_t(pos);
}

PyDoc_STRVAR(mean_finish_doc,
"mean_finish(out, counts, include_self, /)\n--\n\n"
"Divide every element of out that counts says was hit by count + include_self,\n"
"in place. Returns False (and does nothing) for dtypes without a C kernel.");

static PyObject *
so_mean_finish_py(PyObject *self, PyObject *args)
{
    PyArrayObject *out, *counts;
    int include_self;
    if (!PyArg_ParseTuple(args, "O!O!p:mean_finish", &PyArray_Type, &out, &PyArray_Type,
                          &counts, &include_self)) {
        return NULL;
    }
    if (!PyTypeNum_ISSIGNED(PyArray_TYPE(counts)) ||
        PyArray_ITEMSIZE(counts) != (npy_intp)sizeof(npy_intp) || !PyArray_ISNBO(PyArray_DESCR(counts)->byteorder) ||
        !PyArray_SAMESHAPE(out, counts) || !PyArray_ISWRITEABLE(out) ||
        PyArray_NDIM(out) > SO_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: mean_finish needs writeable out "
                        "and intp counts of its shape");
        return NULL;
    }
    if (!so_has_mean_kernel(PyArray_DESCR(out))) {
        Py_RETURN_FALSE;
    }
    Py_BEGIN_ALLOW_THREADS
    so_mean_finish(out, counts, include_self);
    Py_END_ALLOW_THREADS
    Py_RETURN_TRUE;
}

PyDoc_STRVAR(scatter_mean_doc,
"scatter_mean(kind, out, indices, updates, axis, include_self, mask, /)\n--\n\n"
"reduction='mean' in place on out, counting hits per destination slice. Returns\n"
"False, having written nothing, when the call is not of that shape (the caller\n"
"then counts per element).");

static PyObject *
so_scatter_mean(PyObject *self, PyObject *args)
{
    int kind, axis, include_self, done;
    PyObject *o_obj, *i_obj, *u_obj, *m_obj;
    PyArrayObject *out, *idx, *upd, *mask = NULL;
    so_kernel kn;
    so_plan *plan;

    if (!PyArg_ParseTuple(args, "iOOOipO:scatter_mean", &kind, &o_obj, &i_obj, &u_obj, &axis,
                          &include_self, &m_obj)) {
        return NULL;
    }
    if (call_arrays(o_obj, i_obj, u_obj, m_obj, &out, &idx, &upd, &mask) < 0) {
        return NULL;
    }
    if (!PyArray_ISWRITEABLE(out) || !PyArray_EquivTypes(PyArray_DESCR(out), PyArray_DESCR(upd))) {
        PyErr_SetString(PyExc_TypeError, "scatterops._core: out must be writeable, of updates' dtype");
        return NULL;
    }
    if (!so_has_mean_kernel(PyArray_DESCR(out)) || !so_reduce_kernel(&kn, PyArray_DESCR(out), SO_ADD)) {
        Py_RETURN_FALSE;
    }
    plan = new_plan(kind, out, idx, upd, axis, mask);
    if (plan == NULL) {
        return NULL;
    }
    {
        int nthreads = so_num_threads;
        Py_BEGIN_ALLOW_THREADS
        done = so_mean_run(plan, &kn, PyArray_DESCR(out), include_self, nthreads);
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(plan);
    if (!done) {
        Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyObject *
so_py_set_num_threads(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 1 || n > 1024) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core: threads must be in [1, 1024]");
        return NULL;
    }
    so_num_threads = (int)n;
    Py_RETURN_NONE;
}

static PyObject *
so_py_get_num_threads(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(so_num_threads);
}

static PyObject *
so_copy_py(PyObject *self, PyObject *arg)
{
    return so_output_cache_copy(arg, so_num_threads);
}

PyDoc_STRVAR(fast_doc,
"fast(kind, data, indices, updates, axis, reduction, include_self, out, /)\n--\n\n"
"The whole call for the plain case; NotImplemented (nothing written) otherwise.");

static PyMethodDef so_methods[] = {
    {"fast", (PyCFunction)(void (*)(void))so_fast, METH_FASTCALL, fast_doc},
    {"make_public", so_make_public, METH_VARARGS,
     "make_public(name, kind, fallback, doc, module, /)\n--\n\n"
     "A public function in C: the plain call through fast(), everything else to fallback."},
    {"set_num_threads", so_py_set_num_threads, METH_O, "set_num_threads(n, /)\n--\n\nThreads a large call may use."},
    {"get_num_threads", so_py_get_num_threads, METH_NOARGS, "get_num_threads()\n--\n\nThreads a large call may use."},
    {"scatter", so_scatter, METH_VARARGS, scatter_doc},
    {"find_bad_index", so_find_bad_index_py, METH_VARARGS, find_bad_index_doc},
    {"mean_finish", so_mean_finish_py, METH_VARARGS, mean_finish_doc},
    {"scatter_mean", so_scatter_mean, METH_VARARGS, scatter_mean_doc},
    {"copy", so_copy_py, METH_O,
     "copy(a, /)\n--\n\nA C-ordered copy of the ndarray a (large ones in the output cache's memory)."},
    {"output_cache_info", so_output_cache_info, METH_NOARGS,
     "output_cache_info()\n--\n\nThe cache of freed output blocks: limit, blocks, bytes, hits, misses."},
    {NULL, NULL, 0, NULL}
};

static int
so_exec(PyObject *m)
{
    if (so_import_numpy() < 0) {
        return -1;
    }
    if (PyModule_AddStringConstant(m, "TYPED", so_typed_chars) < 0) {
        return -1;
    }
    if (so_output_cache_init() < 0) {
        return -1;
    }
    so_fast_init(&so_num_threads);
    return 0;
}

static PyModuleDef_Slot so_slots[] = {
    {Py_mod_exec, so_exec},
    {0, NULL}
};

static struct PyModuleDef so_module = {
    PyModuleDef_HEAD_INIT,
    "scatterops._core",
    "Private C core of scatterops: kernels on checked arguments. Use the scatterops package.",
    0,
    so_methods,
    so_slots,
    NULL, NULL, NULL
};

PyMODINIT_FUNC
PyInit__core(void)
{
    return PyModuleDef_Init(&so_module);
}

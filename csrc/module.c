/*
 * module.c: scatterops._core, the private C module.
 *
 * Positional, already-checked arguments only (scatterops/_args.py checks
 * everything a user can get wrong, before anything is written).  This file
 * converts the arguments, picks the kernel, builds the plan and runs the walk
 * with the GIL released.
 */
#define SCATTEROPS_MODULE
#include "call.h"

/* How many threads a large call may use (set from Python: scatterops.set_num_threads). */
static int so_num_threads = 1;

int
so_get_num_threads(void)
{
    return so_num_threads;
}

/* Mean when the add is split by index value over threads (engine.c) and the
 * value alone names the destination (one component, no group dim addresses
 * out, no mask): the owners count the hits of each value as they add, instead
 * of a walk over the indices on one thread first, and then divide their own
 * blocks, still in their caches, with no pass over the counts on one thread and
 * no second set of threads (graph mean in place, 2 threads: 29.2 -> 28.3 ms).
 * Returns 1 having done the whole mean, or 0 having done nothing. */
static int
owners_mean(so_plan *p, const so_kernel *kn, int nthreads, PyArray_Descr *descr,
            int include_self)
{
    npy_intp *counts;
    int d;
    if (p->k != 1 || p->mask != NULL || p->gnd < 1 || p->gs_idx[p->gnd - 1] == 0 ||
            !so_owned_split_applies(p, kn, nthreads)) {
        return 0;
    }
    for (d = 0; d < p->gnd; d++) {
        if (p->gs_out[d] != 0) return 0;
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] == 0) return 0;        /* a block that hits one element twice */
    }
    counts = calloc((size_t)p->isize[0], sizeof *counts);
    if (counts == NULL) {
        return 0;
    }
    /* so_owned_split_applies: the walk below is split by index value, and every
     * owner (or the one owner, when memory for tasks is short) finishes its own */
    p->hits = counts;
    p->mean_descr = descr;
    p->mean_include_self = include_self;
    so_run_threaded(p, kn, nthreads);
    p->hits = NULL;
    p->mean_descr = NULL;
    free(counts);
    return 1;
}

/* The whole mean on p (sums, then divisions) where the destinations can be
 * counted per slice or by their owners; 0, having done nothing, otherwise. */
int
so_mean_run(so_plan *p, const so_kernel *kn, PyArray_Descr *descr, int include_self, int nthreads)
{
    npy_intp *hits, nhits = 0;
    int lead = 0;
    if (owners_mean(p, kn, nthreads, descr, include_self)) return 1;
    hits = so_count_hits(p, &lead, &nhits);
    if (hits == NULL) return 0;
    so_run_threaded(p, kn, nthreads);
    so_mean_finish_hits(p, descr, lead, hits, nhits, include_self);
    free(hits);
    return 1;
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
so_py_generic_calls(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLong(so_generic_calls);
}

static PyMethodDef so_methods[] = {
    {"make_public", so_make_public, METH_VARARGS,
     "make_public(name, kind, doc, module, /)\n--\n\n"
     "The public function of kind (0 update, 1 nd, 2 elements), in C."},
    {"set_hooks", so_set_hooks, METH_VARARGS,
     "set_hooks(error, generic, /)\n--\n\n"
     "The Python helpers the core calls: error(code, func, fields) makes an exception;\n"
     "generic(out, targets, updates, reduction, include_self, mean) runs NumPy's ufunc.at\n"
     "for the dtypes without a C loop."},
    {"generic_calls", so_py_generic_calls, METH_NOARGS,
     "generic_calls()\n--\n\nHow many calls went to the NumPy fallback (dtypes without a C loop)."},
    {"set_num_threads", so_py_set_num_threads, METH_O, "set_num_threads(n, /)\n--\n\nThreads a large call may use."},
    {"get_num_threads", so_py_get_num_threads, METH_NOARGS, "get_num_threads()\n--\n\nThreads a large call may use."},
    {"copy", so_pool_copy, METH_O,
     "copy(a, /)\n--\n\nA C-ordered copy of the ndarray a (large ones in the output cache's memory)."},
    {"output_cache_info", so_pool_info, METH_NOARGS,
     "output_cache_info()\n--\n\nThe cache of freed output blocks: limit, blocks, bytes, hits, misses."},
    {NULL, NULL, 0, NULL}
};

static int
so_exec(PyObject *m)
{
    if (PyArray_ImportNumPyAPI() < 0) {
        return -1;
    }
    if (so_args_init() < 0) {
        return -1;
    }
    {
        PyObject *table = so_reduction_table();
        int rc = table == NULL ? -1 : PyModule_AddObjectRef(m, "REDUCTIONS", table);
        Py_XDECREF(table);
        if (rc < 0) return -1;
    }
    if (so_pool_init() < 0) {
        return -1;
    }
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

/*
 * py/module.c: scatterops._core, the private C module: its functions, its
 * constants and its initialisation.  The public functions themselves are made
 * by make_public (public.c); everything a call does happens below that.
 */
#include "py/py.h"

static PyObject *
so_py_generic_calls(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(so_generic_calls);
}

static PyObject *
so_py_folded_calls(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(so_folded_calls);
}

static PyObject *
so_py_direct_calls(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(so_direct_calls);
}

static PyObject *
so_py_partial_calls(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(__atomic_load_n(&so_partial_calls, __ATOMIC_RELAXED));
}

static PyObject *
so_py_direct_means(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(so_direct_means);
}

static PyObject *
so_py_direct_one_pass(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(so_direct_one_pass);
}

static PyObject *
so_py_rows_direct_calls(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLong(so_rows_direct_calls);
}

static PyObject *
so_py_threads_asked(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(so_threads_asked_take());
}

static PyObject *
so_py_set_cost_model(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    (void)self;
    if (on < 0) return NULL;
    return PyBool_FromLong(so_set_cost_model(on));
}

static PyObject *
so_py_job_tally(PyObject *self, PyObject *noargs)
{
    long t[SO_TALLY_FIELDS];
    int kind;
    int ok;
    PyObject *d = PyDict_New(), *k, *v;
    (void)self;
    (void)noargs;
    if (d == NULL) return NULL;
    for (kind = 0; kind < SO_JOB_KINDS; kind++) {
        if (!so_job_tally(kind, t)) continue;
        k = PyLong_FromLong(kind);
        v = Py_BuildValue("(llllll)", t[SO_TALLY_JOBS], t[SO_TALLY_CALLER_RAN_ALL],
                          t[SO_TALLY_WAITED], t[SO_TALLY_OFF_CPU], t[SO_TALLY_DECLINED],
                          t[SO_TALLY_POOL_BUSY]);
        ok = k != NULL && v != NULL && PyDict_SetItem(d, k, v) == 0;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (!ok) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

static PyObject *
so_py_copy(PyObject *self, PyObject *arg)
{
    (void)self;
    return so_output_cache_copy(arg, so_settings_threads());
}

static PyObject *
so_py_set_stream_copy_min(PyObject *self, PyObject *arg)
{
    npy_intp n = PyLong_AsSsize_t(arg);
    (void)self;
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < -1) {
        PyErr_SetString(PyExc_ValueError, "set_stream_copy_min: nbytes must be -1 or more");
        return NULL;
    }
    return PyLong_FromSsize_t(so_set_stream_min(n));
}

PyObject *so_py_at(PyObject *module, PyObject *const *args, Py_ssize_t nargs);   /* at_entry.c */
PyObject *so_py_group(PyObject *self, PyObject *args);                           /* groups.c */

static PyMethodDef so_methods[] = {
    {"make_public", so_make_public, METH_VARARGS,
     "make_public(name, kind, doc, module, /)\n--\n\n"
     "The public function of kind (a value of KINDS), in C."},
    {"_choose", so_py_choose, METH_VARARGS,
     "_choose(kind, data, indices, updates, axis, reduction, include_self, mode, out, nthreads, /)"
     "\n--\n\nThe strategy the call layer chooses for this call (call/choose.c), by name; the call "
     "is not run."},
    {"check_call", so_py_check_call, METH_VARARGS,
     "check_call(kind, data, indices, updates, axis, reduction, include_self, mode, /)\n--\n\n"
     "Every rule of a call of kind (a value of KINDS) but the range of its index values,\n"
     "raising what the call would raise; nothing runs.  Returns (the shape updates is\n"
     "broadcast to, the axis in [0, data.ndim); 0 for scatter_nd) (tables.c)."},
    {"set_hooks", so_set_hooks, METH_VARARGS,
     "set_hooks(error, generic, /)\n--\n\n"
     "The Python helpers the core calls: error(code, func, fields) makes an exception;\n"
     "generic(out, targets, updates, reduction, include_self, mean) runs NumPy's ufunc.at\n"
     "for the dtypes without a C loop."},
    {"generic_calls", so_py_generic_calls, METH_NOARGS,
     "generic_calls()\n--\n\nHow many calls went to the NumPy fallback (dtypes without a C loop)."},
    {"folded_calls", so_py_folded_calls, METH_NOARGS,
     "folded_calls()\n--\n\nHow many calls ran an index written out with equal rows as its\n"
     "stride-0 view (call/fold.c)."},
    {"direct_calls", so_py_direct_calls, METH_NOARGS,
     "direct_calls()\n--\n\nHow many calls ran in the direct form of a 1-D call (call/direct.c),\n"
     "the mean's loops (direct_means) included."},
    {"direct_means", so_py_direct_means, METH_NOARGS,
     "direct_means()\n--\n\nHow many means ran in the direct form (call/direct.c)."},
    {"direct_one_pass", so_py_direct_one_pass, METH_NOARGS,
     "direct_one_pass()\n--\n\nHow many calls ran in the direct form's one pass (call/direct.c)."},
    {"partial_calls", so_py_partial_calls, METH_NOARGS,
     "partial_calls()\n--\n\nHow many calls of the direct form were split by updates, each thread\n"
     "into its own partial output (call/partial_outputs.c); a worker that woke late may have taken none."},
    {"rows_direct_calls", so_py_rows_direct_calls, METH_NOARGS,
     "rows_direct_calls()\n--\n\nHow many calls ran in the direct form on rows (call/direct.c)."},
    {"threads_asked", so_py_threads_asked, METH_NOARGS,
     "threads_asked()\n--\n\nThe most threads one set of tasks (a split walk, a check, a copy)\n"
     "of this thread's calls was split over since it last asked (0: none); resets it."},
    {"set_cost_model", so_py_set_cost_model, METH_O,
     "set_cost_model(on, /)\n--\n\nTests only: False makes every thread split that can be made\n"
     "(no cost model, no back-off); either way what the back-off learnt is forgotten;\n"
     "returns the state before."},
    {"job_tally", so_py_job_tally, METH_NOARGS,
     "job_tally()\n--\n\nWhat became of the thread pool's jobs since the module loaded, by kind:\n"
     "{kind: (jobs, late_caller_ran_all, late_waited, late_off_cpu, declined, pool_busy)} for\n"
     "the kinds with any (base.h, so_job_tally)."},
    {"set_thread_cap", so_py_set_thread_cap, METH_O,
     "set_thread_cap(n, /)\n--\n\nThe most threads any call may use (the CPUs this process may\n"
     "use, at most the pool's size); returns the cap set."},
    {"set_num_threads", so_py_set_num_threads, METH_O,
     "set_num_threads(n, /)\n--\n\nThreads a large call may use, process-wide (capped); returns\n"
     "the count set."},
    {"swap_local_threads", so_py_swap_local_threads, METH_O,
     "swap_local_threads(n, /)\n--\n\nThreads the calls of this thread use (capped; 0: the\n"
     "process-wide count); returns this thread's value before."},
    {"get_num_threads", so_py_get_num_threads, METH_O,
     "get_num_threads(process_wide, /)\n--\n\nThreads a call made now by this thread uses, or\n"
     "the process-wide count."},
    {"disable_cpu_feature", so_py_disable_cpu_feature, METH_O,
     "disable_cpu_feature(i, /)\n--\n\nCalls no longer use CPU_FEATURES[i]."},
    {"cpu_features", so_py_cpu_features, METH_NOARGS,
     "cpu_features()\n--\n\nWhether calls use each of CPU_FEATURES (the CPU has it, the build\n"
     "has its path, it is not turned off)."},
    {"cache_bytes", so_py_cache_bytes, METH_O,
     "cache_bytes(level, /)\n--\n\nThe bytes of one core's data cache at level 1, 2 or 3 as the\n"
     "cost model reads them (sysconf, else sysfs, else 32 KiB, 1 MiB, 32 MiB)."},
    {"set_output_cache_limit", so_output_cache_set_limit, METH_O,
     "set_output_cache_limit(nbytes, /)\n--\n\nBytes the output cache may keep (0: none)."},
    {"_test_rewrite_indices", so_py_test_rewrite_indices, METH_O,
     "_test_rewrite_indices(value, /)\n--\n\nTests only: every call rewrites its indices to value\n"
     "right after checking them (None: stop)."},
    {"set_stream_copy_min", so_py_set_stream_copy_min, METH_O,
     "set_stream_copy_min(nbytes, /)\n--\n\nTests only: copies of data of at least nbytes store past\n"
     "the caches (-1: copy.c's rule, a quarter of L3 and at least 32 MiB); the last value set."},
    {"copy", so_py_copy, METH_O,
     "copy(a, /)\n--\n\nA C-ordered copy of the ndarray a (large ones in the output cache's memory)."},
    {"at", (PyCFunction)(void (*)(void))so_py_at, METH_FASTCALL,
     "at(ufunc, a, indices, b, /)\n--\n\n"
     "scatterops.at's commonest calls, run in place; NotImplemented for the rest (at_entry.c)."},
    {"at_apply", so_py_at_apply, METH_VARARGS,
     "at_apply(memory, arrays, sizes, steps, shape, updates, reduction, /)\n--\n\n"
     "scatterops.at with an index array on every axis: the updates applied at the elements they "
     "address (at_offsets.c)."},
    {"route", so_py_route, METH_VARARGS,
     "route(indices, sizes, starts, mode, local_dtype, payloads, elements, /)\n--\n\n"
     "scatterops.dask: one chunk's updates grouped by the block they land in (route.c)."},
    {"group", so_py_group, METH_VARARGS,
     "group(kind, values, ids, func, size, axis, fill_value, ddof, dtype, mode, out, log, /)\n--\n\n"
     "The group reductions of scatterops._groups, by kind: 0 group_reduce, 1 segment_reduce,\n"
     "2 group_softmax, 3 segment_softmax (ids: the groups or indptr) (groups.c)."},
    {"output_cache_info", so_output_cache_info, METH_NOARGS,
     "output_cache_info()\n--\n\nThe cache of freed output blocks: limit, blocks, bytes, hits, misses."},
    {NULL, NULL, 0, NULL}
};

static int
so_exec(PyObject *m)
{
    PyObject *table;
    int rc;
    if (so_import_numpy() < 0 || so_args_init() < 0 || so_output_cache_init() < 0) {
        return -1;
    }
    /* {accepted reduction name: canonical name}, for the messages and the stubs */
    table = so_reduction_table();
    rc = table == NULL ? -1 : PyModule_AddObjectRef(m, "REDUCTIONS", table);
    /* the kinds, modes, reductions by ufunc and typed dtypes (tables.c) */
    if (rc == 0) rc = so_tables_add(m, table);
    Py_XDECREF(table);
    if (rc < 0) return -1;
    /* the names of so_cpu_has's features, by index; the vector paths compiled
     * in (none in a portable build); the pool's size */
    table = Py_BuildValue("(sss)", "f16c", "avx512", "avx2");
    rc = table == NULL ? -1 : PyModule_AddObjectRef(m, "CPU_FEATURES", table);
    if (rc == 0) {
        PyObject *paths = SO_X86_VECTOR ? (Py_INCREF(table), table) : PyTuple_New(0);
        rc = paths == NULL ? -1 : PyModule_AddObjectRef(m, "VECTOR_PATHS", paths);
        Py_XDECREF(paths);
    }
    Py_XDECREF(table);
    if (rc < 0) return -1;
    return PyModule_AddIntConstant(m, "POOL_MAX", SO_POOL_MAX);
}

static PyModuleDef_Slot so_slots[] = {
    {Py_mod_exec, so_exec},
    {0, NULL}
};

static struct PyModuleDef so_module = {
    PyModuleDef_HEAD_INIT,
    "scatterops._core",
    "Private C core of scatterops. Use the scatterops package.",
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

/*
 * py/tables.c: what Python reads of the core's rules instead of writing them
 * again -- the module constants KINDS, MODES, UFUNC_REDUCTIONS and
 * TYPED_DTYPES, made from the C enums and tables, and _core.check_call, which
 * applies every rule of a call but the range of its index values (args.c's
 * so_args_parse, the very check a call makes) and returns the geometry it
 * finds, without running anything.
 */
#include "py/py.h"

/* The NumPy dtypes TYPED_DTYPES asks about: every built-in one of fixed size
 * (the flexible ones, strings and void, have an item size only per array). */
static const int builtin_types[] = {
    NPY_BOOL, NPY_BYTE, NPY_UBYTE, NPY_SHORT, NPY_USHORT, NPY_INT, NPY_UINT, NPY_LONG,
    NPY_ULONG, NPY_LONGLONG, NPY_ULONGLONG, NPY_HALF, NPY_FLOAT, NPY_DOUBLE, NPY_LONGDOUBLE,
    NPY_CFLOAT, NPY_CDOUBLE, NPY_CLONGDOUBLE, NPY_OBJECT, NPY_DATETIME, NPY_TIMEDELTA};
#define N_BUILTIN ((int)(sizeof builtin_types / sizeof builtin_types[0]))

/* Add name = value to m, value a new reference (NULL: an error already set). */
static int
add_constant(PyObject *m, const char *name, PyObject *value)
{
    int rc = value == NULL ? -1 : PyModule_AddObjectRef(m, name, value);
    Py_XDECREF(value);
    return rc;
}

/* {public function name: its kind (SO_UPDATE, SO_ND, SO_ELEMENTS)} */
static PyObject *
kinds(void)
{
    PyObject *d = PyDict_New(), *v;
    int k, rc;
    for (k = SO_UPDATE; d != NULL && k <= SO_ELEMENTS; k++) {
        v = PyLong_FromLong(k);
        rc = v == NULL ? -1 : PyDict_SetItemString(d, so_func_names[k], v);
        Py_XDECREF(v);
        if (rc < 0) Py_CLEAR(d);
    }
    return d;
}

/* {mode= name: its SO_MODE_* number} */
static PyObject *
modes(void)
{
    PyObject *d = PyDict_New(), *v;
    int m, rc;
    for (m = 0; d != NULL && m < SO_NMODES; m++) {
        v = PyLong_FromLong(m);
        rc = v == NULL ? -1 : PyDict_SetItemString(d, so_mode_names[m], v);
        Py_XDECREF(v);
        if (rc < 0) Py_CLEAR(d);
    }
    return d;
}

/* The reductions, each once: (entry of the reduction table, canonical name
 * borrowed) for each distinct canonical name, in the table's order; their count. */
static int
canonical_entries(PyObject *table, int *entries, PyObject **names, int max)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int n = 0, i, seen;
    while (PyDict_Next(table, &pos, &key, &value)) {
        for (i = 0, seen = 0; i < n && !seen; i++) seen = names[i] == value;
        if (seen || key != value || n == max) continue;       /* the canonical spelling */
        entries[n] = so_parse_reduction("REDUCTIONS", key);
        if (entries[n] < 0) return -1;
        names[n++] = value;
    }
    return n;
}

/* {ufunc: canonical name} for the reductions that apply one NumPy ufunc per
 * update, as ufunc.at does (all but "none" and "mean") */
static PyObject *
ufunc_reductions(const int *entries, PyObject *const *names, int n)
{
    PyObject *d = PyDict_New(), *canonical, *ufunc;
    int i, op, mean;
    for (i = 0; d != NULL && i < n; i++) {
        so_reduction_info(entries[i], &canonical, &op, &mean);
        ufunc = so_reduction_ufunc(op);
        if (mean || ufunc == Py_None) continue;
        if (PyDict_SetItem(d, ufunc, names[i]) < 0) Py_CLEAR(d);
    }
    return d;
}

/* {canonical name: the type characters of the native dtypes the C kernels run
 * that reduction on}; the other dtypes where it is defined take NumPy's
 * ufunc.at (so_check_reduction decides both, here as in every call) */
static PyObject *
typed_dtypes(const int *entries, PyObject *const *names, int n)
{
    PyObject *d = PyDict_New(), *chars;
    PyArray_Descr *descr;
    so_kernel kn;
    char buf[N_BUILTIN + 1];
    int i, t, len, typed;
    for (i = 0; d != NULL && i < n; i++) {
        for (t = 0, len = 0; t < N_BUILTIN; t++) {
            descr = PyArray_DescrFromType(builtin_types[t]);
            if (descr == NULL) goto fail;
            typed = so_check_reduction("TYPED_DTYPES", entries[i], names[i], descr, &kn);
            if (typed == 1) buf[len++] = descr->type;
            Py_DECREF(descr);
            if (typed < 0) {
                /* not defined for the dtype: its TypeError (a RuntimeError before
                 * _core.set_hooks gives the messages) is the answer "no" */
                if (PyErr_ExceptionMatches(PyExc_MemoryError)) goto fail;
                PyErr_Clear();
            }
        }
        buf[len] = '\0';
        chars = PyUnicode_FromString(buf);
        if (chars == NULL || PyDict_SetItem(d, names[i], chars) < 0) {
            Py_XDECREF(chars);
            goto fail;
        }
        Py_DECREF(chars);
    }
    return d;
fail:
    Py_XDECREF(d);
    return NULL;
}

int
so_tables_add(PyObject *m, PyObject *reductions)
{
    int entries[32], n;
    PyObject *names[32];
    n = canonical_entries(reductions, entries, names, 32);
    if (n < 0) return -1;
    if (add_constant(m, "KINDS", kinds()) < 0) return -1;
    if (add_constant(m, "MODES", modes()) < 0) return -1;
    if (add_constant(m, "UFUNC_REDUCTIONS", ufunc_reductions(entries, names, n)) < 0) return -1;
    return add_constant(m, "TYPED_DTYPES", typed_dtypes(entries, names, n));
}

PyObject *
so_py_check_call(PyObject *self, PyObject *args)
{
    PyObject *data, *indices, *updates, *axis, *reduction, *include_self, *mode, *res;
    so_args a;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "iOOOOOOO:check_call", &kind, &data, &indices, &updates, &axis,
                          &reduction, &include_self, &mode)) {
        return NULL;
    }
    if (kind < SO_UPDATE || kind > SO_ELEMENTS) {
        PyErr_Format(PyExc_ValueError, "check_call: kind must be a value of KINDS, got %d", kind);
        return NULL;
    }
    if (so_args_parse(&a, kind, data, indices, updates, kind == SO_ND ? NULL : axis, reduction,
                      include_self, mode, NULL) < 0) {
        return NULL;
    }
    res = Py_BuildValue("(Ni)", SHAPE(a.upd), a.c.axis);
    so_args_clear(&a);
    return res;
}

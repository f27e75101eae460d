/*
 * py/reductions.c: the reductions -- their names and aliases (one table, also
 * the module constant REDUCTIONS), the kernel op each runs, and where each is
 * defined: exactly where NumPy's ufunc has the (dtype, dtype) -> dtype loop,
 * asked of the C kernels' table for the typed dtypes and of NumPy itself for
 * the others; mean also needs a division rule.
 */
#include "py/py.h"

#define SO_MEAN_OP (-2)

static const struct {
    const char *name, *canonical;
    int op;
} reduction_names[] = {
    {"none", "none", SO_NONE}, {"add", "add", SO_ADD}, {"sum", "add", SO_ADD},
    {"sub", "sub", SO_SUB}, {"mul", "mul", SO_MUL}, {"prod", "mul", SO_MUL},
    {"multiply", "mul", SO_MUL}, {"max", "max", SO_MAX}, {"amax", "max", SO_MAX},
    {"min", "min", SO_MIN}, {"amin", "min", SO_MIN}, {"mean", "mean", SO_MEAN_OP},
};
#define N_REDUCTIONS ((int)(sizeof reduction_names / sizeof reduction_names[0]))

/* interned names and canonical names, and NumPy's ufunc for each op */
static PyObject *names[N_REDUCTIONS], *canonicals[N_REDUCTIONS];
static PyObject *ufuncs[SO_NOPS];
static PyObject *str_casting, *str_no;

void
so_reduction_info(int entry, PyObject **canonical, int *op, int *mean)
{
    *canonical = canonicals[entry];
    *mean = reduction_names[entry].op == SO_MEAN_OP;
    *op = *mean ? SO_ADD : reduction_names[entry].op;
}

PyObject *
so_reduction_ufunc(int op)
{
    return op > SO_NONE && op < SO_COUNT ? ufuncs[op] : Py_None;
}

int
so_args_init(void)
{
    static const char *const ufunc_names[SO_NOPS] = {
        NULL, "add", "subtract", "multiply", "maximum", "minimum", NULL};
    PyObject *np;
    int i;
    if (names[0] != NULL) return 0;
    for (i = 0; i < N_REDUCTIONS; i++) {
        names[i] = PyUnicode_InternFromString(reduction_names[i].name);
        canonicals[i] = PyUnicode_InternFromString(reduction_names[i].canonical);
        if (names[i] == NULL || canonicals[i] == NULL) return -1;
    }
    str_casting = PyUnicode_InternFromString("casting");
    str_no = PyUnicode_InternFromString("no");
    if (str_casting == NULL || str_no == NULL) return -1;
    np = PyImport_ImportModule("numpy");
    if (np == NULL) return -1;
    for (i = 0; i < SO_NOPS; i++) {
        if (ufunc_names[i] == NULL) continue;
        ufuncs[i] = PyObject_GetAttrString(np, ufunc_names[i]);
        if (ufuncs[i] == NULL) {
            Py_DECREF(np);
            return -1;
        }
    }
    Py_DECREF(np);
    return 0;
}

PyObject *
so_reduction_table(void)
{
    PyObject *d = PyDict_New();
    int i;
    if (d == NULL) return NULL;
    for (i = 0; i < N_REDUCTIONS; i++) {
        if (PyDict_SetItem(d, names[i], canonicals[i]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* The entry of reduction_names, or -1 with the error raised. */
int
so_parse_reduction(const char *func, PyObject *r)
{
    int i;
    for (i = 0; i < N_REDUCTIONS; i++) {
        if (r == names[i]) return i;         /* interned: string literals in user code */
    }
    if (!PyUnicode_Check(r)) {
        return so_fail("reduction_type", func, "{sO}", "got", (PyObject *)Py_TYPE(r));
    }
    /* compared as whole strings: a name with a NUL in it ("mean\0") is no name */
    for (i = 0; i < N_REDUCTIONS; i++) {
        if (PyUnicode_CompareWithASCIIString(r, reduction_names[i].name) == 0) return i;
    }
    return so_fail("reduction_value", func, "{sO}", "got", r);
}

/* Whether NumPy's ufunc has the loop (d, d) -> d for this op: asked of NumPy
 * itself, for the dtypes without a C loop (1 yes, 0 no, -1 error). */
static int
numpy_has_loop(int op, PyArray_Descr *d)
{
    PyArray_Descr *native;
    PyObject *types, *kw, *res;
    int ok = 1;
    Py_ssize_t j;
    native = PyArray_ISNBO(d->byteorder) ? (Py_INCREF(d), d) : PyArray_DescrNewByteorder(d, NPY_NATIVE);
    if (native == NULL) return -1;
    types = PyTuple_Pack(3, (PyObject *)native, (PyObject *)native, (PyObject *)native);
    kw = Py_BuildValue("{OO}", str_casting, str_no);
    if (types == NULL || kw == NULL) {
        Py_XDECREF(types);
        Py_XDECREF(kw);
        Py_DECREF(native);
        return -1;
    }
    {
        PyObject *meth = PyObject_GetAttrString(ufuncs[op], "resolve_dtypes");
        PyObject *args = meth ? PyTuple_Pack(1, types) : NULL;
        res = args ? PyObject_Call(meth, args, kw) : NULL;
        Py_XDECREF(meth);
        Py_XDECREF(args);
    }
    Py_DECREF(types);
    Py_DECREF(kw);
    if (res == NULL) {
        Py_DECREF(native);
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    for (j = 0; j < PyTuple_GET_SIZE(res) && ok; j++) {
        PyObject *t = PyTuple_GET_ITEM(res, j);
        ok = PyArray_DescrCheck(t) && PyArray_EquivTypes((PyArray_Descr *)t, native);
    }
    Py_DECREF(res);
    Py_DECREF(native);
    return ok;
}

/* The contract: a reduction is defined where NumPy's ufunc has the (dtype,
 * dtype) -> dtype loop; mean also needs a division rule (kinds i, u, f, c, m,
 * O).  The C kernels exist exactly for loops NumPy has; other dtypes ask NumPy. */
int
so_check_reduction(const char *func, int entry, PyObject *given, PyArray_Descr *d,
                   so_kernel *kn)
{
    int op = reduction_names[entry].op, mean = op == SO_MEAN_OP, has;
    if (op == SO_NONE) {
        /* every dtype; structured dtypes holding objects take the fallback */
        if (PyDataType_REFCHK(d) && d->type_num != NPY_OBJECT) return 0;
        so_assign_kernel(kn, PyDataType_ELSIZE(d), d->type_num == NPY_OBJECT);
        return 1;
    }
    if (mean) op = SO_ADD;
    if (so_reduce_kernel(kn, d, op)) {
        if (!mean) return 1;
        /* bool has no division rule, nor has ml_dtypes' bfloat16 (kind 'V') */
        if (strchr("iufc", d->kind) != NULL) return so_has_mean_kernel(d);
        has = 0;
    }
    else {
        has = numpy_has_loop(op, d);
        if (has < 0) return -1;
        if (has && (!mean || strchr("iufcmO", d->kind) != NULL)) return 0;
    }
    return so_fail("reduction_dtype", func, "{sOsOsOsOsO}", "reduction", canonicals[entry],
                   "given", given, "dtype", (PyObject *)d, "mean", mean ? Py_True : Py_False,
                   "ufunc", ufuncs[op]);
}

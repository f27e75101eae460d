/*
 * public.c: the three public functions, scatter_update, scatter_nd and
 * scatter_elements, as C functions (vectorcall, no Python frame, which is a
 * large share of a tiny call's cost: docs/design.md, "The cost of a small
 * call").  This file binds the argument list as Python would bind the
 * signature, reads the thread count once, and hands the call to args.c and
 * call.c.
 */
#include "py/py.h"

enum { P_DATA, P_INDICES, P_UPDATES, P_AXIS, P_REDUCTION, P_INCLUDE_SELF, P_MODE, P_OUT, NPARAMS };
static const char *const param_names[NPARAMS] = {
    "data", "indices", "updates", "axis", "reduction", "include_self", "mode", "out"};
static PyObject *param_strs[NPARAMS], *str_none;

static int
param_index(PyObject *key, int has_axis)
{
    int p;
    for (p = 0; p < NPARAMS; p++) {
        if (key == param_strs[p]) break;             /* interned: the usual case */
    }
    if (p == NPARAMS) {
        for (p = 0; p < NPARAMS; p++) {
            if (PyUnicode_CompareWithASCIIString(key, param_names[p]) == 0) break;
        }
    }
    if (p == P_AXIS && !has_axis) return -1;
    return p < NPARAMS ? p : -1;
}

static PyObject *
public_call(int kind, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *func = so_func_names[kind];
    const int has_axis = kind != SO_ND, npos = has_axis ? 4 : 3;
    PyObject *v[NPARAMS] = {NULL, NULL, NULL, NULL, str_none, Py_True, NULL, Py_None};
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, j;
    int given[NPARAMS] = {0}, missing = 0, nthreads;
    so_args a;
    PyObject *res;

    if (nargs > npos) {
        so_fail("too_many_positional", func, "{sisn}", "takes", npos, "given", (Py_ssize_t)nargs);
        return NULL;
    }
    for (j = 0; j < nargs; j++) {
        v[j] = args[j];
        given[j] = 1;
    }
    for (j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j);
        int p = param_index(key, has_axis);
        if (p < 0) {
            so_fail("unexpected_keyword", func, "{sO}", "name", key);
            return NULL;
        }
        if (given[p]) {
            so_fail("multiple_values", func, "{sO}", "name", key);
            return NULL;
        }
        v[p] = args[nargs + j];
        given[p] = 1;
    }
    for (j = P_DATA; j <= P_UPDATES; j++) missing += !given[j];
    if (missing) {
        so_fail("missing_positional", func, "{s(OOO)}", "given", given[0] ? Py_True : Py_False,
                given[1] ? Py_True : Py_False, given[2] ? Py_True : Py_False);
        return NULL;
    }
    nthreads = so_settings_threads();     /* read once, passed down */
    if (so_args_parse(&a, kind, v[P_DATA], v[P_INDICES], v[P_UPDATES], v[P_AXIS], v[P_REDUCTION],
                      v[P_INCLUDE_SELF], v[P_MODE], v[P_OUT]) < 0) {
        return NULL;
    }
    res = so_call_run(&a, nthreads);
    if (res != NULL && a.out != NULL && res != v[P_OUT]) {
        /* out was a subclass, written through a plain view: the user's own out */
        Py_DECREF(res);
        res = v[P_OUT];
        Py_INCREF(res);
    }
    so_args_clear(&a);
    return res;
}

#define SO_PUBLIC(NAME, KIND)                                                           \
static PyObject *                                                                     \
NAME(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)      \
{                                                                                     \
    (void)self;                                                                       \
    return public_call(KIND, args, nargs, kwnames);                                   \
}
SO_PUBLIC(public_update, SO_UPDATE)
SO_PUBLIC(public_nd, SO_ND)
SO_PUBLIC(public_elements, SO_ELEMENTS)

/* make_public(name, kind, doc, module): the public function of kind, named
 * name with docstring doc (its first lines the text signature).  Its
 * PyMethodDef and doc live as long as the process. */
PyObject *
so_make_public(PyObject *self, PyObject *args)
{
    static const PyCFunction entries[3] = {
        (PyCFunction)(void (*)(void))public_update, (PyCFunction)(void (*)(void))public_nd,
        (PyCFunction)(void (*)(void))public_elements};
    const char *name, *doc;
    int kind, p;
    PyObject *module;
    PyMethodDef *def;
    char *name_copy, *doc_copy;
    size_t name_len, doc_len;
    (void)self;
    if (!PyArg_ParseTuple(args, "sisU:make_public", &name, &kind, &doc, &module)) return NULL;
    if (kind < SO_UPDATE || kind > SO_ELEMENTS) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core.make_public: kind");
        return NULL;
    }
    if (str_none == NULL) {
        str_none = PyUnicode_InternFromString("none");
        if (str_none == NULL) return NULL;
        for (p = 0; p < NPARAMS; p++) {
            param_strs[p] = PyUnicode_InternFromString(param_names[p]);
            if (param_strs[p] == NULL) return NULL;
        }
    }
    name_len = strlen(name) + 1;
    doc_len = strlen(doc) + 1;
    def = PyMem_RawCalloc(1, sizeof *def);
    name_copy = PyMem_RawMalloc(name_len);
    doc_copy = PyMem_RawMalloc(doc_len);
    if (def == NULL || name_copy == NULL || doc_copy == NULL) {
        PyMem_RawFree(def);
        PyMem_RawFree(name_copy);
        PyMem_RawFree(doc_copy);
        return PyErr_NoMemory();
    }
    memcpy(name_copy, name, name_len);
    memcpy(doc_copy, doc, doc_len);
    def->ml_name = name_copy;
    def->ml_meth = entries[kind];
    def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
    def->ml_doc = doc_copy;
    return PyCFunction_NewEx(def, NULL, module);
}

/*
 * py/groups_args.c: a group reduction's arguments as the user wrote them,
 * checked and normalised (groups_args.h): values, axis, func, the group ids or
 * the segment offsets, size, mode, ddof, dtype=, out and fill_value.  Every
 * check is made before anything is written; the messages live in
 * scatterops/_messages.py.
 */
#include "py/groups_args.h"

#include <string.h>

#include <math.h>

const char *const so_group_names[SO_GK_N] = {
    "group_reduce", "segment_reduce", "group_softmax", "segment_softmax"
};

/* func names, by SO_GF_*, and whether each has a nan-variant */
static const char *const func_names[SO_GF_N] = {
    "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "first", "last",
    "any", "all", "count", "logsumexp", "softmax", "log_softmax"
};
static const char has_nan[SO_GF_N] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0};

static int
parse_func(so_group_args *a, PyObject *func)
{
    PyObject *name = func;
    const char *s;
    int f, callable = !PyUnicode_Check(func);
    if (callable) {
        name = PyCallable_Check(func) ? PyObject_GetAttrString(func, "__name__") : NULL;
        if (name == NULL || !PyUnicode_Check(name)) {
            PyErr_Clear();
            Py_XDECREF(name);
            return so_fail("group_func_type", a->name, "{sO}", "got", func);
        }
        a->owned_name = name;
    }
    a->func_name = name;
    s = PyUnicode_AsUTF8(name);
    if (s == NULL) return -1;
    /* NumPy's functions by their names: np.amax is "amax" */
    if (callable && strcmp(s, "amax") == 0) s = "max";
    if (callable && strcmp(s, "amin") == 0) s = "min";
    a->skipnan = strncmp(s, "nan", 3) == 0;
    if (a->skipnan) s += 3;
    for (f = 0; f < SO_GF_SOFTMAX; f++) {
        if (strcmp(s, func_names[f]) == 0 && (!a->skipnan || has_nan[f]) &&
                (!callable || (f != SO_GF_FIRST && f != SO_GF_LAST && f != SO_GF_COUNT &&
                               f != SO_GF_LOGSUMEXP))) {
            a->func = f;
            return 0;
        }
    }
    if (callable) return so_fail("group_func_type", a->name, "{sO}", "got", func);
    return so_fail("group_func_value", a->name, "{sO}", "got", func);
}

static int
parse_axis(so_group_args *a, PyObject *axis)
{
    const int r = PyArray_NDIM(a->values);
    Py_ssize_t v;
    if (PyBool_Check(axis) || PyArray_IsScalar(axis, Bool)) return so_fail("axis_bool", a->name, NULL);
    v = PyNumber_AsSsize_t(axis, PyExc_OverflowError);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return so_fail("axis_type", a->name, "{sO}", "got", (PyObject *)Py_TYPE(axis));
        }
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
        PyErr_Clear();
        v = PY_SSIZE_T_MAX;
    }
    if (v < -r || v >= r) return so_fail("axis_range", a->name, "{sOsi}", "axis", axis, "ndim", r);
    a->axis = (int)(v < 0 ? v + r : v);
    return 0;
}

/* A non-negative int argument (size=, ddof=): 0, or -1 raised. */
static int
parse_count(so_group_args *a, const char *arg, PyObject *o, npy_intp *v, int may_be_negative)
{
    Py_ssize_t n;
    if (PyBool_Check(o) || !PyIndex_Check(o)) {
        return so_fail("group_int_type", a->name, "{sssO}", "name", arg, "got", (PyObject *)Py_TYPE(o));
    }
    n = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
        PyErr_Clear();
        return so_fail("group_int_value", a->name, "{sssO}", "name", arg, "got", o);
    }
    if (n < 0 && !may_be_negative) return so_fail("group_int_value", a->name, "{sssO}", "name", arg, "got", o);
    *v = (npy_intp)n;
    return 0;
}

/* The ids or offsets argument: a 1-D integer array, as C-contiguous intp
 * (copy: a fresh copy, so that nobody rewrites it during the call); the
 * group ids (copy 0) of native int32 stay int32 (the loops read both).
 * *given (unless NULL): the argument as an array, before the conversion. */
static PyArrayObject *
parse_ids(so_group_args *a, const char *arg, PyObject *o, int copy, PyArrayObject **given)
{
    PyArrayObject *i = so_as_array(a->name, arg, o), *p, *c;
    PyArray_Descr *d;
    if (i == NULL) return NULL;
    if (given != NULL) {
        Py_INCREF(i);
        *given = i;
    }
    d = PyArray_DESCR(i);
    if (d->kind != 'i' && d->kind != 'u' && so_size(i) != 0) {
        so_fail("group_ids_dtype", a->name, "{sssO}", "name", arg, "dtype", (PyObject *)d);
        Py_DECREF(i);
        return NULL;
    }
    if (PyArray_NDIM(i) != 1) {
        so_fail("group_ids_rank", a->name, "{sssN}", "name", arg, "shape", SHAPE(i));
        Py_DECREF(i);
        return NULL;
    }
    if (!copy && d->type_num == NPY_INT32 && PyArray_ISNBO(d->byteorder)) {
        c = (PyArrayObject *)PyArray_FromAny((PyObject *)i, PyArray_DescrFromType(NPY_INT32), 1, 1,
                                             NPY_ARRAY_CARRAY, NULL);
        Py_DECREF(i);
        return c;
    }
    p = (d->kind == 'i' || d->kind == 'u') ? so_as_intp(a->name, i) : (Py_INCREF(i), i);
    Py_DECREF(i);
    if (p == NULL) return NULL;
    c = (PyArrayObject *)PyArray_FromAny((PyObject *)p, PyArray_DescrFromType(NPY_INTP), 1, 1,
                                         NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST |
                                         (copy ? NPY_ARRAY_ENSURECOPY : 0), NULL);
    Py_DECREF(p);
    return c;
}

static int
parse_groups(so_group_args *a, PyObject *groups, PyObject *size, int drop)
{
    npy_intp k, m, len;
    a->gid = parse_ids(a, "groups", groups, 0, &a->given_ids);
    if (a->gid == NULL) return -1;
    len = PyArray_DIM(a->gid, 0);
    a->implied_size = size == Py_None;
    if (size != Py_None) {
        if (parse_count(a, "size", size, &a->size, 0) < 0) return -1;
    }
    else if (PyArray_TYPE(a->gid) == NPY_INT32) {
        const npy_int32 *g = (const npy_int32 *)PyArray_DATA(a->gid);
        for (k = 0, m = -1; k < len; k++) m = g[k] > m ? g[k] : m;
        a->size = m + 1;
    }
    else {
        const npy_intp *g = (const npy_intp *)PyArray_DATA(a->gid);
        for (k = 0, m = -1; k < len; k++) m = g[k] > m ? g[k] : m;
        a->size_overflow = m == NPY_MAX_INTP;
        a->size = a->size_overflow ? m : m + 1;
    }
    a->drop = drop;
    return 0;
}

int
so_group_bad_id_error(const so_group_args *a, npy_intp k)
{
    const int softmax = a->func == SO_GF_SOFTMAX || a->func == SO_GF_LOG_SOFTMAX;
    /* the id as given: a uint64 id past intp's range reads as intp's max in gid */
    PyObject *v = PyArray_GETITEM(a->given_ids, PyArray_GETPTR1(a->given_ids, k));
    if (v == NULL) return -1;
    return so_fail("group_id_range", a->name, "{snsNsnsi}", "pos", (Py_ssize_t)k, "value", v,
                   "size", (Py_ssize_t)a->size, "has_mode", !softmax);
}

static int
parse_indptr(so_group_args *a, PyObject *indptr)
{
    a->indptr = parse_ids(a, "indptr", indptr, 1, NULL);
    if (a->indptr == NULL) return -1;
    a->size = PyArray_DIM(a->indptr, 0) - 1;
    return 0;
}

/* The group table (size groups times the feature positions, the cells of
 * the result and of the loops' scratch) within SO_GROUP_MAX_CELLS: 0, or -1
 * with the ValueError that names size (docs/contract.md). */
static int
check_table(const so_group_args *a)
{
    npy_intp features = 1;
    int d, over = a->size_overflow;
    if (a->size_overflow) goto too_large;
    if (a->size == 0) return 0;                                           /* no cells */
    for (d = 0; d < PyArray_NDIM(a->values); d++) {
        if (d != a->axis && PyArray_DIM(a->values, d) == 0) return 0;
    }
    for (d = 0; d < PyArray_NDIM(a->values) && !over; d++) {
        const npy_intp s = PyArray_DIM(a->values, d);
        if (d == a->axis) continue;
        if (features > SO_GROUP_MAX_CELLS / s) over = 1;
        else features *= s;
    }
    if (!over && a->size > SO_GROUP_MAX_CELLS / features) over = 1;
    if (!over) return 0;
too_large:
    return so_fail("group_table_size", a->name, "{sKsnsi}", "size",
                   (unsigned long long)a->size + (a->size_overflow ? 1u : 0u), "max",
                   (Py_ssize_t)SO_GROUP_MAX_CELLS, "given", a->kind == SO_GK_SEGMENT ||
                   a->kind == SO_GK_SEGMENT_SOFTMAX || !a->implied_size);
}

int
so_group_check_ids(const so_group_args *a)
{
    const npy_intp n = PyArray_DIM(a->values, a->axis);
    const int cover = a->kind == SO_GK_SEGMENT_SOFTMAX;
    const npy_intp *p;
    npy_intp k, len;
    if (a->indptr == NULL) {
        len = PyArray_DIM(a->gid, 0);
        if (len != n) {
            return so_fail("group_ids_length", a->name, "{snsnsi}", "got", (Py_ssize_t)len,
                           "want", (Py_ssize_t)n, "axis", a->axis);
        }
        return check_table(a);
    }
    len = PyArray_DIM(a->indptr, 0);
    if (len < 1) return so_fail("group_indptr_empty", a->name, NULL);
    p = (const npy_intp *)PyArray_DATA(a->indptr);
    for (k = 0; k < len; k++) {
        const npy_intp lo = k == 0 ? 0 : p[k - 1];
        if (p[k] < lo || p[k] > n || (cover && k == 0 && p[k] != 0) ||
                (cover && k == len - 1 && p[k] != n)) {
            return so_fail("group_indptr_value", a->name, "{snsnsnsi}", "pos", (Py_ssize_t)k,
                           "value", (Py_ssize_t)p[k], "n", (Py_ssize_t)n, "cover", cover);
        }
    }
    return check_table(a);
}

static int
parse_mode(so_group_args *a, PyObject *mode, int *drop)
{
    if (!PyUnicode_Check(mode)) return so_fail("group_mode_type", a->name, "{sO}", "got", (PyObject *)Py_TYPE(mode));
    if (PyUnicode_CompareWithASCIIString(mode, "raise") == 0) *drop = 0;
    else if (PyUnicode_CompareWithASCIIString(mode, "drop") == 0) *drop = 1;
    else return so_fail("group_mode_value", a->name, "{sO}", "got", mode);
    return 0;
}

int
so_group_args_parse(so_group_args *a, int kind, PyObject *values, PyObject *ids,
                    PyObject *func, PyObject *size, PyObject *axis, PyObject *ddof,
                    PyObject *dtype, PyObject *mode, PyObject *out, int log)
{
    int drop = 0;
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->name = so_group_names[kind];
    a->fill_value = Py_None;
    /* in the reference's order: a call with two faults names the same one */
    if (kind == SO_GK_GROUP_SOFTMAX || kind == SO_GK_SEGMENT_SOFTMAX) {
        a->func = log ? SO_GF_LOG_SOFTMAX : SO_GF_SOFTMAX;
        a->func_name = PyUnicode_FromString(log ? "log_softmax" : "softmax");
        a->owned_name = a->func_name;
        if (a->func_name == NULL) return -1;
    }
    else if (parse_func(a, func) < 0) {
        return -1;
    }
    if (kind == SO_GK_GROUP && parse_mode(a, mode, &drop) < 0) return -1;
    a->values = so_as_array(a->name, "values", values);
    if (a->values == NULL) return -1;
    if (PyArray_NDIM(a->values) == 0) return so_fail("group_values_0d", a->name, NULL);
    if (parse_axis(a, axis) < 0) return -1;
    if (kind == SO_GK_GROUP || kind == SO_GK_GROUP_SOFTMAX) {
        if (parse_groups(a, ids, size, drop) < 0) return -1;
    }
    else if (parse_indptr(a, ids) < 0) {
        return -1;
    }
    if (parse_count(a, "ddof", ddof, &a->ddof, 1) < 0) return -1;
    if (dtype != Py_None && !PyArray_DescrConverter2(dtype, &a->dtype)) return -1;
    return 0;
}

void
so_group_args_clear(so_group_args *a)
{
    Py_CLEAR(a->owned_name);
    Py_CLEAR(a->values);
    Py_CLEAR(a->gid);
    Py_CLEAR(a->given_ids);
    Py_CLEAR(a->indptr);
    Py_CLEAR(a->dtype);
    Py_CLEAR(a->out);
}

int
so_group_check_out(so_group_args *a, PyObject *out, int nd, const npy_intp *dims,
                   PyArray_Descr *rd)
{
    PyArrayObject *o;
    if (out == Py_None) return 0;
    if (!PyArray_Check(out)) return so_fail("out_type", a->name, "{sO}", "got", (PyObject *)Py_TYPE(out));
    o = so_plain_array(a->name, "out", (PyArrayObject *)out);
    if (o == NULL) return -1;
    a->out = o;
    if (PyArray_NDIM(o) != nd || !PyArray_CompareLists(PyArray_DIMS(o), dims, nd)) {
        return so_fail("group_out_shape", a->name, "{sNsN}", "got", SHAPE(o), "want",
                       so_shape_tuple(nd, dims));
    }
    if (!PyArray_EquivTypes(PyArray_DESCR(o), rd)) {
        return so_fail("group_out_dtype", a->name, "{sOsO}", "got", (PyObject *)PyArray_DESCR(o),
                       "want", (PyObject *)rd);
    }
    if (!PyArray_ISWRITEABLE(o)) return so_fail("out_readonly", a->name, NULL);
    return 0;
}

/* The default fill value of the func: numpy_groupies' (NaN: 0 for an integer
 * or bool result). */
static PyObject *
default_fill(const so_group_args *a, PyArray_Descr *rd)
{
    const int f = a->func;
    if (f == SO_GF_SUM || f == SO_GF_COUNT) return PyLong_FromLong(0);
    if (f == SO_GF_PROD) return PyLong_FromLong(1);
    if (f == SO_GF_ANY || f == SO_GF_ALL) Py_RETURN_FALSE;
    if (f == SO_GF_ARGMAX || f == SO_GF_ARGMIN) return PyLong_FromLong(-1);
    if (f == SO_GF_LOGSUMEXP) return PyFloat_FromDouble(-Py_HUGE_VAL);
    if (rd->kind == 'b' || rd->kind == 'i' || rd->kind == 'u') return PyLong_FromLong(0);
    return PyFloat_FromDouble(Py_NAN);
}

/* A NaN, an infinity or a value outside the range of an integer result is
 * refused: 0 good, -1 raised. */
static int
check_int_fill(const so_group_args *a, PyObject *fill, PyArrayObject *fa, PyArray_Descr *rd)
{
    PyObject *item, *lo, *hi, *as_int = NULL;
    int bad = 0;
    const int bits = (int)PyDataType_ELSIZE(rd) * 8;
    if (rd->kind != 'i' && rd->kind != 'u' && rd->kind != 'b') return 0;
    if (PyArray_DESCR(fa)->kind == 'c' || PyArray_DESCR(fa)->kind == 'O' ||
            PyArray_DESCR(fa)->kind == 'f' || PyArray_DESCR(fa)->kind == 'i' ||
            PyArray_DESCR(fa)->kind == 'u' || PyArray_DESCR(fa)->kind == 'b') {
        item = PyArray_GETITEM(fa, PyArray_BYTES(fa));
        if (item == NULL) return -1;
        if (PyComplex_Check(item)) {
            Py_SETREF(item, PyObject_GetAttrString(item, "real"));
            if (item == NULL) return -1;
        }
        if (PyFloat_Check(item) && !isfinite(PyFloat_AS_DOUBLE(item))) bad = 1;
        else if (PyFloat_Check(item) || PyLong_Check(item)) as_int = PyNumber_Long(item);
        Py_DECREF(item);
        if (!bad && as_int != NULL) {
            if (rd->kind == 'b') {
                lo = PyLong_FromLong(0);
                hi = PyLong_FromLong(1);
            }
            else if (rd->kind == 'i') {
                lo = PyLong_FromLongLong(-(1LL << (bits - 2)) * 2);
                hi = PyLong_FromUnsignedLongLong((1ULL << (bits - 1)) - 1);
            }
            else {
                lo = PyLong_FromLong(0);
                hi = PyLong_FromUnsignedLongLong(bits == 64 ? ~0ULL : (1ULL << bits) - 1);
            }
            if (lo == NULL || hi == NULL ||
                    (bad = PyObject_RichCompareBool(as_int, lo, Py_LT)) < 0 ||
                    (!bad && (bad = PyObject_RichCompareBool(as_int, hi, Py_GT)) < 0)) {
                bad = -1;
            }
            Py_XDECREF(lo);
            Py_XDECREF(hi);
            Py_DECREF(as_int);
            if (bad < 0) return -1;
        }
        else if (PyErr_Occurred()) {
            return -1;
        }
    }
    if (bad) return so_fail("group_fill_value", a->name, "{sOsO}", "got", fill, "dtype", (PyObject *)rd);
    return 0;
}

PyArrayObject *
so_group_quiet_cast(PyArrayObject *a, PyArray_Descr *rd)
{
    PyObject *np = PyImport_ImportModule("numpy"), *errstate = NULL, *none = NULL, *kw = NULL;
    PyObject *es = NULL, *entered = NULL, *left;
    PyArrayObject *cast = NULL;
    if (np != NULL) errstate = PyObject_GetAttrString(np, "errstate");
    if (errstate != NULL) none = PyTuple_New(0);
    if (none != NULL) kw = Py_BuildValue("{ss}", "all", "ignore");
    if (kw != NULL) es = PyObject_Call(errstate, none, kw);
    if (es != NULL) entered = PyObject_CallMethod(es, "__enter__", NULL);
    if (entered != NULL) {
        Py_INCREF(rd);
        cast = (PyArrayObject *)PyArray_CastToType(a, rd, 0);
        left = cast != NULL ? PyObject_CallMethod(es, "__exit__", "OOO", Py_None, Py_None, Py_None)
                            : NULL;
        if (cast != NULL && left == NULL) Py_CLEAR(cast);
        Py_XDECREF(left);
        if (cast == NULL) {
            /* leave the errstate block, the error kept */
            PyObject *t, *v, *tb;
            PyErr_Fetch(&t, &v, &tb);
            Py_XDECREF(PyObject_CallMethod(es, "__exit__", "OOO", Py_None, Py_None, Py_None));
            PyErr_Restore(t, v, tb);
        }
    }
    Py_XDECREF(np);
    Py_XDECREF(errstate);
    Py_XDECREF(none);
    Py_XDECREF(kw);
    Py_XDECREF(es);
    Py_XDECREF(entered);
    return cast;
}

/* NumPy's error on the cast of a user's fill value (a ValueError, a
 * TypeError; an OverflowError becomes a ValueError) said again with the
 * argument and the result dtype named. */
static void
fill_cast_error(const so_group_args *a, PyObject *fill, PyArray_Descr *rd)
{
    PyObject *t, *v, *tb, *cls;
    if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_TypeError) &&
            !PyErr_ExceptionMatches(PyExc_OverflowError)) {
        return;
    }
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    cls = PyErr_GivenExceptionMatches(t, PyExc_TypeError) ? PyExc_TypeError : PyExc_ValueError;
    PyErr_Format(cls, "%s: fill_value=%R cannot be converted to the result dtype %S: %S", a->name,
                 fill, (PyObject *)rd, v != NULL ? v : Py_None);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

PyArrayObject *
so_group_fill(const so_group_args *a, PyArray_Descr *rd)
{
    PyObject *fill = a->fill_value;
    PyArrayObject *fa, *cast;
    int owned = 0;
    if (fill == Py_None) {
        fill = default_fill(a, rd);
        if (fill == NULL) return NULL;
        owned = 1;
    }
    fa = (PyArrayObject *)PyArray_FromAny(fill, NULL, 0, 0, 0, NULL);
    if (fa == NULL) {
        if (owned) Py_DECREF(fill);
        return NULL;
    }
    if (PyArray_NDIM(fa) != 0) {
        so_fail("group_fill_shape", a->name, "{sN}", "shape", SHAPE(fa));
        cast = NULL;
    }
    else if (!owned && check_int_fill(a, fill, fa, rd) < 0) {
        cast = NULL;
    }
    else if (owned && strchr("biufc", rd->kind) != NULL) {
        /* a default fill (0, 1, False, -1, -inf, NaN) is exact in every such dtype:
         * its cast raises no floating-point warning to silence */
        Py_INCREF(rd);
        cast = (PyArrayObject *)PyArray_CastToType(fa, rd, 0);
    }
    else {
        cast = so_group_quiet_cast(fa, rd);
        if (cast == NULL && !owned) fill_cast_error(a, fill, rd);
    }
    Py_DECREF(fa);
    if (owned) Py_DECREF(fill);
    return cast;
}

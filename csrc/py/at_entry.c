/*
 * py/at_entry.c: _core.at(ufunc, a, indices, b), scatterops.at's commonest
 * calls decided and run in C: ufunc one of _core.UFUNC_REDUCTIONS, a a plain,
 * writeable, aligned, contiguous native ndarray of a dtype with the
 * reduction's typed kernel (ml_dtypes' bfloat16 too), the index one of
 * py/at.h's forms (py/at_index.c reads it), and b
 *   - an array of a's dtype, a NumPy scalar of it, or a Python scalar that
 *     ufunc.at would compute with in a's dtype (it converts b with
 *     numpy.asarray: an int is int64, a float float64), broadcast to
 *     a[indices]'s shape as NumPy broadcasts it: the call runs in place through
 *     the public functions' own path (so_args_parse, so_call_run, out = a);
 *   - or one float64 value (a Python float, a numpy.float64, a Python int on a
 *     float a) on a float64, float32, float16 or bfloat16 a, which ufunc.at
 *     computes in float64, rounding once per update into a narrower a:
 *     kernels/at_wide.c's loop (py/at_scalar_b.c, call/at_wide_run.c), which also spares the
 *     scalar's copy to a[indices]'s shape.
 * Every other call (and large element tuples: AT_SMALL) returns
 * NotImplemented, decided before anything is written, and scatterops/_at.py
 * reads it.  An index out of range raises NumPy's IndexError, with its text,
 * and writes nothing.
 */
#include "py/at.h"

/* Calls of at most this many updates: element tuples run here as their flat
 * offsets (larger ones go to _at.py, whose at_apply makes no array of
 * offsets, and there the planning costs little), and a b that
 * broadcasts is written out to a[indices]'s shape first (the core's loops over
 * updates with a stride-0 axis are slower than the copy); docs/design.md,
 * "scatterops.at in C". */
#define AT_SMALL ((npy_intp)1 << 12)

/* _core.UFUNC_REDUCTIONS (read once from the module);
 * NumPy's context variable holding the floating-point error modes (NULL on
 * NumPy 1.x: those calls go to _at.py), numpy.geterr, and the last error-mode
 * object seen whose modes are all "ignore" or "warn" (the object is immutable:
 * np.errstate and np.seterr replace it).  All owned. */
static PyObject *ufunc_reductions, *errstate_var, *geterr, *quiet_state;

static int
load_tables(PyObject *module)
{
    PyObject *config;
    if (ufunc_reductions != NULL) return 0;
    ufunc_reductions = PyObject_GetAttrString(module, "UFUNC_REDUCTIONS");
    if (ufunc_reductions == NULL) return -1;
    config = PyImport_ImportModule("numpy._core._ufunc_config");
    if (config != NULL) {
        errstate_var = PyObject_GetAttrString(config, "_extobj_contextvar");
        geterr = PyObject_GetAttrString(config, "geterr");
        Py_DECREF(config);
    }
    if (errstate_var == NULL || geterr == NULL || !PyContextVar_CheckExact(errstate_var)) {
        PyErr_Clear();
        Py_CLEAR(errstate_var);
        Py_CLEAR(geterr);
    }
    return 0;
}

/* 1 if the error modes for overflow, invalid and divide are each "ignore" or
 * "warn" (the C kernels raise and warn nothing, as _at.py documents), 0 if one
 * raises, calls, prints or logs (NumPy's ufunc.at runs the call), -1 raised. */
static int
fp_modes_quiet(void)
{
    static const char *const keys[] = {"over", "invalid", "divide"};
    PyObject *state, *err, *v;
    int quiet = 1, k;
    if (errstate_var == NULL) return 0;
    if (PyContextVar_Get(errstate_var, NULL, &state) < 0) return -1;
    if (state == NULL) return 0;
    if (state == quiet_state) {
        Py_DECREF(state);
        return 1;
    }
    err = PyObject_CallNoArgs(geterr);
    if (err == NULL) {
        Py_DECREF(state);
        return -1;
    }
    for (k = 0; k < 3 && quiet; k++) {
        v = PyDict_Check(err) ? PyDict_GetItemString(err, keys[k]) : NULL;
        quiet = v != NULL && PyUnicode_Check(v) &&
                (PyUnicode_CompareWithASCIIString(v, "ignore") == 0 ||
                 PyUnicode_CompareWithASCIIString(v, "warn") == 0);
    }
    Py_DECREF(err);
    if (quiet) Py_XSETREF(quiet_state, state);
    else Py_DECREF(state);
    return quiet;
}

/* a is a plain, writeable, aligned, contiguous (no two elements share memory),
 * native ndarray. */
static int
plain_layout(PyObject *o)
{
    PyArrayObject *a = (PyArrayObject *)o;
    return PyArray_CheckExact(o) && PyArray_NDIM(a) >= 1 && PyArray_ISWRITEABLE(a) &&
           PyArray_ISALIGNED(a) && (PyArray_IS_C_CONTIGUOUS(a) || PyArray_IS_F_CONTIGUOUS(a)) &&
           PyArray_ISNBO(PyArray_DESCR(a)->byteorder);
}

/* a (plain_layout) is of a dtype with op's typed kernel. */
static int
typed(PyArrayObject *a, int op)
{
    so_kernel kn;
    return so_reduce_kernel(&kn, PyArray_DESCR(a), op) && !kn.needs_gil;
}

/* The reduction entry of ufunc in _core.UFUNC_REDUCTIONS (*name its name
 * there, borrowed), or -1 when it has none (nothing raised), -2 raised.  The
 * last ufunc found is kept, with references (its address then names it): a
 * loop calls at with one ufunc. */
static int
ufunc_entry(PyObject *ufunc, PyObject **name)
{
    static PyObject *last, *last_name;
    static int last_entry;
    int entry;
    if (ufunc == last) {
        *name = last_name;
        return last_entry;
    }
    if (Py_TYPE(ufunc)->tp_hash == PyObject_HashNotImplemented) return -1;
    *name = PyDict_GetItemWithError(ufunc_reductions, ufunc);
    if (*name == NULL) return PyErr_Occurred() ? -2 : -1;
    entry = so_parse_reduction("at", *name);
    if (entry < 0) return -2;
    Py_INCREF(ufunc);
    Py_INCREF(*name);
    Py_XSETREF(last, ufunc);
    Py_XSETREF(last_name, *name);
    last_entry = entry;
    return entry;
}

/* b is one value that ufunc.at computes with in float64 (numpy.asarray(b) is a
 * float64 array, or an int64 one, which promotes with a float16 or float32 a
 * to float64; ml_dtypes' bfloat16 does not promote with int64): 1 with *v
 * its value, 0 if not, -1 raised. */
static int
b_as_float64(PyObject *b, PyArrayObject *a, double *v)
{
    if (PyFloat_CheckExact(b)) {
        *v = PyFloat_AS_DOUBLE(b);
        return 1;
    }
    if (Py_TYPE(b) == &PyDoubleArrType_Type) {      /* a subclass of float */
        *v = PyFloat_AsDouble(b);
        return *v != -1.0 || !PyErr_Occurred() ? 1 : -1;
    }
    if (PyLong_CheckExact(b) && PyArray_DESCR(a)->kind == 'f') {
        int ovf;
        long long x = PyLong_AsLongLongAndOverflow(b, &ovf);
        if (x == -1 && PyErr_Occurred()) return -1;
        *v = (double)x;                /* NumPy's int64 to float64 cast */
        return !ovf;
    }
    return 0;
}

/* ufunc.at computes b with a in a's dtype (numpy.asarray(b) promotes with a to
 * it, or for a Python int in range, to a wider integer of the same result):
 * 1 with *nd b's rank, 0 if not (NumPy's promotion or a conversion decides),
 * -1 raised. */
static int
b_in_a_dtype(PyObject *b, PyArrayObject *a, int *nd)
{
    const int t = PyArray_TYPE(a);
    PyArray_Descr *d = PyArray_DESCR(a);
    *nd = 0;
    if (PyArray_CheckExact(b)) {
        *nd = PyArray_NDIM((PyArrayObject *)b);
        return PyArray_TYPE((PyArrayObject *)b) == t &&
               PyArray_ISNBO(PyArray_DESCR((PyArrayObject *)b)->byteorder);
    }
    if (PyFloat_CheckExact(b)) return t == NPY_DOUBLE || t == NPY_CDOUBLE;
    if (PyComplex_CheckExact(b)) return t == NPY_CDOUBLE;
    if (PyLong_CheckExact(b)) {
        /* as int64: exact in an integer a whose range holds the value (the
         * result, computed wider, casts back to the same), float64 rounds it */
        int ovf, bits = (int)PyDataType_ELSIZE(d) * 8;
        long long v = PyLong_AsLongLongAndOverflow(b, &ovf);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (ovf) return 0;
        if (t == NPY_DOUBLE || t == NPY_CDOUBLE) return 1;
        if (d->kind == 'i') {
            return bits >= 64 || (v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1)));
        }
        /* uint64 with int64 promotes to float64 */
        return d->kind == 'u' && bits < 64 && v >= 0 && v < (1LL << bits);
    }
    if (PyArray_IsScalar(b, Generic)) {
        PyArray_Descr *bd = PyArray_DescrFromScalar(b);
        const int same = bd != NULL && bd->type_num == t && PyArray_ISNBO(bd->byteorder);
        Py_XDECREF(bd);
        return bd == NULL ? -1 : same;
    }
    return 0;
}

/* The run of an array along an axis raised: an IndexError (nothing written)
 * gets NumPy's text (element tuples raise it while their offsets are made). */
static void
index_error_text(PyArrayObject *a, const at_index *ix)
{
    PyObject *t, *e, *tb;
    if (ix->form != AT_ALONG || !PyErr_ExceptionMatches(PyExc_IndexError)) return;
    PyErr_Fetch(&t, &e, &tb);
    if (so_at_raise_first_bad(ix->idx, PyArray_DIM(a, ix->axis), ix->axis) == 0) {
        PyErr_Restore(t, e, tb);
        return;
    }
    Py_XDECREF(t); Py_XDECREF(e); Py_XDECREF(tb);
}

/* b written out to a[indices]'s shape (a new array of a's dtype) when it
 * broadcasts to it and the call is small, else b itself (a new reference);
 * NULL raised. */
static PyObject *
written_out(PyArrayObject *a, const at_index *ix, PyObject *b, npy_intp size)
{
    PyArrayObject *u;
    int d, full = PyArray_CheckExact(b) && PyArray_NDIM((PyArrayObject *)b) == ix->nd;
    for (d = 0; full && d < ix->nd; d++) full = PyArray_DIM((PyArrayObject *)b, d) == ix->dims[d];
    if (full || size > AT_SMALL) {
        Py_INCREF(b);
        return b;
    }
    Py_INCREF(PyArray_DESCR(a));
    u = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(a), ix->nd, ix->dims,
                                              NULL, NULL, 0, NULL);
    if (u != NULL && (PyArray_Check(b) ? PyArray_CopyInto(u, (PyArrayObject *)b)
                                        : PyArray_FillWithScalar(u, b)) < 0) {
        Py_CLEAR(u);
    }
    return (PyObject *)u;
}

/* A writeable 1-d view of a's memory (a contiguous), NULL raised. */
static PyObject *
memory_of(PyArrayObject *a)
{
    npy_intp span = so_size(a), item = PyArray_ITEMSIZE(a);
    PyObject *m;
    Py_INCREF(PyArray_DESCR(a));
    m = PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(a), 1, &span, &item, PyArray_DATA(a),
                             NPY_ARRAY_CARRAY, NULL);
    if (m != NULL) {
        Py_INCREF(a);
        if (PyArray_SetBaseObject((PyArrayObject *)m, (PyObject *)a) < 0) Py_CLEAR(m);
    }
    return m;
}

/* The call through the public functions' path, in place: an array along an
 * axis as scatter_elements (1-d a and index) or scatter_update; element
 * tuples as their flat offsets into a's memory, the same way.  0, or -1 raised. */
static int
run_public(PyArrayObject *a, const at_index *ix, PyObject *b, PyObject *name, npy_intp size,
           int nthreads)
{
    PyObject *data = (PyObject *)a, *axis = NULL, *res = NULL, *upd;
    PyArrayObject *idx = ix->idx;
    int kind;
    so_args sa;
    if (ix->form == AT_ELEMENT_TUPLES) {
        idx = so_at_flat_offsets(a, ix, size);
        data = idx == NULL ? NULL : memory_of(a);
        if (data == NULL) {
            Py_XDECREF(idx);
            return -1;
        }
    }
    else {
        Py_INCREF(idx);
        Py_INCREF(data);
    }
    kind = PyArray_NDIM((PyArrayObject *)data) == 1 && PyArray_NDIM(idx) == 1 ? SO_ELEMENTS
                                                                               : SO_UPDATE;
    if (kind == SO_UPDATE) axis = PyLong_FromLong(ix->form == AT_ALONG ? ix->axis : 0);
    upd = written_out(a, ix, b, size);
    if (upd != NULL && (kind != SO_UPDATE || axis != NULL) &&
            so_args_parse(&sa, kind, data, (PyObject *)idx, upd, axis, name, Py_True, NULL,
                          data) == 0) {
        res = so_call_run(&sa, nthreads);
        so_args_clear(&sa);
    }
    Py_XDECREF(idx);
    Py_XDECREF(data);
    Py_XDECREF(axis);
    Py_XDECREF(upd);
    Py_XDECREF(res);
    return res == NULL ? -1 : 0;
}

/* _core.at(ufunc, a, indices, b): None when done, NotImplemented when the
 * call is not one of this file's (nothing read or written), NULL raised. */
PyObject *
so_py_at(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *ufunc, *b, *name = NULL, *canonical;
    PyArrayObject *a;
    at_index ix;
    so_wide_fn wide = NULL;
    npy_intp size = 1;
    double bv = 0;
    int layout, ok, bnd = 0, rc, d, entry, op, mean;
    char kind;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "at(ufunc, a, indices, b) takes 4 arguments");
        return NULL;
    }
    if (load_tables(module) < 0) return NULL;
    ufunc = args[0];
    a = (PyArrayObject *)args[1];
    b = args[3];
    entry = ufunc_entry(ufunc, &name);
    if (entry == -2) return NULL;
    if (entry < 0) Py_RETURN_NOTIMPLEMENTED;
    so_reduction_info(entry, &canonical, &op, &mean);
    layout = plain_layout((PyObject *)a);
    /* one float64 value on a float a: the scalar loop, which computes as NumPy's
     * float64 loop does (rounding once per update into a narrower a) */
    wide = layout ? so_wide_kernel(PyArray_DESCR(a), op) : NULL;
    ok = wide != NULL ? b_as_float64(b, a, &bv) : 0;
    if (ok == 0) {
        wide = NULL;
        ok = layout && typed(a, op) ? b_in_a_dtype(b, a, &bnd) : 0;
    }
    /* the kernels raise no floating-point error: an error mode that acts is NumPy's
     * (ok > 0 only for an array a: a is read as one only then) */
    if (ok > 0) {
        kind = PyArray_DESCR(a)->kind;
        if (kind != 'b' && kind != 'i' && kind != 'u') ok = fp_modes_quiet();
    }
    if (ok > 0) ok = so_at_read_index(a, args[2], &ix);
    if (ok < 0) return NULL;
    if (ok == 0) Py_RETURN_NOTIMPLEMENTED;
    if (!so_at_b_broadcasts(b, bnd, &ix)) {
        Py_XDECREF(ix.idx);
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (wide != NULL) {
        rc = so_at_run_wide(a, &ix, bv, wide);
        Py_XDECREF(ix.idx);
        if (rc < 0) return NULL;
        Py_RETURN_NONE;
    }
    for (d = 0; d < ix.nd; d++) size *= ix.dims[d];
    if (ix.form == AT_ELEMENT_TUPLES && size > AT_SMALL) Py_RETURN_NOTIMPLEMENTED;
    Py_INCREF(name);
    rc = run_public(a, &ix, b, name, size, so_settings_threads());
    Py_DECREF(name);
    if (rc < 0) index_error_text(a, &ix);
    Py_XDECREF(ix.idx);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

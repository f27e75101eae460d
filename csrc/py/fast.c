/*
 * py/fast.c: the whole call in C for the common case, so a small call costs about
 * what NumPy's own fancy indexing costs.
 *
 * fast(kind, data, indices, updates, axis, reduction, include_self, out) takes
 * the public arguments as they come.  When they are the plain case -- ndarrays,
 * updates already of data's dtype and of the required shape, integer indices
 * all in range, a typed kernel for the reduction, out None or data itself with
 * no overlap -- it does the call and returns the result.  Anything else, every
 * error included, returns NotImplemented *before anything is written*, and the
 * Python layer (scatterops/_args.py) handles the call: it owns every error
 * message, so none is written twice.
 */
#include "py/py.h"

#define SO_GIL_RELEASE_MIN ((npy_intp)1 << 14)

/* the thread count a large call may use: module.c's setting (so_fast_init) */
static const int so_one_thread = 1;
static const int *so_num_threads = &so_one_thread;

void
so_fast_init(const int *num_threads)
{
    so_num_threads = num_threads;
}

/* interned strings and constants of the public functions (made by make_public) */
static PyObject *so_str_none, *so_str_axis, *so_str_reduction, *so_str_include_self, *so_str_out,
                *so_zero, *so_kinds[3], *so_fallbacks[3];

static const struct {
    const char *name;
    int op;
} so_reduction_names[] = {
    {"none", SO_NONE}, {"add", SO_ADD}, {"sum", SO_ADD}, {"sub", SO_SUB},
    {"mul", SO_MUL}, {"prod", SO_MUL}, {"multiply", SO_MUL},
    {"max", SO_MAX}, {"amax", SO_MAX}, {"min", SO_MIN}, {"amin", SO_MIN},
};

static int
lookup_reduction(PyObject *name)
{
    size_t i;
    const char *s;
    if (name == so_str_none) return SO_NONE;     /* the default, interned */
    if (!PyUnicode_CheckExact(name)) return -1;
    s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        PyErr_Clear();
        return -1;
    }
    for (i = 0; i < sizeof so_reduction_names / sizeof so_reduction_names[0]; i++) {
        if (strcmp(s, so_reduction_names[i].name) == 0) return so_reduction_names[i].op;
    }
    return -1;                  /* "mean" and unknown names: the Python layer */
}

/* The byte range an array's elements occupy. */
static void
extent(PyArrayObject *a, char **lo, char **hi)
{
    char *l = PyArray_BYTES(a), *h = PyArray_BYTES(a);
    int d;
    for (d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp span = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (span < 0) l += span; else h += span;
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

static int
may_overlap(PyArrayObject *a, PyArrayObject *b)
{
    char *al, *ah, *bl, *bh;
    if (PyArray_SIZE(a) == 0 || PyArray_SIZE(b) == 0) return 0;
    extent(a, &al, &ah);
    extent(b, &bl, &bh);
    return al < bh && bl < ah;
}

#define NOT_HANDLED() do { Py_XDECREF(idx); Py_RETURN_NOTIMPLEMENTED; } while (0)

/* calls with this many updates or more may check their indices while they walk
 * (py/checked.c) */
#define SO_OVERLAP_MIN ((npy_intp)1 << 16)

PyObject *
so_fast(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyArrayObject *data, *upd, *out = NULL, *idx = NULL, *result;
    PyArray_Descr *dd;
    npy_intp req[SO_MAXDIMS], bounds[SO_MAXDIMS];
    int kind, op, axis = 0, r, q, ur = 0, nbounds = 1, d;
    so_kernel kn;
    so_plan plan;
    long lkind;
    const int nthreads = *so_num_threads;    /* read once: the whole call uses it */

    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "scatterops._core.fast takes 8 arguments");
        return NULL;
    }
    lkind = PyLong_AsLong(args[0]);
    if (lkind < SO_UPDATE || lkind > SO_ELEMENTS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "scatterops._core.fast: kind");
        return NULL;
    }
    kind = (int)lkind;
    if (!PyArray_Check(args[1]) || !PyArray_Check(args[2]) || !PyArray_Check(args[3])) {
        NOT_HANDLED();
    }
    data = (PyArrayObject *)args[1];
    upd = (PyArrayObject *)args[3];
    r = PyArray_NDIM(data);
    dd = PyArray_DESCR(data);
    if (r < 1 || (dd != PyArray_DESCR(upd) && !PyArray_EquivTypes(dd, PyArray_DESCR(upd)))) {
        NOT_HANDLED();
    }
    if (args[6] != Py_True) NOT_HANDLED();                   /* include_self=False */
    op = lookup_reduction(args[5]);
    if (op < 0) NOT_HANDLED();
    if (op == SO_NONE) {
        if (PyDataType_REFCHK(dd)) NOT_HANDLED();
        so_assign_kernel(&kn, PyDataType_ELSIZE(dd), 0);
    }
    else if (!so_reduce_kernel(&kn, dd, op)) {
        NOT_HANDLED();
    }
    if (args[7] != Py_None) {
        if (args[7] != args[1] || !PyArray_ISWRITEABLE(data)) NOT_HANDLED();
        out = data;
    }

    /* indices: any native integer dtype that fits intp */
    {
        PyArrayObject *i0 = (PyArrayObject *)args[2];
        PyArray_Descr *id = PyArray_DESCR(i0);
        int tn = id->type_num;
        if (!PyArray_ISNBO(id->byteorder) || PyArray_NDIM(i0) > SO_MAXDIMS) NOT_HANDLED();
        if (PyTypeNum_ISSIGNED(tn) && PyDataType_ELSIZE(id) == (npy_intp)sizeof(npy_intp)) {
            Py_INCREF(i0);
            idx = i0;
        }
        else if (PyTypeNum_ISSIGNED(tn) || (PyTypeNum_ISUNSIGNED(tn) &&
                 PyDataType_ELSIZE(id) < (npy_intp)sizeof(npy_intp))) {
            idx = (PyArrayObject *)PyArray_Cast(i0, NPY_INTP);
            if (idx == NULL) return NULL;
        }
        else {
            NOT_HANDLED();
        }
    }
    q = PyArray_NDIM(idx);

    /* axis, and the shape updates must have */
    if (kind != SO_ND) {
        long a;
        if (!PyLong_CheckExact(args[4])) NOT_HANDLED();
        a = PyLong_AsLong(args[4]);
        if (a == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            NOT_HANDLED();
        }
        if (a < -r || a >= r) NOT_HANDLED();
        axis = (int)(a < 0 ? a + r : a);
        bounds[0] = PyArray_DIM(data, axis);
    }
    if (kind == SO_UPDATE) {
        ur = r - 1 + q;
        if (ur > SO_MAXDIMS) NOT_HANDLED();
        for (d = 0; d < axis; d++) req[d] = PyArray_DIM(data, d);
        for (d = 0; d < q; d++) req[axis + d] = PyArray_DIM(idx, d);
        for (d = axis + 1; d < r; d++) req[d - 1 + q] = PyArray_DIM(data, d);
    }
    else if (kind == SO_ND) {
        npy_intp k;
        if (q < 1) NOT_HANDLED();
        k = PyArray_DIM(idx, q - 1);
        if (k > r || k < 1) NOT_HANDLED();                   /* k == 0: the Python layer */
        ur = q - 1 + r - (int)k;
        if (ur > SO_MAXDIMS) NOT_HANDLED();                  /* req[] holds SO_MAXDIMS */
        for (d = 0; d < q - 1; d++) req[d] = PyArray_DIM(idx, d);
        for (d = (int)k; d < r; d++) req[q - 1 + d - k] = PyArray_DIM(data, d);
        for (d = 0; d < k; d++) bounds[d] = PyArray_DIM(data, d);
        nbounds = (int)k;
    }
    else {
        if (q != r) NOT_HANDLED();
        ur = r;
        for (d = 0; d < r; d++) {
            req[d] = PyArray_DIM(idx, d);
            if (d != axis && req[d] > PyArray_DIM(data, d)) NOT_HANDLED();
        }
    }
    if (PyArray_NDIM(upd) != ur) NOT_HANDLED();
    for (d = 0; d < ur; d++) {
        if (PyArray_DIM(upd, d) != req[d]) NOT_HANDLED();
    }
    if (out != NULL && (may_overlap(out, upd) || may_overlap(out, idx))) NOT_HANDLED();

    if (out == NULL && PyArray_IS_C_CONTIGUOUS(data) && PyArray_SIZE(upd) >= SO_OVERLAP_MIN &&
            nthreads > 1) {
        int bad;
        PyObject *res = so_checked_by_owners(kind, data, idx, upd, axis, &kn, nthreads, &bad);
        if (res != NULL || PyErr_Occurred()) {
            Py_DECREF(idx);
            return res;
        }
        if (bad) NOT_HANDLED();
    }

    if (out == NULL && PyArray_IS_C_CONTIGUOUS(data) && kind != SO_UPDATE &&
            PyArray_SIZE(idx) >= SO_OVERLAP_MIN && PyArray_SIZE(upd) == PyArray_SIZE(idx) &&
            PyArray_NBYTES(data) < SO_FUSED_MIN_BYTES && nthreads > 1) {
        int bad;
        PyObject *res = so_checked_while_walking(kind, data, idx, upd, axis, &kn, bounds,
                                                 nbounds, nthreads, &bad);
        if (res != NULL || PyErr_Occurred()) {
            Py_DECREF(idx);
            return res;
        }
        if (bad) NOT_HANDLED();
        /* NULL without an error: not of that shape, go on as usual */
    }

    /* every index value, before anything is written */
    if (PyArray_SIZE(idx) > 0) {
        npy_intp bad;
        if (PyArray_SIZE(idx) >= SO_GIL_RELEASE_MIN) {
            Py_BEGIN_ALLOW_THREADS
            bad = so_find_bad_index(idx, bounds, nbounds, nthreads);
            Py_END_ALLOW_THREADS
        }
        else {
            bad = so_find_bad_index(idx, bounds, nbounds, nthreads);
        }
        if (bad >= 0) NOT_HANDLED();                          /* the IndexError is Python's */
    }

    if (out == NULL && PyArray_IS_C_CONTIGUOUS(data) && PyArray_SIZE(upd) > 0 &&
            PyArray_NBYTES(data) >= SO_FUSED_MIN_BYTES) {
        /* a large contiguous data: NumPy's allocator (huge pages), left unwritten
         * until the copy of data and the updates go over it together */
        int done;
        Py_INCREF(dd);
        result = so_output_cache_new_array(dd, r, PyArray_DIMS(data));
        if (result == NULL) {
            Py_DECREF(idx);
            return NULL;
        }
        if (so_make_plan(&plan, kind, result, idx, upd, axis, NULL) < 0) {
            Py_DECREF(result);
            Py_DECREF(idx);
            return NULL;
        }
        Py_BEGIN_ALLOW_THREADS
        if (op == SO_NONE) so_dedup(&plan, kn.itemsize);
        done = so_run_copying(&plan, &kn, nthreads, PyArray_BYTES(data), PyArray_NBYTES(data));
        if (!done) {
            so_parallel_copy(PyArray_BYTES(result), PyArray_BYTES(data),
                             (size_t)PyArray_NBYTES(data), nthreads);
            so_run_threaded(&plan, &kn, nthreads);
        }
        Py_END_ALLOW_THREADS
        free(plan.win);
        Py_DECREF(idx);
        return (PyObject *)result;
    }
    if (out == NULL && (size_t)PyArray_NBYTES(data) >= SO_OUTPUT_CACHE_MIN) {
        Py_INCREF(dd);
        result = so_output_cache_new_array(dd, r, PyArray_DIMS(data));
        if (result == NULL || so_copy_to_c(result, data, nthreads) < 0) {
            Py_XDECREF(result);
            Py_DECREF(idx);
            return NULL;
        }
    }
    else if (out == NULL && PyArray_IS_C_CONTIGUOUS(data)) {
        /* a small contiguous data: one memcpy (NumPy's copy looks up a cast) */
        Py_INCREF(dd);
        result = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dd, r, PyArray_DIMS(data),
                                                       NULL, NULL, 0, NULL);
        if (result == NULL) {
            Py_DECREF(idx);
            return NULL;
        }
        memcpy(PyArray_BYTES(result), PyArray_BYTES(data), (size_t)PyArray_NBYTES(data));
    }
    else if (out == NULL) {
        result = (PyArrayObject *)PyArray_NewCopy(data, NPY_CORDER);
        if (result == NULL) {
            Py_DECREF(idx);
            return NULL;
        }
    }
    else {
        Py_INCREF(out);
        result = out;
    }
    if (PyArray_SIZE(upd) > 0) {
        if (so_make_plan(&plan, kind, result, idx, upd, axis, NULL) < 0) {
            Py_DECREF(result);
            Py_DECREF(idx);
            return NULL;
        }
        if (PyArray_SIZE(upd) >= SO_GIL_RELEASE_MIN) {
            Py_BEGIN_ALLOW_THREADS
            if (op == SO_NONE) so_dedup(&plan, kn.itemsize);
            so_run_threaded(&plan, &kn, nthreads);
            Py_END_ALLOW_THREADS
        }
        else {
            so_run(&plan, &kn);
        }
        free(plan.win);
    }
    Py_DECREF(idx);
    return (PyObject *)result;
}

/* ---- the public functions themselves ------------------------------------------
 *
 * scatter_update, scatter_nd and scatter_elements are C functions made by
 * make_public(): a call with the plain arguments goes straight to so_fast,
 * with no Python frame in between (a third of a tiny call's cost); anything
 * so_fast leaves (NotImplemented), and any argument list this parser does not
 * take as it stands, goes unchanged to the Python implementation, which checks
 * it and raises the errors.  self is (kind, fallback). */
static PyObject *
so_public(int kind_num, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *kind = so_kinds[kind_num], *fallback = so_fallbacks[kind_num];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, j;
    int has_axis = kind_num != SO_ND;
    PyObject *a[8], *res;
    if (nargs < 3 || nargs > 3 + has_axis) goto slow;
    a[0] = kind;
    a[1] = args[0];
    a[2] = args[1];
    a[3] = args[2];
    a[4] = has_axis ? (nargs > 3 ? args[3] : NULL) : Py_None;
    a[5] = so_str_none;
    a[6] = Py_True;
    a[7] = Py_None;
    for (j = 0; j < nkw; j++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, j), *v = args[nargs + j];
        if (k == so_str_reduction) a[5] = v;
        else if (k == so_str_include_self) a[6] = v;
        else if (k == so_str_out) a[7] = v;
        else if (k == so_str_axis && has_axis && nargs == 3) a[4] = v;
        else goto slow;          /* not interned, repeated or unknown: Python sorts it out */
    }
    if (a[4] == NULL) a[4] = so_zero;
    res = so_fast(NULL, a, 8);
    if (res != Py_NotImplemented) return res;
    Py_DECREF(res);
slow:
    return PyObject_Vectorcall(fallback, args, (size_t)nargs, kwnames);
}

#define SO_PUBLIC(NAME, KIND)                                                           \
static PyObject *                                                                     \
NAME(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)      \
{                                                                                     \
    return so_public(KIND, args, nargs, kwnames);                                     \
}
SO_PUBLIC(so_public_update, SO_UPDATE)
SO_PUBLIC(so_public_nd, SO_ND)
SO_PUBLIC(so_public_elements, SO_ELEMENTS)

/* make_public(name, kind, fallback, doc, module): the public function.  Its
 * PyMethodDef and doc live as long as the process (three, made at import); a
 * second call for a kind replaces its fallback. */
PyObject *
so_make_public(PyObject *self, PyObject *args)
{
    static const PyCFunction entries[3] = {
        (PyCFunction)(void (*)(void))so_public_update, (PyCFunction)(void (*)(void))so_public_nd,
        (PyCFunction)(void (*)(void))so_public_elements};
    const char *name, *doc;
    int kind;
    PyObject *fallback, *module, *fn;
    PyMethodDef *def;
    char *name_copy, *doc_copy;
    if (!PyArg_ParseTuple(args, "siOsU:make_public", &name, &kind, &fallback, &doc, &module)) {
        return NULL;
    }
    if (kind < SO_UPDATE || kind > SO_ELEMENTS || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_ValueError, "scatterops._core.make_public: kind or fallback");
        return NULL;
    }
    if (so_zero == NULL) {
        so_str_none = PyUnicode_InternFromString("none");
        so_str_axis = PyUnicode_InternFromString("axis");
        so_str_reduction = PyUnicode_InternFromString("reduction");
        so_str_include_self = PyUnicode_InternFromString("include_self");
        so_str_out = PyUnicode_InternFromString("out");
        so_zero = PyLong_FromLong(0);
        so_kinds[0] = PyLong_FromLong(0);
        so_kinds[1] = PyLong_FromLong(1);
        so_kinds[2] = PyLong_FromLong(2);
        if (!so_str_none || !so_str_axis || !so_str_reduction || !so_str_include_self ||
                !so_str_out || !so_zero || !so_kinds[0] || !so_kinds[1] || !so_kinds[2]) {
            return NULL;
        }
    }
    size_t name_len = strlen(name) + 1, doc_len = strlen(doc) + 1;
    def = PyMem_RawCalloc(1, sizeof *def);
    name_copy = PyMem_RawMalloc(name_len);
    doc_copy = PyMem_RawMalloc(doc_len);
    if (def == NULL || name_copy == NULL || doc_copy == NULL) {
        PyMem_RawFree(def); PyMem_RawFree(name_copy); PyMem_RawFree(doc_copy);
        return PyErr_NoMemory();
    }
    memcpy(name_copy, name, name_len);
    memcpy(doc_copy, doc, doc_len);
    def->ml_name = name_copy;
    def->ml_meth = entries[kind];
    def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
    def->ml_doc = doc_copy;
    fn = PyCFunction_NewEx(def, NULL, module);
    if (fn == NULL) return NULL;
    Py_INCREF(fallback);
    Py_XSETREF(so_fallbacks[kind], fallback);
    return fn;
}

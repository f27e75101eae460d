/*
 * py/groups.c: _core.group(...), the four group reductions of _groups.py.  The
 * arguments are checked (groups_args.c); then the contract's dtype table
 * chooses, for the func and the values' dtype, the dtype each member is cast
 * to, the computing type of the loops (kernels/group.h) and the result
 * dtype; the values are read as (outer, n, inner) of the computing type (a
 * cast or a copy made by NumPy only where they are not that already); the
 * call layer (call/groups.c) runs, without the GIL for a large call; the
 * result is cast to its dtype, its empty cells filled, and written to out.
 */
#include "py/groups_args.h"
#include "py/groups_dtypes.h"

#define NO_IMPORT_UFUNC
#define PY_UFUNC_UNIQUE_SYMBOL scatterops_UFUNC_API
#include <numpy/ufuncobject.h>

static const int type_nums[SO_GT_N] = {NPY_INT64, NPY_UINT64, NPY_FLOAT, NPY_DOUBLE, NPY_LONGDOUBLE,
                                       NPY_INT64};

/* The computing type that holds every value of d exactly and in order: the
 * compare-like funcs (max, min, first, last, argmax, argmin, any, all, count) */
static int
wide_type(PyArray_Descr *d)
{
    switch (d->type_num) {
    case NPY_HALF: case NPY_FLOAT: return SO_GT_F32;
    case NPY_DOUBLE: return SO_GT_F64;
    case NPY_LONGDOUBLE: return SO_GT_LD;
    case NPY_DATETIME: case NPY_TIMEDELTA: return SO_GT_DT;
    default: return PyTypeNum_ISUNSIGNED(d->type_num) ? SO_GT_U64 : SO_GT_I64;
    }
}

/* np.sum's and np.prod's result dtype for values of dtype d */
static PyArray_Descr *
sum_dtype(PyArray_Descr *d)
{
    if (d->kind == 'b' || (d->kind == 'i' && PyDataType_ELSIZE(d) < 8)) return PyArray_DescrFromType(NPY_INTP);
    if (d->kind == 'u' && PyDataType_ELSIZE(d) < 8) return PyArray_DescrFromType(NPY_UINTP);
    return PyArray_DescrFromType(d->type_num);
}

/* NumPy's first loop of ufunc name for (t) -> t, as its type resolution picks
 * it: 0, or -1 raised. */
static int
ufunc_loop(const char *name, int t, so_group_ufunc_loop *u)
{
    PyObject *np = PyImport_ImportModule("numpy"), *f;
    PyUFuncObject *uf;
    int i;
    if (np == NULL) return -1;
    f = PyObject_GetAttrString(np, name);
    Py_DECREF(np);
    if (f == NULL) return -1;
    uf = (PyUFuncObject *)f;
    for (i = 0; i < uf->ntypes; i++) {
        if (uf->types[2 * i] == t && uf->types[2 * i + 1] == t && uf->functions[i] != NULL) {
            u->fn = uf->functions[i];
            u->data = uf->data != NULL ? uf->data[i] : NULL;
            Py_DECREF(f);
            return 0;
        }
    }
    Py_DECREF(f);
    PyErr_Format(PyExc_SystemError, "numpy.%s has no loop for type %d", name, t);
    return -1;
}

/* Whether values of dtype kind k take func f (the contract's table): real
 * values every func; datetime64 / timedelta64 the compare-like ones */
static int
takes(int f, int k)
{
    if (k == 'b' || k == 'i' || k == 'u' || k == 'f') return 1;
    if (k == 'M' || k == 'm') {
        return f == SO_GF_MAX || f == SO_GF_MIN || f == SO_GF_ARGMAX || f == SO_GF_ARGMIN ||
               f == SO_GF_FIRST || f == SO_GF_LAST || f == SO_GF_COUNT;
    }
    return 0;
}

/* Which dtype= a func takes: none for the funcs of a fixed result dtype; a
 * computing dtype the loops have (float16 only for sum and prod) for the
 * arithmetic ones; a real dtype to cast the result to for max, min, first and
 * last. */
static int
dtype_allowed(int f, PyArray_Descr *dt)
{
    const int k = dt->kind, real = k == 'b' || k == 'i' || k == 'u' || k == 'f';
    const int time = k == 'M' || k == 'm';
    switch (f) {
    case SO_GF_ARGMAX: case SO_GF_ARGMIN: case SO_GF_COUNT: case SO_GF_ANY: case SO_GF_ALL:
        return 0;
    case SO_GF_SUM: case SO_GF_PROD:
        return real;
    case SO_GF_MAX: case SO_GF_MIN: case SO_GF_FIRST: case SO_GF_LAST:
        return real || time;
    default:
        return k == 'f' && dt->type_num != NPY_HALF;
    }
}

/* The dtype table: the member dtype (*md, NULL: the values' own), the
 * computing type, the result array's type and dtype (*rd): 0, or -1 raised. */
typedef struct {
    PyArray_Descr *md, *rd;
    int ct, rt, half;
} so_group_types;

static int
choose_types(so_group_args *a, so_group_types *t)
{
    PyArray_Descr *vd = PyArray_DESCR(a->values), *dt = a->dtype;
    const int f = a->func, vk = vd->kind;
    memset(t, 0, sizeof *t);
    if (!takes(f, vk) || (vk != 'i' && vk != 'u' && vk != 'f' && a->skipnan)) {
        return so_fail("group_func_dtype", a->name, "{sOsO}", "func", a->func_name, "dtype", (PyObject *)vd);
    }
    if (dt != NULL && !dtype_allowed(f, dt)) {
        return so_fail("group_dtype", a->name, "{sOsO}", "func", a->func_name, "dtype", (PyObject *)dt);
    }
    if (dt != NULL && !PyArray_CanCastTypeTo(vd, dt, NPY_SAME_KIND_CASTING)) {
        return so_fail("group_dtype_cast", a->name, "{sOsO}", "from", (PyObject *)vd, "to", (PyObject *)dt);
    }
    switch (f) {
    case SO_GF_SUM: case SO_GF_PROD:
        t->rd = dt != NULL ? (Py_INCREF(dt), dt) : sum_dtype(vd);
        Py_INCREF(t->rd);
        t->md = t->rd;
        if (t->rd->kind == 'b') {
            /* np.add on bool is OR, np.multiply AND */
            a->func = f == SO_GF_SUM ? SO_GF_ANY : SO_GF_ALL;
            t->ct = SO_GT_I64;
            t->rt = NPY_BOOL;
            return 0;
        }
        t->half = t->rd->type_num == NPY_HALF;
        t->ct = wide_type(t->rd);
        break;
    case SO_GF_MEAN: case SO_GF_VAR: case SO_GF_STD: case SO_GF_LOGSUMEXP: case SO_GF_SOFTMAX:
    case SO_GF_LOG_SOFTMAX:
        if (dt != NULL) {
            Py_INCREF(dt);
            t->rd = dt;
        }
        else {
            t->rd = PyArray_DescrFromType(vk == 'f' ? vd->type_num : NPY_DOUBLE);
        }
        t->ct = t->rd->type_num == NPY_HALF ? SO_GT_F64 : wide_type(t->rd);
        break;
    default:
        t->ct = wide_type(vd);
        /* float16's and longdouble's np.maximum / np.minimum keep the earlier of a ±0 tie */
        t->half = (f == SO_GF_MAX || f == SO_GF_MIN) &&
                  (vd->type_num == NPY_HALF || vd->type_num == NPY_LONGDOUBLE);
        if (dt != NULL) {
            Py_INCREF(dt);
            t->rd = dt;
        }
        else if (f == SO_GF_ARGMAX || f == SO_GF_ARGMIN || f == SO_GF_COUNT) {
            t->rd = PyArray_DescrFromType(NPY_INTP);
        }
        else if (f == SO_GF_ANY || f == SO_GF_ALL) {
            t->rd = PyArray_DescrFromType(NPY_BOOL);
        }
        else {
            /* the values' dtype (its unit, for datetime64), in native byte order */
            t->rd = PyArray_DescrNewByteorder(vd, NPY_NATIVE);
        }
        if (t->rd == NULL) return -1;
        break;
    }
    t->rt = f == SO_GF_ARGMAX || f == SO_GF_ARGMIN || f == SO_GF_COUNT ? NPY_INTP
            : f == SO_GF_ANY || f == SO_GF_ALL ? NPY_BOOL : type_nums[t->ct];
    return 0;
}

/* The values as (outer, n, inner) of the computing type: a new reference,
 * with *outer, *inner and the byte strides set. */
static PyArrayObject *
values_3d(so_group_args *a, const so_group_types *t, npy_intp *outer, npy_intp *inner,
          npy_intp st[3])
{
    PyArrayObject *v = a->values, *w;
    int d, nd = PyArray_NDIM(v), ax = a->axis, again;
    Py_INCREF(v);
    if (t->md != NULL && !PyArray_EquivTypes(t->md, PyArray_DESCR(v))) {
        Py_INCREF(t->md);
        w = (PyArrayObject *)PyArray_CastToType(v, t->md, 0);
        Py_DECREF(v);
        if (w == NULL) return NULL;
        v = w;
    }
    w = (PyArrayObject *)PyArray_FromAny((PyObject *)v, PyArray_DescrFromType(type_nums[t->ct]),
                                         0, 0, NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED |
                                         NPY_ARRAY_FORCECAST, NULL);
    Py_DECREF(v);
    if (w == NULL) return NULL;
    for (again = 0; again < 2; again++) {
        npy_intp o = 1, in = 1, so = 0, si = 0;
        /* outer dims collapse to one stride, as do the inner ones */
        int ok = 1;
        for (d = ax - 1; d >= 0; d--) {
            const npy_intp dim = PyArray_DIM(w, d), s = PyArray_STRIDE(w, d);
            if (dim == 1) continue;
            if (o == 1) so = s;
            else ok &= s == so * o;
            o *= dim;
        }
        for (d = nd - 1; d > ax; d--) {
            const npy_intp dim = PyArray_DIM(w, d), s = PyArray_STRIDE(w, d);
            if (dim == 1) continue;
            if (in == 1) si = s;
            else ok &= s == si * in;
            in *= dim;
        }
        if (ok || again) {
            *outer = o;
            *inner = in;
            st[0] = so;
            st[1] = PyArray_STRIDE(w, ax);
            st[2] = si;
            return w;
        }
        v = (PyArrayObject *)PyArray_NewCopy(w, NPY_CORDER);
        Py_DECREF(w);
        if (v == NULL) return NULL;
        w = v;
    }
    return w;
}

/* segments for the funcs that read gid (logsumexp, softmax): the group of
 * each member, -1 outside the segments */
static int
segment_ids(so_group_args *a, npy_intp n)
{
    const npy_intp *p = (const npy_intp *)PyArray_DATA(a->indptr);
    npy_intp *g, k, m;
    a->gid = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INTP);
    if (a->gid == NULL) return -1;
    g = (npy_intp *)PyArray_DATA(a->gid);
    for (k = 0; k < n; k++) g[k] = -1;
    for (k = 0; k < a->size; k++) {
        for (m = p[k]; m < p[k + 1]; m++) g[m] = k;
    }
    return 0;
}

static PyObject *
group_run(so_group_args *a, PyObject *out, int nthreads)
{
    so_group_types t;
    so_group_call c;
    PyArrayObject *v = NULL, *r = NULL, *fill = NULL, *cast = NULL;
    PyObject *result = NULL;
    npy_intp dims[SO_MAXDIMS], st[3], outer, inner;
    const int nd = PyArray_NDIM(a->values), softmax = a->func >= SO_GF_SOFTMAX;
    const int func = a->func;       /* before the dtype table maps a bool sum to any */
    int d, rc;
    memset(&c, 0, sizeof c);
    if (so_group_dtypes_takes(a)) return so_group_dtypes_run(a, out, nthreads);
    if (choose_types(a, &t) < 0 || so_group_check_ids(a) < 0) goto done;
    for (d = 0; d < nd; d++) dims[d] = PyArray_DIM(a->values, d);
    if (!softmax) dims[a->axis] = a->size;
    if (!softmax && (fill = so_group_fill(a, t.rd)) == NULL) goto done;
    if (so_group_check_out(a, out, nd, dims, t.rd) < 0) goto done;
    if ((v = values_3d(a, &t, &outer, &inner, st)) == NULL) goto done;
    if ((r = (PyArrayObject *)PyArray_SimpleNew(nd, dims, t.rt)) == NULL) goto done;
    if (a->gid == NULL && (softmax || a->func == SO_GF_LOGSUMEXP) &&
            segment_ids(a, PyArray_DIM(a->values, a->axis)) < 0) {
        goto done;
    }
    if ((softmax || a->func == SO_GF_LOGSUMEXP) &&
            (ufunc_loop("exp", type_nums[t.ct], &c.exp) < 0 ||
             ufunc_loop("log", type_nums[t.ct], &c.log) < 0)) {
        goto done;
    }
    c.L.v = PyArray_BYTES(v);
    c.L.outer = outer;
    c.L.n = PyArray_DIM(v, a->axis);
    c.L.inner = inner;
    c.L.so = st[0];
    c.L.sn = st[1];
    c.L.si = st[2];
    if (a->gid != NULL && PyArray_TYPE(a->gid) == NPY_INT32) c.L.gid32 = (const npy_int32 *)PyArray_DATA(a->gid);
    else if (a->gid != NULL) c.L.gid = (const npy_intp *)PyArray_DATA(a->gid);
    c.L.size = a->size;
    c.L.type = t.ct;
    c.L.skipnan = a->skipnan && t.ct >= SO_GT_F32;
    c.L.res = PyArray_BYTES(r);
    c.func = a->func;
    c.half = t.half;
    /* sum and prod start each cell at 0 and 1, any at False: their default fills */
    c.fill_is_start = a->fill_value == Py_None &&
                      (func == SO_GF_SUM || func == SO_GF_PROD || func == SO_GF_ANY);
    c.indptr = a->gid == NULL ? (const npy_intp *)PyArray_DATA(a->indptr) : NULL;
    c.ddof = a->ddof;
    /* mode="raise" and the softmax forms; not the ids made of indptr */
    c.check_ids = !a->drop && a->indptr == NULL;
    if (so_group_unlocks(c.L.n * outer * inner, so_size(r))) {
        so_unlocked u;
        so_poll *poll = so_unlock(&u);
        rc = so_group_run(&c, nthreads, poll);
        if (so_relock(&u) < 0) goto done;
    }
    else {
        rc = so_group_run(&c, 1, NULL);
    }
    if (rc < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc == 2) {
        so_group_bad_id_error(a, c.bad);
        goto done;
    }
    if (!PyArray_EquivTypes(PyArray_DESCR(r), t.rd)) {
        if ((cast = so_group_quiet_cast(r, t.rd)) == NULL) goto done;
        Py_SETREF(r, cast);
    }
    if (!softmax) so_group_fill_empty(&c, PyArray_BYTES(r), PyArray_ITEMSIZE(r), PyArray_BYTES(fill));
    if (a->out != NULL) {
        if (PyArray_CopyInto(a->out, r) < 0) goto done;
        Py_INCREF(a->out);
        result = (PyObject *)a->out;
    }
    else {
        Py_INCREF(r);
        result = (PyObject *)r;
    }
done:
    so_group_free(&c);
    Py_XDECREF(t.md);
    Py_XDECREF(t.rd);
    Py_XDECREF(v);
    Py_XDECREF(r);
    Py_XDECREF(fill);
    return result;
}

PyObject *
so_py_group(PyObject *self, PyObject *args)
{
    int kind;
    PyObject *values, *ids, *func, *size, *axis, *fill, *ddof, *dtype, *mode, *out, *log, *result;
    so_group_args a;
    (void)self;
    if (!PyArg_ParseTuple(args, "iOOOOOOOOOOO:group", &kind, &values, &ids, &func, &size, &axis,
                          &fill, &ddof, &dtype, &mode, &out, &log)) {
        return NULL;
    }
    if (kind < 0 || kind >= SO_GK_N) {
        PyErr_SetString(PyExc_ValueError, "group: unknown kind");
        return NULL;
    }
    if (!PyBool_Check(log) && !PyArray_IsScalar(log, Bool)) {
        return so_fail("group_log_type", so_group_names[kind], "{sO}", "got", (PyObject *)Py_TYPE(log)), NULL;
    }
    if (so_group_args_parse(&a, kind, values, ids, func, size, axis, ddof, dtype, mode, out,
                            PyObject_IsTrue(log)) < 0) {
        so_group_args_clear(&a);
        return NULL;
    }
    a.fill_value = fill;
    result = group_run(&a, out, so_settings_threads());
    so_group_args_clear(&a);
    return result;
}

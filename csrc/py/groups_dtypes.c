/*
 * py/groups_dtypes.c: the group reductions of the dtypes the real loops do not
 * read (groups_dtypes.h), each by the contract's table:
 *   count: the members of each group, whatever the values;
 *   first, last: the values' slice at each group's first / last member (one
 *   np.take along axis, any dtype), cast to the result dtype;
 *   max, min, nanfirst, nanlast of real or datetime values with such a dtype=:
 *   the call in the values' dtype by the real loops, cast to the result dtype;
 *   complex sum, prod, mean, any, all and float16 mean, var, std, logsumexp:
 *   the loops of call/group_dtypes.h on the values cast to the computing
 *   dtype, with NumPy's float16 exp, log and sqrt between the passes;
 *   object sum, prod, max, min, any, all: groups_object.c.
 * Then empty cells get the fill and out is written, as py/groups.c does.
 */
#include "py/groups_dtypes.h"
#include "call/group_dtypes.h"
#include "call/cost.h"

#include <stdlib.h>

static int
other_kind(int k)
{
    return k == 'c' || k == 'S' || k == 'U' || k == 'V' || k == 'O';
}

static int
real_kind(int k)
{
    return k == 'b' || k == 'i' || k == 'u' || k == 'f';
}

int
so_group_dtypes_takes(const so_group_args *a)
{
    const int f = a->func, vk = PyArray_DESCR(a->values)->kind;
    const PyArray_Descr *dt = a->dtype;
    if (f >= SO_GF_SOFTMAX) return 0;
    if (other_kind(vk)) return 1;
    if (dt == NULL) return 0;
    if (other_kind(dt->kind) && (f == SO_GF_MAX || f == SO_GF_MIN || f == SO_GF_FIRST ||
                                 f == SO_GF_LAST)) {
        return 1;
    }
    if (dt->kind == 'c') return f == SO_GF_SUM || f == SO_GF_PROD || f == SO_GF_MEAN;
    return dt->type_num == NPY_HALF && real_kind(vk) &&
           (f == SO_GF_MEAN || f == SO_GF_VAR || f == SO_GF_STD || f == SO_GF_LOGSUMEXP);
}

/* The contract's table for values of kind k (complex, strings, void, object,
 * or real values with one of the dtype= above). */
static int
takes(int f, int k, int skipnan)
{
    if (real_kind(k)) return !skipnan || k != 'b';
    if (skipnan) return 0;
    if (f == SO_GF_FIRST || f == SO_GF_LAST || f == SO_GF_COUNT) return 1;
    if (k == 'M' || k == 'm') return f == SO_GF_MAX || f == SO_GF_MIN;
    if (k == 'c') return f == SO_GF_SUM || f == SO_GF_PROD || f == SO_GF_MEAN || f == SO_GF_ANY || f == SO_GF_ALL;
    if (k == 'O') return f == SO_GF_SUM || f == SO_GF_PROD || f == SO_GF_MAX || f == SO_GF_MIN ||
                         f == SO_GF_ANY || f == SO_GF_ALL;
    return 0;
}

/* The dtype kinds dtype= may name for func f */
static int
dtype_allowed(int f, int dk)
{
    switch (f) {
    case SO_GF_SUM: case SO_GF_PROD: return real_kind(dk) || dk == 'c';
    case SO_GF_MEAN: return dk == 'f' || dk == 'c';
    case SO_GF_VAR: case SO_GF_STD: case SO_GF_LOGSUMEXP: return dk == 'f';
    case SO_GF_MAX: case SO_GF_MIN: case SO_GF_FIRST: case SO_GF_LAST: return 1;
    default: return 0;
    }
}

/* The result dtype (new reference), or NULL raised */
static PyArray_Descr *
result_dtype(const so_group_args *a)
{
    PyArray_Descr *vd = PyArray_DESCR(a->values), *dt = a->dtype;
    const int f = a->func;
    if (!takes(f, vd->kind, a->skipnan)) {
        return so_fail("group_func_dtype", a->name, "{sOsO}", "func", a->func_name, "dtype", (PyObject *)vd), NULL;
    }
    if (dt != NULL && !dtype_allowed(f, dt->kind)) {
        return so_fail("group_dtype", a->name, "{sOsO}", "func", a->func_name, "dtype", (PyObject *)dt), NULL;
    }
    if (dt != NULL && !PyArray_CanCastTypeTo(vd, dt, NPY_SAME_KIND_CASTING)) {
        return so_fail("group_dtype_cast", a->name, "{sOsO}", "from", (PyObject *)vd, "to", (PyObject *)dt), NULL;
    }
    if (f == SO_GF_COUNT) return PyArray_DescrFromType(NPY_INTP);
    if (f == SO_GF_ANY || f == SO_GF_ALL) return PyArray_DescrFromType(NPY_BOOL);
    if (dt != NULL) return PyArray_DescrNewByteorder(dt, NPY_NATIVE);
    return PyArray_DescrNewByteorder(vd, NPY_NATIVE);
}

/* The fill as a 0-d array of rd: the default of strings and void is their
 * zero item */
static PyArrayObject *
fill_of(const so_group_args *a, PyArray_Descr *rd)
{
    if (a->fill_value == Py_None && (rd->kind == 'S' || rd->kind == 'U' || rd->kind == 'V')) {
        Py_INCREF(rd);
        return (PyArrayObject *)PyArray_Zeros(0, NULL, rd, 0);
    }
    return so_group_fill(a, rd);
}

/* Each cell of the C-ordered (outer, size, inner) result r that has no member
 * -- by cnt per group, or per cell when per_cell -- set to the fill. */
static int
fill_empty(PyArrayObject *r, PyArrayObject *fill, const npy_intp *cnt, int per_cell,
           npy_intp size, npy_intp inner)
{
    const npy_intp ncells = so_size(r), isz = PyArray_ITEMSIZE(r);
    const int refs = PyDataType_REFCHK(PyArray_DESCR(r));
    PyObject *item = refs ? PyArray_GETITEM(fill, PyArray_BYTES(fill)) : NULL;
    npy_intp c;
    if (refs && item == NULL) return -1;
    for (c = 0; c < ncells; c++) {
        if (cnt[per_cell ? c : (c / inner) % size] != 0) continue;
        if (!refs) memcpy(PyArray_BYTES(r) + c * isz, PyArray_BYTES(fill), (size_t)isz);
        else if (PyArray_SETITEM(r, PyArray_BYTES(r) + c * isz, item) < 0) break;
    }
    Py_XDECREF(item);
    return c < ncells ? -1 : 0;
}

/* first / last: np.take of each group's first / last slice along axis, cast
 * to rd (a group with no member takes slice 0, which the fill replaces) */
static PyArrayObject *
edge_members(so_group_args *a, const npy_intp *pos, PyArray_Descr *rd, int nd, const npy_intp *dims)
{
    const npy_intp size = a->size;
    PyArrayObject *idx, *taken, *cast;
    npy_intp g;
    if (PyArray_DIM(a->values, a->axis) == 0) {
        Py_INCREF(rd);
        return (PyArrayObject *)PyArray_Zeros(nd, (npy_intp *)dims, rd, 0);
    }
    idx = (PyArrayObject *)PyArray_SimpleNew(1, (npy_intp *)&size, NPY_INTP);
    if (idx == NULL) return NULL;
    for (g = 0; g < size; g++) ((npy_intp *)PyArray_DATA(idx))[g] = pos[g] < 0 ? 0 : pos[g];
    taken = (PyArrayObject *)PyArray_TakeFrom(a->values, (PyObject *)idx, a->axis, NULL, NPY_RAISE);
    Py_DECREF(idx);
    if (taken == NULL || (PyArray_EquivTypes(PyArray_DESCR(taken), rd) && PyArray_IS_C_CONTIGUOUS(taken))) {
        return taken;
    }
    cast = so_group_quiet_cast(taken, rd);
    Py_DECREF(taken);
    return cast;
}

/* ufunc name of NumPy on a in place (float16: its exp, log, sqrt loops),
 * wrapped in np.errstate(all="ignore"): an underflow in exp warns no more than
 * the loops do */
static int
ufunc_in_place(const char *name, PyArrayObject *a)
{
    PyObject *np = PyImport_ImportModule("numpy"), *errstate = NULL, *none = NULL, *kw = NULL;
    PyObject *quiet = NULL, *ufunc = NULL, *wrapped = NULL, *r = NULL;
    if (np != NULL) errstate = PyObject_GetAttrString(np, "errstate");
    if (errstate != NULL) none = PyTuple_New(0);
    if (none != NULL) kw = Py_BuildValue("{ss}", "all", "ignore");
    if (kw != NULL) quiet = PyObject_Call(errstate, none, kw);
    if (quiet != NULL) ufunc = PyObject_GetAttrString(np, name);
    if (ufunc != NULL) wrapped = PyObject_CallOneArg(quiet, ufunc);
    if (wrapped != NULL) r = PyObject_CallFunctionObjArgs(wrapped, (PyObject *)a, (PyObject *)a, NULL);
    Py_XDECREF(np);
    Py_XDECREF(errstate);
    Py_XDECREF(none);
    Py_XDECREF(kw);
    Py_XDECREF(quiet);
    Py_XDECREF(ufunc);
    Py_XDECREF(wrapped);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* One pass, without the GIL for a large one: 0, or -1 raised (Ctrl-C) */
static int
pass(so_gx_loop *L, int op)
{
    so_unlocked u;
    if (L->outer * L->n * L->inner < SO_GIL_RELEASE_MIN) return so_gx_pass(L, op, NULL) ? -1 : 0;
    so_gx_pass(L, op, so_unlock(&u));
    return so_relock(&u);
}

/* float16 mean, var, std, logsumexp into r: 0, or -1 raised */
static int
half_run(so_gx_loop *L, int func, npy_intp ddof, PyArrayObject *r)
{
    const npy_intp ncells = so_size(r), nterms = L->outer * L->n * L->inner;
    PyArrayObject *m = NULL, *terms = NULL, *head = NULL;
    npy_intp c, k;
    int rc = -1;
    if (func == SO_GF_MEAN) return pass(L, SO_GX_SUM) < 0 ? -1 : (so_gx_divide_half(L, 0, 0), 0);
    m = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(r), PyArray_DIMS(r), NPY_HALF);
    if (m == NULL) return -1;
    L->res = PyArray_BYTES(m);
    if (pass(L, func == SO_GF_LOGSUMEXP ? SO_GX_MAX : SO_GX_SUM) < 0) goto done;
    if (func != SO_GF_LOGSUMEXP) {
        so_gx_divide_half(L, 0, 0);
        L->mean = PyArray_BYTES(m);
        L->res = PyArray_BYTES(r);
        if (pass(L, SO_GX_DEV) < 0) goto done;
        so_gx_divide_half(L, ddof, 1);
        rc = func == SO_GF_STD ? ufunc_in_place("sqrt", r) : 0;
        goto done;
    }
    terms = (PyArrayObject *)PyArray_SimpleNew(1, (npy_intp *)&nterms, NPY_HALF);
    if (terms == NULL) goto done;
    k = so_gx_half_terms(L, PyArray_BYTES(m), PyArray_BYTES(terms));
    head = (PyArrayObject *)PyArray_New(&PyArray_Type, 1, &k, NPY_HALF, NULL, PyArray_BYTES(terms),
                                        0, NPY_ARRAY_CARRAY, NULL);
    if (head == NULL || ufunc_in_place("exp", head) < 0) goto done;
    L->res = PyArray_BYTES(r);
    so_gx_half_sum_terms(L, PyArray_BYTES(terms));
    for (c = 0; c < ncells; c++) {
        /* an empty cell (its sum 0, its log a warning) takes the fill later */
        if (L->cnt[c] == 0) ((npy_half *)PyArray_BYTES(r))[c] = 0x3c00;
    }
    if (ufunc_in_place("log", r) < 0) goto done;
    so_gx_half_finish_lse(L, PyArray_BYTES(m));
    rc = 0;
done:
    Py_XDECREF(m);
    Py_XDECREF(terms);
    Py_XDECREF(head);
    return rc;
}

/* complex or float16 loops: the values cast to the computing dtype, run into
 * a new result of dtype rd (bool for any / all) */
static PyArrayObject *
loops_run(so_group_args *a, PyArray_Descr *rd, const npy_intp *gid, const npy_intp *cnt_g,
          npy_intp *cell_cnt, int nd, const npy_intp *dims, npy_intp outer, npy_intp inner)
{
    const int f = a->func, half = rd->type_num == NPY_HALF;
    PyArray_Descr *cd = f == SO_GF_ANY || f == SO_GF_ALL
                        ? PyArray_DescrNewByteorder(PyArray_DESCR(a->values), NPY_NATIVE)
                        : (Py_INCREF(rd), rd);
    PyArrayObject *v = NULL, *r = NULL;
    npy_intp *cnt = NULL, k, ncells;
    so_gx_loop L;
    int rc = -1;
    if (cd == NULL) return NULL;
    if (PyArray_EquivTypes(PyArray_DESCR(a->values), cd) && PyArray_IS_C_CONTIGUOUS(a->values) &&
            PyArray_ISALIGNED(a->values)) {
        v = a->values;          /* read as it is: no copy */
        Py_INCREF(v);
    }
    else {
        v = so_group_quiet_cast(a->values, cd);
    }
    r = (PyArrayObject *)PyArray_SimpleNew(nd, (npy_intp *)dims, f == SO_GF_ANY || f == SO_GF_ALL
                                           ? NPY_BOOL : rd->type_num);
    if (v == NULL || r == NULL) goto done;
    ncells = so_size(r);
    memset(&L, 0, sizeof L);
    L.v = PyArray_BYTES(v);
    L.outer = outer;
    L.n = PyArray_DIM(v, a->axis);
    L.inner = inner;
    L.gid = gid;
    L.size = a->size;
    L.type = half ? SO_GX_HALF : cd->type_num == NPY_CFLOAT ? SO_GX_C64
             : cd->type_num == NPY_CDOUBLE ? SO_GX_C128 : SO_GX_CLD;
    L.skipnan = a->skipnan;
    L.res = PyArray_BYTES(r);
    cnt = (npy_intp *)calloc((size_t)(ncells > outer * a->size ? ncells : outer * a->size) + 1,
                             sizeof(npy_intp));
    if (cnt == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (half) {
        L.cnt = cnt;
        rc = half_run(&L, f, a->ddof, r);
        memcpy(cell_cnt, cnt, (size_t)ncells * sizeof(npy_intp));
        goto done;
    }
    rc = pass(&L, f == SO_GF_PROD ? SO_GX_PROD : f == SO_GF_ANY ? SO_GX_ANY
             : f == SO_GF_ALL ? SO_GX_ALL : SO_GX_SUM);
    if (rc == 0 && f == SO_GF_MEAN) {
        for (k = 0; k < outer * a->size; k++) cnt[k] = cnt_g[k % a->size];
        so_gx_divide_complex(&L, cnt);
    }
done:
    free(cnt);
    Py_DECREF(cd);
    Py_XDECREF(v);
    if (rc < 0) Py_CLEAR(r);
    return r;
}

/* _core.group(...) of the call a with func and without fill_value, dtype=
 * and out: a new reference, or NULL raised */
static PyArrayObject *
call_core(const so_group_args *a, const char *func)
{
    PyObject *core = PyImport_ImportModule("scatterops._core"), *group = NULL, *r = NULL;
    if (core != NULL) group = PyObject_GetAttrString(core, "group");
    if (group != NULL) {
        r = PyObject_CallFunction(group, "iOOsniOiOsOO", a->kind, (PyObject *)a->values,
                                  (PyObject *)(a->gid != NULL ? a->gid : a->indptr), func,
                                  (Py_ssize_t)a->size, a->axis, Py_None, 0, Py_None,
                                  a->drop ? "drop" : "raise", Py_None, Py_False);
    }
    Py_XDECREF(core);
    Py_XDECREF(group);
    return (PyArrayObject *)r;
}

/* max, min, nanfirst, nanlast of real or datetime values with a complex,
 * string, void or object dtype=: the call without dtype= (in the values'
 * dtype, by the real loops) cast to rd; *cells gets, for a nan-variant, the
 * members of each cell (nancount), else stays NULL.  A new reference, or NULL
 * raised. */
static PyArrayObject *
cast_run(const so_group_args *a, PyArray_Descr *rd, PyArrayObject **cells)
{
    static const char *const names[] = {"max", "min", "first", "last"};
    const int f = a->func;
    char func[16];
    PyArrayObject *r, *cast;
    snprintf(func, sizeof func, "%s%s", a->skipnan ? "nan" : "",
             names[f == SO_GF_MAX ? 0 : f == SO_GF_MIN ? 1 : f == SO_GF_FIRST ? 2 : 3]);
    if ((r = call_core(a, func)) == NULL) return NULL;
    cast = so_group_quiet_cast(r, rd);
    Py_DECREF(r);
    if (cast != NULL && a->skipnan && (*cells = call_core(a, "nancount")) == NULL) Py_CLEAR(cast);
    return cast;
}

/* segments as group ids: the segment of each slice, -1 outside them */
/* The ids as C-contiguous intp (the binding keeps int32 ids as they are),
 * each inside [0, size) under mode="raise", else the IndexError of the first
 * that is not. */
static PyArrayObject *
checked_intp_ids(const so_group_args *a)
{
    PyArrayObject *gid = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a->gid, NPY_INTP,
                                                            NPY_ARRAY_IN_ARRAY);
    const npy_intp *g;
    npy_intp k;
    if (gid == NULL || a->drop) return gid;
    g = (const npy_intp *)PyArray_DATA(gid);
    for (k = 0; k < PyArray_DIM(gid, 0); k++) {
        if ((npy_uintp)g[k] >= (npy_uintp)a->size) {
            Py_DECREF(gid);
            so_group_bad_id_error(a, k);
            return NULL;
        }
    }
    return gid;
}

static PyArrayObject *
segment_gid(const so_group_args *a)
{
    const npy_intp n = PyArray_DIM(a->values, a->axis), *p = (const npy_intp *)PyArray_DATA(a->indptr);
    PyArrayObject *gid = (PyArrayObject *)PyArray_SimpleNew(1, (npy_intp *)&n, NPY_INTP);
    npy_intp k, g;
    if (gid == NULL) return NULL;
    for (k = 0; k < n; k++) ((npy_intp *)PyArray_DATA(gid))[k] = -1;
    for (g = 0; g < a->size; g++) {
        for (k = p[g]; k < p[g + 1]; k++) ((npy_intp *)PyArray_DATA(gid))[k] = g;
    }
    return gid;
}

PyObject *
so_group_dtypes_run(so_group_args *a, PyObject *out, int nthreads)
{
    const int nd = PyArray_NDIM(a->values), f = a->func, vk = PyArray_DESCR(a->values)->kind;
    PyArray_Descr *rd = NULL;
    PyArrayObject *fill = NULL, *gid = NULL, *r = NULL, *v = NULL, *cells = NULL;
    PyObject *result = NULL;
    npy_intp dims[SO_MAXDIMS], outer = 1, inner = 1, *scan = NULL, *cell_cnt = NULL, k;
    npy_intp *cell_cnt_of = NULL;      /* counts per cell (else per group, in scan) */
    int d;
    (void)nthreads;
    if ((rd = result_dtype(a)) == NULL || so_group_check_ids(a) < 0) goto done;
    for (d = 0; d < nd; d++) {
        dims[d] = d == a->axis ? a->size : PyArray_DIM(a->values, d);
        if (d < a->axis) outer *= dims[d];
        if (d > a->axis) inner *= dims[d];
    }
    if ((fill = fill_of(a, rd)) == NULL || so_group_check_out(a, out, nd, dims, rd) < 0 ||
            (gid = a->gid != NULL ? checked_intp_ids(a) : segment_gid(a)) == NULL) {
        goto done;
    }
    scan = (npy_intp *)malloc((size_t)(3 * a->size + 1) * sizeof(npy_intp));
    if (gid == NULL || scan == NULL) {
        if (scan == NULL) PyErr_NoMemory();
        goto done;
    }
    so_group_member_scan((const npy_intp *)PyArray_DATA(gid), PyArray_DIM(gid, 0), a->size, scan,
                         scan + a->size, scan + 2 * a->size);
    if (f == SO_GF_COUNT) {
        r = (PyArrayObject *)PyArray_SimpleNew(nd, dims, NPY_INTP);
        for (k = 0; r != NULL && k < so_size(r); k++) {
            ((npy_intp *)PyArray_DATA(r))[k] = scan[(k / inner) % a->size];
        }
    }
    else if (!other_kind(vk) && (f == SO_GF_MAX || f == SO_GF_MIN ||
                                 (a->skipnan && (f == SO_GF_FIRST || f == SO_GF_LAST)))) {
        r = cast_run(a, rd, &cells);
        if (cells != NULL) cell_cnt_of = (npy_intp *)PyArray_DATA(cells);
    }
    else if (f == SO_GF_FIRST || f == SO_GF_LAST) {
        r = edge_members(a, scan + (f == SO_GF_FIRST ? 1 : 2) * a->size, rd, nd, dims);
    }
    else if (PyArray_DESCR(a->values)->kind == 'O') {
        v = (PyArrayObject *)PyArray_FromAny((PyObject *)a->values, NULL, 0, 0, NPY_ARRAY_CARRAY, NULL);
        if (v != NULL) {
            r = so_group_object_reduce(f, v, outer, PyArray_DIM(v, a->axis), inner,
                                       (const npy_intp *)PyArray_DATA(gid), a->size,
                                       scan + a->size, nd, dims);
        }
    }
    else {
        npy_intp ncells = outer * a->size * inner;
        if (rd->type_num == NPY_HALF) {
            cell_cnt = (npy_intp *)malloc((size_t)(ncells + 1) * sizeof(npy_intp));
            if (cell_cnt == NULL) {
                PyErr_NoMemory();
                goto done;
            }
        }
        r = loops_run(a, rd, (const npy_intp *)PyArray_DATA(gid), scan, cell_cnt, nd, dims,
                      outer, inner);
    }
    if (cell_cnt != NULL) cell_cnt_of = cell_cnt;
    if (r == NULL || fill_empty(r, fill, cell_cnt_of != NULL ? cell_cnt_of : scan,
                                cell_cnt_of != NULL, a->size, inner) < 0) {
        goto done;
    }
    /* out, or the new result */
    if (a->out == NULL || PyArray_CopyInto(a->out, r) == 0) {
        result = (PyObject *)(a->out != NULL ? a->out : r);
        Py_INCREF(result);
    }
done:
    free(scan);
    free(cell_cnt);
    Py_XDECREF(rd);
    Py_XDECREF(fill);
    Py_XDECREF(gid);
    Py_XDECREF(v);
    Py_XDECREF(cells);
    Py_XDECREF(r);
    return result;
}

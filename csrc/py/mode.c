/*
 * py/mode.c: mode=, what an index outside its axis means.  "raise" (the
 * default) leaves every index to the check, which raises IndexError.  "wrap"
 * takes every index modulo its axis size (as numpy.put) and "clip" sends one
 * below the axis to 0 and one above to size - 1 (as JAX), both by mapping the
 * indices into a fresh array before the walk.  "drop" removes the updates
 * whose index is outside (in scatter_nd: any component of its tuple), keeping
 * the others in their order, so the walk never sees them.  None of this runs
 * unless the check the call makes anyway found an index outside (call.c):
 * indices that are all inside cost nothing more than under "raise".  An axis
 * of size 0 has no position to wrap or clip to: its indices stay as they are,
 * and the check reports them as under "raise".
 */
#include "py/py.h"
#include "base/nditer.h"

const char *const so_mode_names[SO_NMODES] = {"raise", "wrap", "clip", "drop"};

int
so_parse_mode(const char *func, PyObject *mode)
{
    int m;
    if (mode == NULL) return SO_MODE_RAISE;
    if (!PyUnicode_Check(mode)) {
        so_fail("mode_type", func, "{sO}", "got", (PyObject *)Py_TYPE(mode));
        return -1;
    }
    for (m = 0; m < SO_NMODES; m++) {
        if (PyUnicode_CompareWithASCIIString(mode, so_mode_names[m]) == 0) return m;
    }
    so_fail("mode_value", func, "{sO}", "got", mode);
    return -1;
}

/* wrap or clip every value of the fresh C-contiguous intp array v (n values,
 * component j % nb checked against bounds[j % nb]).  u: the same values as
 * uint64 where the user's dtype was uint64 (whose values above intp's range
 * were clamped in v), else NULL. */
static void
map_values(npy_intp *v, const npy_uint64 *u, npy_intp n, const npy_intp *bounds, int nb,
           int mode)
{
    npy_intp j;
    int c = 0;
    for (j = 0; j < n; j++) {
        npy_intp s = bounds[c];
        if (s > 0) {
            so_mode_position(u != NULL ? u[j] : (npy_uint64)v[j], u != NULL, s, mode, &v[j]);
        }
        if (++c == nb) c = 0;
    }
}

/* keep[g] = every component of index tuple g (nb values from v) in range;
 * returns how many are kept */
static npy_intp
keep_mask(const npy_intp *v, npy_intp ngroups, const npy_intp *bounds, int nb, npy_bool *keep)
{
    npy_intp g, kept = 0;
    int c;
    for (g = 0; g < ngroups; g++) {
        npy_bool ok = 1;
        for (c = 0; c < nb; c++) {
            ok &= (npy_bool)so_index_inside(v[g * nb + c], bounds[c]);
        }
        keep[g] = ok;
        kept += ok;
    }
    return kept;
}

/* scatter_elements under "drop": the kept updates as a scatter_nd of whole
 * index tuples, the axis coordinate from the index and the others from the
 * position, in C order of the positions. */
static PyArrayObject *
elements_as_tuples(const so_args *a, const npy_intp *v, const npy_bool *keep, npy_intp kept)
{
    int r = PyArray_NDIM(a->idx), d;
    npy_intp dims[2] = {kept, r}, p, n = so_size(a->idx), *t;
    PyArrayObject *res = (PyArrayObject *)PyArray_EMPTY(2, dims, NPY_INTP, 0);
    so_nditer it;               /* its counts are the position's coordinates */
    if (res == NULL) return NULL;
    t = (npy_intp *)PyArray_DATA(res);
    so_nd_init(&it, r, PyArray_DIMS(a->idx), 0, NULL);
    for (p = 0; p < n; p++) {
        if (keep[p]) {
            for (d = 0; d < r; d++) *t++ = d == a->c.axis ? v[p] : it.count[d];
        }
        so_nd_next(&it);
    }
    return res;
}

static int
drop(so_args *a, PyArrayObject *flat, const npy_intp *bounds, int nb)
{
    const npy_intp *v = (const npy_intp *)PyArray_DATA(flat);
    int q = PyArray_NDIM(a->idx), mq = a->c.kind == SO_ND ? q - 1 : q, d;
    npy_intp ngroups = so_size(a->idx) / (a->c.kind == SO_ND ? nb : 1), kept;
    PyArrayObject *mask, *idx = NULL, *upd = NULL;
    PyObject *key = NULL;

    mask = (PyArrayObject *)PyArray_EMPTY(mq, PyArray_DIMS(a->idx), NPY_BOOL, 0);
    if (mask == NULL) return -1;
    kept = keep_mask(v, ngroups, bounds, nb, (npy_bool *)PyArray_DATA(mask));
    if (kept == ngroups) {                   /* nothing to drop: the call as given */
        Py_DECREF(mask);
        return 0;
    }
    if (a->c.kind == SO_ELEMENTS) {
        idx = elements_as_tuples(a, v, (const npy_bool *)PyArray_DATA(mask), kept);
        key = (PyObject *)mask;
        Py_INCREF(key);
    }
    else {
        if (a->c.kind == SO_UPDATE) {
            /* the mask takes the place of indices' dimensions in updates */
            key = PyTuple_New(a->c.axis + 1);
            if (key == NULL) goto fail;
            for (d = 0; d < a->c.axis; d++) {
                PyObject *all = PySlice_New(NULL, NULL, NULL);
                if (all == NULL) goto fail;
                PyTuple_SET_ITEM(key, d, all);
            }
            Py_INCREF(mask);
            PyTuple_SET_ITEM(key, a->c.axis, (PyObject *)mask);
        }
        else {
            key = (PyObject *)mask;
            Py_INCREF(key);
        }
        idx = (PyArrayObject *)PyObject_GetItem((PyObject *)a->idx, (PyObject *)mask);
    }
    if (idx == NULL) goto fail;
    upd = (PyArrayObject *)PyObject_GetItem((PyObject *)a->upd, key);
    if (upd == NULL) goto fail;
    if (a->c.kind == SO_ELEMENTS) {
        a->c.kind = SO_ND;
        a->c.axis = 0;
    }
    Py_SETREF(a->upd, upd);
    Py_INCREF(idx);
    Py_SETREF(a->given_idx, idx);           /* every value is in range: no message reads it */
    Py_SETREF(a->idx, idx);
    a->c.nupd = so_size(a->upd);
    a->c.nidx = so_size(a->idx);
    Py_DECREF(key);
    Py_DECREF(mask);
    return 0;
fail:
    Py_XDECREF(idx);
    Py_XDECREF(key);
    Py_DECREF(mask);
    return -1;
}

int
so_args_apply_mode(so_args *a)
{
    npy_intp bounds[SO_MAXDIMS];
    PyArrayObject *flat, *u = NULL;
    int nb, rc = 0, mode = a->c.mode, c;
    if (mode == SO_MODE_RAISE || a->c.nidx == 0) return 0;
    a->c.mode = SO_MODE_RAISE;                /* applied: what stays outside raises */
    if (so_args_intp_indices(a) < 0) return -1;
    nb = so_args_bounds(a, bounds);
    flat = (PyArrayObject *)PyArray_NewCopy(a->idx, NPY_CORDER);
    if (flat == NULL) return -1;
    if (mode == SO_MODE_DROP) {
        rc = drop(a, flat, bounds, nb);
        Py_DECREF(flat);
        return rc;
    }
    if (mode == SO_MODE_WRAP && PyTypeNum_ISUNSIGNED(PyArray_TYPE(a->given_idx)) &&
            PyArray_ITEMSIZE(a->given_idx) >= (npy_intp)sizeof(npy_intp)) {
        u = (PyArrayObject *)PyArray_FromAny((PyObject *)a->given_idx,
                                             PyArray_DescrFromType(NPY_UINT64), 0, 0,
                                             NPY_ARRAY_CARRAY, NULL);
        if (u == NULL) {
            Py_DECREF(flat);
            return -1;
        }
    }
    map_values((npy_intp *)PyArray_DATA(flat), u ? (const npy_uint64 *)PyArray_DATA(u) : NULL,
               so_size(flat), bounds, nb, mode);
    Py_XDECREF(u);
    Py_SETREF(a->idx, flat);
    for (c = 0; c < nb; c++) {
        if (bounds[c] == 0) return so_args_check_indices(a, 1);   /* raises for them */
    }
    return 0;
}

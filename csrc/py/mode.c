/*
 * py/mode.c: mode=, what an index outside its axis means: its name parsed,
 * and its transform (call/mode_transform.c) given the arrays it works on and
 * made the call's.  "raise" (the default) leaves every index to the check,
 * which raises IndexError.  "wrap" and "clip" map a fresh intp copy of the
 * indices, which becomes the call's index; "drop" removes the updates whose
 * index is outside, NumPy's boolean indexing taking the kept updates (and
 * indices) by the call layer's mask, so the walk never sees them.  None of
 * this runs unless the check the call makes anyway found an index outside
 * (call.c): indices that are all inside cost nothing more than under "raise".
 */
#include "py/py.h"

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

/* scatter_elements under "drop": the kept updates' index tuples (kept x the
 * index's ndim), a new array, or NULL raised */
static PyArrayObject *
elements_as_tuples(const so_args *a, const npy_intp *v, const npy_bool *keep, npy_intp kept)
{
    npy_intp dims[2] = {kept, PyArray_NDIM(a->idx)};
    PyArrayObject *res = (PyArrayObject *)PyArray_EMPTY(2, dims, NPY_INTP, 0);
    if (res != NULL) so_mode_kept_tuples(&a->c, v, keep, (npy_intp *)PyArray_DATA(res));
    return res;
}

static int
drop(so_args *a, PyArrayObject *flat)
{
    const npy_intp *v = (const npy_intp *)PyArray_DATA(flat);
    int q = PyArray_NDIM(a->idx), mq = a->c.kind == SO_ND ? q - 1 : q, d;
    npy_intp ngroups = so_mode_groups(&a->c), kept;
    PyArrayObject *mask, *idx = NULL, *upd = NULL;
    PyObject *key = NULL;

    mask = (PyArrayObject *)PyArray_EMPTY(mq, PyArray_DIMS(a->idx), NPY_BOOL, 0);
    if (mask == NULL) return -1;
    kept = so_mode_keep(&a->c, v, (npy_bool *)PyArray_DATA(mask));
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
    PyArrayObject *flat, *u = NULL;
    int rc = 0, mode = a->c.mode, empty_axis;
    if (mode == SO_MODE_RAISE || a->c.nidx == 0) return 0;
    if (so_args_intp_indices(a) < 0) return -1;
    so_array_of(a->idx, &a->c.idx);
    flat = (PyArrayObject *)PyArray_NewCopy(a->idx, NPY_CORDER);
    if (flat == NULL) return -1;
    if (mode == SO_MODE_DROP) {
        rc = drop(a, flat);
        Py_DECREF(flat);
        a->c.mode = SO_MODE_RAISE;            /* applied: what stays outside raises */
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
    empty_axis = so_mode_map(&a->c, (npy_intp *)PyArray_DATA(flat),
                             u ? (const npy_uint64 *)PyArray_DATA(u) : NULL);
    Py_XDECREF(u);
    Py_SETREF(a->idx, flat);
    a->c.mode = SO_MODE_RAISE;                /* applied: what stays outside raises */
    return empty_axis ? so_args_check_indices(a, 1) : 0;   /* raises for them */
}

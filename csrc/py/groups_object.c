/*
 * py/groups_object.c: the group reductions of object values (groups_dtypes.h):
 * Python's operators with the GIL held, as NumPy's object loops call them --
 * np.add / np.multiply are PyNumber_Add / PyNumber_Multiply, np.maximum keeps
 * the running value where it is >= the member (np.minimum <=), any / all take
 * PyObject_IsTrue of every member.  Each cell starts as its group's first
 * member (that object) and takes the later ones in member order; the cells
 * are walked as the reference walks its columns, so the first operator that
 * raises is the same one.  Ctrl-C is checked every few thousand members.
 */
#include "py/groups_dtypes.h"

PyArrayObject *
so_group_object_reduce(int func, PyArrayObject *v, npy_intp outer, npy_intp n, npy_intp inner,
                       const npy_intp *gid, npy_intp size, const npy_intp *first, int nd,
                       const npy_intp *dims)
{
    const int boolean = func == SO_GF_ANY || func == SO_GF_ALL;
    PyObject **items = (PyObject **)PyArray_DATA(v), **cells;
    PyArrayObject *r;
    npy_bool *b;
    npy_intp o, i, k, ops = 0;
    r = boolean ? (PyArrayObject *)PyArray_SimpleNew(nd, dims, NPY_BOOL)
                : (PyArrayObject *)PyArray_ZEROS(nd, dims, NPY_OBJECT, 0);
    if (r == NULL) return NULL;
    cells = (PyObject **)PyArray_DATA(r);
    b = (npy_bool *)PyArray_DATA(r);
    if (boolean) memset(b, func == SO_GF_ALL, (size_t)so_size(r));
    for (o = 0; o < outer; o++) {
        for (i = 0; i < inner; i++) {
            for (k = 0; k < n; k++) {
                const npy_intp g = gid[k], cell = (o * size + g) * inner + i;
                PyObject *x, *y = NULL;
                int t = 0;
                if ((npy_uintp)g >= (npy_uintp)size) continue;
                if ((++ops & 0xfff) == 0 && PyErr_CheckSignals() < 0) goto fail;
                x = items[(o * n + k) * inner + i];
                x = x != NULL ? x : Py_None;
                Py_INCREF(x);       /* an operator may rewrite the values */
                if (boolean) {
                    t = PyObject_IsTrue(x);
                    if (t >= 0 && (func == SO_GF_ANY) == (t == 1)) b[cell] = (npy_bool)t;
                }
                else if (k == first[g]) {
                    Py_INCREF(x);
                    Py_SETREF(cells[cell], x);
                }
                else if (func == SO_GF_SUM || func == SO_GF_PROD) {
                    y = func == SO_GF_SUM ? PyNumber_Add(cells[cell], x)
                                          : PyNumber_Multiply(cells[cell], x);
                    if (y != NULL) Py_SETREF(cells[cell], y);
                    else t = -1;
                }
                else {
                    t = PyObject_RichCompareBool(cells[cell], x,
                                                 func == SO_GF_MAX ? Py_GE : Py_LE);
                    if (t == 0) {
                        Py_INCREF(x);
                        Py_SETREF(cells[cell], x);
                    }
                }
                Py_DECREF(x);
                if (t < 0) goto fail;
            }
        }
    }
    return r;
fail:
    Py_DECREF(r);
    return NULL;
}

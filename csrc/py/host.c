/*
 * py/host.c: the binding's side of the call layer -- a checked call's so_call
 * (call/call.h) given its arrays, and the so_host through which the
 * call layer gets what needs NumPy or the interpreter: fresh arrays (the
 * output cache's memory for large ones), copies, the interpreter's lock
 * released for a long phase, the tests' index rewrite, the folded index, the
 * indices as intp,
 * the fallback for dtypes without a C loop.
 */
#include "py/py.h"

/* intp's dtype (a builtin: never freed), for so_call's intp_dtype */
static PyArray_Descr *intp_descr;

void
so_call_sync(so_args *a, int nthreads)
{
    so_call *c = &a->c;
    so_array_of(a->data, &c->data);
    so_array_of(a->idx, &c->idx);
    so_array_of(a->upd, &c->upd);
    if (a->out != NULL) so_array_of(a->out, &c->out);
    else c->out.handle = NULL;
    c->nthreads = nthreads;
    c->indices_inside = 0;
    c->out_refs = a->out != NULL && PyDataType_REFCHK(PyArray_DESCR(a->out));
    if (intp_descr == NULL) intp_descr = PyArray_DescrFromType(NPY_INTP);
    c->intp_dtype = intp_descr;
}

static int
host_fresh_copy(so_host *h, const so_array *src, so_array *copy)
{
    PyArrayObject *r = so_fresh_copy((PyArrayObject *)src->handle, ((so_py_host *)h)->nthreads);
    if (r == NULL) return -1;
    so_array_of(r, copy);
    return 0;
}

static int
host_new_array(so_host *h, const so_array *like, int cached, so_array *a)
{
    PyArray_Descr *d = like->dtype;
    PyArrayObject *r;
    (void)h;
    Py_INCREF(d);
    r = cached ? so_output_cache_new_array(d, like->ndim, like->dims)
               : (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, d, like->ndim,
                                                       (npy_intp *)like->dims, NULL, NULL, 0,
                                                       NULL);
    if (r == NULL) return -1;
    so_array_of(r, a);
    return 0;
}

static int
host_copy(so_host *h, const so_array *dst, const so_array *src)
{
    (void)h;
    return so_copy_into((PyArrayObject *)dst->handle, (PyArrayObject *)src->handle);
}

static void
host_release(so_host *h, so_array *a)
{
    PyObject *o = (PyObject *)a->handle;
    (void)h;
    a->handle = NULL;
    Py_XDECREF(o);
}

static so_poll *
host_unlock(so_host *h)
{
    return so_unlock(&((so_py_host *)h)->u);
}

static int
host_relock(so_host *h)
{
    return so_relock(&((so_py_host *)h)->u);
}

static so_poll *
host_poll(so_host *h)
{
    return so_poll_signals(&((so_py_host *)h)->u);
}

static void
host_checked(so_host *h, const so_array *idx)
{
    (void)h;
    so_test_rewrite((PyArrayObject *)idx->handle);
}

static int
host_index_view(so_host *h, so_array *kept, const npy_intp *strides, so_array *idx)
{
    so_args *a = ((so_py_host *)h)->a;
    PyArrayObject *k = (PyArrayObject *)kept->handle, *view;
    Py_INCREF(PyArray_DESCR(k));
    view = so_view_of(k, PyArray_DESCR(k), PyArray_DIMS(a->idx), strides);
    host_release(h, kept);          /* the view holds it */
    if (view == NULL) return -1;
    Py_SETREF(a->idx, view);
    so_array_of(a->idx, idx);
    return 0;
}

static int
host_intp_indices(so_host *h, so_array *idx)
{
    so_args *a = ((so_py_host *)h)->a;
    if (so_args_intp_indices(a) < 0) return -1;
    so_array_of(a->idx, idx);
    return 0;
}

static int
host_generic(so_host *h, const so_call *c, const so_array *work)
{
    (void)c;
    return so_apply_generic(((so_py_host *)h)->a, (PyArrayObject *)work->handle);
}

void
so_py_host_init(so_py_host *ph, int nthreads)
{
    static const so_host ops = {host_fresh_copy,   host_new_array, host_copy,
                                host_release,      host_unlock,    host_relock,
                                host_poll,         host_checked,   host_index_view,
                                host_intp_indices, host_generic};
    ph->h = ops;
    ph->a = NULL;
    ph->nthreads = nthreads;
}

/*
 * errors.c: raising the exceptions of a public call.  The C core decides that
 * a call is wrong and names the error by a code with its fields; the text of
 * the message, and the exception class, come from scatterops/_messages.py
 * (the hook set by _core.set_hooks), so that every message is written once.
 */
#include "py/py.h"

#include <stdarg.h>

PyObject *so_hook_error, *so_hook_generic;

/* Raise the exception the hook returned (or the hook's own failure). */
static int
raise_made(PyObject *exc)
{
    if (exc == NULL) return -1;
    if (!PyExceptionInstance_Check(exc)) {
        PyErr_Format(PyExc_SystemError, "scatterops: the message hook returned %R", exc);
        Py_DECREF(exc);
        return -1;
    }
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

int
so_fail(const char *code, const char *func, const char *fmt, ...)
{
    PyObject *fields, *exc;
    va_list va;
    if (so_hook_error == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s (scatterops is not initialised)", func, code);
        return -1;
    }
    if (fmt != NULL) {
        va_start(va, fmt);
        fields = Py_VaBuildValue(fmt, va);
        va_end(va);
    }
    else {
        fields = PyDict_New();
    }
    if (fields == NULL) return -1;
    exc = PyObject_CallFunction(so_hook_error, "ssO", code, func, fields);
    Py_DECREF(fields);
    return raise_made(exc);
}

int
so_fail_converting(const char *func, const char *name)
{
    PyObject *type, *value, *tb, *made;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value == NULL || so_hook_error == NULL) {
        PyErr_Restore(type, value, tb);
        return -1;
    }
    if (tb != NULL) PyException_SetTraceback(value, tb);
    made = PyObject_CallFunction(so_hook_error, "ss{sssO}", "converting", func, "name", name,
                                 "exc", value);
    if (made == value) {
        /* the caller's own exception, noted: raised again as it was */
        Py_DECREF(made);
        PyErr_Restore(type, value, tb);
        return -1;
    }
    Py_XDECREF(type);
    Py_XDECREF(tb);
    if (made != NULL && PyExceptionInstance_Check(made)) {
        /* raise made from value */
        PyException_SetCause(made, value);        /* steals value */
        Py_INCREF(value);
        PyException_SetContext(made, value);      /* steals the new reference */
        return raise_made(made);
    }
    Py_DECREF(value);
    return raise_made(made);
}

PyObject *
so_set_hooks(PyObject *self, PyObject *args)
{
    PyObject *error, *generic;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO:set_hooks", &error, &generic)) return NULL;
    if (!PyCallable_Check(error) || !PyCallable_Check(generic)) {
        PyErr_SetString(PyExc_TypeError, "set_hooks: both hooks must be callable");
        return NULL;
    }
    Py_INCREF(error);
    Py_XSETREF(so_hook_error, error);
    Py_INCREF(generic);
    Py_XSETREF(so_hook_generic, generic);
    Py_RETURN_NONE;
}

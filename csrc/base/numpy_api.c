/*
 * base/numpy_api.c: the one definition of NumPy's C-API table that every file
 * of the core uses (PY_ARRAY_UNIQUE_SYMBOL, base/base.h), and its import.  It
 * lives at the bottom so that the files that call NumPy depend on base, not on
 * the module (py/module.c imports it when the module is made).
 */
#define SCATTEROPS_MODULE
#include "base/base.h"

int
so_import_numpy(void)
{
    return PyArray_ImportNumPyAPI();
}

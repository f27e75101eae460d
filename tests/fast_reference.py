"""The reference's results for the suite's large calls, in whole-array NumPy.

``scatterops.reference`` applies one update at a time in a Python loop: short and
obviously right, and about a second for 1e5 updates, which is most of the time of
the tests that check the C core's large-call paths (threads, splits, prefetching
loops) against it.  This module takes the same arguments, checks them with the
same code (``scatterops._reference_checks.check``: the same errors, the same
normalised call) and, for the calls the large tests make, computes the same bits
without the loop:

* the flat position in ``out`` of every update, in C order of the update index
  space (the order the reference loops in);
* reductions: one ``ufunc.at`` over all of them, which applies them one by one in
  that order (the reference's per-update ``ufunc.at``, in one call);
* ``"none"``: the last update of each position, found with ``np.unique`` on the
  reversed positions (no reliance on the order of a fancy assignment);
* ``"mean"`` of integer and float dtypes (float64 at most): the sums as above,
  the hits counted with ``np.bincount``, then the reference's division: floor
  division of the exact integer sum, or the float64 quotient cast back.

Anything else (``include_self=False``, ``mode="drop"``, an ``out=``, byte-swapped,
longdouble, complex mean, object and the other dtypes) is the reference itself.
``tests/test_fast_reference.py`` holds this module to the reference bit for bit.
"""
import numpy as np

from scatterops import _reference_checks as _args
from scatterops import reference

__all__ = ["scatter_update", "scatter_nd", "scatter_elements"]


def _wrapped(idx, size):
    """indices (checked in range) with the negative ones counted from the end"""
    return np.where(idx < 0, idx + size, idx)


def _positions(call):
    """The flat position in out of each update, in C order of the update index space."""
    shape = call.updates.shape
    grids = list(np.indices(shape, sparse=True))
    idx, axis, dims = call.indices, call.axis, call.data.shape
    if call.func == "scatter_update":
        k = idx.ndim
        w = _wrapped(idx, dims[axis]).reshape((1,) * axis + idx.shape + (1,) * (len(shape) - axis - k))
        coords = grids[:axis] + [w] + grids[axis + k:]
    elif call.func == "scatter_nd":
        lead = idx.ndim - 1
        coords = [_wrapped(idx[..., c], dims[c]).reshape(idx.shape[:-1] + (1,) * (len(shape) - lead))
                  for c in range(idx.shape[-1])] + grids[lead:]
    else:
        coords = grids[:axis] + [_wrapped(idx, dims[axis])] + grids[axis + 1:]
    coords = tuple(np.broadcast_to(c, shape) for c in coords)
    return np.ravel_multi_index(coords, dims).reshape(-1)


def _whole_array(call):
    """The result, or None where this module leaves the call to the reference."""
    dt = call.data.dtype
    if (call.keep is not None or call.out is not None or not call.include_self
            or not dt.isnative or dt.kind not in "biufc" or dt.itemsize > 8 + 8 * (dt.kind == "c")):
        return None
    red = call.reduction
    if red == "mean" and dt.kind not in "iuf":
        return None
    out = np.array(call.data, order="C", copy=True)
    if call.updates.size == 0:
        return out
    pos = _positions(call)
    flat = out.reshape(-1)
    upd = np.ascontiguousarray(call.updates).reshape(-1)
    with np.errstate(all="ignore"):               # as the reference: no floating-point warnings
        if red == "none":
            _, first_of_reversed = np.unique(pos[::-1], return_index=True)
            last = pos.size - 1 - first_of_reversed
            flat[pos[last]] = upd[last]
            return out
        _args.UFUNCS[red].at(flat, pos, upd)
        if red == "mean":
            count = np.bincount(pos, minlength=flat.size)
            hit = count > 0
            n = count[hit] + 1                    # include_self: data is one of the terms
            s = flat[hit]
            if dt.kind == "f":
                flat[hit] = s.astype(np.float64) / n.astype(np.float64)
            elif dt.kind == "u" and dt.itemsize == 8:
                flat[hit] = s // n.astype(np.uint64)
            else:
                flat[hit] = s.astype(np.int64) // n
    return out


def _run(func, data, indices, updates, axis, reduction, include_self, out, mode):
    call = _args.check(func, data, indices, updates, axis, reduction, include_self, out, mode)
    result = _whole_array(call)
    return reference._run(call, out) if result is None else result


def scatter_update(data, indices, updates, axis=0, *, reduction="none", include_self=True,
                   mode="raise", out=None):
    """``scatterops.reference.scatter_update``, whole-array where it can be."""
    return _run("scatter_update", data, indices, updates, axis, reduction, include_self, out, mode)


def scatter_nd(data, indices, updates, *, reduction="none", include_self=True, mode="raise",
               out=None):
    """``scatterops.reference.scatter_nd``, whole-array where it can be."""
    return _run("scatter_nd", data, indices, updates, None, reduction, include_self, out, mode)


def scatter_elements(data, indices, updates, axis=0, *, reduction="none", include_self=True,
                     mode="raise", out=None):
    """``scatterops.reference.scatter_elements``, whole-array where it can be."""
    return _run("scatter_elements", data, indices, updates, axis, reduction, include_self, out,
                mode)

"""The public functions: check arguments (``_args``), then hand the C core
(``_core``) arrays it can trust.

Paths, chosen per call:

* typed C kernels: every reduction on native bool, int8..uint64, float16/32/64,
  complex64/128 (the set ``_core.TYPED`` reports);
* the C assignment kernel for ``reduction="none"`` on every dtype (by item size;
  object dtype with reference counts);
* a generic path in NumPy (``ufunc.at`` on flat destination offsets) for the
  reductions on other dtypes that have a NumPy loop (longdouble, clongdouble,
  timedelta64, datetime64 max/min, object, user dtypes, non-native byte order),
  and for ``none`` on structured dtypes holding objects.
"""
from __future__ import annotations

import numpy as np

from . import _args, _core

_KIND = {"scatter_update": 0, "scatter_nd": 1, "scatter_elements": 2}
_OP = {"none": 0, "add": 1, "sub": 2, "mul": 3, "max": 4, "min": 5, "mean": 1}
_OP_COUNT = 6


def _typed(dtype: np.dtype) -> bool:
    return dtype.isnative and dtype.char in _core.TYPED


def _flat_targets(call: _args.Call, out: np.ndarray) -> np.ndarray:
    """The C-order flat offset into ``out`` of every update element, in update order."""
    lin = np.arange(out.size, dtype=np.intp).reshape(out.shape)
    idx = call.indices
    if call.func == "scatter_update":
        t = np.take(lin, idx, axis=call.axis)
    elif call.func == "scatter_nd":
        k = idx.shape[-1]
        t = lin[tuple(idx[..., j] for j in range(k))] if k else lin
        t = np.broadcast_to(t, call.updates.shape)
    else:
        sub = tuple(slice(None) if d == call.axis else slice(0, idx.shape[d])
                    for d in range(idx.ndim))
        t = np.take_along_axis(lin[sub], idx, axis=call.axis)
    return t.reshape(-1)


def _generic(call: _args.Call, out: np.ndarray) -> None:
    """Any dtype with a NumPy loop: ``ufunc.at`` in update order on a flat view."""
    work = out if out.flags.c_contiguous else np.ascontiguousarray(out)
    flat = work.reshape(-1)
    dest = _flat_targets(call, work)
    upd = call.updates.reshape(-1)
    red = call.reduction
    if red == "none":
        # the last write to an element wins: keep each destination's last update
        _, first_rev = np.unique(dest[::-1], return_index=True)
        last = dest.size - 1 - first_rev
        flat[dest[last]] = upd[last]
    else:
        if red == "mean":
            counts = np.bincount(dest, minlength=flat.size)
        rest = np.ones(dest.size, dtype=bool)
        if not call.include_self:
            _, first = np.unique(dest, return_index=True)
            flat[dest[first]] = upd[first]
            rest[first] = False
        _args.UFUNCS[red].at(flat, dest[rest], upd[rest])
        if red == "mean":
            _finish_mean(flat, counts, call.include_self)
    if work is not out:
        np.copyto(out, work)


def _finish_mean(out: np.ndarray, counts: np.ndarray, include_self: bool) -> None:
    hit = counts > 0
    out[hit] = _args.mean_divide(out[hit], counts[hit] + int(include_self), out.dtype)


def _execute(call: _args.Call) -> np.ndarray:
    data = call.data
    if call.out is None:
        out = np.array(data, order="C", copy=True)
    else:
        out = call.out
        if out is not data:
            np.copyto(out, data)
    if call.updates.size == 0:
        return out
    dtype = out.dtype
    red = call.reduction
    kind = _KIND[call.func]
    if red == "none":
        if dtype.hasobject and dtype != np.dtype(object):
            _generic(call, out)
        else:
            _core.scatter(kind, out, call.indices, call.updates, call.axis, 0, None)
        return out
    if not _typed(dtype):
        _generic(call, out)
        return out
    mask = None if call.include_self else np.zeros(out.shape, np.uint8)
    if red == "mean":
        counts = np.zeros(out.shape, np.intp)
        _core.scatter(kind, counts, call.indices, call.updates, call.axis, _OP_COUNT, None)
    _core.scatter(kind, out, call.indices, call.updates, call.axis, _OP[red], mask)
    if red == "mean":
        _finish_mean(out, counts, call.include_self)
    return out


def scatter_update(data, indices, updates, axis=0, *, reduction="none", include_self=True, out=None):
    return _execute(_args.check("scatter_update", data, indices, updates, axis, reduction,
                                include_self, out, _core.find_bad_index))


def scatter_nd(data, indices, updates, *, reduction="none", include_self=True, out=None):
    return _execute(_args.check("scatter_nd", data, indices, updates, None, reduction,
                                include_self, out, _core.find_bad_index))


def scatter_elements(data, indices, updates, axis=0, *, reduction="none", include_self=True, out=None):
    return _execute(_args.check("scatter_elements", data, indices, updates, axis, reduction,
                                include_self, out, _core.find_bad_index))

"""The scatter operations and the group reductions in plain NumPy, written to be read.

This is the executable form of the contract (``docs/contract.md``): the same
signatures, checks and errors as the C-backed functions, checked by its own plain
NumPy code (``scatterops._reference_checks``, written apart from the C core's), and a loop
that visits every update element in C order and applies

    out[T(p)] = f(out[T(p)], updates[p])

with NumPy's own indexing (negative indices included) and ``ufunc.at``.  It is
slow on purpose; the tests hold the C functions to it bit for bit.

The group reductions (``group_reduce``, ``segment_reduce``, ``group_softmax``,
``segment_softmax``) live in ``scatterops._reference_groups`` and are re-exported here.
"""
from __future__ import annotations

import numpy as np

from . import _reference_checks as _args
from ._reference_groups import group_reduce, group_softmax, segment_reduce, segment_softmax

__all__ = ["scatter_update", "scatter_nd", "scatter_elements",
           "group_reduce", "segment_reduce", "group_softmax", "segment_softmax"]


def _targets(call: _args.Call):
    """Yield (target index tuple into out, position tuple into updates), in C order
    of the update index space."""
    idx = call.indices
    axis = call.axis
    keep = call.keep                            # mode="drop": the index positions applied
    for p in np.ndindex(call.updates.shape):
        if call.func == "scatter_update":
            m = p[axis:axis + idx.ndim]
            t = p[:axis] + (int(idx[m]),) + p[axis + idx.ndim:]
        elif call.func == "scatter_nd":
            m = p[:idx.ndim - 1]
            t = tuple(int(i) for i in idx[m]) + p[idx.ndim - 1:]
        else:
            m = p
            t = p[:axis] + (int(idx[p]),) + p[axis + 1:]
        if keep is not None and not keep[m]:
            continue
        yield t, p


def _mean(s, n: int, dtype: np.dtype):
    """One element of a mean: the sum s (a 0-d array of dtype) over n updates."""
    kind = dtype.kind
    if kind in "iu":
        return int(s) // n                      # exact floor division on Python ints
    if kind == "m":
        return s // np.int64(n)                 # NaT stays NaT
    if kind == "f":
        wide = np.longdouble if dtype.itemsize > 8 else np.float64
        return np.true_divide(s.astype(wide), np.array(n, wide))
    if kind == "c":
        wide, real = ((np.clongdouble, np.longdouble) if dtype.itemsize > 16
                      else (np.complex128, np.float64))
        return np.true_divide(s.astype(wide), np.array(n, real))
    return s[()] / n                            # object: Python's true division


def _run(call: _args.Call, out) -> np.ndarray:
    """The result: a new plain ndarray, or the user's out itself (the checks write
    through a plain view of a subclass)."""
    # like the C kernels, no floating-point warnings (overflow, NaN in max ...)
    with np.errstate(all="ignore"):
        result = _apply(call)
    return result if out is None else out


def _apply(call: _args.Call) -> np.ndarray:
    data = call.data
    out = call.out if call.out is not None else np.array(data, order="C", copy=True)
    if out is not data:
        np.copyto(out, data)
    red = call.reduction
    if red == "none":
        for t, p in _targets(call):
            out[t] = call.updates[p]
        return out

    ufunc = _args.UFUNCS[red]
    seen = np.zeros(out.shape, dtype=bool)      # hit at least once
    count = np.zeros(out.shape, dtype=np.int64)  # for mean
    for t, p in _targets(call):
        u = call.updates[p]
        if not call.include_self and not seen[t]:
            out[t] = u                          # the first update is assigned ...
        else:
            # ... the following ones combined; b as a 0-d array, so that an object
            # element that is a sequence (a tuple) is one value, not several
            ufunc.at(out, t, call.updates[p + (Ellipsis,)])
        seen[t] = True
        count[t] += 1

    if red == "mean":
        for e in np.ndindex(out.shape):
            if count[e]:
                n = int(count[e]) + (1 if call.include_self else 0)
                out[e] = _mean(np.array(out[e], dtype=out.dtype), n, out.dtype)
    return out


def scatter_update(data, indices, updates, axis=0, *, reduction="none", include_self=True,
                   mode="raise", out=None):
    """Reference ``scatter_update``: ``out[a..., indices[m...], b...] = f(out[...], updates[a..., m..., b...])``."""
    return _run(_args.check("scatter_update", data, indices, updates, axis, reduction, include_self, out,
                            mode), out)


def scatter_nd(data, indices, updates, *, reduction="none", include_self=True, mode="raise",
               out=None):
    """Reference ``scatter_nd``: each k-tuple ``indices[i...]`` addresses an element or slice of out."""
    return _run(_args.check("scatter_nd", data, indices, updates, None, reduction, include_self, out,
                            mode), out)


def scatter_elements(data, indices, updates, axis=0, *, reduction="none", include_self=True,
                     mode="raise", out=None):
    """Reference ``scatter_elements``: the axis coordinate comes from indices, the others from the position."""
    return _run(_args.check("scatter_elements", data, indices, updates, axis, reduction, include_self, out,
                            mode), out)


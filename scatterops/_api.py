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
_fast = _core.fast


def _typed(dtype: np.dtype) -> bool:
    # By type, not by character alone: user dtypes may reuse a builtin's letter
    # (ml_dtypes' float8_e4m3b11fnuz is 'L', int1 is 'e').
    return (dtype.isnative and dtype.char in _core.TYPED
            and dtype.type is np.dtype(dtype.char).type)


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
    """Any dtype with a NumPy loop: ``ufunc.at`` in update order on a flat view.
    Like the C kernels, it raises no floating-point warnings."""
    with np.errstate(all="ignore"):
        _generic_apply(call, out)


def _generic_apply(call: _args.Call, out: np.ndarray) -> None:
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
    with np.errstate(all="ignore"):
        _finish_mean_apply(out, counts, include_self)


def _finish_mean_apply(out: np.ndarray, counts: np.ndarray, include_self: bool) -> None:
    hit = counts > 0
    out[hit] = _args.mean_divide(out[hit], counts[hit] + int(include_self), out.dtype)


def _execute(call: _args.Call) -> np.ndarray:
    if (call.out is not None and call.reduction != "none" and call.data.dtype.hasobject
            and call.updates.size):
        # an object reduction runs the elements' own __add__, __lt__, ... which may raise
        # halfway: compute into a fresh array and write out only once all of it
        # succeeded, so that an error leaves out as it was (API.md)
        result = _execute(call._replace(out=None))
        np.copyto(call.out, result)
        return call.out
    data = call.data
    if call.out is None:
        out = _core.copy(data)              # large: memory a dropped result faulted in
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
    if red == "mean" and _core.scatter_mean(kind, out, call.indices, call.updates, call.axis,
                                            call.include_self, mask):
        return out
    if red == "mean":
        counts = np.zeros(out.shape, np.intp)
        _core.scatter(kind, counts, call.indices, call.updates, call.axis, _OP_COUNT, None)
    _core.scatter(kind, out, call.indices, call.updates, call.axis, _OP[red], mask)
    if red == "mean" and not _core.mean_finish(out, counts, call.include_self):
        _finish_mean(out, counts, call.include_self)
    return out


_COMMON = """
    reduction : str, optional
        How an update combines with the value it lands on: ``"none"`` (assign;
        the last update to an element wins), ``"add"``/``"sum"``, ``"sub"``,
        ``"mul"``/``"prod"``/``"multiply"``, ``"max"``/``"amax"``,
        ``"min"``/``"amin"`` (as ``np.add.at`` etc. would, bit for bit) or
        ``"mean"``.
    include_self : bool, optional
        With False, an element that updates hit starts from its first update
        instead of its value in ``data`` (PyTorch ``include_self``, OpenVINO
        ``use_init_val``). Ignored for ``"none"``.
    out : ndarray, optional
        Where to write the result: a writeable array of ``data``'s shape and
        dtype. ``out=data`` updates ``data`` in place.

    Returns
    -------
    ndarray
        ``out``, or a new C-contiguous array of ``data``'s shape and dtype.

    Raises
    ------
    IndexError
        An index is outside ``[-size, size)``; nothing has been written.
    ValueError
        Shapes or ranks do not fit, unknown ``reduction``, 0-d ``data``, read-only ``out``.
    TypeError
        Non-integer ``indices``, ``updates`` not castable to ``data.dtype``
        under ``"same_kind"``, a reduction ``data.dtype`` has no loop for.
    numpy.exceptions.AxisError
        ``axis`` out of range.
"""


def scatter_update(data, indices, updates, axis=0, *, reduction="none", include_self=True, out=None):
    # the Python path: what the C function (_public, below) does not take itself
    return _execute(_args.check("scatter_update", data, indices, updates, axis, reduction,
                                include_self, out, _core.find_bad_index))


def scatter_nd(data, indices, updates, *, reduction="none", include_self=True, out=None):
    # the Python path: what the C function (_public, below) does not take itself
    return _execute(_args.check("scatter_nd", data, indices, updates, None, reduction,
                                include_self, out, _core.find_bad_index))


def scatter_elements(data, indices, updates, axis=0, *, reduction="none", include_self=True, out=None):
    # the Python path: what the C function (_public, below) does not take itself
    return _execute(_args.check("scatter_elements", data, indices, updates, axis, reduction,
                                include_self, out, _core.find_bad_index))


scatter_update.__doc__ = """Write whole slices of ``data`` chosen by ``indices`` along one axis.

    ``out[a..., indices[m...], b...] = f(out[a..., indices[m...], b...], updates[a..., m..., b...])``
    for every position in C order (OpenVINO ScatterUpdate-3, PyTorch
    ``index_copy``/``index_add``/``index_reduce``).

    Parameters
    ----------
    data : array_like
        The input, rank >= 1. Not modified unless ``out=data``.
    indices : array_like of int
        Positions along ``axis``, any shape (0-d too), any integer dtype;
        negative values count from the end.
    updates : array_like
        Shape ``data.shape[:axis] + indices.shape + data.shape[axis+1:]`` or
        broadcastable to it; cast to ``data.dtype`` (``"same_kind"``).
    axis : int, optional
        The axis of ``data`` that ``indices`` address.
""" + _COMMON + """
    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> data = np.zeros((2, 4), dtype=np.int64)
    >>> so.scatter_update(data, [3, 0], [[1, 2], [3, 4]], axis=1)
    array([[2, 0, 0, 1],
           [4, 0, 0, 3]])
    >>> so.scatter_update(data, [1, 1], 5, axis=1, reduction="add")
    array([[ 0, 10,  0,  0],
           [ 0, 10,  0,  0]])
"""

scatter_nd.__doc__ = """Write elements or slices of ``data`` addressed by index tuples.

    With ``k = indices.shape[-1]``, each ``indices[i...]`` is a k-tuple that
    addresses an element (``k == data.ndim``) or a slice (``k < data.ndim``;
    ``k == 0`` is the whole array), and
    ``out[indices[i...]] = f(out[indices[i...]], updates[i...])`` in C order
    (ONNX ScatterND, OpenVINO ScatterNDUpdate, TensorFlow
    ``tensor_scatter_nd_*``, PyTorch ``index_put_``).

    Parameters
    ----------
    data : array_like
        The input, rank >= 1. Not modified unless ``out=data``.
    indices : array_like of int
        Rank >= 1, ``indices.shape[-1] <= data.ndim``; negative values count
        from the end.
    updates : array_like
        Shape ``indices.shape[:-1] + data.shape[k:]`` or broadcastable to it;
        cast to ``data.dtype`` (``"same_kind"``).
""" + _COMMON + """
    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> so.scatter_nd(np.arange(1, 9), [[4], [3], [1], [7]], [9, 10, 11, 12])
    array([ 1, 11,  3, 10,  9,  6,  7, 12])
    >>> so.scatter_nd(np.zeros(3), [[0], [0], [2]], [1.0, 2.0, 4.0], reduction="add")
    array([3., 0., 4.])
"""

scatter_elements.__doc__ = """Write single elements of ``data``, one per element of ``indices``.

    ``indices``, ``updates`` and ``data`` have the same rank; the update at
    position ``(i0, ..., in)`` goes to the same position in ``out`` except on
    ``axis``, whose coordinate is ``indices[i0, ..., in]`` (ONNX
    ScatterElements / Scatter, OpenVINO ScatterElementsUpdate, PyTorch
    ``scatter``/``scatter_reduce``).

    Parameters
    ----------
    data : array_like
        The input, rank >= 1. Not modified unless ``out=data``.
    indices : array_like of int
        Same rank as ``data``; ``indices.shape[d] <= data.shape[d]`` for every
        ``d != axis``; negative values count from the end.
    updates : array_like
        Shape ``indices.shape`` or broadcastable to it; cast to ``data.dtype``
        (``"same_kind"``).
    axis : int, optional
        The axis whose coordinate comes from ``indices``.
""" + _COMMON + """
    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> so.scatter_elements(np.zeros((3, 3)), [[1, 0, 2], [0, 2, 1]],
    ...                     [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]])
    array([[2. , 1.1, 0. ],
           [1. , 0. , 2.2],
           [0. , 2.1, 1.2]])
    >>> so.scatter_elements(np.zeros(4), [0, 1, 0, 3], [1.0, 2.0, 3.0, 4.0],
    ...                     reduction="mean", include_self=False)
    array([2., 2., 0., 4.])
"""


def _public(func, kind: int, signature: str):
    """The public function: a C function (``_core.make_public``) that runs the plain
    call entirely in C and hands everything else to ``func``, with ``func``'s name
    and docstring and the signature ``signature`` (its ``__text_signature__``)."""
    doc = f"{func.__name__}{signature}\n--\n\n{func.__doc__}"
    return _core.make_public(func.__name__, kind, func, doc, __name__)


_SIG = "(data, indices, updates, axis=0, *, reduction='none', include_self=True, out=None)"
scatter_update = _public(scatter_update, 0, _SIG)
scatter_nd = _public(scatter_nd, 1,
                     "(data, indices, updates, *, reduction='none', include_self=True, out=None)")
scatter_elements = _public(scatter_elements, 2, _SIG)

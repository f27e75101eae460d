"""``scatterops.dask.group_reduce``: a group reduction on Dask arrays, lazy, with the bits of
``scatterops.group_reduce`` on the computed inputs for every chunking and every func; and
``scatterops.dask.group_softmax``, three such steps (the maxima, the sums of the exp terms,
each member: see its docstring).

How it runs (docs/contract.md, "Group reductions", says the same for users):

* **Output blocks.**  The result has ``values``' chunks on every axis but ``axis``, where the
  ``size`` groups are cut into as many blocks as ``values`` has along ``axis`` (each block a
  run of consecutive group ids).
* **Routing** (one task per block of ``values``): ``_core.route`` (csrc/py/route.c, the
  machinery that routes the scatter updates) groups the block's slices along ``axis`` by the
  output block of their group id, each piece in member order, with the id local to the
  output block and, for argmax / argmin, the member's position in ``values``.  An id outside
  ``[0, size)`` is the first error of its chunk (``mode="raise"``) or goes to no block
  (``mode="drop"``).
* **Reduce** (one task per output block): the pieces routed to it, concatenated in the order
  of the ``values`` blocks along ``axis`` -- so each group's members stand in their global
  order --, and ONE ``scatterops.group_reduce`` call on them.  No partial result is combined
  across chunks: each group is reduced whole, in order, by one call, as the top-level call
  reduces it.  argmax / argmin map the call's positions back to positions in ``values``.
* **Errors** that shapes, dtypes and arguments reveal are raised at call time by the
  top-level function itself, on zero-stride stand-ins of the dask arguments; an id out of
  range raises the top-level IndexError (the first one along ``axis``) when computed.

Graph size: ``B`` routing tasks (``B``: blocks of ``values``) and ``B * O`` pieces (``O``:
output blocks along ``axis``; with NumPy ``groups``, only the pairs that carry a member,
found at call time), one error check with dask ``groups``, and one reduce task per output
block.  Memory: a routing task holds its block and the grouped copy of it; a reduce task
holds the pieces routed to it, their concatenation and its result.
"""
from __future__ import annotations

import operator
from typing import Any, Dict, List, Tuple

import numpy as np

import dask
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

import scatterops
from . import _core
from .dask import _as_dask_data, _is_dask, _pick, _require_known_chunks, _starts, \
    _threads_context, _zero_strided

__all__ = ["group_reduce", "group_softmax"]

#: stands for group_softmax where the reduction that finds its maxima reports a bad id
_SOFTMAX = object()

#: the funcs whose result is a position in values (routed with the members' positions)
_ARG_FUNCS = ("argmax", "argmin", "nanargmax", "nanargmin",
              np.argmax, np.argmin, np.nanargmax, np.nanargmin)


def _is_arg(func: Any) -> bool:
    return any(func is f or (isinstance(func, str) and func == f) for f in _ARG_FUNCS)


# ----------------------------------------------------------------------------- call-time checks

def _stand_in(shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return _zero_strided(shape, dtype)


def _axis(axis: Any, ndim: int):
    """axis in [0, ndim), or None where the top-level call is to word the error."""
    if isinstance(axis, np.ndarray) and axis.size == 1 and axis.dtype.kind in "iu":
        axis = axis.reshape(()).item()
    if isinstance(axis, (bool, np.bool_)):
        return None
    try:
        axis = operator.index(axis)
    except TypeError:
        return None
    return axis % ndim if -ndim <= axis < ndim else None


def _check(values: Any, groups: Any, func: Any, size: Any, axis: Any, kwargs: Dict[str, Any]):
    """Every rule of the call but the values of the ids, by the top-level function on
    stand-ins of the arguments' shapes and dtypes.  Returns the normalised axis and the
    result of one empty group (its dtype, and for argmax / argmin the fill)."""
    vshape, gshape = tuple(values.shape), tuple(groups.shape)
    ax = _axis(axis, len(vshape)) if vshape else None
    if ax is None or len(gshape) != 1 or vshape[ax] != gshape[0]:
        # a shape the top-level call refuses before it reduces anything: it raises here
        scatterops.group_reduce(_stand_in(vshape, values.dtype), _stand_in(gshape, groups.dtype),
                                func, size=size, axis=axis, **kwargs)
        raise AssertionError("scatterops.group_reduce took a call it refuses")  # pragma: no cover
    empty = vshape[:ax] + (0,) + vshape[ax + 1:]
    scatterops.group_reduce(_stand_in(empty, values.dtype), np.zeros(0, groups.dtype), func,
                            size=size, axis=ax, **kwargs)
    probe = scatterops.group_reduce(np.zeros(0, values.dtype), np.zeros(0, groups.dtype), func,
                                    size=1, **kwargs)
    return ax, probe


def _raise_bad_id(values_dtype, groups_dtype, func, size, ax, ndim, kwargs, where, value):
    """The top-level IndexError for the id ``value`` at position ``where`` of groups (func
    ``_SOFTMAX``: group_softmax's)."""
    shape = (1,) * ax + (where + 1,) + (1,) * (ndim - ax - 1)
    ids = np.zeros(where + 1, groups_dtype)
    ids[where] = value
    if func is _SOFTMAX:
        scatterops.group_softmax(_stand_in(shape, values_dtype), ids, size=size, axis=ax)
    else:
        scatterops.group_reduce(_stand_in(shape, values_dtype), ids, func, size=size, axis=ax,
                                **kwargs)
    raise IndexError(f"scatterops.dask.group_reduce: groups[{where}] = {value} is outside "  # pragma: no cover
                     f"[0, {size})")


# ----------------------------------------------------------------------------- tasks

def _route_ids(ids: np.ndarray, size: int, mode: str, offset: int):
    """The ids as intp with every one outside [0, size) moved to size (routed to no block),
    or the (position, value) of the first such id under mode="raise"."""
    bad = (ids < 0) | (ids >= size) if ids.dtype.kind == "i" else ids >= size
    if bad.any():
        if mode == "raise":
            i = int(np.argmax(bad))
            return None, (offset + i, ids[i].item())
        routed = ids.astype(np.intp)
        routed[bad] = size
        return routed, None
    return ids.astype(np.intp), None


def _route(ids: np.ndarray, block: np.ndarray, ax: int, offset: int, size: int, mode: str,
           starts: np.ndarray, positions: bool, targets: List[int]):
    """Split one block of values by the output block of each slice's group: {target: piece}
    plus "error".  A piece is (local ids, the slices, their positions in values or None),
    in member order."""
    routed, error = _route_ids(ids, size, mode, offset)
    out: Dict[Any, Any] = {"error": error}
    if error is not None:
        return out
    n = len(routed)
    lead, tail = block.shape[:ax], block.shape[ax + 1:]
    payloads = [block.reshape(int(np.prod(lead, dtype=np.int64)), n,
                              int(np.prod(tail, dtype=np.int64)))]
    if positions:
        payloads.append(np.arange(offset, offset + n, dtype=np.intp).reshape(1, n, 1))
    if size:
        _, counts, local, grouped = _core.route(routed.reshape(n, 1), (size,), (starts,),
                                                _core.MODES["drop"], np.intp, tuple(payloads),
                                                None)
    else:                                           # no group: every slice is dropped
        counts, local, grouped = np.zeros(1, np.intp), np.zeros((0, 1), np.intp), \
            [p[:, :0] for p in payloads]
    ends = np.cumsum(counts)
    for t in targets:
        lo, hi = int(ends[t] - counts[t]), int(ends[t])
        piece = grouped[0][:, lo:hi].reshape(lead + (hi - lo,) + tail)
        out[t] = (local[lo:hi, 0], piece, grouped[1][0, lo:hi, 0] if positions else None)
    return out


def _reduce(check: Any, func: Any, ax: int, block_len: int, empty_shape: Tuple[int, ...],
            dtype: np.dtype, kwargs: Dict[str, Any], fill: Any, threads: int, *pieces):
    """One output block: its members in global order, ONE group_reduce call."""
    pieces = tuple(p for p in pieces if p is not None)
    if pieces:
        local = np.concatenate([p[0] for p in pieces])
        vals = np.concatenate([p[1] for p in pieces], axis=ax)
    else:
        local = np.zeros(0, np.intp)
        vals = np.empty(empty_shape, dtype)
    arg = fill is not None
    call = dict(kwargs, fill_value=None) if arg else kwargs
    with _threads_context(threads):
        res = scatterops.group_reduce(vals, local, func, size=block_len, axis=ax, mode="raise",
                                      **call)
    if arg:     # positions in the concatenation -> positions in values; empty: the fill
        where = np.concatenate([p[2] for p in pieces]) if pieces else np.zeros(0, np.intp)
        found = res >= 0
        res = np.where(found, where[np.where(found, res, 0)] if where.size else 0, fill)
    return res


# ----------------------------------------------------------------------------- the graph

def _arguments(name: str, values: Any, groups: Any, size: Any, out: Any):
    """The checks both functions make first; -> values and groups, NumPy ones as arrays."""
    if out is not None:
        raise TypeError(f"scatterops.dask.{name}: out= is not supported: a lazy result has no "
                        f"place to write (compute the result, or use scatterops.{name} with "
                        "out= on NumPy arrays)")
    for arg, x in (("values", values), ("groups", groups)):
        _require_known_chunks(name, arg, x)
    if _is_dask(groups) and size is None:
        raise ValueError(f"scatterops.dask.{name}: size= is required when groups is a dask "
                         "array (the number of groups is its largest id + 1, which dask "
                         "knows only by computing)")
    return (values if _is_dask(values) else np.asarray(values),
            groups if _is_dask(groups) else np.asarray(groups))


def group_reduce(values, groups, func="sum", *, size=None, axis=0, fill_value=None, ddof=0,
                 dtype=None, mode="raise", out=None, chunks="auto", _errors_of=None):
    """``scatterops.group_reduce`` on Dask arrays: a lazy array, bit-identical when computed.

    Same arguments and result as the top-level function; ``values`` and ``groups`` may be
    dask or NumPy arrays (a NumPy ``values`` is cut into ``chunks``, default ``"auto"``).
    ``size=`` is required when ``groups`` is a dask array (its largest id is not known
    until computed); ``out=`` is a TypeError: a lazy result has no place to write.

    The result has ``values``' chunks on every axis but ``axis``; along ``axis`` the groups
    are cut into as many blocks as ``values`` has there.  Each group is reduced whole, in
    member order, by one ``scatterops.group_reduce`` call, so the bits never depend on the
    chunking or on the scheduler.

    Examples
    --------
    >>> import numpy as np, dask.array as da, scatterops.dask
    >>> v = da.from_array(np.array([1.0, 2.0, 3.0, 4.0]), chunks=2)
    >>> scatterops.dask.group_reduce(v, np.array([0, 1, 0, 1]), "mean").compute()
    array([2., 3.])
    """
    name = "group_reduce"
    values, groups = _arguments(name, values, groups, size, out)
    kwargs = {"fill_value": fill_value, "ddof": ddof, "dtype": dtype, "mode": mode}
    ax, probe = _check(values, groups, func, size, axis, kwargs)
    if size is None:
        # NumPy groups: the top-level default, taken from the ids the check found valid
        size = max(int(groups.max()) + 1, 0) if groups.size else 0
    size = int(size)
    rdtype = probe.dtype
    arg_fill = probe.reshape(-1)[0] if _is_arg(func) else None
    block_kwargs = {"fill_value": fill_value, "ddof": ddof, "dtype": dtype}

    dvalues = _as_dask_data(values, chunks, f"scatterops.dask.{name}", "values")
    in_chunks = dvalues.chunks[ax]
    nin = len(in_chunks)
    per_block = max(1, -(-size // max(nin, 1)))
    out_axis = da.core.normalize_chunks(per_block, (size,))[0] if size else (0,)
    out_chunks = dvalues.chunks[:ax] + (out_axis,) + dvalues.chunks[ax + 1:]
    starts = _starts(out_axis)
    in_starts = _starts(in_chunks)
    nout = len(out_axis)

    eager = not _is_dask(groups)
    dgroups = da.from_array(groups, chunks=(in_chunks,), name=False) if eager \
        else groups.rechunk((in_chunks,))
    positions = arg_fill is not None
    threads = int(dask.config.get("scatterops.threads-per-task", 1))
    token = tokenize(name, dvalues, dgroups, func, size, ax, fill_value, ddof, dtype, mode,
                     threads)
    out_name = f"{name}-dask-{token}"
    route_name = f"{name}-route-{token}"
    piece_name = f"{name}-piece-{token}"
    err_name = f"{name}-error-{token}"
    check_name = f"{name}-check-{token}"

    # which output blocks each chunk of ids sends members to (NumPy groups: found now)
    targets_of: List[List[int]] = []
    first_bad = None
    for i in range(nin):
        if not eager:
            targets_of.append(list(range(nout)))
            continue
        ids = groups[int(in_starts[i]):int(in_starts[i + 1])]
        routed, error = _route_ids(ids, size, mode, int(in_starts[i]))
        if error is not None:
            first_bad = first_bad or error
            targets_of.append([])
            continue
        blocks = np.searchsorted(starts, routed[routed < size], side="right") - 1
        targets_of.append([int(t) for t in np.unique(blocks)])

    dsk: Dict[Any, Any] = {}
    errors: List[Any] = []
    pieces_of: Dict[Tuple[int, ...], List[Any]] = {}
    for bcoord in np.ndindex(*dvalues.numblocks):
        i = bcoord[ax]
        if not targets_of[i]:
            continue
        rkey = (route_name,) + bcoord
        dsk[rkey] = (_route, (dgroups.name, i), (dvalues.name,) + bcoord, ax,
                     int(in_starts[i]), size, mode, starts, positions, targets_of[i])
        if not eager and all(c == 0 for d, c in enumerate(bcoord) if d != ax):
            dsk[(err_name, i)] = (_pick, rkey, "error")
            errors.append((err_name, i))
        for t in targets_of[i]:
            pkey = (piece_name,) + bcoord + (t,)
            dsk[pkey] = (_pick, rkey, t)
            ocoord = bcoord[:ax] + (t,) + bcoord[ax + 1:]
            pieces_of.setdefault(ocoord, []).append(pkey)

    error_args = (values.dtype, groups.dtype, func if _errors_of is None else _errors_of, size,
                  ax, dvalues.ndim, kwargs)
    if first_bad is not None:
        dsk = {(check_name,): (_raise_first, error_args, first_bad)}
        pieces_of = {}
        check: Any = (check_name,)
    elif errors:
        dsk[(check_name,)] = (_raise_first, error_args) + tuple(errors)
        check = (check_name,)
    else:
        check = None
    for ocoord in np.ndindex(*[len(c) for c in out_chunks]):
        block_len = out_axis[ocoord[ax]]
        empty_shape = tuple(0 if d == ax else out_chunks[d][c] for d, c in enumerate(ocoord))
        dsk[(out_name,) + ocoord] = (_reduce, check, func, ax, block_len, empty_shape,
                                     dvalues.dtype, block_kwargs, arg_fill, threads) + \
            tuple(pieces_of.get(ocoord, []))
    graph = HighLevelGraph.from_collections(out_name, dsk, dependencies=[dvalues, dgroups])
    return da.Array(graph, out_name, chunks=out_chunks, dtype=rdtype,
                    meta=np.empty((0,) * dvalues.ndim, rdtype))


def _raise_first(error_args, *errors):
    """Raise the top-level IndexError for the first bad id along axis, if any."""
    found = [e for e in errors if e is not None]
    if found:
        where, value = min(found)
        _raise_bad_id(*error_args, where, value)
    return None



# ----------------------------------------------------------------------------- softmax

def _softmax_block(x: np.ndarray, ids: np.ndarray, m: np.ndarray, s: np.ndarray, ax: int,
                   ct: np.dtype, rt: np.dtype, log: bool, terms_only: bool) -> np.ndarray:
    """One block of values: ``exp(x - m)`` of its members (``terms_only``), or the softmax
    ``exp(x - m) / s`` (log: ``(x - m) - log(s)``); ``m`` and ``s`` hold every group along
    ``ax``.  NumPy's exp and log on contiguous arrays of the computing dtype, as the C calls;
    no floating-point warning, as the top-level function emits none."""
    with np.errstate(all="ignore"):
        d = np.subtract(x.astype(ct), np.take(m, ids, axis=ax))
        if log and not terms_only:
            ls = np.log(np.ascontiguousarray(s))
            return (d - np.take(ls, ids, axis=ax)).astype(rt, copy=False)
        e = np.exp(np.ascontiguousarray(d))
        if terms_only:
            return e
        return (e / np.take(s, ids, axis=ax)).astype(rt, copy=False)


def group_softmax(values, groups, *, size=None, axis=0, log=False, out=None, chunks="auto"):
    """``scatterops.group_softmax`` on Dask arrays: a lazy array, bit-identical when computed.

    Same arguments and result as the top-level function; ``values`` and ``groups`` may be
    dask or NumPy arrays (a NumPy ``values`` is cut into ``chunks``, default ``"auto"``),
    ``size=`` is required when ``groups`` is a dask array, and ``out=`` is a TypeError.  The
    result has ``values``' chunks.

    Three lazy steps, each exact for every chunking: the max ``m`` of each group
    (``group_reduce(..., "max")`` in the computing dtype), the sum ``s`` of ``exp(x - m)`` in
    member order (``group_reduce(..., "sum")`` of those terms: each group summed whole, in
    order, by one call), then each member from its block, ``m`` and ``s``.

    Examples
    --------
    >>> import numpy as np, dask.array as da, scatterops.dask
    >>> v = da.from_array(np.array([0.0, 0.0, 1.0]), chunks=2)
    >>> scatterops.dask.group_softmax(v, np.array([0, 0, 1])).compute()
    array([0.5, 0.5, 1. ])
    """
    name = "group_softmax"
    values, groups = _arguments(name, values, groups, size, out)
    # every rule but the ids' values, by the top-level function on stand-ins
    vshape, gshape = tuple(values.shape), tuple(groups.shape)
    ax = _axis(axis, len(vshape)) if vshape else None
    if ax is None or len(gshape) != 1 or vshape[ax] != gshape[0]:
        scatterops.group_softmax(_stand_in(vshape, values.dtype), _stand_in(gshape, groups.dtype),
                                 size=size, axis=axis, log=log)
        raise AssertionError("scatterops.group_softmax took a call it refuses")  # pragma: no cover
    empty = vshape[:ax] + (0,) + vshape[ax + 1:]
    scatterops.group_softmax(_stand_in(empty, values.dtype), np.zeros(0, groups.dtype),
                             size=size, axis=ax, log=log)
    rt = scatterops.group_softmax(np.zeros(0, values.dtype), np.zeros(0, np.intp)).dtype
    ct = np.dtype(np.float64) if rt == np.float16 else rt
    if size is None:
        size = max(int(groups.max()) + 1, 0) if groups.size else 0
    size = int(size)

    dvalues = _as_dask_data(values, chunks, f"scatterops.dask.{name}", "values")
    in_chunks = dvalues.chunks[ax]
    dgroups = (groups.rechunk((in_chunks,)) if _is_dask(groups)
               else da.from_array(groups, chunks=(in_chunks,), name=False))
    # m and s hold every group along axis (one chunk there) and values' chunks elsewhere; a
    # block of values meets them through the index "Z", which blockwise concatenates
    whole = tuple(-1 if d == ax else c for d, c in enumerate(dvalues.chunks))
    reduce = dict(size=size, axis=ax, _errors_of=_SOFTMAX)
    letters = "".join(chr(ord("a") + d) for d in range(dvalues.ndim))
    rest = letters[:ax] + "Z" + letters[ax + 1:]
    m = group_reduce(dvalues.astype(ct), dgroups, "max", **reduce).rechunk(whole)

    def each_member(s, terms_only, dtype):
        return da.blockwise(_softmax_block, letters, dvalues, letters, dgroups, letters[ax],
                            m, rest, s, None if s is None else rest, ax=ax, ct=ct, rt=dtype,
                            log=log, terms_only=terms_only, dtype=dtype, concatenate=True)
    s = group_reduce(each_member(None, True, ct), dgroups, "sum", **reduce).rechunk(whole)
    return each_member(s, False, rt)

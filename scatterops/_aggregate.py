"""``aggregate``: numpy_groupies' signature and function names over ``group_reduce``.

A thin layer: it turns numpy_groupies' vocabulary (its aliases, ``axis=None``, a 2-D
``group_idx`` with a tuple ``size``) into one ``scatterops.group_reduce`` call, which
decides and computes everything else.  The alias table is numpy_groupies' own naming, not a
rule of the computation, so it lives here.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from ._groups import group_reduce

__all__ = ["aggregate"]

#: numpy_groupies' names (aliases included) -> the func of group_reduce
_NAMES = {
    "sum": "sum", "add": "sum", "plus": "sum",
    "prod": "prod", "product": "prod", "times": "prod", "multiply": "prod",
    "max": "max", "amax": "max", "maximum": "max",
    "min": "min", "amin": "min", "minimum": "min",
    "mean": "mean", "var": "var", "std": "std",
    "argmax": "argmax", "argmin": "argmin",
    "first": "first", "last": "last",
    "len": "count", "count": "count",
    "any": "any", "or": "any", "all": "all", "and": "all",
    "logsumexp": "logsumexp",
}
_NAMES.update({"nan" + func: "nan" + func for func in ("sum", "prod", "max", "min", "mean", "var",
                                                       "std", "argmax", "argmin", "first", "last")})
_NAMES.update({"nanlen": "nancount", "nancount": "nancount"})

#: the callables numpy_groupies takes for a name, Python's builtins included
_CALLABLES = {
    np.add: "sum", np.sum: "sum", builtins.sum: "sum",
    np.multiply: "prod", np.prod: "prod",
    np.maximum: "max", np.max: "max", np.amax: "max", builtins.max: "max",
    np.minimum: "min", np.min: "min", np.amin: "min", builtins.min: "min",
    np.mean: "mean", np.var: "var", np.std: "std", np.argmax: "argmax", np.argmin: "argmin",
    np.any: "any", builtins.any: "any", np.all: "all", builtins.all: "all", builtins.len: "count",
    np.nansum: "nansum", np.nanprod: "nanprod", np.nanmax: "nanmax", np.nanmin: "nanmin",
    np.nanmean: "nanmean", np.nanvar: "nanvar", np.nanstd: "nanstd",
    np.nanargmax: "nanargmax", np.nanargmin: "nanargmin",
}


def _supported() -> str:
    return ", ".join(sorted(_NAMES))


def _func(func) -> str:
    if isinstance(func, str):
        name = _NAMES.get(func)
    elif callable(func):
        try:
            name = _CALLABLES.get(func)
        except TypeError:           # an unhashable callable names no function
            name = None
    else:
        raise TypeError(f"aggregate: func must be a str or a function, got {type(func).__name__}")
    if name is None:
        raise ValueError(f"aggregate: func={getattr(func, '__name__', func)!r} is not supported "
                         f"(medians, quantiles, cumulative functions, sorting and collecting "
                         f"are not group reductions of this package); the supported names: "
                         f"{_supported()}, and the NumPy functions of them")
    return name


def _ddof(kwargs: dict) -> int:
    ddof = kwargs.pop("ddof", 0)
    if kwargs:
        raise TypeError(f"aggregate: got unexpected keyword arguments {sorted(kwargs)} (of "
                        f"numpy_groupies' function arguments only ddof is taken)")
    return ddof


def _multi_size(group_idx: np.ndarray, size):
    """A (k, N) group_idx: the size as a tuple of k ints (the largest ids + 1 without one)."""
    if size is None:
        return tuple(int(m) + 1 for m in group_idx.max(axis=1)) if group_idx.shape[1] \
            else (0,) * group_idx.shape[0]
    if np.ndim(size) != 1 or len(size) != group_idx.shape[0]:
        raise ValueError(f"aggregate: a group_idx of shape {group_idx.shape} groups by "
                         f"{group_idx.shape[0]} ids per value: size must be a tuple of "
                         f"{group_idx.shape[0]} ints, got {size!r}")
    return tuple(operator.index(s) for s in size)


def aggregate(group_idx, a, func="sum", size=None, fill_value=None, order="C", dtype=None,
              axis=None, out=None, **kwargs):
    """Aggregate ``a`` by ``group_idx``, with numpy_groupies' signature and function names.

    ``aggregate(group_idx, a, func)`` is ``group_reduce(a, group_idx, func)`` with
    numpy_groupies' spelling: its aliases (``"plus"``, ``"len"``, ``"nanlen"``, ``"amax"``,
    ``"and"``, ...; Python's ``sum``, ``max``, ``len``...), ``ddof`` as a keyword, ``axis=None``
    for a 1-D ``a`` or a scalar (repeated for every id), and a 2-D ``group_idx`` of shape
    ``(k, N)`` with a tuple ``size``, which groups by
    ``np.ravel_multi_index(group_idx, size, order=order)`` and gives a result of shape
    ``size``.

    Parameters
    ----------
    group_idx : array_like of int
        The group of each value: 1-D, or ``(k, N)`` for k ids per value.
    a : array_like
        The values: 1-D or a scalar (``axis=None``), or any shape with ``axis`` the one
        ``group_idx`` runs along.
    func : str or callable
        A numpy_groupies name or alias, or the NumPy or builtin function of one.  Names it
        has and ``group_reduce`` does not (median, quantile, cumsum, sort, array, nunique,
        ...) are a ValueError listing the supported ones.
    size : int or tuple of int, optional
        The number of groups (a tuple for a 2-D ``group_idx``); default the largest id + 1.
    fill_value : scalar, optional
        The result of an empty group; the default depends on ``func`` (0 for sum and len,
        1 for prod, -1 for argmax / argmin, NaN or 0 for the rest, as numpy_groupies).
    order : {"C", "F"}
        The order of ``np.ravel_multi_index`` and of the result's shape for a 2-D
        ``group_idx``.
    dtype : dtype, optional
        As ``group_reduce``'s ``dtype=``.
    axis : int, optional
        The axis of ``a`` that ``group_idx`` runs along; None for a 1-D or scalar ``a``.
    out : ndarray, optional
        Written with the result (its shape and dtype).
    kwargs : int
        ``ddof=`` for var and std, numpy_groupies' only function argument taken here.

    Returns
    -------
    numpy.ndarray
        ``a``'s shape with ``axis`` replaced by ``size`` (or ``size`` itself).

    Raises
    ------
    ValueError
        A name numpy_groupies has and this package does not, an ``a`` of more than one
        dimension with ``axis=None``, a ``size`` that is not a tuple of k ints for a 2-D
        ``group_idx``, an ``order`` other than "C" and "F"; and ``group_reduce``'s errors.
    TypeError
        A ``func`` that is neither a str nor a function, a keyword argument other than
        ``ddof``.
    IndexError
        An id outside ``[0, size)``, as ``group_reduce``.

    Notes
    -----
    Where numpy_groupies answers otherwise (its argmax of a group that holds NaN, its
    one-pass variance, its result dtypes, its ValueError for negative ids), the table in
    docs/contract.md ("Group reductions") says how.

    Examples
    --------
    >>> import numpy as np, scatterops
    >>> scatterops.aggregate(np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]), "plus")
    array([4., 0., 2.])
    >>> scatterops.aggregate(np.array([[0, 1, 0], [1, 1, 0]]), np.array([1, 2, 3]), "len",
    ...                      size=(2, 2))
    array([[1, 1],
           [0, 1]])
    """
    name = _func(func)
    ddof = _ddof(dict(kwargs))
    if order not in ("C", "F"):
        raise ValueError(f"aggregate: order must be 'C' or 'F', got {order!r}")
    group_idx = np.asarray(group_idx)
    multi = group_idx.ndim == 2
    if multi:
        shape = _multi_size(group_idx, size)
        ids = np.ravel_multi_index(tuple(group_idx), shape, order=order) if group_idx.size \
            else np.zeros(group_idx.shape[1], np.intp)
        size = int(np.prod(shape, dtype=np.int64))
    else:
        ids = group_idx
    if multi and axis is not None:
        raise ValueError(f"aggregate: a group_idx of shape {group_idx.shape} (k ids per value) "
                         f"takes a 1-D a and axis=None, got axis={axis!r}")
    if axis is None:
        a = np.asarray(a)
        if a.ndim == 0:
            a = np.broadcast_to(a, (len(ids) if ids.ndim == 1 else 1,))
        elif a.ndim != 1:
            raise ValueError(f"aggregate: with axis=None, a must be 1-D or a scalar, got shape "
                             f"{a.shape}; pass axis= to group along one axis of it")
        axis = 0
    call = dict(size=size, axis=axis, fill_value=fill_value, ddof=ddof, dtype=dtype)
    if not multi:
        return group_reduce(a, ids, name, out=out, **call)
    result = group_reduce(a, ids, name, **call).reshape(shape, order=order)
    if out is None:
        return np.ascontiguousarray(result)
    out[...] = result
    return out

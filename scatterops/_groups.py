"""The group reductions: group_reduce, segment_reduce, group_softmax, segment_softmax.

Each is one call into the C core (``_core.group``), which checks every argument, chooses
the computing dtype and runs; docs/contract.md ("Group reductions") gives the rules.
"""
from __future__ import annotations

import textwrap
from typing import Any, Optional

import numpy as np

from . import _core

_GROUP, _SEGMENT, _GROUP_SOFTMAX, _SEGMENT_SOFTMAX = range(4)

# The Raises section of the four docstrings: what they share is written here once, each
# function's own cases are filled in by ``_raises``.
_RAISES = """Raises
    ------
    ValueError
        {value}, ``out`` of another shape; nothing is written to ``out``.
    TypeError
        {wrong_type}{ids} that are not integers, ``out`` that is not an ndarray or of another
        dtype.
{index}    numpy.exceptions.AxisError
        ``axis`` out of range."""

_INDEX = """    IndexError
        An id outside ``[0, size)``{when}; nothing is written to ``out``.
"""

_REDUCE_TYPE = "A func the values' dtype does not take, a ``dtype=`` the func does not take, "
_SOFTMAX_TYPE = "Values that are not bool, integer or real float, "
_OFFSETS = ("An offset of ``indptr`` that breaks its rule (named by its position), an empty "
            "``indptr``")


def _raises(value: str, wrong_type: str, ids: str, index: Optional[str] = None):
    """Put the shared Raises section into a function's docstring, at its ``{raises}`` line:
    ``value`` and ``wrong_type`` open the ValueError and TypeError entries, ``ids`` names the
    ids' argument; ``index``, where ids can be out of range, says when that is an IndexError."""
    text = _RAISES.format(value=value, wrong_type=wrong_type, ids=ids,
                          index="" if index is None else _INDEX.format(when=index))
    text = "\n".join(textwrap.fill(line.strip(), 92, initial_indent=" " * 8,
                                   subsequent_indent=" " * 8) if line.startswith(" " * 8) else line
                     for line in text.splitlines())

    def put(func):
        if func.__doc__:                # None under python -OO
            func.__doc__ = func.__doc__.replace("{raises}", text)
        return func
    return put


@_raises(value="An unknown func or mode, ``groups`` of another length than ``values`` along "
               "``axis``, a bad ``size``, ``ddof`` or ``fill_value`` (one an integer result "
               "cannot hold)",
         wrong_type=_REDUCE_TYPE, ids="ids", index=' under ``mode="raise"``')
def group_reduce(values: Any, groups: Any, func: Any = "sum", *, size: Any = None,
                 axis: Any = 0, fill_value: Any = None, ddof: Any = 0, dtype: Any = None,
                 mode: str = "raise", out: Any = None) -> np.ndarray:
    """Reduce the slices of ``values`` along ``axis`` by group.

    Each group's members are taken in the order they appear along ``axis``, and every
    position of the other axes is reduced on its own, so each result is one fixed sequence
    of IEEE operations: the same bits on every run and every thread count.

    Parameters
    ----------
    values : array_like
        The values, rank >= 1.
    groups : array_like of int
        One group id per slice of ``values`` along ``axis``.
    func : str or NumPy function, optional
        ``"sum"`` (default), ``"prod"``, ``"max"``, ``"min"``, ``"mean"``, ``"var"``,
        ``"std"``, ``"argmax"``, ``"argmin"``, ``"first"``, ``"last"``, ``"any"``,
        ``"all"``, ``"count"``, ``"logsumexp"``, the nan-variants (``"nansum"`` ...
        ``"nanlast"``) and ``"nancount"``; or the NumPy function (``np.sum``, ``np.max``...).
    size : int, optional
        The number of groups (default ``groups.max() + 1``, 0 without groups).
    axis : int, optional
        The axis along which the slices are grouped (default 0).
    fill_value : scalar, optional
        The result of a group with no member (no non-NaN member for a nan-variant).
        Default: 0 for sum and count, 1 for prod, False for any and all, -1 for argmax
        and argmin, -inf for logsumexp, NaN for the rest (0 or False for an integer or
        bool result).
    ddof : int, optional
        var and std divide by ``count - ddof`` (NaN where that is <= 0).
    dtype : dtype, optional
        The computing and result dtype of sum, prod, mean, var, std and logsumexp; the
        result dtype of the others.
    mode : {"raise", "drop"}, optional
        An id outside ``[0, size)`` raises IndexError (``"raise"``, the default) or leaves
        its slice out (``"drop"``, as pandas' code -1).
    out : ndarray, optional
        Written entirely: the result's shape and dtype.

    Returns
    -------
    ndarray
        ``values``' shape with ``axis`` replaced by ``size``.

    {raises}

    Examples
    --------
    >>> import numpy as np
    >>> from scatterops import group_reduce
    >>> v = np.array([1.0, 5.0, 2.0, np.nan, 3.0])
    >>> g = np.array([0, 1, 0, 1, 3])
    >>> group_reduce(v, g, "sum")
    array([ 3., nan,  0.,  3.])
    >>> group_reduce(v, g, "nanmax")
    array([ 2.,  5., nan,  3.])
    >>> group_reduce(v, g, "argmax")
    array([ 2,  3, -1,  4])
    >>> group_reduce(v, np.array([0, -1, 0, -1, 1]), "mean", mode="drop")
    array([1.5, 3. ])
    """
    return _core.group(_GROUP, values, groups, func, size, axis, fill_value, ddof, dtype,
                       mode, out, False)


@_raises(value=_OFFSETS + ", an unknown func, a bad ``ddof`` or ``fill_value`` (one an "
               "integer result cannot hold)",
         wrong_type=_REDUCE_TYPE, ids="offsets")
def segment_reduce(values: Any, indptr: Any, func: Any = "sum", *, axis: Any = 0,
                   fill_value: Any = None, ddof: Any = 0, dtype: Any = None,
                   out: Any = None) -> np.ndarray:
    """Reduce the sorted segments ``indptr[g]:indptr[g+1]`` of ``values`` along ``axis``.

    The same bits as ``group_reduce`` of the covered slices with
    ``groups = np.repeat(np.arange(size), np.diff(indptr))``; argmax and argmin give
    positions in ``values``.

    Parameters
    ----------
    values : array_like
        The values, rank >= 1.
    indptr : array_like of int
        ``size + 1`` non-decreasing offsets with ``0 <= indptr[0]`` and
        ``indptr[-1] <= values.shape[axis]``.
    func : str or NumPy function, optional
        As for `group_reduce`.
    axis : int, optional
        The axis along which the segments lie (default 0).
    fill_value : scalar, optional
        The result of an empty segment, as for `group_reduce`.
    ddof : int, optional
        As for `group_reduce`.
    dtype : dtype, optional
        As for `group_reduce`.
    out : ndarray, optional
        Written entirely: the result's shape and dtype.

    Returns
    -------
    ndarray
        ``values``' shape with ``axis`` replaced by ``len(indptr) - 1``.

    {raises}

    Examples
    --------
    >>> import numpy as np
    >>> from scatterops import segment_reduce
    >>> v = np.array([[1, 2], [3, 4], [5, 6]])
    >>> segment_reduce(v, [0, 2, 2, 3], "sum")
    array([[4, 6],
           [0, 0],
           [5, 6]])
    >>> segment_reduce(v, [0, 2, 3], "argmax")
    array([[1, 1],
           [2, 2]])
    """
    return _core.group(_SEGMENT, values, indptr, func, None, axis, fill_value, ddof, dtype,
                       "raise", out, False)


@_raises(value="``groups`` of another length than ``values`` along ``axis``, a bad ``size``",
         wrong_type=_SOFTMAX_TYPE, ids="ids", index="")
def group_softmax(values: Any, groups: Any, *, size: Any = None, axis: Any = 0,
                  log: bool = False, out: Any = None) -> np.ndarray:
    """The softmax of each group's members: ``exp(x - m) / s`` (log: ``(x - m) - log(s)``).

    ``m`` is the group's max and ``s`` the sum, in member order, of ``exp(x - m)``, with
    NumPy's own ``np.exp`` and ``np.log``; no epsilon and no special case (a group whose
    max is infinite gives NaN).

    Parameters
    ----------
    values : array_like
        The scores, rank >= 1.
    groups : array_like of int
        One group id per slice along ``axis``, each in ``[0, size)``.
    size : int, optional
        The number of groups (default ``groups.max() + 1``).
    axis : int, optional
        The axis along which the slices are grouped (default 0).
    log : bool, optional
        The log-softmax.
    out : ndarray, optional
        Written entirely: ``values``' shape and the computing dtype.

    Returns
    -------
    ndarray
        ``values``' shape, in the computing dtype (float64 for integer values; float16
        values give float16).

    {raises}

    Examples
    --------
    >>> import numpy as np
    >>> from scatterops import group_softmax
    >>> group_softmax(np.array([0.0, 0.0, 1.0]), np.array([0, 0, 1]))
    array([0.5, 0.5, 1. ])
    """
    return _core.group(_GROUP_SOFTMAX, values, groups, None, size, axis, None, 0, None,
                       "raise", out, log)


@_raises(value=_OFFSETS + " or one that does not cover every slice",
         wrong_type=_SOFTMAX_TYPE, ids="offsets")
def segment_softmax(values: Any, indptr: Any, *, axis: Any = 0, log: bool = False,
                    out: Any = None) -> np.ndarray:
    """`group_softmax` of the segments ``indptr[g]:indptr[g+1]``, which cover ``values``.

    Parameters
    ----------
    values : array_like
        The scores, rank >= 1.
    indptr : array_like of int
        Offsets with ``indptr[0] == 0``, non-decreasing, ``indptr[-1] == values.shape[axis]``.
    axis : int, optional
        The axis along which the segments lie (default 0).
    log : bool, optional
        The log-softmax.
    out : ndarray, optional
        Written entirely: ``values``' shape and the computing dtype.

    Returns
    -------
    ndarray
        ``values``' shape, in the computing dtype.

    {raises}

    Examples
    --------
    >>> import numpy as np
    >>> from scatterops import segment_softmax
    >>> segment_softmax(np.array([0.0, 0.0, 1.0]), [0, 2, 3], log=True)
    array([-0.69314718, -0.69314718,  0.        ])
    """
    return _core.group(_SEGMENT_SOFTMAX, values, indptr, None, None, axis, None, 0, None,
                       "raise", out, log)

"""The public functions: their signatures and docstrings.

The functions themselves are C (``_core.make_public``): the C core binds the
arguments, checks every rule of the call, chooses the strategy and runs it; a
wrong call raises with the text of ``scatterops._messages``.  The dtypes that
have no C loop for a reduction run NumPy's ``ufunc.at`` in
``scatterops._generic``, on destinations the C core computes.
"""
from __future__ import annotations

from . import _core, _generic, _messages

_core.set_hooks(_messages.error, _generic.apply)

_COMMON = """
    reduction : str, optional
        How an update combines with the value it lands on: ``"none"`` (assign;
        the last update to an element wins), ``"add"``/``"sum"``, ``"sub"``,
        ``"mul"``/``"prod"``/``"multiply"``, ``"max"``/``"amax"``,
        ``"min"``/``"amin"`` (as ``np.add.at`` etc. would, bit for bit) or
        ``"mean"``.  No floating-point warning or error is raised, on any
        dtype, whatever ``np.errstate`` says: an overflow gives ``inf``, an
        invalid operation NaN, where ``np.add.at`` would warn.
    include_self : bool, optional
        With False, an element that updates hit starts from its first update
        instead of its value in ``data`` (PyTorch ``include_self``, OpenVINO
        ``use_init_val``). Ignored for ``"none"``.
    mode : {"raise", "wrap", "clip", "drop"}, optional
        What an index outside ``[-size, size)`` of its axis means:
        ``"raise"`` (the default) raises IndexError before anything is
        written; ``"wrap"`` takes every index modulo the size (as
        ``np.put``); ``"clip"`` sends an index below ``-size`` to 0 and one
        at or above ``size`` to ``size - 1`` (as JAX; ``np.take`` also clips
        negative indices to 0); ``"drop"`` skips the update (in
        ``scatter_nd``, when any component of its tuple is outside). The
        updates that remain keep their order.
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
        An index is outside ``[-size, size)`` under ``mode="raise"`` (or
        any index on an axis of size 0); nothing has been written.
    ValueError
        Shapes or ranks do not fit, unknown ``reduction`` or ``mode``, 0-d
        ``data``, read-only ``out``.
    TypeError
        Non-integer ``indices``, ``updates`` not castable to ``data.dtype``
        under ``"same_kind"``, a reduction ``data.dtype`` has no loop for, a
        ``numpy.ma.MaskedArray`` argument (its mask cannot be honoured).
"""

_AXIS_ERROR = """    numpy.exceptions.AxisError
        ``axis`` out of range (an AxisError is also a ValueError and an
        IndexError).
"""


def _see_also(name: str, others: str) -> str:
    return f"""
    See Also
    --------
    scatterops.reference.{name} : The same function in plain NumPy, written to be read.
    {others}
"""


_DOC_UPDATE = """Write whole slices of ``data`` chosen by ``indices`` along one axis.

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
""" + _COMMON + _AXIS_ERROR + _see_also(
    "scatter_update", "scatter_elements : One element per update instead of a whole slice.") + """
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

_DOC_ND = """Write elements or slices of ``data`` addressed by index tuples.

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
        from the end. A tuple of index arrays, ``np.add.at``'s ``(rows, cols)``,
        is a TypeError: pass ``np.stack((rows, cols), axis=-1)``.
    updates : array_like
        Shape ``indices.shape[:-1] + data.shape[k:]`` or broadcastable to it;
        cast to ``data.dtype`` (``"same_kind"``).
""" + _COMMON + _see_also(
    "scatter_nd", "scatter_update : Slices chosen along one axis by single indices.") + """
    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> so.scatter_nd(np.arange(1, 9), [[4], [3], [1], [7]], [9, 10, 11, 12])
    array([ 1, 11,  3, 10,  9,  6,  7, 12])
    >>> so.scatter_nd(np.zeros(3), [[0], [0], [2]], [1.0, 2.0, 4.0], reduction="add")
    array([3., 0., 4.])
"""

_DOC_ELEMENTS = """Write single elements of ``data``, one per element of ``indices``.

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
""" + _COMMON + _AXIS_ERROR + _see_also(
    "scatter_elements", "numpy.ufunc.at : The same bits for a reduction, one ufunc at a time.") + """
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
    >>> so.scatter_elements(np.zeros(3), [0, 5, 2], [1.0, 2.0, 3.0], mode="drop")
    array([1., 0., 3.])
"""


def _public(name: str, signature: str, doc: str):
    """The public C function name (its kind: the core's KINDS), with its
    ``__text_signature__`` and docstring."""
    return _core.make_public(name, _core.KINDS[name], f"{name}{signature}\n--\n\n{doc}", __name__)


_SIG = ("(data, indices, updates, axis=0, *, reduction='none', include_self=True, mode='raise', "
        "out=None)")
scatter_update = _public("scatter_update", _SIG, _DOC_UPDATE)
scatter_nd = _public("scatter_nd",
                     "(data, indices, updates, *, reduction='none', include_self=True, "
                     "mode='raise', out=None)",
                     _DOC_ND)
scatter_elements = _public("scatter_elements", _SIG, _DOC_ELEMENTS)

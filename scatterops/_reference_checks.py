"""The argument checks of ``scatterops.reference``, the oracle the tests hold the C core to.

They are written on purpose apart from the C core's own (``csrc/py/args.c``), in plain
NumPy, so that the tests compare two independent readings of the contract
(``docs/contract.md``): the same exceptions, with messages that name the same argument.
Everything here runs before anything is written: it turns user arguments into a
``Call`` whose arrays the reference can trust (``indices`` as native ``intp`` and in
range, ``updates`` cast to ``data.dtype`` and broadcast to the required shape).
"""
from __future__ import annotations

import operator
from typing import NamedTuple, Optional

import numpy as np

from ._messages import rewrapped as _rewrapped

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError  # type: ignore[attr-defined,no-redef]

#: accepted reduction names -> canonical name
REDUCTIONS = {
    "none": "none",
    "add": "add", "sum": "add",
    "sub": "sub",
    "mul": "mul", "prod": "mul", "multiply": "mul",
    "max": "max", "amax": "max",
    "min": "min", "amin": "min",
    "mean": "mean",
}

#: canonical reduction -> the NumPy ufunc it agrees with (mean sums with add)
UFUNCS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "max": np.maximum, "min": np.minimum, "mean": np.add,
}

KINDS = ("scatter_update", "scatter_nd", "scatter_elements")

_INTP_MAX = np.iinfo(np.intp).max


class Call(NamedTuple):
    """A checked call: everything a writer needs, nothing left to validate."""

    func: str                 # "scatter_update", "scatter_nd" or "scatter_elements"
    data: np.ndarray          # rank >= 1
    indices: np.ndarray       # native intp, every value in range (negatives not yet wrapped)
    updates: np.ndarray       # dtype == data.dtype, shape == the required shape (maybe a broadcast view)
    axis: int                 # normalised to [0, r); 0 for scatter_nd
    reduction: str            # canonical name
    include_self: bool
    out: Optional[np.ndarray]  # the user's out (checked), or None
    keep: Optional[np.ndarray] = None  # mode="drop": which index positions (tuples) are applied


def _plain(func: str, name: str, value: np.ndarray) -> np.ndarray:
    """An ndarray as a plain ndarray (a subclass as a view of its memory); a masked array
    is refused, since a scatter cannot honour its mask."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{func}: {name} is a numpy.ma.MaskedArray, whose mask a scatter cannot "
                        f"honour; pass {name}.filled(value) (masked elements as value) or "
                        f"{name}.data (the values under the mask)")
    return value if type(value) is np.ndarray else value.view(np.ndarray)


def _asarray(func: str, name: str, value):
    if isinstance(value, np.ndarray):
        return _plain(func, name, value)
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as exc:
        # (built in a helper: a local holding the new exception would make a reference
        # cycle through the traceback's frame, freed only by the cyclic collector)
        raise _rewrapped(exc, f"{func}: {name} could not be converted to an array: {exc}") from exc
    except Exception as exc:
        # the caller's own exception (from __array__, __len__, ...): it propagates as it
        # is, with a note that says which argument raised it
        if hasattr(exc, "add_note"):        # Python >= 3.11
            exc.add_note(f"{func}: raised while converting {name} to an array")
        raise


def _reduction(func: str, reduction) -> str:
    if not isinstance(reduction, str):
        raise TypeError(f"{func}: reduction must be a str, one of {sorted(REDUCTIONS)}, "
                        f"got {type(reduction).__name__}")
    try:
        return REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{func}: reduction must be one of {sorted(REDUCTIONS)}, "
                         f"got {reduction!r}") from None


def _include_self(func: str, include_self) -> bool:
    if isinstance(include_self, (bool, np.bool_)):
        return bool(include_self)
    raise TypeError(f"{func}: include_self must be a bool, got {type(include_self).__name__}")


def _axis(func: str, axis, ndim: int) -> int:
    value = axis
    if isinstance(axis, np.ndarray):
        if axis.size != 1 or axis.ndim > 1 or axis.dtype.kind not in "iu":
            raise TypeError(f"{func}: axis must be an int or a 0-d / 1-element integer array, "
                            f"got an array of dtype {axis.dtype} and shape {axis.shape}")
        value = axis.reshape(()).item()
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{func}: axis must be an int, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{func}: axis must be an int, got {type(axis).__name__}") from None
    if not -ndim <= value < ndim:
        raise AxisError(value, ndim, msg_prefix=f"{func}: axis")
    return value % ndim


def _holds_several(func: str, item) -> bool:
    """An item of a tuple holds several values: a list, a tuple, an array of rank >= 1."""
    if isinstance(item, (list, tuple)):
        return True
    return _asarray(func, "indices", item).ndim > 0


def _indices(func: str, indices) -> np.ndarray:
    if func == "scatter_nd" and isinstance(indices, tuple) \
            and any(_holds_several(func, item) for item in indices):
        # np.add.at(a, (rows, cols), v): as an array this would be len(indices) index tuples
        n = len(indices)
        raise TypeError(f"{func}: indices is a tuple of {n} arrays or sequences, np.add.at's "
                        f"(rows, cols) spelling, which scatter_nd would read as {n} index "
                        f"tuples, one per item; for np.add.at's meaning pass "
                        f"np.stack((rows, cols), axis=-1), one index tuple per row (a list or "
                        f"an array is taken as it is)")
    indices = _asarray(func, "indices", indices)
    if indices.dtype.kind not in "iu":
        if indices.size == 0:
            return np.zeros(indices.shape, np.intp)
        raise TypeError(f"{func}: indices must have an integer dtype (int8 to uint64), "
                        f"got {indices.dtype}")
    return indices


def _as_intp(func: str, indices: np.ndarray) -> np.ndarray:
    """Native intp view or cast; uint64 values above intp's range become intp max
    (still out of range for every axis, so validation reports them)."""
    if indices.dtype == np.intp and indices.dtype.isnative:
        return indices
    try:
        if indices.dtype.kind == "u" and indices.dtype.itemsize >= np.dtype(np.intp).itemsize \
                and indices.size and indices.max() > _INTP_MAX:
            indices = np.asarray(np.minimum(indices, np.array(_INTP_MAX, indices.dtype)))
        return indices.astype(np.intp)
    except (ValueError, MemoryError) as exc:
        # a broadcast view of narrow indices can hold more elements than an intp copy
        # can: NumPy says "array is too big" (ValueError) or cannot allocate it
        raise type(exc)(f"{func}: indices of dtype {indices.dtype} and shape {indices.shape} "
                        f"({indices.size} elements) cannot be converted to intp: {exc}") from exc


#: NEP 50: a Python scalar is "weak": it takes the dtype of the array it meets where its
#: kind fits (NumPy's own ``np.add(a, 5, out=a, casting="same_kind")`` works on uint8)
_WEAK_KINDS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}


def _updates(func: str, updates, data: np.ndarray, shape: tuple, what: str,
             empty: bool) -> np.ndarray:
    if data.dtype.kind in _WEAK_KINDS.get(type(updates), ""):
        if type(updates) is int and data.dtype.kind in "iu":
            info = np.iinfo(data.dtype)
            if not info.min <= updates <= info.max:
                raise TypeError(f"{func}: updates {updates} is out of range for data's dtype "
                                f"{data.dtype} (a Python int is cast only where it fits)")
        updates = np.asarray(updates, dtype=data.dtype)
    updates = _asarray(func, "updates", updates)
    if updates.size == 0:
        # an empty updates (``[]`` is float64) has no value to cast; with no update
        # position at all it has nothing to write, whatever its shape
        updates = np.empty(shape if empty else updates.shape, data.dtype)
    elif updates.dtype != data.dtype:
        if not np.can_cast(updates.dtype, data.dtype, casting="same_kind"):
            raise TypeError(f"{func}: updates of dtype {updates.dtype} cannot be cast to data's "
                            f"dtype {data.dtype} under the 'same_kind' rule")
        try:
            updates = updates.astype(data.dtype)
        except UnicodeError as exc:     # bytes that are not ASCII into str, or back
            raise TypeError(f"{func}: updates of dtype {updates.dtype} cannot be cast to data's "
                            f"dtype {data.dtype}: {exc}") from None
    if updates.shape != shape:
        try:
            updates = np.broadcast_to(updates, shape)
        except ValueError:
            raise ValueError(f"{func}: updates has shape {updates.shape}, which does not "
                             f"broadcast to the required shape {shape} ({what})") from None
    return updates


def _out(func: str, out, data: np.ndarray):
    if out is None:
        return None
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{func}: out must be a numpy.ndarray, got {type(out).__name__}")
    out = _plain(func, "out", out)
    if out.shape != data.shape:
        raise ValueError(f"{func}: out has shape {out.shape}, expected data's shape {data.shape}")
    if out.dtype != data.dtype:
        raise TypeError(f"{func}: out has dtype {out.dtype}, expected data's dtype {data.dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{func}: out is read-only; it must be a writeable array")
    return out


def reduction_defined(reduction: str, dtype: np.dtype) -> bool:
    """True where NumPy's ufunc has a (dtype, dtype) -> dtype loop (and, for mean,
    a division rule)."""
    if reduction == "none":
        return True
    native = dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype
    try:
        resolved = UFUNCS[reduction].resolve_dtypes((native, native, native), casting="no")
    except (TypeError, ValueError):
        return False
    if any(r != native for r in resolved):
        return False
    if reduction == "mean":
        return dtype.kind in "iufcmO"
    return True


def check_reduction(func: str, reduction: str, dtype: np.dtype, given=None) -> None:
    if not reduction_defined(reduction, dtype):
        shown = repr(reduction) if given is None or given == reduction \
            else f"{given!r} (that is, {reduction!r})"
        what = ("NumPy has no add loop or no division rule for it" if reduction == "mean"
                else f"NumPy has no numpy.{UFUNCS[reduction].__name__} loop for it")
        raise TypeError(f"{func}: reduction={shown} is not defined for dtype {dtype} "
                        f"({what})")


def _bad_index_error(func: str, original: np.ndarray, pos: tuple, axis: int, size: int):
    value = original[pos]
    where = ", ".join(str(p) for p in pos)
    return IndexError(f"{func}: indices[{where}] = {value} is out of bounds for axis {axis} "
                      f"of data with size {size} (valid: -{size} <= index < {size})")


def find_bad_index(idx: np.ndarray, bounds: tuple) -> int:
    """Flat C-order position of the first value out of range, or -1."""
    if idx.size == 0:
        return -1
    b = np.asarray(bounds, dtype=np.intp)
    bad = (idx < -b) | (idx >= b)
    if not bad.any():
        return -1
    return int(np.argmax(bad.reshape(-1)))


MODES = ("raise", "wrap", "clip", "drop")


def _mode(func: str, mode) -> str:
    if not isinstance(mode, str):
        raise TypeError(f"{func}: mode must be a str, one of 'raise', 'wrap', 'clip', 'drop', "
                        f"got {type(mode).__name__}")
    if mode not in MODES:
        raise ValueError(f"{func}: mode must be one of 'raise', 'wrap', 'clip', 'drop', "
                         f"got {mode!r}")
    return mode


def _apply_mode(mode: str, original: np.ndarray, idx: np.ndarray, bounds: tuple, nd: bool):
    """indices under mode (wrap, clip), or the mask of the index positions that stay (drop).
    An axis of size 0 has no position to go to: its values stay, and the check raises."""
    b = np.asarray(bounds if nd else bounds[0], dtype=np.intp)   # nd: one bound a component
    inside = (idx >= -b) & (idx < b)
    if mode == "drop":
        return idx, (inside.all(axis=-1) if nd else inside)
    if mode == "wrap":
        if original.dtype.kind == "u":
            # the user's unsigned values, not the ones clamped into intp
            moved = (original.astype(np.uint64) % np.maximum(b, 1).astype(np.uint64)).astype(np.intp)
        else:
            moved = np.mod(idx, np.maximum(b, 1))
    else:
        moved = np.where(idx < -b, 0, np.where(idx >= b, b - 1, idx))
    return np.where(b > 0, moved, idx).astype(np.intp), None


def check(func: str, data, indices, updates, axis, reduction, include_self, out,
          mode="raise") -> Call:
    """Check every argument of one call; raise before anything is written."""
    given = reduction
    reduction = _reduction(func, reduction)
    include_self = _include_self(func, include_self)
    mode = _mode(func, mode)
    data = _asarray(func, "data", data)
    if data.ndim == 0:
        raise ValueError(f"{func}: data must have rank >= 1, got a 0-d array")
    r = data.ndim
    original = _indices(func, indices)
    # no update position at all: then indices' shape is not held to data's (nothing is
    # addressed); scatter_nd's last axis holds the tuples, so k = 0 alone is not empty
    empty = 0 in (original.shape[:-1] if func == "scatter_nd" else original.shape)

    if func == "scatter_nd":
        if axis is not None:
            raise TypeError(f"{func}: takes no axis")
        axis = 0
        if original.ndim < 1:
            raise ValueError(f"{func}: indices must have rank >= 1 (the last dimension holds the "
                             f"index tuples), got a 0-d array")
        k = original.shape[-1]
        if k > r and not empty:
            raise ValueError(f"{func}: indices.shape[-1] = {k} (indices shape {original.shape}) "
                             f"must be <= rank of data {r} (data shape {data.shape})")
        shape = original.shape[:-1] + data.shape[k:]
        what = f"indices.shape[:-1] + data.shape[{k}:] with indices {original.shape}, data {data.shape}"
        bounds = tuple(data.shape[:k]) if k else (1,)
    else:
        axis = _axis(func, axis, r)
        if func == "scatter_update":
            shape = data.shape[:axis] + original.shape + data.shape[axis + 1:]
            what = (f"data.shape[:{axis}] + indices.shape + data.shape[{axis + 1}:] with data "
                    f"{data.shape}, indices {original.shape}")
        else:
            if original.ndim != r and not empty:
                raise ValueError(f"{func}: indices must have the rank of data ({r}, data shape "
                                 f"{data.shape}), got rank {original.ndim} (shape {original.shape})")
            for d in range(r if not empty else 0):
                if d != axis and original.shape[d] > data.shape[d]:
                    raise ValueError(
                        f"{func}: indices.shape[{d}] = {original.shape[d]} exceeds data.shape[{d}] = "
                        f"{data.shape[d]} (indices {original.shape}, data {data.shape}, axis {axis})")
            shape = original.shape
            what = f"indices.shape = {original.shape}"
        bounds = (data.shape[axis],)

    updates = _updates(func, updates, data, shape, what, empty)
    out = _out(func, out, data)
    check_reduction(func, reduction, data.dtype, given)

    idx = _as_intp(func, original)
    keep = None
    if mode != "raise" and idx.size:
        idx, keep = _apply_mode(mode, original, idx, bounds, func == "scatter_nd")
    if idx.size and keep is None:
        pos = find_bad_index(idx, bounds)
        if pos >= 0:
            multi = tuple(int(p) for p in np.unravel_index(pos, idx.shape))
            if func == "scatter_nd":
                ax = multi[-1]
                raise _bad_index_error(func, original, multi, ax, data.shape[ax])
            raise _bad_index_error(func, original, multi, axis, data.shape[axis])

    if out is not None:
        # the result must be as if updates and indices were copied first (in place
        # too: indices may be a view of data)
        if np.may_share_memory(out, updates):
            updates = updates.copy()
        if np.may_share_memory(out, idx):
            idx = idx.copy()
    return Call(func, data, idx, updates, axis, reduction, include_self, out, keep)

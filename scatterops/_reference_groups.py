"""The group reductions in plain NumPy, written to be read: the oracle of ``group_reduce``,
``segment_reduce``, ``group_softmax`` and ``segment_softmax``.

Each function checks its arguments with its own plain NumPy code (nothing here reads the C
core), then reduces every feature position (a column of ``values`` once ``axis`` is moved to
the front) on its own: the members of a group in the order they stand along ``axis``, with
the ufunc the contract names (``np.add.at``, ``np.maximum.at``, ...) or a loop over the
members.  Empty groups get ``fill_value``.  It is slow on purpose; the tests hold the C
functions to it bit for bit.

Where the contract (``docs/contract.md``, "Group reductions") leaves a choice, this module
makes it, and the C functions follow:

- ``func`` is a canonical name or the NumPy callable of one (``np.sum``, ``np.nanmax``, ...);
  an unknown name is a ValueError listing the names, anything else a TypeError.
- ``dtype=`` is taken by the functions with a computing dtype (sum, prod, mean, var, std,
  logsumexp and their nan-variants) and by max, min, first, last (a cast of the result); the
  cast from the values' dtype must be ``"same_kind"``.  argmax, argmin, count, nancount, any
  and all have a fixed result dtype and refuse ``dtype=`` with a TypeError.
- ``nancount`` is a nan-variant: bool values refuse it, as every nan-variant.
- The result dtype "values'" is the values' dtype in native byte order.
- The default ``fill_value`` of a result dtype that holds no NaN: 0 for integers, False for
  bool, NaT for datetime64 / timedelta64, the zero item (``''``) for strings and void; object
  results take ``nan``.  A ``fill_value`` must be a scalar; for an integer or bool result a
  NaN, an infinity or a value outside the dtype's range is a ValueError.
- ``argmax`` / ``argmin`` of datetime64 / timedelta64 count NaT as NaN does for floats.
- The first offset of a bad ``indptr`` is the first ``i`` with ``indptr[i] < 0``,
  ``indptr[i] > values.shape[axis]`` or ``indptr[i] < indptr[i - 1]``.
- Errors are raised in this order: log (the softmax forms), func, mode, values, axis, groups /
  indptr (dtype, rank), size, ddof, the func / dtype pair, dtype=, groups' length or indptr's
  offsets, fill_value, out, then the group ids (which ``size=None`` needs the largest of).
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple, Optional

import numpy as np

from . import _reference_checks as _args

__all__ = ["group_reduce", "segment_reduce", "group_softmax", "segment_softmax", "FUNCS"]

#: the base functions and the nan-variants of the contract's table
BASE = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin",
        "first", "last", "any", "all", "count", "logsumexp")
NAN_VARIANTS = ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                "nanargmax", "nanargmin", "nanfirst", "nanlast", "nancount")
FUNCS = BASE + NAN_VARIANTS

#: the NumPy callables a func may be given as
CALLABLES = {
    np.sum: "sum", np.prod: "prod", np.max: "max", np.amax: "max", np.min: "min",
    np.amin: "min", np.mean: "mean", np.var: "var", np.std: "std", np.argmax: "argmax",
    np.argmin: "argmin", np.any: "any", np.all: "all",
    np.nansum: "nansum", np.nanprod: "nanprod", np.nanmax: "nanmax", np.nanmin: "nanmin",
    np.nanmean: "nanmean", np.nanvar: "nanvar", np.nanstd: "nanstd",
    np.nanargmax: "nanargmax", np.nanargmin: "nanargmin",
}

#: dtype kind -> the base functions its values take (the nan-variants follow their base,
#: for integer and real float values only)
_TAKES = {
    "b": BASE, "i": BASE, "u": BASE, "f": BASE,
    "c": ("sum", "prod", "mean", "first", "last", "count", "any", "all"),
    "M": ("max", "min", "argmax", "argmin", "first", "last", "count"),
    "m": ("max", "min", "argmax", "argmin", "first", "last", "count"),
    "S": ("first", "last", "count"), "U": ("first", "last", "count"),
    "V": ("first", "last", "count"),
    "O": ("sum", "prod", "max", "min", "first", "last", "count", "any", "all"),
}

#: base function -> the dtype kinds ``dtype=`` may name (None: dtype= is refused)
_DTYPE_KINDS = {
    "sum": "biufc", "prod": "biufc", "mean": "fc", "var": "f", "std": "f", "logsumexp": "f",
    "max": "biufcmMSUVO", "min": "biufcmMSUVO", "first": "biufcmMSUVO",
    "last": "biufcmMSUVO",
    "argmax": None, "argmin": None, "count": None, "any": None, "all": None,
}

#: the largest group table (size times the positions of the other axes) a call takes
MAX_TABLE_CELLS = int(np.iinfo(np.intp).max) // 64

#: base function -> its default fill_value (None: NaN, or the dtype's stand-in for it)
_FILL = {"sum": 0, "count": 0, "prod": 1, "any": False, "all": False, "argmax": -1,
         "argmin": -1, "logsumexp": -np.inf}


class Groups(NamedTuple):
    """A checked call: every feature column, every id, nothing left to validate."""

    name: str                   # the public function, for messages
    func: str                   # canonical func ("softmax" / "log_softmax" for the softmax forms)
    columns: np.ndarray         # (N, F): values with axis moved to the front, features flattened
    ids: np.ndarray             # (N,) intp: the group of each slice, -1 where it takes no part
    size: int
    moved_shape: tuple          # the result's shape with the reduced axis in front
    axis: int
    result_dtype: np.dtype
    computing: Optional[np.dtype]
    fill: Optional[np.ndarray]  # 0-d, of the result dtype
    ddof: int
    out: Optional[np.ndarray]


def base_of(func: str) -> str:
    """The base function of a nan-variant ("nanmax" -> "max"), or func itself."""
    return func[3:] if func in NAN_VARIANTS else func


def native(dtype: np.dtype) -> np.dtype:
    """dtype in the machine's byte order, the fields of a structured dtype too (a result is
    always native, as NumPy's are)."""
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def computing_dtype(dtype: np.dtype) -> np.dtype:
    """float64 for bool, integer and float16 values, the values' own inexact dtype otherwise."""
    if dtype.kind in "biu" or dtype.type is np.float16:
        return np.dtype(np.float64)
    return native(dtype)


def sum_dtype(dtype: np.dtype) -> np.dtype:
    """np.sum's result dtype: bool and integers narrower than intp widen to intp / uintp."""
    small = dtype.itemsize < np.dtype(np.intp).itemsize
    if dtype.kind == "b" or (dtype.kind == "i" and small):
        return np.dtype(np.intp)
    if dtype.kind == "u" and small:
        return np.dtype(np.uintp)
    return native(dtype)


def result_dtype(func: str, values: np.dtype, dtype: Optional[np.dtype]) -> np.dtype:
    base = base_of(func)
    if base in ("argmax", "argmin", "count"):
        return np.dtype(np.intp)
    if base in ("any", "all"):
        return np.dtype(bool)
    if dtype is not None:
        return dtype
    if base in ("sum", "prod"):
        return sum_dtype(values)
    if base in ("mean", "var", "std", "logsumexp", "softmax", "log_softmax"):
        return native(values) if values.type is np.float16 else computing_dtype(values)
    return native(values)


# ---------------------------------------------------------------------------------------------
# checks


def _func(name: str, func) -> str:
    if isinstance(func, str):
        if func in FUNCS:
            return func
        raise ValueError(f"{name}: func must be one of {list(FUNCS)} (or the NumPy function of "
                         f"one, such as np.sum), got {func!r}")
    try:
        return CALLABLES[func]
    except (KeyError, TypeError):
        raise TypeError(f"{name}: func must be a str, one of {list(FUNCS)}, or the NumPy function "
                        f"of one (np.sum, np.nanmax, ...), got {func!r}") from None


def _mode(name: str, mode) -> str:
    if not isinstance(mode, str):
        raise TypeError(f"{name}: mode must be a str, 'raise' or 'drop', got {type(mode).__name__}")
    if mode not in ("raise", "drop"):
        raise ValueError(f"{name}: mode must be 'raise' or 'drop' (group ids are labels: "
                         f"no wrap, no clip), got {mode!r}")
    return mode


def _ids(name: str, what: str, ids) -> np.ndarray:
    """groups or indptr: a 1-D integer array (an empty one of any dtype is empty ids)."""
    arr = _args._asarray(name, what, ids)
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.ndim == 1:
            return np.zeros(0, np.intp)
        raise TypeError(f"{name}: {what} must have an integer dtype (int8 to uint64), "
                        f"got {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name}: {what} must be 1-D, got shape {arr.shape}")
    return arr


def _size(name: str, size) -> Optional[int]:
    if size is None:
        return None
    if isinstance(size, (bool, np.bool_)):
        raise TypeError(f"{name}: size must be an int, got bool")
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"{name}: size must be an int or None, got {type(size).__name__}") from None
    if size < 0:
        raise ValueError(f"{name}: size must be >= 0, got {size}")
    return size


def _ddof(name: str, ddof) -> int:
    if isinstance(ddof, (bool, np.bool_)):
        raise TypeError(f"{name}: ddof must be an int, got bool")
    try:
        return operator.index(ddof)
    except TypeError:
        raise TypeError(f"{name}: ddof must be an int, got {type(ddof).__name__}") from None


def _log(name: str, log) -> bool:
    if isinstance(log, (bool, np.bool_)):
        return bool(log)
    raise TypeError(f"{name}: log must be a bool, got {type(log).__name__}")


def check_pair(name: str, func: str, dtype: np.dtype) -> None:
    """The contract's table: which values' dtypes each func takes."""
    base = base_of(func)
    takes = _TAKES.get(dtype.kind, ())
    ok = base in takes and (func == base or dtype.kind in "iuf")
    if not ok:
        raise TypeError(f"{name}: func={func!r} is not defined for values of dtype {dtype}")


def _dtype(name: str, func: str, values: np.dtype, dtype) -> Optional[np.dtype]:
    if dtype is None:
        return None
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{name}: dtype must be a NumPy dtype, got {dtype!r}: {exc}") from None
    kinds = _DTYPE_KINDS[base_of(func)]
    if kinds is None:
        raise TypeError(f"{name}: func={func!r} has a fixed result dtype and takes no dtype=, "
                        f"got dtype={dtype}")
    if dtype.kind not in kinds:
        raise TypeError(f"{name}: func={func!r} cannot compute in dtype={dtype}")
    if not np.can_cast(values, dtype, casting="same_kind"):
        raise TypeError(f"{name}: values of dtype {values} cannot be cast to dtype={dtype} "
                        f"under the 'same_kind' rule")
    return native(dtype)


def default_fill(func: str, dtype: np.dtype) -> np.ndarray:
    """numpy_groupies' default for func, as a 0-d array of the result dtype."""
    value = _FILL.get(base_of(func))
    if value is None:
        if dtype.kind in "iub":
            value = 0
        elif dtype.kind in "SUV":
            return np.zeros((), dtype)
        else:
            value = np.nan          # NaN, NaT, nan+0j, a float nan object
    return np.array(value).astype(dtype)


def _fill(name: str, func: str, fill_value, dtype: np.dtype) -> np.ndarray:
    if fill_value is None:
        return default_fill(func, dtype)
    try:
        fv = np.asarray(fill_value)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{name}: fill_value could not be converted to an array: {exc}") from None
    if fv.ndim != 0:
        raise ValueError(f"{name}: fill_value must be a scalar, got shape {fv.shape}")
    # a Python int too large for int64 / uint64 comes as an object array: its range is checked
    # too; a complex fill is held by its real part, as astype keeps it
    if dtype.kind in "iub" and (fv.dtype.kind in "biufc" or isinstance(fv.item(), int)):
        v = fv.item()
        v = v.real if isinstance(v, complex) else v
        if isinstance(v, float) and not np.isfinite(v):
            raise ValueError(f"{name}: fill_value={fill_value!r} cannot be held by the result "
                             f"dtype {dtype}")
        lo, hi = (0, 1) if dtype.kind == "b" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        if not lo <= int(v) <= hi:
            raise ValueError(f"{name}: fill_value={fill_value!r} is outside the range "
                             f"[{lo}, {hi}] of the result dtype {dtype}")
    try:
        with np.errstate(all="ignore"):
            return fv.astype(dtype)
    except (ValueError, TypeError, OverflowError) as exc:
        cls = TypeError if isinstance(exc, TypeError) else ValueError
        raise cls(f"{name}: fill_value={fill_value!r} cannot be converted to the result "
                  f"dtype {dtype}: {exc}") from None


def _out(name: str, out, shape: tuple, dtype: np.dtype) -> Optional[np.ndarray]:
    if out is None:
        return None
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name}: out must be a numpy.ndarray, got {type(out).__name__}")
    out = _args._plain(name, "out", out)
    if out.shape != shape:
        raise ValueError(f"{name}: out has shape {out.shape}, expected the result's shape {shape}")
    if out.dtype != dtype:
        raise TypeError(f"{name}: out has dtype {out.dtype}, expected the result's dtype {dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{name}: out is read-only; it must be a writeable array")
    return out


def _values(name: str, values, axis):
    values = _args._asarray(name, "values", values)
    if values.ndim == 0:
        raise ValueError(f"{name}: values must have rank >= 1, got a 0-d array")
    axis = _args._axis(name, axis, values.ndim)
    return values, axis


def _group_ids(name: str, groups: np.ndarray, n: int, size: Optional[int]):
    """The ids as intp, and the size (given, or the largest id + 1)."""
    if len(groups) != n:
        raise ValueError(f"{name}: groups has length {len(groups)}, expected values.shape[axis] "
                         f"= {n} (one id per slice)")
    ids = _args._as_intp(name, groups)
    if size is None:
        size = max(int(ids.max()) + 1, 0) if ids.size else 0
    return ids, size


def _table(name: str, size: int, other_dims: tuple, given: bool) -> None:
    """The group table -- size groups times the positions of the other axes -- holds at
    most MAX_TABLE_CELLS cells, and size is an intp."""
    features = math.prod(other_dims)
    if size > np.iinfo(np.intp).max or (features and size * features > MAX_TABLE_CELLS):
        implied = "" if given else "(the largest id + 1) "
        raise ValueError(f"{name}: size={size} {implied}groups times the positions of the other "
                         f"axes is more than {MAX_TABLE_CELLS} cells")


def _kept_ids(name: str, groups: np.ndarray, ids: np.ndarray, size: int, mode: str):
    """The ids with -1 where a slice takes no part (mode="drop"), or the IndexError of the
    first id outside [0, size) (mode="raise")."""
    bad = (ids < 0) | (ids >= size)
    if bad.any():
        if mode == "raise":
            i = int(np.argmax(bad))
            hint = "" if name.endswith("softmax") else "; pass mode='drop' to leave such slices out"
            raise IndexError(f"{name}: groups[{i}] = {groups[i]} is outside [0, {size}) "
                             f"(size={size}){hint}")
        ids = np.where(bad, -1, ids)
    return ids.astype(np.intp)


def _segment_ids(name: str, indptr: np.ndarray, n: int, whole: bool):
    """The ids of the slices each segment covers, -1 for the slices outside, and the size."""
    if len(indptr) == 0:
        raise ValueError(f"{name}: indptr needs at least one offset (size + 1 offsets for size "
                         f"segments), got none")
    p = _args._as_intp(name, indptr)
    prev = np.concatenate(([0], p[:-1]))
    bad = (p < 0) | (p > n) | (p < prev)
    if bad.any():
        i = int(np.argmax(bad))
        why = ("below 0" if p[i] < 0 else f"above values.shape[axis] = {n}" if p[i] > n
               else f"below indptr[{i - 1}] = {indptr[i - 1]} (offsets must not decrease)")
        raise ValueError(f"{name}: indptr[{i}] = {indptr[i]} is {why}")
    if whole and (p[0] != 0 or p[-1] != n):
        raise ValueError(f"{name}: indptr must cover every slice: indptr[0] = {indptr[0]} must be 0 "
                         f"and indptr[-1] = {indptr[-1]} must be values.shape[axis] = {n}")
    size = len(p) - 1
    ids = np.full(n, -1, np.intp)
    for g in range(size):
        ids[p[g]:p[g + 1]] = g
    return ids, size


def _columns(values: np.ndarray, axis: int) -> np.ndarray:
    """values with axis moved to the front and the other axes flattened: (N, F)."""
    moved = np.moveaxis(values, axis, 0)
    return moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:], dtype=np.intp)))


def _check(name, func, values, ids_arg, segments, size, axis, fill_value, ddof, dtype, mode,
           out) -> Groups:
    func = func if name.endswith("softmax") else _func(name, func)
    mode = _mode(name, mode)
    values, axis = _values(name, values, axis)
    ids_arr = _ids(name, "indptr" if segments else "groups", ids_arg)
    size = size_arg = _size(name, size)
    ddof = _ddof(name, ddof)
    if func in ("softmax", "log_softmax"):
        if values.dtype.kind not in "biuf":
            raise TypeError(f"{name}: softmax is not defined for values of dtype {values.dtype}")
    else:
        check_pair(name, func, values.dtype)
    dtype = _dtype(name, func, values.dtype, dtype) if func not in ("softmax", "log_softmax") \
        else None
    rdtype = result_dtype(func, values.dtype, dtype)
    n = values.shape[axis]
    if segments:
        ids, size = _segment_ids(name, ids_arr, n, whole=func in ("softmax", "log_softmax"))
    else:
        ids, size = _group_ids(name, ids_arr, n, size)
    _table(name, size, values.shape[:axis] + values.shape[axis + 1:], given=segments or
           size_arg is not None)
    softmax = func in ("softmax", "log_softmax")
    fill = None if softmax else _fill(name, func, fill_value, rdtype)
    lead = n if softmax else size
    shape = values.shape[:axis] + (lead,) + values.shape[axis + 1:]
    out = _out(name, out, shape, rdtype)
    if not segments:
        ids = _kept_ids(name, ids_arr, ids, size, mode)
    moved_shape = (lead,) + values.shape[:axis] + values.shape[axis + 1:]
    computing = dtype if dtype is not None and dtype.kind in "fc" else (
        computing_dtype(values.dtype) if values.dtype.kind in "biufc" else None)
    return Groups(name, func, _columns(values, axis), ids, size, moved_shape, axis, rdtype,
                  computing, fill, ddof, out)


# ---------------------------------------------------------------------------------------------
# one feature column


def _is_nan(x: np.ndarray) -> np.ndarray:
    """NaN for floats, NaT for datetimes, never for the other kinds."""
    if x.dtype.kind in "fc":
        return np.isnan(x)
    if x.dtype.kind in "mM":
        return np.isnat(x)
    return np.zeros(x.shape, bool)


def _present(call: Groups, x: np.ndarray) -> np.ndarray:
    """Which slices of the column take part: a kept id, and not NaN for a nan-variant."""
    keep = call.ids >= 0
    if call.func in NAN_VARIANTS:
        keep &= ~_is_nan(x)
    return keep


def _first_members(ids: np.ndarray, present: np.ndarray, size: int):
    """For each group, the position of its first present member (-1 if none), and the mask of
    the present members that are not the first of their group."""
    first = np.full(size, -1, np.intp)
    rest = present.copy()
    for i in np.flatnonzero(present):
        if first[ids[i]] < 0:
            first[ids[i]] = i
            rest[i] = False
    return first, rest


def _ufunc_from_first(ufunc, x: np.ndarray, ids: np.ndarray, present: np.ndarray, size: int,
                      dtype: np.dtype):
    """ufunc.at into an array holding each group's first member, over its later members."""
    first, rest = _first_members(ids, present, size)
    acc = np.zeros(size, dtype)
    has = first >= 0
    acc[has] = x[first[has]]
    ufunc.at(acc, ids[rest], x[rest])
    return acc


def _mean(x: np.ndarray, ids: np.ndarray, present: np.ndarray, size: int, cd: np.dtype):
    """Each present member cast to cd, summed from 0 in order, divided once by the count in cd."""
    s = np.zeros(size, cd)
    np.add.at(s, ids[present], x[present].astype(cd))
    count = np.bincount(ids[present], minlength=size)
    return np.true_divide(s, count.astype(cd)), count


def _arg(x: np.ndarray, ids: np.ndarray, present: np.ndarray, size: int, largest: bool):
    """Position of the first member holding the max (min); the first NaN wins over all."""
    best = np.full(size, -1, np.intp)
    nan = _is_nan(x)
    for i in np.flatnonzero(present):
        g = ids[i]
        b = best[g]
        if b < 0:
            best[g] = i
        elif nan[b]:
            continue
        elif nan[i] or (x[i] > x[b] if largest else x[i] < x[b]):
            best[g] = i
    return best


def _logsumexp_parts(x: np.ndarray, ids: np.ndarray, present: np.ndarray, size: int,
                     cd: np.dtype):
    """m (the max, as max in cd) and s (the sum from 0, in order, of exp(x - m)) per group."""
    xc = x.astype(cd)
    m = _ufunc_from_first(np.maximum, xc, ids, present, size, cd)
    d = np.ascontiguousarray(xc[present] - m[ids[present]])
    s = np.zeros(size, cd)
    np.add.at(s, ids[present], np.exp(d))
    return xc, m, s


def _column(call: Groups, x: np.ndarray):
    """One feature column reduced: (result of the result dtype, mask of the empty groups)."""
    func, ids, size, rd, cd = call.func, call.ids, call.size, call.result_dtype, call.computing
    base = base_of(func)
    present = _present(call, x)
    count = np.bincount(ids[present], minlength=size)
    empty = count == 0

    if base in ("sum", "prod"):
        ufunc = np.add if base == "sum" else np.multiply
        if rd.kind == "O":      # Python's operators, in order, from the first member
            res = _ufunc_from_first(ufunc, x, ids, present, size, rd)
        else:                   # each member cast, then ufunc.at into 0 / 1
            res = np.full(size, 0 if base == "sum" else 1, rd)
            ufunc.at(res, ids[present], x[present].astype(rd))
    elif base in ("max", "min"):
        src = native(x.dtype)
        res = _ufunc_from_first(np.maximum if base == "max" else np.minimum, x.astype(src),
                                ids, present, size, src)
    elif base == "mean":
        res, _ = _mean(x, ids, present, size, cd)
    elif base in ("var", "std"):
        mean, _ = _mean(x, ids, present, size, cd)
        d = x[present].astype(cd) - mean[ids[present]]
        ss = np.zeros(size, cd)
        np.add.at(ss, ids[present], d * d)
        denom = count - call.ddof
        res = np.where(denom > 0, np.true_divide(ss, denom.astype(cd)), np.array(np.nan, cd))
        if base == "std":
            res = np.sqrt(res)
    elif base in ("argmax", "argmin"):
        res = _arg(x, ids, present, size, base == "argmax")
    elif base in ("first", "last"):
        pos = np.full(size, -1, np.intp)
        for i in np.flatnonzero(present):
            if base == "last" or pos[ids[i]] < 0:
                pos[ids[i]] = i
        res = np.zeros(size, native(x.dtype))
        res[~empty] = x[pos[~empty]]
    elif base in ("any", "all"):
        truth = x[present].astype(bool)
        res = np.full(size, base == "all")
        (np.logical_or if base == "any" else np.logical_and).at(res, ids[present], truth)
    elif base == "count":
        res = count
    elif base == "logsumexp":
        _, m, s = _logsumexp_parts(x, ids, present, size, cd)
        res = np.where(np.isfinite(m), m + np.log(s), m)
    else:  # pragma: no cover
        raise AssertionError(func)
    return np.asarray(res).astype(rd), empty


def _softmax_column(call: Groups, x: np.ndarray) -> np.ndarray:
    ids, cd = call.ids, call.computing
    present = np.ones(len(ids), bool)
    xc, m, s = _logsumexp_parts(x, ids, present, call.size, cd)
    d = np.ascontiguousarray(xc - m[ids])
    if call.func == "log_softmax":
        res = d - np.log(s)[ids]
    else:
        res = np.exp(d) / s[ids]
    return res.astype(call.result_dtype)


def _run(call: Groups) -> np.ndarray:
    result = np.empty((call.moved_shape[0], call.columns.shape[1]), call.result_dtype)
    # like the C kernels, no floating-point warnings (overflow, NaN, 0/0 ...)
    with np.errstate(all="ignore"):
        for f in range(call.columns.shape[1]):
            x = call.columns[:, f]
            if call.func in ("softmax", "log_softmax"):
                result[:, f] = _softmax_column(call, x)
            else:
                res, empty = _column(call, x)
                res[empty] = call.fill
                result[:, f] = res
    result = np.ascontiguousarray(np.moveaxis(result.reshape(call.moved_shape), 0, call.axis))
    if call.out is None:
        return result
    call.out[...] = result
    return call.out


# ---------------------------------------------------------------------------------------------
# the public functions


def group_reduce(values, groups, func="sum", *, size=None, axis=0, fill_value=None, ddof=0,
                 dtype=None, mode="raise", out=None):
    """Reference ``group_reduce``: each feature position of each group reduced over its
    members in the order they stand along ``axis``."""
    return _run(_check("group_reduce", func, values, groups, False, size, axis, fill_value, ddof,
                       dtype, mode, out))


def segment_reduce(values, indptr, func="sum", *, axis=0, fill_value=None, ddof=0, dtype=None,
                   out=None):
    """Reference ``segment_reduce``: ``group_reduce`` of the slices ``indptr[g]:indptr[g+1]``
    as group ``g`` (positions, for argmax / argmin, in ``values``)."""
    return _run(_check("segment_reduce", func, values, indptr, True, None, axis, fill_value,
                       ddof, dtype, "raise", out))


def group_softmax(values, groups, *, size=None, axis=0, log=False, out=None):
    """Reference ``group_softmax``: per member ``exp(x - m) / s`` (log: ``(x - m) - log(s)``)
    with ``m`` and ``s`` of the member's group as in ``logsumexp``."""
    func = "log_softmax" if _log("group_softmax", log) else "softmax"
    return _run(_check("group_softmax", func, values, groups, False, size, axis, None, 0, None,
                       "raise", out))


def segment_softmax(values, indptr, *, axis=0, log=False, out=None):
    """Reference ``segment_softmax``: ``group_softmax`` of segments that cover every slice."""
    func = "log_softmax" if _log("segment_softmax", log) else "softmax"
    return _run(_check("segment_softmax", func, values, indptr, True, None, axis, None, 0, None,
                       "raise", out))

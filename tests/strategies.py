"""The suite's strategies: ``scatterops.strategies`` (the public module that draws every
call the properties run, valid or not, and compares results bit for bit) with the suite's
defaults, and ``snapshot``.

``cases`` is ``scatterops.strategies.calls`` with the defaults the properties were written
for: every out mode, ``reduction="none"`` only, and (reduction, dtype) pairs NumPy has no
loop for drawn too unless ``defined_only=True``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from hypothesis import strategies as st

from scatterops.strategies import *  # noqa: F401,F403 - the suite reads them as strategies.X
from scatterops.strategies import (ALL_DTYPES, FUNCS, LAYOUTS, OUT_MODES, Call, calls,
                                   out_of_range_calls)

#: the suite's name for a drawn call
Case = Call


def cases(funcs=FUNCS, dtypes=ALL_DTYPES, reductions=("none",), include_self=None,
          out_modes=OUT_MODES, layout_kinds=LAYOUTS, index_mode="any", broadcast=True,
          updates_casts=True, nonempty_indices=False, defined_only=False):
    """A whole call (``scatterops.strategies.calls``, the suite's defaults)."""
    return calls(funcs, dtypes, reductions, include_self=include_self, out_modes=out_modes,
                 layout_kinds=layout_kinds, index_mode=index_mode, broadcast=broadcast,
                 updates_casts=updates_casts, nonempty_indices=nonempty_indices,
                 defined_only=defined_only)


def out_of_range_cases(position=None, funcs=FUNCS, reductions=("none",), defined_only=False, **kw):
    """(case, flat position, bad value, axis named, size): ``out_of_range_calls``, the
    suite's defaults."""
    return out_of_range_calls(funcs, position, reductions=reductions, defined_only=defined_only, **kw)


def snapshot(a):
    """A copy to compare against later with assert_identical(..., objects="is")."""
    return None if a is None else np.array(a, copy=True)


# --------------------------------------------------------------------------------------
# scatterops.at: ufunc.at's index forms
# --------------------------------------------------------------------------------------

#: the ufuncs scatterops.at runs in C, and some it hands to NumPy's ufunc.at
AT_FAST_UFUNCS = (np.add, np.subtract, np.multiply, np.maximum, np.minimum)
AT_OTHER_UFUNCS = (np.fmax, np.fmin, np.bitwise_or, np.logical_and, np.negative, np.invert)
#: arithmetic dtypes: the C loops (native), their byte-swapped forms and longdouble (NumPy's);
#: the native ones three times over, so that most draws can run in C
AT_DTYPES = ([d for d in BOOL_DTYPES + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES
              if d.isnative and d.char in "?bBhHiIlLqQefdFD"] * 3
             + BOOL_DTYPES + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES)


@dataclass
class AtCase:
    """One ``ufunc.at(a, index, b)`` call; b is None for a unary ufunc."""
    ufunc: Any
    a: Recipe
    index: Any
    b: Any

    def __repr__(self):
        return (f"AtCase({self.ufunc.__name__}, a={self.a.values!r} {self.a.layout!r}, "
                f"index={self.index!r}, b={self.b!r})")


@st.composite
def _at_axis_values(draw, size, shape, bad):
    """An integer index array of shape for an axis of size (negatives too); with bad,
    sometimes one value out of range."""
    dtype = draw(index_dtypes())
    lo = -size if dtype.kind == "i" else 0
    n = math.prod(shape)
    vals = [draw(st.integers(lo, size - 1)) for _ in range(n)] if size else [0] * n
    if bad and n and draw(st.integers(0, 9)) == 7:   # not 0: hypothesis favours it
        vals[draw(st.integers(0, n - 1))] = draw(st.sampled_from([size, size + 3, -size - 1]))
    arr = np.array(vals, dtype=np.int64)
    if dtype.kind == "u":
        arr = np.abs(arr)
    info = np.iinfo(dtype)
    if arr.size and (arr.min() < info.min or arr.max() > info.max):
        dtype = np.dtype(np.intp)
    arr = arr.astype(dtype).reshape(shape)
    return arr.tolist() if draw(st.integers(0, 4)) == 3 and arr.ndim and dtype.kind == "i" else arr


def _small_shapes(max_dims):
    return st.lists(st.integers(0, 4), min_size=0, max_size=max_dims).map(tuple)


@st.composite
def at_int_array_index(draw, shape, bad=True):
    """a[idx]: one integer array (any shape, a list now and then) on axis 0."""
    ishape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=2).map(tuple))
    return draw(_at_axis_values(shape[0], ishape, bad))


@st.composite
def _broadcastable_shapes(draw, k):
    """k index shapes broadcasting together (some axes 1, some leading axes dropped)."""
    full = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple))
    out = []
    for _ in range(k):
        s = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else n for n in full)
        out.append(s[draw(st.integers(0, len(s) - 1)):] if draw(st.integers(0, 3)) == 0 else s)
    return out


@st.composite
def at_array_tuple_index(draw, shape, bad=True):
    """a[i, j, ...]: a tuple of 2 .. ndim integer arrays (broadcast together) on the
    leading axes."""
    k = draw(st.integers(2, len(shape)))
    return tuple(draw(_at_axis_values(shape[d], s, bad))
                 for d, s in enumerate(draw(_broadcastable_shapes(k))))


def _slices(size):
    return st.builds(slice, st.one_of(st.none(), st.integers(-size - 1, size + 1)),
                     st.one_of(st.none(), st.integers(-size - 1, size + 1)),
                     st.one_of(st.none(), st.sampled_from([1, 2, -1, -2])))


def _is_full(entry):
    return isinstance(entry, slice) and entry == slice(None)


@st.composite
def at_mixed_index(draw, shape, bad=True):
    """A tuple mixing slices, ints, None, one Ellipsis and at least one integer array, so
    advanced indices are consecutive or separated (NumPy's two placements)."""
    kinds = [draw(st.sampled_from(["slice", "array", "int", "full"])) for _ in shape]
    if "array" not in kinds:
        kinds[draw(st.integers(0, len(shape) - 1))] = "array"
    arrays = [d for d, kd in enumerate(kinds) if kd == "array"]
    bshapes = iter(draw(_broadcastable_shapes(len(arrays))))
    entries = []
    for d, kd in enumerate(kinds):
        if kd == "slice":
            entries.append(draw(_slices(shape[d])))
        elif kd == "full":
            entries.append(slice(None))
        elif kd == "int":
            entries.append(draw(st.integers(-shape[d], shape[d] - 1)) if shape[d] else 0)
        else:
            entries.append(draw(_at_axis_values(shape[d], next(bshapes), bad)))
    # drop trailing full slices, or swap a run of them for an Ellipsis; put in a None or two
    if draw(st.booleans()):
        start = draw(st.integers(0, len(entries)))
        stop = start
        while stop < len(entries) and _is_full(entries[stop]):
            stop += 1
        entries[start:stop] = [Ellipsis]
    else:
        while entries and _is_full(entries[-1]) and draw(st.booleans()):
            entries.pop()
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return tuple(entries)


@st.composite
def at_basic_index(draw, shape, bad=True):
    """Ints, slices, None and Ellipsis only (no element twice); a lone int or slice now
    and then rather than a tuple."""
    entries = []
    for d in range(draw(st.integers(0, len(shape)))):
        if draw(st.booleans()):
            n = shape[d]
            hi = n + (2 if bad else 0)
            entries.append(draw(st.integers(-n, hi - 1)) if hi > -n else 0)
        else:
            entries.append(draw(_slices(shape[d])))
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if len(entries) == 1 and draw(st.booleans()):
        return entries[0]
    return tuple(entries)


@st.composite
def at_bool_index(draw, shape, bad=True):
    """A boolean mask over some axes (after some full slices), alone or beside an integer
    array; with bad, now and then a mask of the wrong shape."""
    lead = draw(st.integers(0, len(shape) - 1))
    m = draw(st.integers(1, len(shape) - lead))
    mshape = list(shape[lead:lead + m])
    if bad and draw(st.integers(0, 19)) == 13:
        mshape[0] += 1
    mask = np.array([draw(st.booleans()) for _ in range(math.prod(mshape))], bool).reshape(mshape)
    entries = [slice(None)] * lead + [mask.tolist() if draw(st.integers(0, 4)) == 3 else mask]
    rest = len(shape) - lead - m
    if rest and draw(st.booleans()):
        entries.append(draw(_at_axis_values(shape[lead + m], (1,), bad)))
    return entries[0] if len(entries) == 1 and draw(st.booleans()) else tuple(entries)


AT_INDEX_FORMS = {"int_array": at_int_array_index, "array_tuple": at_array_tuple_index,
                  "mixed": at_mixed_index, "basic": at_basic_index, "bool": at_bool_index}


def _at_result_shape(shape, index):
    """The shape of a[index] for a of shape (None if NumPy refuses the index)."""
    try:
        return np.broadcast_to(np.zeros((), np.uint8), shape)[index].shape
    except (IndexError, ValueError, TypeError):
        return None


@st.composite
def _at_b(draw, dtype, rshape):
    """ufunc.at's b: a Python scalar, or an array of a[index]'s shape or one that
    broadcasts to it (of a's dtype or another), now and then one that does not."""
    kind = draw(st.sampled_from(["scalar", "full", "full", "broadcast", "broadcast",
                                 "other_dtype", "scalar", "other_dtype", "full", "wrong"]))
    if kind == "scalar" or rshape is None:
        return draw(st.sampled_from([True, 2, -3, 1.5, 1j] if dtype.kind == "c" else
                                    [True, 2, -3, 1.5] if dtype.kind == "f" else [True, 1, 3, -1]))
    if kind == "wrong":
        # a last axis that does not broadcast (not more axes than a[index]: NumPy reads
        # such a b past its shape and raises errors that change from call to call)
        return np.ones(tuple(rshape[:-1]) + (rshape[-1] + 2,), dtype) if rshape else 1
    bshape = list(rshape)
    if kind == "broadcast":
        bshape = [1 if draw(st.booleans()) else n for n in bshape]
        bshape = bshape[draw(st.integers(0, len(bshape))):]
    values = draw(array_values(dtype.newbyteorder("="), tuple(bshape)))
    if kind == "other_dtype":
        other = draw(st.sampled_from([np.int16, np.float32, np.float64, np.uint8, np.bool_]))
        with np.errstate(all="ignore"):
            values = values.astype(other) if values.dtype.kind != "c" else values.real.astype(other)
    return values


def at_b_as_numpy_reads_it(shape, index, b):
    """b broadcast explicitly to a[index]'s shape for a of shape (b itself for a Python
    scalar, or where it does not broadcast): the b with which NumPy's ufunc.at gives the
    result scatterops.at promises.  NumPy 2.4 reads past a 1-d b that an N-d index array
    broadcasts into a 1-d a; given the broadcast b it reads it right."""
    rshape = _at_result_shape(shape, index)
    if rshape is None or not isinstance(b, (np.ndarray, list, tuple)):
        return b
    try:
        return np.broadcast_to(np.asarray(b), rshape)
    except ValueError:
        return b


#: the spellings of one integer index array x into a 1-d a: each selects the same
#: elements in the same order, so scatterops.at gives one result for all of them
AT_SPELLINGS = {
    "array": lambda x: x,
    "tuple": lambda x: (x,),
    "list": lambda x: x.tolist(),
    "array, Ellipsis": lambda x: (x, Ellipsis),
    "Ellipsis, array": lambda x: (Ellipsis, x),
    "list in a tuple": lambda x: (x.tolist(),),
}


@dataclass
class AtSpellingCase:
    """One ufunc.at call on a 1-d a with an integer index array x of any shape, spelled as
    AT_SPELLINGS[spelling] says, and a b that broadcasts to x's shape."""
    ufunc: Any
    a: np.ndarray
    x: np.ndarray
    spelling: str
    b: Any

    def __repr__(self):
        return (f"AtSpellingCase({self.ufunc.__name__}, a={self.a!r}, x={self.x!r}, "
                f"spelling={self.spelling!r}, b={self.b!r})")


@st.composite
def at_spelling_cases(draw, ufuncs=AT_FAST_UFUNCS + (np.fmax, np.fmin)):
    """A 1-d a (a few hundred elements or fewer), an index array of 0 to 3 dimensions
    with a few values or more than a thousand (either side of any size threshold), and b
    a 1-d array of the index's last dimension (the form NumPy 2.4 reads past), one value,
    a scalar or a full array."""
    dtype = np.dtype(draw(st.sampled_from(["f8", "f4", "f2", "i8", "i4", "u1", "c16"])))
    n = draw(st.integers(1, 300))
    ndim = draw(st.integers(0, 3))
    large = draw(st.booleans())
    if ndim == 0:
        xshape = ()
    elif large:
        last = draw(st.integers(1, 6))
        xshape = (draw(st.integers(1, 3)),) * (ndim - 1) + (last,)
        xshape = (-(-1100 // (math.prod(xshape[:-1]) * last)),) + xshape[1:] if ndim > 1 else (1100,)
    else:
        xshape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    idtype = draw(st.sampled_from([np.intp, np.int32, np.int8, np.uint16]))
    lo = -n if np.dtype(idtype).kind == "i" else 0
    x = rng.integers(max(lo, -128), min(n, 128) if idtype is np.int8 else n, xshape).astype(idtype)
    bkind = draw(st.sampled_from(["last", "last", "last", "one", "scalar", "full"]))
    bshape = {"last": xshape[-1:], "one": (1,) if xshape else (), "scalar": (), "full": xshape}[bkind]
    b = (rng.integers(-3, 4, bshape) if dtype.kind in "iu" else rng.integers(-40, 40, bshape) / 8)
    b = b.astype(dtype) if draw(st.booleans()) else b
    if bkind == "scalar":
        b = b.item()
    elif draw(st.integers(0, 3)) == 0:
        b = b.tolist()
    a = (rng.integers(0, 9, n) if dtype.kind in "iu" else rng.integers(-40, 40, n) / 4).astype(dtype)
    return AtSpellingCase(draw(st.sampled_from(list(ufuncs))), a, x,
                          draw(st.sampled_from(list(AT_SPELLINGS))), b)


@st.composite
def at_cases(draw, form, bad=True, ufuncs=AT_FAST_UFUNCS * 2 + AT_OTHER_UFUNCS, dtypes=AT_DTYPES):
    """One ufunc.at call with an index of the given form (a key of AT_INDEX_FORMS)."""
    dtype = draw(st.sampled_from(list(dtypes)))
    shape = draw(st.lists(st.integers(1 if form != "basic" else 0, 4), min_size=1,
                          max_size=3).map(tuple))
    if form == "array_tuple" and len(shape) < 2:
        shape = shape + (3,)
    a = draw(recipes(dtype, shape))
    index = draw(AT_INDEX_FORMS[form](shape, bad))
    ufunc = draw(st.sampled_from(list(ufuncs)))
    b = None if ufunc.nin == 1 else draw(_at_b(np.dtype(dtype), _at_result_shape(shape, index)))
    return AtCase(ufunc, a, index, b)


@st.composite
def chunking(draw, size):
    """A chunking of one axis of ``size``: size-1 chunks, uneven chunks, or one chunk."""
    if size <= 1:
        return (size,)
    how = draw(st.sampled_from(("ones", "uneven", "whole")))
    if how == "ones":
        return (1,) * size
    if how == "whole":
        return (size,)
    cuts = sorted(draw(st.sets(st.integers(1, size - 1), min_size=1, max_size=size - 1)))
    edges = [0] + cuts + [size]
    return tuple(b - a for a, b in zip(edges, edges[1:]))


def assert_lazy_as_top(top, lazy, same):
    """A lazy (Dask) call against its top-level call: ``same(want, got)`` on the computed
    result, or the same exception, class and message -- an IndexError (a bad index or id
    value) when computed, any other error when the lazy call is made.  ``top()`` and
    ``lazy()`` make the calls."""
    import pytest
    try:
        want = top()
    except Exception as exc:
        if isinstance(exc, IndexError):          # a bad index value: raised when computed
            result = lazy()
            with pytest.raises(IndexError) as got:
                result.compute(scheduler="threads")
        else:                                    # anything else: raised at call time
            with pytest.raises(type(exc)) as got:
                lazy()
        assert str(got.value) == str(exc)
        return
    result = lazy()
    same(want, result)


# ---- group reductions (tests/test_groups.py) -------------------------------------------------

#: the values' dtypes every func of the group reductions takes
GROUP_DTYPES = ("float64", "float32", "float16", "longdouble", "int8", "int32", "int64",
                "uint8", "uint16", "uint64", "bool")
#: the special values drawn among the group values: NaN, ±inf, ±0 and small integers (ties)
GROUP_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0)
#: the layouts of a drawn values array
GROUP_LAYOUTS = ("C", "F", "reversed", "strided", "byteswapped")


def group_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """a, equal in value, in the memory layout named (GROUP_LAYOUTS)."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "reversed":
        r = np.empty_like(a)[tuple(slice(None, None, -1) for _ in a.shape)]
        r[...] = a
        return r
    if layout == "strided":
        big = np.empty(tuple(2 * n for n in a.shape), a.dtype)
        r = big[tuple(slice(None, None, 2) for _ in a.shape)]
        r[...] = a
        return r
    if layout == "byteswapped" and a.dtype.itemsize > 1:
        return a.astype(a.dtype.newbyteorder())
    return np.ascontiguousarray(a)


@st.composite
def group_values(draw, dtypes=GROUP_DTYPES, max_dims=3, max_n=12):
    """(values in some layout, axis): NaN, ±inf, ±0 and ties among random values."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    ndim = draw(st.integers(1, max_dims))
    shape = tuple(draw(st.lists(st.integers(0 if ndim == 1 else 1, max_n if ndim == 1 else 4),
                                min_size=ndim, max_size=ndim)))
    n = int(np.prod(shape))
    pool = st.one_of(st.sampled_from(GROUP_SPECIALS), st.floats(-1e3, 1e3, width=16))
    raw = np.array(draw(st.lists(pool, min_size=n, max_size=n)), np.float64).reshape(shape)
    if dtype.kind in "iu":
        raw = np.nan_to_num(raw, nan=3, posinf=100, neginf=-100)
        raw = np.round(np.abs(raw) if dtype.kind == "u" else raw)
    with np.errstate(all="ignore"):
        values = raw.astype(dtype)
    axis = draw(st.integers(-ndim, ndim - 1))
    return group_layout(values, draw(st.sampled_from(GROUP_LAYOUTS))), axis


@st.composite
def group_ids(draw, n, drop=False):
    """(groups, size): n ids in [0, size), with -1 among them under mode="drop"."""
    size = draw(st.integers(0 if drop or n == 0 else 1, 6))
    lo = -1 if drop else 0
    ids = draw(st.lists(st.integers(lo, max(size - 1, lo)), min_size=n, max_size=n))
    dtype = draw(st.sampled_from(("int64", "int32", "int8") + (() if drop else ("uint16",))))
    return np.array(ids, dtype), size

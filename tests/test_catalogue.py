"""The bad-input catalogue: an explicit, named table of the kinds of bad input
scatterops must refuse, and a second table of edge inputs it must accept.

``BAD`` holds one row per (function, kind of bad input, variant): an id, how to
build the call, the exception class docs/contract.md's error table gives and the argument
the message must name.  Every row runs in each form it makes sense in -- out of
place, with a separate ``out`` and in place (``out=data``) -- and each run checks

* the exception class (exactly: an AxisError is not accepted where a plain
  ValueError / IndexError is due),
* that the message names the argument at fault (and any further words the row
  lists: values, positions, dtypes),
* that ``data`` and ``out`` hold exactly the bytes (for object dtype: the very
  objects) they held before the call.

``EDGE`` holds inputs that look dangerous but are valid -- ``out`` sharing memory
with ``updates`` or ``indices``, zero-size dimensions everywhere, empty indices of
non-integer dtypes, numpy-integer axes -- and each must give exactly what
``scatterops.reference`` gives on private copies of the arguments.

test_errors.py walks docs/contract.md's error table row by row (both modules); this file
is the catalogue of *kinds*, many of them combinations test_errors.py does not
reach (every index dtype in both byte orders at three positions in all three
functions and three forms, overflowing shapes, ``__array__`` that raises,
``axis`` given to scatter_nd, refused casts from object, ...).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pytest
from numpy.exceptions import AxisError
from numpy.lib.stride_tricks import as_strided

import scatterops
from scatterops import reference

from strategies import assert_identical, snapshot

FUNCS = ("scatter_update", "scatter_nd", "scatter_elements")
FORMS = ("new", "out", "inplace")


@dataclass
class Bad:
    """One row of the catalogue.

    make() returns fresh (data, indices, updates, kwargs); kwargs holds axis and
    reduction / include_self / out where the row needs them.  A row whose kwargs
    hold "out" runs in that form only.  guard: for data too large to copy, the
    small arrays its memory really is (their bytes must not change)."""

    id: str
    kind: str
    func: str
    make: Callable[[], tuple]
    exc: type
    arg: Optional[str]            # the argument the message must name (None: MemoryError)
    words: tuple = ()
    forms: tuple = FORMS
    guard: Optional[Callable[[tuple], list]] = None


BAD: list[Bad] = []


def row(kind, func, make, exc, arg, *words, variant="", forms=FORMS, guard=None):
    rid = f"{func}-{kind}" + (f"-{variant}" if variant else "")
    BAD.append(Bad(rid, kind, func, make, exc, arg, tuple(str(w) for w in words), forms, guard))


def base(func, dtype=np.float64):
    """A small valid call: data (3, 5); scatter_update along axis 1; scatter_nd with
    2-tuples; scatter_elements along axis 1."""
    data = np.arange(15).astype(dtype).reshape(3, 5)
    if func == "scatter_update":
        return data, np.array([[0, 4], [-5, 2]]), np.ones((3, 2, 2), dtype), {"axis": 1}
    if func == "scatter_nd":
        return data, np.array([[0, 4], [2, -5], [1, 1]]), np.ones(3, dtype), {}
    return data, np.array([[0, 4, -5], [1, 2, 3]]), np.ones((2, 3), dtype), {"axis": 1}


def with_(func, dtype=np.float64, **changes):
    """base(func) with some of data / indices / updates / kwargs replaced (a value of a
    callable is applied to the base value)."""
    def make():
        data, idx, upd, kw = base(func, dtype)
        parts = {"data": data, "indices": idx, "updates": upd}
        for name, value in changes.items():
            if name in parts:
                parts[name] = value(parts[name]) if callable(value) and not isinstance(value, type) \
                    else value
            else:
                kw = dict(kw, **{name: value})
        return parts["data"], parts["indices"], parts["updates"], kw
    return make


def dict_set(call, **kw):
    """call = (data, indices, updates, kwargs) with kwargs updated by kw."""
    data, idx, upd, k = call
    return data, idx, upd, dict(k, **kw)


class RaisingArray:
    """An array-like whose conversion raises make_exc() (a fresh exception each time)."""

    def __init__(self, make_exc):
        self.make_exc = make_exc

    def __array__(self, dtype=None, copy=None):
        raise self.make_exc()


class TwoArgValueError(ValueError):
    """A ValueError subclass that cannot be built from a message alone."""

    def __init__(self, code, detail):
        super().__init__(f"code {code}: {detail}")


# ---------------------------------------------------------------------------------------
# shapes and ranks: ValueError
# ---------------------------------------------------------------------------------------

for f in FUNCS:
    shape = {"scatter_update": (3, 2, 3), "scatter_nd": (4,), "scatter_elements": (2, 4)}[f]
    row("updates-does-not-broadcast", f, with_(f, updates=np.ones(shape)), ValueError, "updates",
        str(shape))
    row("updates-rank-too-high", f, with_(f, updates=lambda u: u[None, None].repeat(2, 0)),
        ValueError, "updates")
    row("data-0d", f, with_(f, data=np.array(7.0)), ValueError, "data", "0-d", forms=("new",))
    row("data-python-scalar", f, with_(f, data=7.0), ValueError, "data", forms=("new",))
    row("data-ragged-list", f, with_(f, data=[[1.0, 2.0], [3.0]]), ValueError, "data",
        forms=("new",))
    row("indices-ragged-list", f, with_(f, indices=[[0, 1], [2]]), ValueError, "indices")
    row("updates-ragged-list", f, with_(f, updates=[[1.0], [2.0, 3.0]]), ValueError, "updates")

row("k-greater-than-r", "scatter_nd", with_("scatter_nd", indices=np.zeros((2, 3), np.int64)),
    ValueError, "indices", "indices.shape[-1] = 3", "(3, 5)")
row("k-greater-than-r", "scatter_nd", with_("scatter_nd", indices=np.zeros((1, 1, 9), np.uint8)),
    ValueError, "indices", "indices.shape[-1] = 9", variant="uint8-rank3")
row("indices-0d", "scatter_nd", with_("scatter_nd", indices=np.array(1)), ValueError, "indices")
row("indices-rank-not-data-rank", "scatter_elements",
    with_("scatter_elements", indices=np.array([0, 1]), updates=np.ones(2)), ValueError, "indices",
    "rank")
row("indices-rank-not-data-rank", "scatter_elements",
    with_("scatter_elements", indices=np.zeros((1, 1, 1), np.int64), updates=np.ones((1, 1, 1))),
    ValueError, "indices", "rank", variant="higher")
row("indices-larger-than-data-off-axis", "scatter_elements",
    with_("scatter_elements", indices=np.zeros((4, 2), np.int64), updates=np.ones((4, 2))),
    ValueError, "indices", "indices.shape[0] = 4")
row("updates-shape-not-indices-shape", "scatter_elements",
    with_("scatter_elements", updates=np.ones((2, 2))), ValueError, "updates", "(2, 3)")
row("updates-given-as-data-shape", "scatter_update",
    with_("scatter_update", updates=np.ones((3, 5))), ValueError, "updates", "(3, 5)", "(3, 2, 2)")
# scatter_nd slices: the block part of updates has the wrong length
row("updates-slice-part-wrong", "scatter_nd",
    with_("scatter_nd", indices=np.array([[0], [2]]), updates=np.ones((2, 4))), ValueError,
    "updates", "(2, 5)")
# updates of rank beyond what the fast path's fixed arrays hold (q - 1 + r - k > 64):
# still a plain ValueError (and under tools/sanitize.sh, no write past a stack array).
# NumPy 1.x arrays have at most 32 dims, so there the rank cannot get past 64.
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    row("updates-required-rank-over-64", "scatter_nd",
        lambda: (np.zeros((1,) * 40), np.zeros((1,) * 40, np.intp), np.zeros(1), {}),
        ValueError, "updates")

# ---------------------------------------------------------------------------------------
# axis: AxisError when out of range, TypeError when not an integer
# ---------------------------------------------------------------------------------------

for f in ("scatter_update", "scatter_elements"):
    row("axis-out-of-range", f, with_(f, axis=2), AxisError, "axis", "axis 2", "dimension 2")
    row("axis-out-of-range", f, with_(f, axis=-3), AxisError, "axis", "-3", variant="negative")
    row("axis-out-of-range", f, with_(f, axis=np.int64(7)), AxisError, "axis", "7",
        variant="numpy-int64")
    row("axis-out-of-range", f, with_(f, axis=2 ** 70), AxisError, "axis", str(2 ** 70),
        variant="beyond-int64")
    row("axis-float", f, with_(f, axis=1.0), TypeError, "axis", "float")
    row("axis-numpy-float", f, with_(f, axis=np.float64(1)), TypeError, "axis")
    row("axis-str", f, with_(f, axis="1"), TypeError, "axis", "str")
    row("axis-bool", f, with_(f, axis=True), TypeError, "axis", "bool")
    row("axis-bool", f, with_(f, axis=np.bool_(False)), TypeError, "axis", "bool",
        variant="numpy-bool")
    row("axis-none", f, with_(f, axis=None), TypeError, "axis")
    row("axis-array-of-several", f, with_(f, axis=np.array([0, 1])), TypeError, "axis")
    row("axis-float-array", f, with_(f, axis=np.array(1.0)), TypeError, "axis")
row("axis-given-to-scatter_nd", "scatter_nd", with_("scatter_nd", axis=0), TypeError, "axis")

# ---------------------------------------------------------------------------------------
# indices of a non-integer dtype: TypeError naming indices and the dtype
# ---------------------------------------------------------------------------------------

for f in FUNCS:
    row("indices-float", f, with_(f, indices=lambda i: i.astype(np.float64)), TypeError, "indices",
        "float64")
    row("indices-float", f, with_(f, indices=lambda i: i.astype(np.float16)), TypeError, "indices",
        "float16", variant="float16")
    row("indices-float-list", f, with_(f, indices=lambda i: (i + 0.5).tolist()), TypeError,
        "indices", "float64")
    row("indices-bool", f, with_(f, indices=lambda i: i > 0), TypeError, "indices", "bool")
    row("indices-object", f, with_(f, indices=lambda i: i.astype(object)), TypeError, "indices",
        "object")
    row("indices-str", f, with_(f, indices=lambda i: i.astype("U2")), TypeError, "indices", "<U2")
    row("indices-bytes", f, with_(f, indices=lambda i: i.astype("S2")), TypeError, "indices", "|S2")
    row("indices-complex", f, with_(f, indices=lambda i: i.astype(complex)), TypeError, "indices",
        "complex128")
    row("indices-timedelta", f, with_(f, indices=lambda i: i.astype("m8[s]")), TypeError,
        "indices", "timedelta64")
    row("indices-structured", f, with_(f, indices=lambda i: i.astype(np.int64).view([("a", "i8")])),
        TypeError, "indices")

# ---------------------------------------------------------------------------------------
# index values out of range: IndexError naming indices, the value, the axis, the size
# and the position -- every integer dtype, both byte orders, at the first, a middle
# and the last position
# ---------------------------------------------------------------------------------------

# every integer width: 8, 16, 32 ("i"/"I") and 64 bits ("l", "q" and "p" are one dtype on
# LP64 Linux, told apart on other platforms), signed and unsigned, both byte orders
INDEX_DTYPES = list({dt.str: dt for dt in (np.dtype(c).newbyteorder(o) for c in "bhilqpBHILQP"
                                            for o in "<>")}.values())


def _bad_index_row(func, dtype, where, value, kind):
    data, idx, upd, kw = base(func)
    # valid values in dtype: unsigned dtypes get the non-negative twins
    sizes = np.array([3, 5]) if func == "scatter_nd" else 5
    good = idx if dtype.kind == "i" else idx % sizes
    column = 1 if func == "scatter_nd" else None          # the axis-1 component (size 5)
    if func == "scatter_nd":
        n = good.shape[0]
        t = {"first": 0, "middle": n // 2, "last": n - 1}[where]
        flat = t * 2 + column
    else:
        n = good.size
        flat = {"first": 0, "middle": n // 2, "last": n - 1}[where]
    pos = tuple(int(p) for p in np.unravel_index(flat, good.shape))

    def make():
        d, _, u, k = base(func)
        bad = good.astype(dtype)
        bad.reshape(-1)[flat] = value
        return d, bad, u, k
    where_words = "[" + ", ".join(str(p) for p in pos) + "]"
    row(kind, func, make, IndexError, "indices", where_words, f"= {value} ", "axis 1", "size 5",
        variant=f"{dtype.str}-{where}")


for f in FUNCS:
    for dt in INDEX_DTYPES:
        info = np.iinfo(dt)
        for where in ("first", "middle", "last"):
            _bad_index_row(f, dt, where, 5, "index-equal-to-size")
            _bad_index_row(f, dt, where, int(info.max), "index-dtype-max")
            if dt.kind == "i":
                _bad_index_row(f, dt, where, -6, "index-below-minus-size")
                _bad_index_row(f, dt, where, int(info.min), "index-dtype-min")
    for where in ("first", "middle", "last"):
        _bad_index_row(f, np.dtype(np.uint64), where, 2 ** 63, "index-uint64-2^63")
        _bad_index_row(f, np.dtype(">u8"), where, 2 ** 63 + 12345, "index-uint64-above-2^63")
        _bad_index_row(f, np.dtype(np.int64), where, -2 ** 63, "index-int64-min")

# an index into an axis of size 0
row("index-into-empty-axis", "scatter_update",
    lambda: (np.zeros((3, 0)), np.array([0]), np.zeros((3, 1)), {"axis": 1}), IndexError,
    "indices", "size 0")
row("index-into-empty-axis", "scatter_elements",
    lambda: (np.zeros((0, 3)), np.zeros((1, 1), np.int64), np.zeros((1, 1)), {"axis": 0}),
    IndexError, "indices", "size 0")
row("index-into-empty-axis", "scatter_nd",
    lambda: (np.zeros((2, 0, 4)), np.array([[1, 0]]), np.zeros((1, 4)), {}), IndexError,
    "indices", "size 0")
# non-contiguous, unaligned index memory: still found, still named


def _unaligned_indices():
    buf = np.zeros(8 * 5 + 1, np.uint8)
    buf[1:] = np.frombuffer(np.array([0, 7, 1, 7, 9], "<i8").tobytes(), np.uint8)
    idx = np.ndarray((3,), "<i8", buf, 1, (16,))          # [0, 1, 9], offset 1, stride 16
    assert not idx.flags.aligned and list(idx) == [0, 1, 9]
    return np.zeros((3, 5)), idx, 1.0, {"axis": 1}


row("index-in-strided-unaligned-indices", "scatter_update", _unaligned_indices, IndexError,
    "indices", "= 9 ", "[2]", "size 5")

# ---------------------------------------------------------------------------------------
# reductions: unknown names ValueError; not a str / not defined for the dtype TypeError
# ---------------------------------------------------------------------------------------

for f in FUNCS:
    row("reduction-unknown-name", f, with_(f, reduction="avg"), ValueError, "reduction", "'avg'")
    row("reduction-unknown-name", f, with_(f, reduction="Add"), ValueError, "reduction", "'Add'",
        variant="case")
    row("reduction-not-a-str", f, with_(f, reduction=np.add), TypeError, "reduction")
    row("reduction-not-a-str", f, with_(f, reduction=None), TypeError, "reduction",
        variant="none")
    row("reduction-undefined-bool-sub", f, with_(f, np.bool_, reduction="sub"), TypeError,
        "reduction", "'sub'", "bool")
    row("reduction-undefined-bool-mean", f, with_(f, np.bool_, reduction="mean"), TypeError,
        "reduction", "'mean'", "bool")
    row("reduction-undefined-str-add", f, with_(f, "U3", reduction="sum"), TypeError, "reduction",
        "'sum'", "<U3")
    row("reduction-undefined-datetime-add", f, with_(f, "M8[s]", reduction="add"), TypeError,
        "reduction", "datetime64")
    row("reduction-undefined-timedelta-mul", f, with_(f, ">m8[s]", reduction="mul"), TypeError,
        "reduction", "'mul'", ">m8[s]")
    row("reduction-undefined-structured-max", f,
        with_(f, [("a", "i4"), ("b", "f8")], reduction="max"), TypeError, "reduction")
    row("include_self-not-a-bool", f, with_(f, include_self=1), TypeError, "include_self")
    row("include_self-not-a-bool", f, with_(f, include_self=np.array([True])), TypeError,
        "include_self", variant="array")

# ---------------------------------------------------------------------------------------
# casts updates -> data.dtype that "same_kind" refuses: TypeError naming both dtypes
# ---------------------------------------------------------------------------------------

for f in FUNCS:
    for ddt, udt, name in [(np.int64, np.float64, "float-to-int"),
                           (np.float32, np.complex64, "complex-to-float"),
                           (np.uint8, np.int8, "signed-to-unsigned"),
                           (np.int64, object, "object-to-int"),
                           (np.float64, "U3", "str-to-float"),
                           ("M8[s]", "m8[s]", "timedelta-to-datetime"),
                           (np.bool_, np.int8, "int-to-bool")]:
        def make(f=f, ddt=ddt, udt=udt):
            d, i, u, k = base(f, ddt)
            return d, i, np.zeros(u.shape, udt), k
        row("updates-cast-refused", f, make, TypeError, "updates", np.dtype(udt), np.dtype(ddt),
            variant=name)
    # a Python float into an int array goes through the same rule
    row("updates-cast-refused", f, with_(f, np.int32, updates=2.5), TypeError, "updates",
        "float64", "int32", variant="python-float")

# ---------------------------------------------------------------------------------------
# out: read-only, wrong shape (ValueError); wrong dtype, not an ndarray (TypeError)
# ---------------------------------------------------------------------------------------


for f in FUNCS:
    def ro(f=f):
        d, i, u, k = base(f)
        o = np.full_like(d, -1.0)
        o.flags.writeable = False
        return d, i, u, dict(k, out=o)
    row("out-read-only", f, ro, ValueError, "out", "read-only", forms=("new",))

    def ro_data(f=f):
        d, i, u, k = base(f)
        d.flags.writeable = False
        return d, i, u, dict(k, out=d)
    row("out-is-read-only-data", f, ro_data, ValueError, "out", "read-only", forms=("new",))

    def bview(f=f):
        d, i, u, k = base(f)
        return d, i, u, dict(k, out=np.broadcast_to(np.float64(0.0), d.shape))
    row("out-broadcast-view", f, bview, ValueError, "out", forms=("new",))

    for oshape in [(5, 3), (3, 5, 1), (15,)]:
        def wshape(f=f, oshape=oshape):
            d, i, u, k = base(f)
            return d, i, u, dict(k, out=np.zeros(oshape))
        row("out-wrong-shape", f, wshape, ValueError, "out", str(oshape), "(3, 5)",
            variant="x".join(map(str, oshape)), forms=("new",))
    for odt in [np.float32, ">f8", object, np.int64]:
        def wdtype(f=f, odt=odt):
            d, i, u, k = base(f)
            return d, i, u, dict(k, out=np.zeros(d.shape, odt))
        row("out-wrong-dtype", f, wdtype, TypeError, "out", np.dtype(odt), "float64",
            variant=np.dtype(odt).str.replace("|", ""), forms=("new",))
    row("out-not-an-ndarray", f, with_(f, out=[[0.0] * 5] * 3), TypeError, "out", "list",
        forms=("new",))
    # a wrong out is reported even when indices are bad as well (out is checked first)
    def out_and_index(f=f):
        d, i, u, k = base(f)
        i = i.copy()
        i.reshape(-1)[0] = 99
        return d, i, u, dict(k, out=np.zeros((3, 5), np.float32))
    row("out-wrong-dtype-and-bad-index", f, out_and_index, TypeError, "out", forms=("new",))

# ---------------------------------------------------------------------------------------
# array-likes whose conversion raises: the exception propagates (its own class), and the
# argument is named -- in the message when scatterops wraps it (ValueError / TypeError),
# in a note (PEP 678, Python >= 3.11) when it propagates as it is
# ---------------------------------------------------------------------------------------

RAISERS = {
    "RuntimeError": (RuntimeError, lambda: RuntimeError("no array here")),
    "KeyError": (KeyError, lambda: KeyError("k")),
    "ValueError": (ValueError, lambda: ValueError("bad array")),
    "TypeError": (TypeError, lambda: TypeError("wrong array")),
    "UnicodeDecodeError": (ValueError, lambda: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")),
    "TwoArgValueError": (ValueError, lambda: TwoArgValueError(7, "custom")),
}

for f in FUNCS:
    for arg in ("data", "indices", "updates"):
        for name, (cls, make_exc) in RAISERS.items():
            row(f"{arg}-__array__-raises", f,
                with_(f, **{arg: lambda _, m=make_exc: RaisingArray(m)}),
                cls, arg, variant=name, forms=("new",) if arg == "data" else FORMS)

# ---------------------------------------------------------------------------------------
# ranks: updates of too low a rank (that does not broadcast either); 1-D indices with k > r
# ---------------------------------------------------------------------------------------

row("updates-rank-too-low", "scatter_update", with_("scatter_update", updates=np.ones((3, 2))),
    ValueError, "updates", "(3, 2)", "(3, 2, 2)")
row("updates-rank-too-low", "scatter_nd",
    with_("scatter_nd", indices=np.array([[0], [2]]), updates=np.ones(2)), ValueError, "updates",
    "(2,)", "(2, 5)")
row("updates-rank-too-low", "scatter_elements", with_("scatter_elements", updates=np.ones(2)),
    ValueError, "updates", "(2,)", "(2, 3)")
row("k-greater-than-r", "scatter_nd", with_("scatter_nd", indices=np.array([0, 1, 2])),
    ValueError, "indices", "indices.shape[-1] = 3", variant="1d-indices")

# ---------------------------------------------------------------------------------------
# zero-size dimensions in bad calls: an empty data / indices / updates / out does not let
# a bad argument through (nor does it turn the error into another one)
# ---------------------------------------------------------------------------------------

row("updates-does-not-broadcast-zero-size", "scatter_update",
    lambda: (np.zeros((0, 5)), np.array([0, 1]), np.ones((1, 3)), {"axis": 1}), ValueError,
    "updates", "(1, 3)", "(0, 2)")
row("updates-does-not-broadcast-zero-size", "scatter_update",
    lambda: (np.zeros((3, 5)), np.zeros(0, np.int64), np.ones((3, 2)), {"axis": 1}), ValueError,
    "updates", "(3, 2)", "(3, 0)", variant="empty-indices")
row("updates-does-not-broadcast-zero-size", "scatter_nd",
    lambda: (np.zeros((2, 0)), np.array([[1], [0]]), np.ones((3, 0)), {}), ValueError, "updates",
    "(3, 0)", "(2, 0)")
row("updates-does-not-broadcast-zero-size", "scatter_nd",
    lambda: (np.zeros((2, 3)), np.zeros((0, 1), np.int64), np.ones((1, 2)), {}), ValueError,
    "updates", "(1, 2)", "(0, 3)", variant="empty-indices")
row("updates-does-not-broadcast-zero-size", "scatter_elements",
    lambda: (np.zeros((0, 3)), np.zeros((0, 2), np.int64), np.ones((1, 3)), {"axis": 0}),
    ValueError, "updates", "(1, 3)", "(0, 2)")
row("k-greater-than-r-zero-size", "scatter_nd",
    lambda: (np.zeros((3, 0)), np.zeros((1, 3), np.int64), np.ones(1), {}), ValueError, "indices",
    "indices.shape[-1] = 3")
row("indices-rank-not-data-rank-zero-size", "scatter_elements",
    lambda: (np.zeros((0, 3)), np.zeros(1, np.int64), np.ones(1), {"axis": 0}), ValueError,
    "indices", "rank")
row("indices-larger-than-data-off-axis-zero-size", "scatter_elements",
    lambda: (np.zeros((0, 3)), np.zeros((1, 1), np.int64), np.ones((1, 1)), {"axis": 1}),
    ValueError, "indices", "indices.shape[0] = 1", "data.shape[0] = 0")
row("indices-float-zero-size-data", "scatter_update",
    lambda: (np.zeros((0, 3)), np.array([0.0]), np.ones((0, 1)), {"axis": 1}), TypeError,
    "indices", "float64")
for f in ("scatter_update", "scatter_elements"):
    row("axis-out-of-range-zero-size", f,
        lambda f=f: (np.zeros((0, 0)), np.zeros((0,) if f == "scatter_update" else (0, 0), np.int64),
                     np.ones((0, 0)), {"axis": 2}), AxisError, "axis", "axis 2")
for f in FUNCS:
    def empty_call(f=f, dtype=np.float64):
        d = np.zeros((0, 5), dtype)
        if f == "scatter_update":
            return d, np.zeros(0, np.int64), np.ones((0, 0), dtype), {"axis": 1}
        if f == "scatter_nd":
            return d, np.zeros((0, 2), np.int64), np.ones(0, dtype), {}
        return d, np.zeros((0, 5), np.int64), np.ones((0, 5), dtype), {"axis": 1}

    def wrong_out(f=f):
        d, i, u, k = empty_call(f)
        return d, i, u, dict(k, out=np.zeros((5, 0)))
    row("out-wrong-shape-zero-size", f, wrong_out, ValueError, "out", "(5, 0)", "(0, 5)",
        forms=("new",))

    def wrong_out_dtype(f=f):
        d, i, u, k = empty_call(f)
        return d, i, u, dict(k, out=np.zeros((0, 5), np.float32))
    row("out-wrong-dtype-zero-size", f, wrong_out_dtype, TypeError, "out", "float32", "float64",
        forms=("new",))

    def ro_empty(f=f):
        d, i, u, k = empty_call(f)
        o = np.zeros((0, 5))
        o.flags.writeable = False
        return d, i, u, dict(k, out=o)
    row("out-read-only-zero-size", f, ro_empty, ValueError, "out", "read-only", forms=("new",))
    row("reduction-undefined-zero-size", f, lambda f=f: dict_set(empty_call(f, np.bool_),
                                                                reduction="sub"),
        TypeError, "reduction", "'sub'", "bool")
    row("reduction-unknown-name-zero-size", f,
        lambda f=f: dict_set(empty_call(f), reduction="avg"), ValueError, "reduction", "'avg'")


# ---------------------------------------------------------------------------------------
# sizes: element counts that overflow npy_intp (ValueError), outputs that cannot be
# allocated (MemoryError) -- none of them may crash or hang
# ---------------------------------------------------------------------------------------

G = 2 ** 31
row("required-shape-overflows-intp", "scatter_update",
    lambda: (np.broadcast_to(np.int8(0), (G, G)), np.broadcast_to(np.int8(0), (G, G)), np.int8(1),
             {"axis": 0}),
    ValueError, "updates", f"({G}, {G}, {G})", forms=("new",),
    guard=lambda args: [])
row("required-shape-overflows-intp", "scatter_nd",
    lambda: (np.broadcast_to(np.int8(0), (G, G)), np.broadcast_to(np.int8(0), (G, G, 1)),
             np.int8(1), {}),
    ValueError, "updates", f"({G}, {G}, {G})", forms=("new",), guard=lambda args: [])
row("required-shape-overflows-intp", "scatter_nd",
    lambda: (np.broadcast_to(np.int8(0), (G, G)), np.broadcast_to(np.int8(0), (G, G, 0)),
             np.int8(1), {}),
    ValueError, "updates", variant="k0", forms=("new",), guard=lambda args: [])
# 2**62 int8 indices are a valid array, but not as 2**62 intp (2**65 bytes)
row("indices-too-large-to-convert", "scatter_elements",
    lambda: (np.broadcast_to(np.int8(0), (G, G)), np.broadcast_to(np.int8(0), (G, G)), np.int8(1),
             {"axis": 0}),
    (ValueError, MemoryError), "indices", forms=("new",), guard=lambda args: [])

def _huge(func, dtype=np.float32):
    """data: a zero-stride view of one element with 2**60 elements (4 EiB as float32):
    the out-of-place result cannot be allocated."""
    def make():
        one = np.zeros(1, dtype)
        data = as_strided(one, shape=(2 ** 30, 2 ** 30), strides=(0, 0), writeable=False)
        idx = {"scatter_update": np.array([0]), "scatter_nd": np.array([[0, 0]]),
               "scatter_elements": np.array([[0]])}[func]
        kw = {} if func == "scatter_nd" else {"axis": 0}
        return data, idx, dtype(2), kw
    return make


def _huge_guard(args):
    # the one element all 2**60 positions of data are
    return [np.asarray(args[0][:1, :1])]


for f in FUNCS:
    row("output-too-large-to-allocate", f, _huge(f), MemoryError, None, forms=("new",),
        guard=_huge_guard)
    row("output-too-large-to-allocate", f, _huge(f, np.int8), MemoryError, None,
        variant="int8-threaded-copy-size", forms=("new",), guard=_huge_guard)

# 2**63 - 1 elements: a shape whose byte count overflows even for int8 plus the fast
# path (updates an ndarray of exactly the required shape and data's dtype)
row("output-too-large-to-allocate", "scatter_elements",
    lambda: (np.broadcast_to(np.int8(0), (2 ** 31, 2 ** 31)), np.zeros((1, 1), np.intp),
             np.ones((1, 1), np.int8), {"axis": 0}),
    MemoryError, None, variant="fast-path", forms=("new",),
    guard=lambda args: [])


# ---------------------------------------------------------------------------------------
# running a row
# ---------------------------------------------------------------------------------------

def _kinds():
    return {r.kind for r in BAD}


# the catalogue covers at least 40 distinct kinds of bad input (rows differ in more
# than the function they call or the dtype / position of a bad index)
assert len(_kinds()) >= 40, sorted(_kinds())
assert len({r.id for r in BAD}) == len(BAD), "duplicate row ids"


def _sentinel_out(data):
    if data.dtype == object:
        return np.array([object() for _ in range(data.size)] + [None], dtype=object)[:-1] \
            .reshape(data.shape)
    # a Fortran-ordered array of 0xA5 bytes (a NaN / odd value in every dtype)
    flat = np.full(data.size * data.dtype.itemsize, 0xA5, np.uint8).view(data.dtype)
    return flat.reshape(data.shape[::-1]).T


def _cases():
    for r in BAD:
        for form in r.forms:
            yield pytest.param(r, form, id=f"{r.id}-{form}")


def _call(mod, r, form):
    data, idx, upd, kw = r.make()
    if form == "out":
        kw = dict(kw, out=_sentinel_out(np.asarray(data)))
    elif form == "inplace":
        kw = dict(kw, out=data)
    return data, idx, upd, kw


def _watched(r, data, kw):
    """(name, array) pairs whose bytes must survive the call."""
    args = (data,)
    if r.guard is not None:
        arrays = [("data's memory", a) for a in r.guard(args)]
    else:
        arrays = [("data", data)] if isinstance(data, np.ndarray) else []
    out = kw.get("out")
    if isinstance(out, np.ndarray) and out is not data and out.size < 10 ** 6:
        arrays.append(("out", out))
    return arrays


def _names_argument(exc: BaseException, arg: str) -> bool:
    """The message names arg -- or, for an exception of the caller's own making that
    propagates as it is, a PEP 678 note does (Python >= 3.11)."""
    if arg in str(exc):
        return True
    if sys.version_info < (3, 11) and isinstance(exc, (RuntimeError, KeyError)):
        return True                        # no notes before 3.11: propagating is all we ask
    return any(arg in note for note in getattr(exc, "__notes__", ()))


def _check(mod, r, form):
    data, idx, upd, kw = _call(mod, r, form)
    watched = _watched(r, data, kw)
    before = [snapshot(a) for _, a in watched]
    func = getattr(mod, r.func)
    with pytest.raises(r.exc) as info:
        func(data, idx, upd, **kw)
    exc = info.value
    if r.exc not in (AxisError,) and not (isinstance(r.exc, tuple) and AxisError in r.exc):
        assert not isinstance(exc, AxisError), f"{r.id}: an AxisError where {r.exc} is due: {exc!r}"
    if r.arg is not None:
        assert _names_argument(exc, r.arg), f"{r.id}: {r.arg!r} not named in {exc!r}"
        if r.exc not in (RuntimeError, KeyError):
            assert r.func in str(exc), f"{r.id}: the function is not named in {exc!r}"
    for word in r.words:
        assert word in str(exc), f"{r.id}: {word!r} not in message {str(exc)!r}"
    for (name, a), b in zip(watched, before):
        assert_identical(a, b, where=f"{r.id}: {name} after the error")


@pytest.mark.parametrize("r,form", list(_cases()))
def test_bad_input_is_refused_and_nothing_is_written(r, form):
    _check(scatterops, r, form)


@pytest.mark.parametrize("r", [pytest.param(r, id=r.id) for r in BAD])
def test_reference_refuses_the_same_way(r):
    _check(reference, r, r.forms[0])


def test_catalogue_counts():
    kinds = _kinds()
    assert len(kinds) >= 40
    # every function has shape, index, reduction, cast and out rows
    for f in FUNCS:
        own = {r.kind for r in BAD if r.func == f}
        for must in ("updates-does-not-broadcast", "index-equal-to-size", "index-dtype-min",
                     "index-uint64-above-2^63", "reduction-unknown-name", "updates-cast-refused",
                     "out-read-only", "out-wrong-shape", "out-wrong-dtype", "data-0d",
                     "indices-float", "indices-bool", "indices-object", "indices-str",
                     "output-too-large-to-allocate", "updates-rank-too-low",
                     "updates-does-not-broadcast-zero-size", "out-wrong-shape-zero-size",
                     "out-read-only-zero-size", "reduction-undefined-zero-size"):
            assert must in own, (f, must)
    # out-of-range values in every integer width, signed and unsigned, in both byte orders
    assert {dt.str for dt in INDEX_DTYPES} == {f"{o}{k}{n}" for k in "iu" for n in (2, 4, 8)
                                               for o in "<>"} | {"|i1", "|u1"}


# ---------------------------------------------------------------------------------------
# EDGE: valid inputs that look dangerous; the result must equal the reference's
# ---------------------------------------------------------------------------------------

@dataclass
class Edge:
    id: str
    func: str
    make: Callable[[], tuple]          # -> (data, indices, updates, kwargs); kwargs may hold out
    note: str = ""


EDGE: list[Edge] = []


def edge(id_, func, make, note=""):
    EDGE.append(Edge(id_, func, make, note))


# out sharing memory with updates
edge("inplace-updates-are-a-view-of-data", "scatter_update",
     lambda: (lambda d: (d, np.array([0, 1, 2]), d[3:6], {"out": d}))(np.arange(8.0)))
edge("inplace-updates-reversed-view-of-data-add", "scatter_elements",
     lambda: (lambda d: (d, np.array([0, 2, 4, 6, 1]), d[::-1][:5], {"out": d, "reduction": "add"}))(
         np.arange(8.0)))
edge("out-is-updates", "scatter_elements",
     lambda: (lambda u: (np.zeros((2, 3)), np.array([[1, 0, 1], [0, 1, 0]]), u, {"out": u}))(
         np.arange(6.0).reshape(2, 3)))
edge("out-is-updates-mean", "scatter_nd",
     lambda: (lambda u: (np.ones(4), np.array([[3], [3], [0], [1]]), u,
                         {"out": u, "reduction": "mean"}))(np.arange(4.0)))
edge("inplace-updates-overlap-slices", "scatter_nd",
     lambda: (lambda d: (d, np.array([[1], [2]]), d[0:2], {"out": d}))(
         np.arange(12.0).reshape(3, 4)))
edge("inplace-updates-transposed-view", "scatter_update",
     lambda: (lambda d: (d, np.array([0, 1, 2]), d.T, {"out": d, "axis": 1, "reduction": "mul"}))(
         np.arange(1.0, 10.0).reshape(3, 3)))
edge("inplace-object-updates-view", "scatter_update",
     lambda: (lambda d: (d, np.array([0, 1]), d[2:4], {"out": d}))(
         np.array([object(), object(), "a", "b"], dtype=object)))
# out sharing memory with indices
edge("inplace-indices-are-a-view-of-data", "scatter_update",
     lambda: (lambda d: (d, d[:3], np.array([7, 8, 9]), {"out": d}))(np.array([2, 1, 0, 5, 6])))
edge("out-is-indices", "scatter_elements",
     lambda: (lambda o: (np.array([1, 0, 3, 2]), o, np.array([10, 20, 30, 40]), {"out": o}))(
         np.array([3, 2, 1, 0])))
edge("inplace-indices-view-of-data-add", "scatter_nd",
     lambda: (lambda d: (d, d[:4].reshape(4, 1), np.array([100, 200, 300, 400]),
                         {"out": d, "reduction": "add"}))(np.array([0, 1, 1, 0, 5, 6], np.int64)))
edge("inplace-indices-view-of-int8-data", "scatter_update",
     lambda: (lambda d: (d, d[::2], np.int8(-1), {"out": d}))(np.array([1, 9, 3, 9, 5, 9], np.int8)))
# zero-size dimensions
edge("empty-data-empty-indices", "scatter_update",
     lambda: (np.zeros(0), np.array([], np.int64), np.zeros(0), {}))
edge("empty-leading-dim", "scatter_update",
     lambda: (np.zeros((0, 4)), np.array([1, -1]), np.zeros((0, 2)), {"axis": 1}))
edge("empty-trailing-dim", "scatter_update",
     lambda: (np.zeros((3, 0)), np.array([0, 2, -1]), np.zeros((3, 0)), {"axis": 0,
                                                                         "reduction": "add"}))
edge("empty-indices-2d", "scatter_update",
     lambda: (np.arange(6.0).reshape(2, 3), np.zeros((0, 4), np.uint8), 1.0, {"axis": 1}))
edge("empty-indices-list", "scatter_nd", lambda: (np.arange(3.0), [], 7.0, {}),
     "k = 0: one empty tuple addresses all of data")
edge("nd-no-tuples", "scatter_nd",
     lambda: (np.arange(3.0), np.empty((0, 1), np.int64), [], {"reduction": "max"}))
edge("nd-k0-on-empty-data", "scatter_nd",
     lambda: (np.zeros((0, 3)), np.zeros((5, 0), np.int64), np.zeros((5, 0, 3)), {}))
edge("nd-k0-writes-all", "scatter_nd",
     lambda: (np.arange(6.0).reshape(2, 3), np.zeros((2, 0), np.int64), np.arange(12.0).reshape(2, 2, 3),
              {"reduction": "add"}))
edge("nd-empty-batch", "scatter_nd",
     lambda: (np.zeros((2, 3)), np.zeros((4, 0, 2), np.int32), np.zeros((4, 0)), {}))
edge("nd-empty-slices", "scatter_nd",
     lambda: (np.zeros((2, 0)), np.array([[1], [0]]), np.zeros((2, 0)), {"reduction": "mean"}))
edge("elements-empty-along-axis", "scatter_elements",
     lambda: (np.ones((3, 4)), np.zeros((0, 4), np.int64), np.zeros((0, 4)), {"axis": 0}))
edge("elements-empty-off-axis", "scatter_elements",
     lambda: (np.ones((3, 4)), np.zeros((3, 0), np.int64), 1.0, {"axis": 0}))
edge("elements-empty-data-empty-indices", "scatter_elements",
     lambda: (np.zeros((0, 4)), np.zeros((5, 0), np.int64), np.zeros((5, 0)), {"axis": 0}))
edge("elements-mean-no-updates-int", "scatter_elements",
     lambda: (np.arange(4), np.zeros(0, np.int64), np.zeros(0, np.int64),
              {"reduction": "mean", "include_self": False}))
# no update position: indices' shape is not held to data's, since nothing is addressed
edge("nd-empty-batch-k-greater-than-r", "scatter_nd",
     lambda: (np.zeros((3, 0)), np.zeros((0, 3), np.int64), np.ones(0), {}))
edge("elements-empty-indices-of-another-rank", "scatter_elements",
     lambda: (np.zeros((0, 3)), np.zeros(0, np.int64), np.ones(0), {"axis": 0}))
edge("elements-empty-indices-larger-than-data-off-axis", "scatter_elements",
     lambda: (np.zeros((0, 3)), np.zeros((1, 0), np.int64), np.ones((1, 0)), {"axis": 1}))
# empty indices of non-integer dtypes count as empty indices, a structured dtype too
for f, shape in (("scatter_update", (0,)), ("scatter_nd", (0, 1)), ("scatter_elements", (0,))):
    edge(f"empty-indices-structured-{f}", f,
         lambda f=f, shape=shape: (np.arange(3.0), np.zeros(shape, [("a", "i8")]), [], {}))
for dt in (object, "U1", np.float64, np.bool_):
    edge(f"empty-indices-{np.dtype(dt).name}", "scatter_update",
         lambda dt=dt: (np.arange(3.0), np.zeros(0, dt), [], {}))
# axis as numpy integers and integer arrays
edge("axis-numpy-int8", "scatter_update",
     lambda: (np.zeros((2, 3)), [2, 0], [[1.0, 2.0], [3.0, 4.0]], {"axis": np.int8(1)}))
edge("axis-uint64-array-0d", "scatter_elements",
     lambda: (np.zeros((2, 3)), [[2, 0]], [[1.0, 2.0]], {"axis": np.array(1, np.uint64)}))
edge("axis-1-element-array", "scatter_elements",
     lambda: (np.zeros((2, 3)), [[1], [0]], [[5.0], [6.0]], {"axis": np.array([0])}))
# index values at the very edges of the valid range, in odd dtypes
edge("indices-at-range-edges-big-endian", "scatter_update",
     lambda: (np.zeros(5), np.array([-5, 4, 0, -1], ">i8"), [1.0, 2.0, 3.0, 4.0], {}))
edge("indices-uint64-largest-valid", "scatter_nd",
     lambda: (np.zeros((2, 3)), np.array([[1, 2], [0, 0]], np.uint64), [7.0, 8.0], {}))


@pytest.mark.parametrize("e", [pytest.param(e, id=e.id) for e in EDGE])
def test_edge_inputs_give_the_reference_result(e):
    data, idx, upd, kw = e.make()
    # the reference on private copies: what "as if copied first" means
    cp = lambda a: a.copy() if isinstance(a, np.ndarray) else a   # noqa: E731
    rkw = {k: v for k, v in kw.items() if k != "out"}
    expected = getattr(reference, e.func)(cp(data), cp(idx), cp(upd), **{k: cp(v) for k, v in rkw.items()})
    out = kw.get("out")
    got = getattr(scatterops, e.func)(data, idx, upd, **kw)
    if out is not None:
        assert got is out
    assert_identical(got, expected, where=e.id)


@pytest.mark.parametrize("e", [pytest.param(e, id=e.id) for e in EDGE if "out" not in e.make()[3]])
@pytest.mark.parametrize("form", ["out", "inplace"])
def test_edge_inputs_in_the_other_forms(e, form):
    data, idx, upd, kw = e.make()
    data = np.asarray(data)
    expected = getattr(reference, e.func)(data.copy(), idx, upd, **kw)
    out = np.full_like(data, 3) if form == "out" else data
    got = getattr(scatterops, e.func)(data, idx, upd, out=out, **kw)
    assert got is out
    assert_identical(got, expected, where=f"{e.id} ({form})")

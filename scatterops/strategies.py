"""Hypothesis strategies that draw valid and invalid calls of the scatterops functions.

Use them to test your own scatter against scatterops (or scatterops against anything
else) on every dtype, shape, axis, reduction, duplicate pattern, negative index, memory
layout and byte order the contract covers.  Needs hypothesis
(``pip install hypothesis``, or ``pip install 'scatterops[test]'``); ``import scatterops``
does not import this module.

A hand-written scatter, tested against scatterops in a few lines::

    import numpy as np
    from hypothesis import given
    from scatterops.strategies import assert_identical, calls

    def my_scatter_elements(data, indices, updates, axis=0, **kwargs):
        out = np.array(data, copy=True)
        indices = np.asarray(indices)
        updates = np.broadcast_to(np.asarray(updates).astype(out.dtype), indices.shape)
        for pos in np.ndindex(indices.shape):      # C order: the last duplicate wins
            target = list(pos)
            target[axis] = indices[pos]
            out[tuple(target)] = updates[pos]
        return out

    @given(calls("scatter_elements", reductions=["none"]))
    def test_my_scatter_elements(call):
        assert_identical(call.run(my_scatter_elements), call.run())

``calls(func)`` draws a ``Call``: ``call.func`` (the function's name), ``call.args`` and
``call.kwargs`` (fresh arrays each time they are read), ``call.run(fn=None)`` (runs ``fn``,
by default the scatterops function, on fresh arrays) and a ``repr`` that reads as the call
itself.  ``bad_calls(func)`` draws a ``BadCall``: an invalid call and the exception class
scatterops raises for it (``call, exc = bad``).  ``assert_identical(actual, expected)``
compares two results as the project's own tests do: dtype (byte order included), shape and
every bit (the same objects, for object arrays); ``nans="any"`` lets any NaN match any NaN,
for reductions, where which NaN survives is not promised.

What is drawn is a *recipe*, not an array: a ``Recipe`` holds the logical values
(C-contiguous) and the layout to present them in (C, Fortran, transposed, reversed,
strided with negative and >1 steps inside a larger buffer, unaligned).  Every run realises
fresh arrays from it, so two functions get their own, identically laid out, inputs, and the
in-place form (``out=data``) can be compared at all.  Sizes are kept tiny on purpose (at
most 48 elements an array): a pure-Python scatter loops over every update.
"""
from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("scatterops.strategies needs hypothesis: pip install hypothesis "
                      "(or pip install 'scatterops[test]')") from _exc

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - NumPy < 1.25
    from numpy import AxisError

from . import _core

__all__ = ["calls", "bad_calls", "out_of_range_calls", "Call", "BadCall", "Prepared", "Recipe",
           "Layout", "array_values", "shapes", "layouts", "recipes", "dtypes", "index_dtypes",
           "bad_values", "reduction_is_defined", "swapped", "ml_kind", "assert_identical",
           "FUNCS", "REDUCTION_NAMES", "CANONICAL", "UFUNC", "LAYOUTS", "OUT_MODES",
           "INDEX_MODES", "BAD_KINDS", "MAX_SIZE", "ALL_DTYPES", "REDUCTION_DTYPES",
           "INEXACT_DTYPES", "BOOL_DTYPES", "INT_DTYPES", "FLOAT_DTYPES", "COMPLEX_DTYPES",
           "TIMEDELTA_DTYPES", "DATETIME_DTYPES", "STRING_DTYPES", "STRUCT_DTYPES",
           "OBJECT_DTYPES", "USER_DTYPES", "ML_DTYPES", "INDEX_DTYPES"]

# --------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------

NATIVE = "<" if sys.byteorder == "little" else ">"
SWAPPED = ">" if NATIVE == "<" else "<"


def swapped(dtype) -> np.dtype:
    """The same dtype in the other byte order (structured: every field swapped)."""
    return np.dtype(dtype).newbyteorder("S")


def _both_orders(*codes) -> list:
    out = []
    for code in codes:
        for dt in (np.dtype(code), swapped(code)):
            if not any(dt == o for o in out):
                out.append(dt)
    return out


def is_swapped(dtype: np.dtype) -> bool:
    return dtype.byteorder == SWAPPED


BOOL_DTYPES = [np.dtype(np.bool_)]
# np.longlong / np.ulonglong compare equal to int64 / uint64 but are other types (char 'q'/'Q')
INT_DTYPES = _both_orders("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8") + [
    np.dtype(np.longlong), np.dtype(np.ulonglong)]
FLOAT_DTYPES = _both_orders("f2", "f4", "f8", np.longdouble)
COMPLEX_DTYPES = _both_orders("c8", "c16", np.clongdouble)
TIMEDELTA_DTYPES = _both_orders("m8[s]")
DATETIME_DTYPES = _both_orders("M8[s]")
STRING_DTYPES = [np.dtype("S4")] + _both_orders("U3")
STRUCT_PLAIN = np.dtype([("a", NATIVE + "i4"), ("b", NATIVE + "f8")])   # packed: no padding bytes
STRUCT_WITH_OBJECT = np.dtype([("o", "O"), ("i", NATIVE + "i2")])
STRUCT_DTYPES = [STRUCT_PLAIN, swapped(STRUCT_PLAIN), STRUCT_WITH_OBJECT]
OBJECT_DTYPES = [np.dtype(object)]

#: user dtypes (ml_dtypes' bfloat16 and float8s), where ml_dtypes is installed
try:
    import ml_dtypes as _ml
    USER_DTYPES = [np.dtype(_ml.bfloat16), np.dtype(_ml.float8_e4m3fn), np.dtype(_ml.float8_e5m2)]
except ImportError:  # pragma: no cover - optional
    _ml = None
    USER_DTYPES = []

#: every dtype the installed ml_dtypes defines, by kind of values (tests/test_ml_dtypes.py);
#: names an older ml_dtypes lacks are left out
ML_FLOAT_NAMES = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                  "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu",
                  "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
ML_COMPLEX_NAMES = ("complex32", "bcomplex32")
ML_INT_NAMES = ("int4", "uint4", "int2", "uint2", "int1", "uint1")
ML_DTYPES = {name: np.dtype(getattr(_ml, name))
             for name in ML_FLOAT_NAMES + ML_COMPLEX_NAMES + ML_INT_NAMES if hasattr(_ml, name)}


def ml_kind(dtype: np.dtype) -> Optional[str]:
    """"float", "complex" or "int" for an ml_dtypes dtype, else None.  (Compared by type:
    ml_dtypes reuses NumPy's type characters, int1 is 'e' like float16.)"""
    for name, dt in ML_DTYPES.items():
        if dtype.type is dt.type:
            return "complex" if name in ML_COMPLEX_NAMES else "int" if name in ML_INT_NAMES else "float"
    return None


def is_user_float(dtype: np.dtype) -> bool:
    """An ml_dtypes floating dtype (real or complex): NaN-aware comparisons, values via float32."""
    return ml_kind(np.dtype(dtype)) in ("float", "complex")


#: every dtype NumPy can hold that the suite draws (reduction="none" must work on all)
ALL_DTYPES = (BOOL_DTYPES + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES + TIMEDELTA_DTYPES
              + DATETIME_DTYPES + STRING_DTYPES + STRUCT_DTYPES + OBJECT_DTYPES)
#: dtypes with arithmetic; every reduction is tried on each (undefined pairs must be a TypeError)
REDUCTION_DTYPES = (BOOL_DTYPES + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES + TIMEDELTA_DTYPES
                    + DATETIME_DTYPES + OBJECT_DTYPES)
INEXACT_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES

#: index dtypes: every integer width, signed and unsigned, native and big-endian
INDEX_DTYPES = []
for _code in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"):
    for _dt in (np.dtype(_code), np.dtype(">" + _code)):
        if not any(_dt == o and _dt.byteorder == o.byteorder for o in INDEX_DTYPES):
            INDEX_DTYPES.append(_dt)
INDEX_DTYPES += [np.dtype(np.intp), np.dtype(np.longlong), np.dtype(np.ulonglong)]

FUNCS = tuple(_core.KINDS)

#: every accepted spelling of every reduction, and its canonical name (the core's table)
REDUCTION_NAMES = tuple(_core.REDUCTIONS)
CANONICAL = dict(_core.REDUCTIONS)
#: the NumPy ufunc of each reduction but "none" (the core's table); the mean sums with add
UFUNC = {name: ufunc for ufunc, name in _core.UFUNC_REDUCTIONS.items()}
UFUNC["mean"] = UFUNC["add"]


@functools.lru_cache(maxsize=None)
def reduction_is_defined(reduction: str, dtype) -> bool:
    """docs/contract.md's rule, written independently of scatterops: a reduction is defined where
    the NumPy ufunc has a (dtype, dtype) -> dtype loop; mean also needs a division
    (not bool, not datetime, not strings)."""
    red = CANONICAL[reduction]
    dtype = np.dtype(dtype)
    if red == "none":
        return True
    if red == "mean" and dtype.kind not in "iufcmO":
        return False
    native = dtype.newbyteorder("=") if not dtype.names else dtype
    try:
        resolved = UFUNC[red].resolve_dtypes((native, native, None))
    except (TypeError, ValueError):
        return False
    return all(r == native for r in resolved)


def dtypes(which=ALL_DTYPES):
    return st.sampled_from(list(which))


def index_dtypes():
    return st.sampled_from(INDEX_DTYPES)


# --------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------

#: floats that make rounding, NaN propagation and signed zeros visible
FLOAT_SPECIALS = (0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.0, -1.0, 0.5, 3.0,
                  0.1, 1 / 3, -2.5, 2048.0, 1024.0, 4096.0, 1e-4, 65504.0, 65520.0,
                  2.0 ** -24, 2.0 ** -14, 2.0 ** -149, 1.1754942e-38, 3.4028235e38,
                  5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 2.0 ** 53, 1e16)
#: float16 values whose sums round: 2048 + 1 == 2048, 1024 + 0.5 == 1024, ...
FLOAT16_ROUNDERS = (2048.0, 1.0, 0.5, 1024.0, 0.25, 0.1, 0.3, 3.0, 1e-3, 6.1e-5, 5.96e-8)


def _float_bits(nbits: int):
    """Bit patterns of IEEE floats of the width: specials, ordinary floats, raw bits
    (every NaN payload, signalling NaNs, subnormals)."""
    ftype = {16: np.float16, 32: np.float32, 64: np.float64}[nbits]
    utype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[nbits]

    def to_bits(x):
        with np.errstate(all="ignore"):
            return int(np.array(x, dtype=ftype).view(utype))

    pool = FLOAT_SPECIALS + (FLOAT16_ROUNDERS if nbits == 16 else ())
    return st.one_of(
        st.sampled_from(pool).map(to_bits),
        st.floats(width=nbits, allow_nan=True, allow_infinity=True,
                  allow_subnormal=True).map(to_bits),
        st.integers(-8, 8).map(float).map(to_bits),
        st.integers(0, 2 ** nbits - 1),
    )


def _longdoubles():
    """longdouble values, some with precision beyond float64."""
    one = np.longdouble(1)
    base = st.one_of(st.sampled_from(FLOAT_SPECIALS), st.floats(allow_subnormal=True),
                     st.integers(-8, 8).map(float))
    extra = st.sampled_from([0, 1, -1, 3])

    def build(pair):
        x, e = pair
        with np.errstate(all="ignore"):
            v = np.longdouble(x)
            if e and np.isfinite(v):
                v = v + v * (one / np.longdouble(2 ** 60)) * e
            return v
    return st.tuples(base, extra).map(build)


def _python_objects(mode: str):
    ints = st.one_of(st.integers(-10, 10), st.integers(-2 ** 70, 2 ** 70))
    if mode == "ints":
        return ints
    return st.one_of(ints, st.floats(allow_nan=True), st.text(max_size=3), st.none(),
                     st.tuples(st.integers(0, 3)), st.booleans())


def _int_values(dtype: np.dtype):
    info = np.iinfo(dtype)
    edges = sorted({info.min, info.max, 0, 1, max(info.min, -1), info.max - 1, info.min + 1})
    return st.one_of(st.sampled_from(edges), st.integers(max(info.min, -5), 5),
                     st.integers(info.min, info.max))


def _leaf_values(draw, dtype: np.dtype, n: int, objects: str) -> np.ndarray:
    """A flat C-contiguous array of n values of dtype."""
    if is_swapped(dtype):
        native = _leaf_values(draw, dtype.newbyteorder("="), n, objects)
        return native.byteswap().view(dtype)          # same logical values, other order
    kind = dtype.kind
    ml = ml_kind(dtype)
    if ml == "int":                                # ml_dtypes' int4, uint2, ...
        info = _ml.iinfo(dtype)
        vals = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n, max_size=n))
        return np.array(vals, dtype=np.int64).astype(dtype)
    if ml == "complex":                            # via complex64 bit patterns, rounded
        c8 = _leaf_values(draw, np.dtype(np.complex64), n, objects)
        with np.errstate(all="ignore"):
            return c8.astype(dtype)
    if is_user_float(dtype):                       # via float32 bit patterns, rounded
        f32 = _leaf_values(draw, np.dtype(np.float32), n, objects)
        with np.errstate(all="ignore"):
            return f32.astype(dtype)
    if dtype.names:
        arr = np.empty(n, dtype)
        for name in dtype.names:
            arr[name] = _leaf_values(draw, dtype.fields[name][0], n, objects)
        return arr
    if kind == "b":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    if kind in "iu":
        vals = draw(st.lists(_int_values(dtype), min_size=n, max_size=n))
        return np.array(vals, dtype=dtype)
    if kind == "f":
        if dtype.itemsize in (2, 4, 8):
            bits = draw(st.lists(_float_bits(dtype.itemsize * 8), min_size=n, max_size=n))
            return np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype)
        vals = draw(st.lists(_longdoubles(), min_size=n, max_size=n))
        return np.array(vals, dtype=dtype).reshape(n)
    if kind == "c":
        part = np.dtype(np.longdouble) if dtype == np.dtype(np.clongdouble) \
            else np.dtype(f"f{dtype.itemsize // 2}")
        return _leaf_values(draw, part, 2 * n, objects).view(dtype)
    if kind in "mM":
        vals = draw(st.lists(st.one_of(
            st.sampled_from([-2 ** 63, 0, 1, -1, 2 ** 63 - 1, 86400]),  # -2**63 is NaT
            st.integers(-1000, 1000), st.integers(-2 ** 63, 2 ** 63 - 1)),
            min_size=n, max_size=n))
        return np.array(vals, dtype=np.int64).view(dtype)
    if kind == "S":
        vals = draw(st.lists(st.binary(max_size=dtype.itemsize), min_size=n, max_size=n))
        return np.array(vals, dtype=dtype).reshape(n)
    if kind == "U":
        chars = st.characters(exclude_categories=("Cs",))
        vals = draw(st.lists(st.text(chars, max_size=dtype.itemsize // 4), min_size=n, max_size=n))
        return np.array(vals, dtype=dtype).reshape(n)
    if kind == "O":
        arr = np.empty(n, dtype=object)
        for i, v in enumerate(draw(st.lists(_python_objects(objects), min_size=n, max_size=n))):
            arr[i] = v
        return arr
    raise AssertionError(f"no values for {dtype}")  # pragma: no cover


@st.composite
def array_values(draw, dtype, shape, objects="mixed"):
    """A C-contiguous array of dtype and shape.  objects: "mixed" (any Python objects)
    or "ints" (Python ints, some beyond 64 bits) for object dtype."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    return _leaf_values(draw, dtype, math.prod(shape), objects).reshape(shape)


# --------------------------------------------------------------------------------------
# shapes
# --------------------------------------------------------------------------------------

MAX_SIZE = 48      # elements of data / updates / indices: the reference loops in Python


def _nz_prod(shape) -> int:
    return math.prod(d for d in shape if d) if shape else 1


@st.composite
def shapes(draw, min_dims=1, max_dims=5, max_side=4, max_size=MAX_SIZE, allow_zero=True):
    """Small shapes: rank min_dims..max_dims, sides 0..max_side (0 now and then),
    the product of the non-zero sides at most max_size."""
    rank = draw(st.integers(min_dims, max_dims))
    dims = []
    for _ in range(rank):
        hi = max(1, min(max_side, max_size // _nz_prod(dims)))
        if allow_zero and draw(st.integers(0, 15)) == 0:
            dims.append(0)
        else:
            dims.append(draw(st.integers(1, hi)))
    return tuple(dims)


# --------------------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------------------

#: how an array is laid out in memory
LAYOUTS = ("C", "F", "transposed", "reversed", "strided", "unaligned")


@dataclass(frozen=True)
class Layout:
    kind: str = "C"
    perm: tuple = ()
    steps: tuple = ()

    def __repr__(self):
        extra = {"transposed": f" perm={self.perm}", "strided": f" steps={self.steps}"}
        return f"<{self.kind}{extra.get(self.kind, '')}>"


@st.composite
def layouts(draw, ndim: int, dtype, kinds=LAYOUTS):
    """A way to lay out an array of ndim dimensions: C, Fortran, transposed (axes
    permuted), reversed (every stride negative), strided (steps of +-1..3 inside a larger
    buffer, so negative and gapped strides) or unaligned (offset by one byte inside a uint8
    buffer)."""
    dtype = np.dtype(dtype)
    if ndim == 0:
        return Layout("C")
    kind = draw(st.sampled_from(list(kinds)))
    if kind == "unaligned" and dtype.hasobject:
        kind = "strided"          # NumPy cannot view raw bytes as objects
    if kind == "transposed":
        return Layout(kind, perm=tuple(draw(st.permutations(range(ndim)))))
    if kind == "strided":
        steps = tuple(draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in range(ndim))
        return Layout(kind, steps=steps)
    return Layout(kind)


def _filler(dtype: np.dtype, n: int) -> np.ndarray:
    """Recognisable garbage for the gaps of strided buffers."""
    buf = np.empty(n, dtype=dtype)
    if dtype.hasobject:
        if dtype.names:
            for name in dtype.names:
                buf[name] = _filler(dtype.fields[name][0], n)
        else:
            for i in range(n):
                buf[i] = ("gap", i)
        return buf
    raw = buf.view(np.uint8)
    raw[...] = np.arange(raw.size, dtype=np.uint64).astype(np.uint8) ^ 0xA5
    return buf


@dataclass(frozen=True, repr=False)
class Recipe:
    """Logical values plus a layout; ``make()`` realises a fresh array."""

    values: np.ndarray
    layout: Layout = Layout()

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self):
        return self.values.shape

    def make(self) -> np.ndarray:
        return self.make_with_buffer()[0]

    def make_with_buffer(self):
        """(array, the buffer it lies in) -- the buffer is larger for strided layouts."""
        v = self.values
        kind = self.layout.kind if v.ndim else "C"
        if kind == "C":
            a = np.array(v, order="C", copy=True)
            return a, a
        if kind == "F":
            a = np.array(v, order="F", copy=True)
            return a, a
        if kind == "transposed":
            perm = self.layout.perm
            base = np.array(v.transpose(perm), order="C", copy=True)
            return base.transpose(np.argsort(perm)), base
        if kind == "reversed":
            flip = (slice(None, None, -1),) * v.ndim
            base = np.array(v[flip], order="C", copy=True)
            return base[flip], base
        if kind == "strided":
            steps = self.layout.steps
            buf = _filler(v.dtype, math.prod(n * abs(s) + 1 for n, s in zip(v.shape, steps)))
            buf = buf.reshape(tuple(n * abs(s) + 1 for n, s in zip(v.shape, steps)))
            view = self.view_into(buf)
            view[...] = v
            return view, buf
        if kind == "unaligned":
            raw = np.zeros(v.nbytes + v.dtype.itemsize + 1, dtype=np.uint8)
            a = raw[1:1 + v.nbytes].view(v.dtype).reshape(v.shape)
            a[...] = v
            return a, raw
        raise AssertionError(kind)  # pragma: no cover

    def _repr_pretty_(self, p, cycle):      # hypothesis prints falsifying examples with this
        p.text(repr(self))

    def view_into(self, buffer: np.ndarray) -> np.ndarray:
        """The view a strided layout takes of its buffer, taken of another buffer of the
        same shape (to tell the gaps from the elements)."""
        steps = self.layout.steps
        view = buffer[tuple(slice(1, None, abs(s)) for s in steps)]
        return view[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in steps)]

    def __repr__(self):
        dt = self.values.dtype
        spec = repr(dt.descr) if dt.names else f"ml_dtypes.{dt.name}" if ml_kind(dt) else repr(dt.str)
        note = "" if self.layout.kind == "C" else f"  # layout {self.layout!r}"
        return f"np.array({self.values.tolist()!r}, dtype={spec}).reshape({self.values.shape}){note}"


@st.composite
def recipes(draw, dtype, shape, objects="mixed", layout_kinds=LAYOUTS):
    values = draw(array_values(dtype, shape, objects))
    return Recipe(values, draw(layouts(len(shape), values.dtype, layout_kinds)))




# --------------------------------------------------------------------------------------
# comparing results bit for bit
# --------------------------------------------------------------------------------------

_LD = np.dtype(np.longdouble)
# x86 extended precision: 10 significant bytes, the rest of the 16 is padding whose
# contents nobody defines (an 80-bit store leaves it alone)
_LD_SIGNIFICANT = 10 if (np.finfo(np.longdouble).nmant == 63 and _LD.itemsize > 10) else _LD.itemsize


def _significant_rows(a: np.ndarray) -> np.ndarray:
    """The bytes that define each element's value, one row per element."""
    dt = a.dtype
    n = a.size
    a = np.ascontiguousarray(a)
    if (dt.kind == "f" and dt.itemsize == _LD.itemsize and dt.itemsize > 8) or \
            (dt.kind == "c" and dt.itemsize == 2 * _LD.itemsize and _LD.itemsize > 8):
        nat = a.astype(dt.newbyteorder("=")) if is_swapped(dt) else a
        per = dt.itemsize // _LD.itemsize                   # 1 real, 2 complex parts
        raw = nat.reshape(-1).view(np.uint8).reshape(n * per, _LD.itemsize)
        return raw[:, :_LD_SIGNIFICANT].reshape(n, per * _LD_SIGNIFICANT)
    return a.reshape(-1).view(np.uint8).reshape(n, dt.itemsize)


def _same_object_value(x, y) -> bool:
    if type(x) is not type(y):
        return False
    if isinstance(x, float) and x != x:
        return y != y
    return x == y


def _canonical_nans(a: np.ndarray) -> np.ndarray:
    """A copy with every NaN (of either sign, any payload) replaced by the same NaN."""
    a = np.array(a, copy=True)
    parts = (a.real, a.imag) if a.dtype.kind == "c" else (a,)
    for part in parts:
        part[np.isnan(part)] = np.nan
    return a


def _compare(actual, expected, objects, where, nans="bits"):
    dt = actual.dtype
    if dt.names:
        for name in dt.names:
            _compare(actual[name], expected[name], objects, f"{where}[{name!r}]", nans)
        return
    if nans == "any" and (dt.kind in "fc" or is_user_float(dt)):
        actual, expected = _canonical_nans(actual), _canonical_nans(expected)
    if dt.kind == "O":
        for idx in np.ndindex(actual.shape):
            x, y = actual[idx], expected[idx]
            if objects == "is":
                assert x is y, f"{where}{list(idx)}: {x!r} (id {id(x)}) is not {y!r} (id {id(y)})"
            else:
                assert _same_object_value(x, y), f"{where}{list(idx)}: {x!r} != {y!r}"
        return
    ra, re_ = _significant_rows(actual), _significant_rows(expected)
    if not np.array_equal(ra, re_):
        bad = np.nonzero((ra != re_).any(axis=1))[0]
        idx = tuple(int(i) for i in np.unravel_index(bad[0], actual.shape))
        raise AssertionError(
            f"{where}: {bad.size} of {actual.size} elements differ bitwise; first at {list(idx)}: "
            f"actual {actual[idx]!r} (bytes {ra[bad[0]].tobytes().hex()}) vs expected "
            f"{expected[idx]!r} (bytes {re_[bad[0]].tobytes().hex()})")


def assert_identical(actual, expected, objects="is", where="result", nans="bits"):
    """Same type, dtype (byte order included), shape and bits.  Object elements: the
    very same objects (objects="is") or equal values of the same type ("eq").

    nans="any": where both hold a NaN, any NaN (sign, payload) will do.  For results of
    arithmetic only: which NaN NumPy's own ufunc.at returns when two NaNs meet depends on
    its code path (np.add.at(a, [0], u) keeps a's NaN, np.add.at(a, (0, 0), u) takes
    u's), so the reference cannot pin it down.  Everything else stays bit for bit:
    signed zeros, infinities, which elements are NaN."""
    assert isinstance(actual, np.ndarray), f"{where}: {type(actual).__name__} is not an ndarray"
    assert actual.dtype == expected.dtype and actual.dtype.str == expected.dtype.str, \
        f"{where}: dtype {actual.dtype!r} != {expected.dtype!r}"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    _compare(actual, expected, objects, where, nans)


# --------------------------------------------------------------------------------------
# a whole call
# --------------------------------------------------------------------------------------

#: how ``out=`` is given: not at all, a separate C-contiguous array, ``data`` itself (in
#: place), or a strided / transposed / Fortran array.  (``"readonly"``, a separate out that is
#: not writeable, is drawn by ``bad_calls`` only.)
OUT_MODES = ("none", "separate", "inplace", "strided")


@dataclass(frozen=True, repr=False)
class Call:
    """One call of ``func``, its arguments held as recipes (see ``calls``).

    ``args`` / ``kwargs`` give fresh arrays on every read; ``arguments()`` gives both at once
    (needed for the in-place form, where ``kwargs["out"]`` is ``args[0]``); ``run(fn)`` calls
    ``fn`` (default: the scatterops function) on fresh arrays and returns its result."""

    func: str
    data: Recipe
    indices: Recipe
    updates: Recipe
    axis: Any = None            # None for scatter_nd; int, NumPy int or integer array otherwise
    reduction: Any = "none"
    include_self: Any = True
    out_mode: str = "none"      # one of OUT_MODES, or "readonly"
    out: Optional[Recipe] = None  # initial contents and layout of a separate / strided out

    @property
    def canonical(self) -> str:
        """The reduction's canonical name ("sum" -> "add"); an unknown name as it is."""
        return CANONICAL.get(self.reduction, self.reduction) if isinstance(self.reduction, str) \
            else self.reduction

    @property
    def axis_value(self) -> Optional[int]:
        if self.axis is None:
            return None
        return int(np.asarray(self.axis).reshape(()))

    @property
    def nans(self) -> str:
        """How NaNs compare: bit for bit for assignment, "any" NaN for arithmetic (which
        NaN survives where two meet is not promised)."""
        return "bits" if self.canonical == "none" else "any"

    @property
    def object_compare(self) -> str:
        """"is" where the result must hold the very objects of data / updates (assignment);
        "eq" where a reduction may make new ones (ufunc.at on a Python scalar converts it)."""
        same_objects = self.updates.dtype == self.data.dtype
        return "is" if same_objects and self.canonical == "none" else "eq"

    def options(self) -> dict:
        """The keyword arguments other than ``out``."""
        return {"reduction": self.reduction, "include_self": self.include_self}

    def prepare(self) -> "Prepared":
        """Fresh arrays for one call."""
        data = self.data.make()
        indices = self.indices.make()
        updates = self.updates.make()
        out = buf = None
        if self.out_mode == "inplace":
            out = data
        elif self.out_mode in ("separate", "strided", "readonly"):
            out, buf = self.out.make_with_buffer()
            if self.out_mode == "readonly":
                out.flags.writeable = False
        return Prepared(self, data, indices, updates, out, buf)

    def arguments(self) -> tuple:
        """(args, kwargs) of fresh arrays, ``kwargs["out"]`` being ``args[0]`` in place."""
        p = self.prepare()
        return p.positional(), p.keywords()

    @property
    def args(self) -> tuple:
        """Fresh ``(data, indices, updates)``, with ``axis`` after them but for scatter_nd."""
        return self.arguments()[0]

    @property
    def kwargs(self) -> dict:
        """``reduction``, ``include_self`` and, when the call has one, a fresh ``out``."""
        return self.arguments()[1]

    def run(self, fn: Optional[Callable] = None):
        """``fn(*args, **kwargs)`` on fresh arrays (default ``fn``: the scatterops function)."""
        return self.prepare().call(fn)

    def _repr_pretty_(self, p, cycle):      # hypothesis prints falsifying examples with this
        p.text(repr(self))

    def __repr__(self):
        axis = "" if self.func == "scatter_nd" else f"    axis={self.axis!r},\n"
        out = {"none": "None", "inplace": "data  # in place"}.get(
            self.out_mode, f"{self.out!r}  # {self.out_mode} out")
        return (f"{self.func}(\n    data={self.data!r},\n    indices={self.indices!r},\n"
                f"    updates={self.updates!r},\n{axis}    reduction={self.reduction!r}, "
                f"include_self={self.include_self!r},\n    out={out})")


@dataclass
class Prepared:
    """Freshly realised arrays of a Call, ready for one call."""

    case: Call
    data: np.ndarray
    indices: np.ndarray
    updates: np.ndarray
    out: Optional[np.ndarray]
    out_buffer: Optional[np.ndarray]

    def positional(self) -> tuple:
        if self.case.func == "scatter_nd":
            return (self.data, self.indices, self.updates)
        return (self.data, self.indices, self.updates, self.case.axis)

    def keywords(self) -> dict:
        kw = self.case.options()
        if self.case.out_mode != "none":
            kw["out"] = self.out
        return kw

    def call(self, fn=None):
        """Call fn, a function or a module holding one of the call's name (default: the
        scatterops function)."""
        if fn is None:
            import scatterops as fn
        if not callable(fn):
            fn = getattr(fn, self.case.func)
        return fn(*self.positional(), **self.keywords())


#: how index values are drawn: "any" (every valid value; sides are tiny, so duplicates and
#: negatives are common), "negative" (only negative values where the dtype is signed),
#: "duplicates" (every index tuple the same), "unique" (no two updates hit one element)
INDEX_MODES = ("any", "negative", "duplicates", "unique")


def _index_values(draw, dtype: np.dtype, shape, bounds, mode: str) -> np.ndarray:
    """Index values for bounds (one bound per column of the last axis when several)."""
    n = math.prod(shape)
    signed = dtype.kind == "i"
    cols = len(bounds)
    vals = []
    for i in range(n):
        s = bounds[i % cols]
        if mode == "duplicates" and i >= cols:
            v = vals[i % cols]                       # every index tuple the same
        elif mode == "negative" and signed:
            v = draw(st.integers(-s, -1))
        else:
            v = draw(st.integers(-s if signed else 0, s - 1))
        vals.append(v)
    return _as_index_array(vals, dtype, shape)


def _as_index_array(vals, dtype: np.dtype, shape) -> np.ndarray:
    native = dtype.newbyteorder("=")
    return np.array(vals, dtype=native).reshape(shape).astype(dtype)


def _distinct(draw, size: int, n: int, signed: bool) -> list:
    """n distinct positions on an axis of this size, each maybe written as a negative."""
    picked = draw(st.permutations(range(size)))[:n] if n else []
    return [p - size if signed and draw(st.booleans()) else p for p in picked]


def _unique_index_values(draw, dtype, func, S, ishape, a, k) -> np.ndarray:
    """Index values under which no two updates target one element (ishape already fits)."""
    signed = dtype.kind == "i"
    if func == "scatter_update":
        return _as_index_array(_distinct(draw, S[a], math.prod(ishape), signed), dtype, ishape)
    if func == "scatter_nd":
        n = math.prod(ishape[:-1])
        flat = draw(st.permutations(range(math.prod(S[:k]))))[:n] if n else []
        vals = []
        for f in flat:
            for j, p in enumerate(np.unravel_index(f, S[:k]) if k else ()):
                vals.append(int(p) - S[j] if signed and draw(st.booleans()) else int(p))
        return _as_index_array(vals, dtype, ishape)
    out = np.zeros(ishape, dtype=np.int64)           # scatter_elements: distinct along the axis
    moved = np.moveaxis(out, a, -1)
    for pos in np.ndindex(moved.shape[:-1]):
        moved[pos] = _distinct(draw, S[a], ishape[a], signed)
    return _as_index_array(out.reshape(-1).tolist(), dtype, ishape)


def _force_empty(shape: tuple) -> tuple:
    return (0,) + tuple(shape[1:]) if shape else (0,)


def _func_names(func) -> list:
    """FUNCS for None; else the names of a function, a name or a sequence of them."""
    if func is None:
        return list(FUNCS)
    items = [func] if isinstance(func, str) or callable(func) else list(func)
    names = [getattr(f, "__name__", f) for f in items]
    for name in names:
        if name not in FUNCS:
            raise ValueError(f"func must name one of {FUNCS}, got {name!r}")
    return names


@st.composite
def calls(draw, func=None, dtypes=ALL_DTYPES, reductions=REDUCTION_NAMES, max_dims=5, *,
          include_self=None, out_modes=("none",), layout_kinds=LAYOUTS, index_mode="any",
          broadcast=True, updates_casts=True, nonempty_indices=False, defined_only=True):
    """Valid calls of ``func`` (a name, a scatterops function, a sequence of them; None:
    all three), drawn as ``Call`` objects.

    dtypes: data dtypes to draw from (default: every dtype NumPy holds, both byte orders).
    reductions: reduction names, aliases included (default: all; a (reduction, dtype) pair
    NumPy has no loop for is left out unless defined_only=False, when such a call must raise
    TypeError).  max_dims: data's largest rank.  include_self: None draws both.
    out_modes: from OUT_MODES (default: no out=).  layout_kinds: from LAYOUTS, for every
    array.
    index_mode: from INDEX_MODES.  broadcast: updates may come as a scalar or with fewer /
    size-1 dimensions.  updates_casts: updates may have another dtype (the other byte order,
    or one that "same_kind" casting allows).  nonempty_indices: at least one index value.
    """
    names = _func_names(func)
    if index_mode not in INDEX_MODES:
        raise ValueError(f"index_mode must be one of {INDEX_MODES}, got {index_mode!r}")
    fname = draw(st.sampled_from(names))
    pairs = [(r, np.dtype(d)) for r in reductions for d in dtypes
             if not defined_only or reduction_is_defined(r, d)]
    if not pairs:
        raise ValueError(f"no dtype in {list(dtypes)} has a loop for any reduction of {list(reductions)}")
    reduction, dtype = draw(st.sampled_from(pairs))
    objects = "mixed" if CANONICAL[reduction] == "none" else "ints"
    inc = draw(st.booleans()) if include_self is None else include_self
    nz = not nonempty_indices
    unique = index_mode == "unique"

    S = draw(shapes(max_dims=max_dims, allow_zero=nz))
    r = len(S)
    axis = None
    a = k = None
    if fname == "scatter_update":
        ax = draw(st.integers(-r, r - 1))
        a = ax % r
        rest = S[:a] + S[a + 1:]
        ishape = draw(shapes(min_dims=0, max_dims=3, max_size=max(1, MAX_SIZE // _nz_prod(rest)),
                             allow_zero=nz))
        if S[a] == 0 and math.prod(ishape):
            ishape = _force_empty(ishape)
        if unique and math.prod(ishape) > S[a]:
            ishape = (S[a],)
        ushape = S[:a] + ishape + S[a + 1:]
        bounds = (S[a],)
        form = draw(st.sampled_from(["int", "numpy", "array0d", "array1"]))
        idt = draw(st.sampled_from(["i1", "i8", "u1", ">i4", "u8"])) if form != "int" else None
        if form == "int":
            axis = ax
        elif form == "numpy":
            axis = np.dtype(idt).type(ax) if ax >= 0 or np.dtype(idt).kind == "i" else np.int64(ax)
        else:
            dt = idt if ax >= 0 or np.dtype(idt).kind == "i" else "i8"
            axis = np.array(ax if form == "array0d" else [ax], dtype=dt)
    elif fname == "scatter_nd":
        k = draw(st.integers(1 if nonempty_indices else 0, r))
        batch = draw(shapes(min_dims=0, max_dims=2, max_size=max(1, MAX_SIZE // _nz_prod(S[k:])),
                            allow_zero=nz))
        if any(S[j] == 0 for j in range(k)) and math.prod(batch):
            batch = _force_empty(batch)
        if unique and math.prod(batch) > math.prod(S[:k]):
            batch = (math.prod(S[:k]),)
        ishape = batch + (k,)
        ushape = batch + S[k:]
        bounds = tuple(S[:k]) if k else (1,)
    else:
        ax = draw(st.integers(-r, r - 1))
        a = ax % r
        ishape = []
        for d in range(r):
            if d == a:
                continue
            lo = 1 if (S[d] and (nonempty_indices or draw(st.integers(0, 11)))) else 0
            ishape.append(draw(st.integers(lo, S[d])))
        cap = max(1, MAX_SIZE // _nz_prod(ishape))
        lo = 1 if (nonempty_indices or draw(st.integers(0, 11))) else 0
        if unique:                               # no longer than the axis it indexes
            hi = min(4, cap, S[a])
            ishape.insert(a, draw(st.integers(min(lo, hi), hi)))
        else:
            ishape.insert(a, draw(st.integers(lo, max(lo, min(4, cap)))))
        ishape = tuple(ishape)
        if S[a] == 0 and math.prod(ishape):
            ishape = _force_empty(ishape)
        ushape = ishape
        bounds = (S[a],)
        axis = ax if draw(st.booleans()) else np.int64(ax)

    idtype = draw(index_dtypes())
    if unique:
        ivalues = _unique_index_values(draw, idtype, fname, S, ishape, a, k)
    else:
        ivalues = _index_values(draw, idtype, ishape, bounds, index_mode)
    indices = Recipe(ivalues, draw(layouts(len(ishape), idtype, layout_kinds)))

    # updates: maybe broadcast from fewer / size-1 dimensions, maybe another dtype
    form = draw(st.sampled_from(["full", "full", "scalar", "suffix", "ones"])) if broadcast else "full"
    if form == "scalar":
        bshape = ()
    elif form == "suffix":
        bshape = ushape[draw(st.integers(0, len(ushape))):]
    elif form == "ones":
        bshape = tuple(1 if draw(st.booleans()) else n for n in ushape)
    else:
        bshape = ushape
    udtype = dtype
    if updates_casts:
        choice = draw(st.sampled_from(["same", "same", "same", "swapped", "other"]))
        if choice == "swapped" and ml_kind(dtype) is None:
            udtype = swapped(dtype)
        elif choice == "other":
            options = [d for d in ALL_DTYPES
                       if d != dtype and not d.hasobject and np.can_cast(d, dtype, "same_kind")
                       and (dtype.kind != "O" or d.kind in "biu")]
            if options:
                udtype = draw(st.sampled_from(options))
    uvalues = draw(array_values(udtype, bshape, objects))
    updates = Recipe(uvalues, draw(layouts(len(bshape), udtype, layout_kinds)))

    data = draw(recipes(dtype, S, objects, layout_kinds))
    out_mode = draw(st.sampled_from(list(out_modes)))
    out = None
    if out_mode == "separate":
        out = Recipe(draw(array_values(dtype, S, objects)), Layout("C"))
    elif out_mode == "strided":
        out = draw(recipes(dtype, S, objects, ("strided", "transposed", "F", "reversed")))
    return Call(fname, data, indices, updates, axis, reduction, inc, out_mode, out)


# --------------------------------------------------------------------------------------
# out of range indices
# --------------------------------------------------------------------------------------

def bad_values(dtype: np.dtype, size: int) -> list:
    """Values of an index dtype that are out of range for an axis of this size:
    just past either end, the dtype's extremes (int64 min, uint64 above 2**63, ...)."""
    info = np.iinfo(dtype)
    cands = {size, size + 1, -size - 1, info.max, info.min, info.max - 1}
    if dtype.kind == "u" and dtype.itemsize == 8:
        cands |= {2 ** 63, 2 ** 63 + 1, 2 ** 64 - 1}
    if dtype.kind == "i" and dtype.itemsize == 8:
        cands |= {-2 ** 63, -2 ** 63 + 1, 2 ** 63 - 1}
    return sorted(v for v in cands if info.min <= v <= info.max and not -size <= v < size)


@st.composite
def out_of_range_calls(draw, func=None, position=None, **kw):
    """(call, position in indices, bad value, axis it indexes, that axis's size): a valid call
    whose indices hold exactly one out-of-range value, at position ("first", "middle",
    "last" or anywhere).  Other keywords as for ``calls``."""
    kw.setdefault("out_modes", ("separate", "inplace", "strided"))
    call = draw(calls(func, nonempty_indices=True, **kw))
    ivals = call.indices.values
    n = ivals.size
    where = position or draw(st.sampled_from(["first", "middle", "last", "any"]))
    flat = {"first": 0, "middle": n // 2, "last": n - 1}.get(where)
    if flat is None:
        flat = draw(st.integers(0, n - 1))
    S = call.data.shape
    if call.func == "scatter_nd":
        axis = flat % ivals.shape[-1]
    else:
        axis = call.axis_value % len(S)
    size = S[axis]
    value = draw(st.sampled_from(bad_values(ivals.dtype, size)))
    bad = ivals.astype(ivals.dtype.newbyteorder("="))
    bad.reshape(-1)[flat] = value
    bad = bad.astype(ivals.dtype)
    call = replace(call, indices=Recipe(bad, call.indices.layout))
    pos = tuple(int(p) for p in np.unravel_index(flat, ivals.shape))
    return call, pos, value, axis, size


# --------------------------------------------------------------------------------------
# invalid calls
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BadCall:
    """An invalid call, the exception class it raises, the kind of defect (a key of
    BAD_KINDS) and words its message holds.  Unpacks as ``call, exc = bad``."""

    call: Call
    raises: type
    kind: str
    words: tuple = ()

    def __iter__(self):
        return iter((self.call, self.raises))


#: every kind of invalid call bad_calls draws, by the function it applies to
BAD_KINDS = {
    "axis": ("scatter_update", "scatter_elements"),          # AxisError
    "axis_type": ("scatter_update", "scatter_elements"),     # TypeError: a float or bool axis
    "data_0d": FUNCS,                                        # ValueError
    "updates_shape": FUNCS,                                  # ValueError: does not broadcast
    "indices_rank": ("scatter_nd", "scatter_elements"),      # ValueError: 0-d / other rank
    "indices_shape": ("scatter_nd", "scatter_elements"),     # ValueError: k > rank / too long
    "indices_dtype": FUNCS,                                  # TypeError: float, bool, complex
    "index_value": FUNCS,                                    # IndexError
    "reduction_name": FUNCS,                                 # ValueError
    "reduction_type": FUNCS,                                 # TypeError
    "reduction_dtype": FUNCS,                                # TypeError: no loop for the dtype
    "include_self": FUNCS,                                   # TypeError: not a bool
    "cast": FUNCS,                                           # TypeError: refused by same_kind
    "out_dtype": FUNCS,                                      # TypeError
    "out_shape": FUNCS,                                      # ValueError
    "out_readonly": FUNCS,                                   # ValueError
}

def _undefined_pairs(dtypes, reductions) -> list:
    return [(r, np.dtype(d)) for r in reductions for d in dtypes if not reduction_is_defined(r, d)]


@st.composite
def bad_calls(draw, func=None, dtypes=ALL_DTYPES, reductions=REDUCTION_NAMES, *, kinds=None,
              **kw):
    """Invalid calls of ``func`` (as for ``calls``), drawn as ``BadCall`` objects: the call,
    the exception class scatterops raises for it (numpy AxisError, ValueError, TypeError or
    IndexError), the kind of defect (a key of BAD_KINDS) and words its message holds.
    kinds: the kinds to draw from (default: all that apply to the function).  The call
    starts from a valid one drawn with the other arguments (see ``calls``); the defect
    makes it invalid whatever else it holds."""
    names = _func_names(func)
    fname = draw(st.sampled_from(names))
    undefined = _undefined_pairs(dtypes, reductions)
    wanted = [k for k, fs in BAD_KINDS.items() if fname in fs and (kinds is None or k in kinds)
              and (k != "reduction_dtype" or undefined)]
    if not wanted:
        raise ValueError(f"no kind of bad call in {kinds} applies to {fname}")
    kind = draw(st.sampled_from(wanted))
    if kind == "index_value":
        call, pos, value, axis, size = draw(out_of_range_calls(fname, dtypes=dtypes,
                                                               reductions=reductions, **kw))
        words = ("indices", "[" + ", ".join(map(str, pos)) + "]", str(value), f"axis {axis}",
                 f"size {size}")
        return BadCall(call, IndexError, kind, words)
    if kind == "reduction_dtype":
        reduction, dtype = draw(st.sampled_from(undefined))
        kw = dict(kw, updates_casts=False)
        call = draw(calls(fname, [dtype], [reduction], defined_only=False, **kw))
        return BadCall(call, TypeError, kind, (reduction, str(dtype)))
    # a bad index dtype shows on index values (empty indices of any dtype are fine)
    nonempty = kind == "indices_dtype" or kw.pop("nonempty_indices", False)
    call = draw(calls(fname, dtypes, reductions, nonempty_indices=nonempty, **kw))
    S = call.data.shape
    r = len(S)
    if kind == "axis":
        axis = draw(st.sampled_from([r, -r - 1, r + 7]))
        return BadCall(replace(call, axis=axis), AxisError, kind, ("axis",))
    if kind == "axis_type":
        axis = draw(st.sampled_from([0.0, 1.5, True, False]))
        return BadCall(replace(call, axis=axis), TypeError, kind, ("axis",))
    if kind == "data_0d":
        vals = call.data.values.reshape(-1)[:1].reshape(()) if call.data.values.size \
            else draw(array_values(call.data.dtype, ()))
        return BadCall(replace(call, data=Recipe(vals), out_mode="none", out=None), ValueError,
                       kind, ("data", "0-d"))
    if kind == "updates_shape":
        # more dimensions than the required shape has (at most rank(data) + rank(indices)):
        # no broadcasting can fix that
        rank = r + len(call.indices.shape) + 1
        vals = draw(array_values(call.updates.dtype, (2,) + (1,) * (rank - 1), "ints"))
        return BadCall(replace(call, updates=Recipe(vals)), ValueError, kind, ("updates",))
    if kind == "indices_rank":
        if call.func == "scatter_nd":
            shape = ()                                            # 0-d
        else:
            shape = (1,) * draw(st.sampled_from([r - 1, r + 1]))
        vals = np.zeros(shape, call.indices.dtype)
        scalar = Recipe(draw(array_values(call.data.dtype, (), "ints")))
        return BadCall(replace(call, indices=Recipe(vals), updates=scalar), ValueError, kind,
                       ("indices",))
    if kind == "indices_shape":
        idx_dtype = call.indices.dtype
        if call.func == "scatter_nd":                             # k > rank of data
            # at least one tuple: with none, nothing is addressed and k is not compared
            shape = (draw(st.integers(1, 2)), r + draw(st.integers(1, 2)))
        else:                                                     # longer than data off the axis
            a = call.axis_value % r
            others = [d for d in range(r) if d != a]
            if not others:                                        # rank 1: data of rank 2, axis 0
                data = Recipe(call.data.values.reshape(S + (1,)))
                call = replace(call, data=data, axis=0, out_mode="none", out=None)
                S, r, others = data.shape, r + 1, [1]
            d = draw(st.sampled_from(others))
            shape = tuple(S[j] + 1 if j == d else 1 for j in range(r))
        vals = np.zeros(shape, idx_dtype)
        return BadCall(replace(call, indices=Recipe(vals), updates=Recipe(
            draw(array_values(call.data.dtype, (), "ints")))), ValueError, kind, ("indices",))
    if kind == "indices_dtype":
        dt = np.dtype(draw(st.sampled_from(["f8", "f4", "?", "c16"])))
        vals = call.indices.values.astype(dt)
        return BadCall(replace(call, indices=Recipe(vals)), TypeError, kind, ("indices", str(dt)))
    if kind == "reduction_name":
        name = draw(st.sampled_from(["average", "Add", "none ", "", "sum_"]))
        return BadCall(replace(call, reduction=name), ValueError, kind, ("reduction", repr(name)))
    if kind == "reduction_type":
        value = draw(st.sampled_from([None, 1, b"add"]))
        return BadCall(replace(call, reduction=value), TypeError, kind, ("reduction",))
    if kind == "include_self":
        value = draw(st.sampled_from([1, 0, None, "yes"]))
        return BadCall(replace(call, include_self=value), TypeError, kind, ("include_self",))
    if kind == "cast":
        dt = call.data.dtype
        for cand in ("c16", "U3", "M8[s]", "S4", "O"):
            if not np.can_cast(np.dtype(cand), dt, "same_kind"):
                # non-empty (an empty updates has no value to cast and is accepted)
                shape = call.updates.shape if math.prod(call.updates.shape) else ()
                vals = draw(array_values(np.dtype(cand), shape, "ints"))
                return BadCall(replace(call, updates=Recipe(vals)), TypeError, kind,
                               ("updates", str(np.dtype(cand)), str(dt)))
        # object data takes anything: a bad reduction name instead
        return BadCall(replace(call, reduction="average"), ValueError, "reduction_name",
                       ("reduction",))
    if kind == "out_dtype":
        other = np.dtype("f8") if call.data.dtype != np.dtype("f8") else np.dtype("f4")
        vals = draw(array_values(other, S))
        return BadCall(replace(call, out=Recipe(vals), out_mode="separate"), TypeError, kind,
                       ("out",))
    if kind == "out_shape":
        vals = draw(array_values(call.data.dtype, S + (1,), "ints"))
        return BadCall(replace(call, out=Recipe(vals), out_mode="separate"), ValueError, kind,
                       ("out",))
    vals = draw(array_values(call.data.dtype, S, "ints"))                   # out_readonly
    return BadCall(replace(call, out=Recipe(vals), out_mode="readonly"), ValueError, kind, ("out",))

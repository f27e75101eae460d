"""Every hypothesis strategy of the suite, in one place, and the few helpers that
realise and compare what they draw.

What is drawn is a *recipe*, not an array: a ``Recipe`` holds the logical values
(C-contiguous) and the layout to present them in (C, Fortran, transposed,
strided with negative and >1 steps inside a larger buffer, unaligned).  Each
call realises fresh arrays from it, so the C-backed function and the reference
each get their own, identically laid out, inputs; that is what lets the
in-place form (``out=data``) be compared at all.

A ``Case`` is one whole valid call: function, data, indices, updates, axis,
reduction (canonical name or alias), include_self and an out mode (None / a
separate out / ``out=data`` / a strided out inside a larger buffer).  Sizes are
kept tiny on purpose: ``scatterops.reference`` loops in Python over every
update element.
"""
from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from hypothesis import strategies as st

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

FUNCS = ("scatter_update", "scatter_nd", "scatter_elements")

#: every accepted spelling of every reduction
REDUCTION_NAMES = ("none", "add", "sum", "sub", "mul", "prod", "multiply",
                   "max", "amax", "min", "amin", "mean")
CANONICAL = {"none": "none", "add": "add", "sum": "add", "sub": "sub", "mul": "mul",
             "prod": "mul", "multiply": "mul", "max": "max", "amax": "max",
             "min": "min", "amin": "min", "mean": "mean"}
UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
         "max": np.maximum, "min": np.minimum, "mean": np.add}


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

LAYOUTS = ("C", "F", "transposed", "strided", "unaligned")


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
    """A way to lay out an array of ndim dimensions: C, Fortran, transposed,
    strided (steps of +-1..3 inside a larger buffer, so negative and gapped strides)
    or unaligned (offset by one byte inside a uint8 buffer)."""
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
# a whole call
# --------------------------------------------------------------------------------------

OUT_MODES = ("none", "separate", "inplace", "strided")


@dataclass(frozen=True, repr=False)
class Case:
    """One valid call of ``func`` (see ``cases``)."""

    func: str
    data: Recipe
    indices: Recipe
    updates: Recipe
    axis: Any                   # None for scatter_nd; int, NumPy int or integer array otherwise
    reduction: str
    include_self: bool
    out_mode: str               # "none", "separate", "inplace" (out=data) or "strided"
    out: Optional[Recipe]       # initial contents and layout of a separate / strided out

    @property
    def canonical(self) -> str:
        return CANONICAL[self.reduction]

    @property
    def axis_value(self) -> Optional[int]:
        if self.axis is None:
            return None
        return int(np.asarray(self.axis).reshape(()))

    @property
    def nans(self) -> str:
        """How NaNs compare: bit for bit for assignment, "any" NaN for arithmetic
        (see assert_identical)."""
        return "bits" if self.canonical == "none" else "any"

    @property
    def object_compare(self) -> str:
        """"is" where the result must hold the very objects of data / updates (assignment);
        "eq" where a reduction may make new ones (ufunc.at on a Python scalar converts it)."""
        same_objects = self.updates.dtype == self.data.dtype
        return "is" if same_objects and self.canonical == "none" else "eq"

    def prepare(self) -> "Prepared":
        data = self.data.make()
        indices = self.indices.make()
        updates = self.updates.make()
        out = buf = None
        if self.out_mode == "inplace":
            out, buf = data, None
        elif self.out_mode in ("separate", "strided"):
            out, buf = self.out.make_with_buffer()
        return Prepared(self, data, indices, updates, out, buf)

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))

    def kwargs(self) -> dict:
        return {"reduction": self.reduction, "include_self": self.include_self}

    def __repr__(self):
        axis = "" if self.func == "scatter_nd" else f"    axis={self.axis!r},\n"
        out = {"none": "None", "inplace": "data  # in place"}.get(
            self.out_mode, f"{self.out!r}  # {self.out_mode} out")
        return (f"{self.func}(\n    data={self.data!r},\n    indices={self.indices!r},\n"
                f"    updates={self.updates!r},\n{axis}    reduction={self.reduction!r}, "
                f"include_self={self.include_self!r},\n    out={out})")


@dataclass
class Prepared:
    """Freshly realised arrays of a Case, ready for one call."""

    case: Case
    data: np.ndarray
    indices: np.ndarray
    updates: np.ndarray
    out: Optional[np.ndarray]
    out_buffer: Optional[np.ndarray]

    def positional(self) -> tuple:
        if self.case.func == "scatter_nd":
            return (self.data, self.indices, self.updates)
        return (self.data, self.indices, self.updates, self.case.axis)

    def call(self, module):
        fn = getattr(module, self.case.func)
        return fn(*self.positional(), out=self.out, **self.case.kwargs())


def _index_values(draw, dtype: np.dtype, shape, bounds, mode: str) -> np.ndarray:
    """Index values for bounds (one bound per column of the last axis when several):
    duplicates are common since sides are tiny; mode "negative" draws only negative
    values (where the dtype is signed), "duplicates" repeats one value."""
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
    native = dtype.newbyteorder("=")
    arr = np.array(vals, dtype=native).reshape(shape)
    return arr.astype(dtype)


def _force_empty(shape: tuple) -> tuple:
    return (0,) + tuple(shape[1:]) if shape else (0,)


@st.composite
def cases(draw, funcs=FUNCS, dtypes=ALL_DTYPES, reductions=("none",), include_self=None,
          out_modes=OUT_MODES, layout_kinds=LAYOUTS, index_mode="any", broadcast=True,
          updates_casts=True, nonempty_indices=False, defined_only=False):
    """A whole valid call.

    funcs / dtypes / reductions / out_modes: what to draw from.  index_mode: "any",
    "negative" or "duplicates".  broadcast: updates may come as a scalar or with
    fewer / size-1 dimensions.  updates_casts: updates may have another dtype
    (the other byte order, or any dtype "same_kind" casting allows).
    nonempty_indices: at least one index value (for corrupting one).  defined_only:
    only (reduction, dtype) pairs NumPy defines.
    """
    func = draw(st.sampled_from(list(funcs)))
    pairs = [(r, d) for r in reductions for d in dtypes
             if not defined_only or reduction_is_defined(r, d)]
    reduction, dtype = draw(st.sampled_from(pairs))
    dtype = np.dtype(dtype)
    objects = "mixed" if CANONICAL[reduction] == "none" else "ints"
    inc = draw(st.booleans()) if include_self is None else include_self
    nz = not nonempty_indices

    S = draw(shapes(allow_zero=nz))
    r = len(S)
    axis = None
    if func == "scatter_update":
        ax = draw(st.integers(-r, r - 1))
        a = ax % r
        rest = S[:a] + S[a + 1:]
        ishape = draw(shapes(min_dims=0, max_dims=3, max_size=max(1, MAX_SIZE // _nz_prod(rest)),
                             allow_zero=nz))
        if S[a] == 0 and math.prod(ishape):
            ishape = _force_empty(ishape)
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
    elif func == "scatter_nd":
        k = draw(st.integers(1 if nonempty_indices else 0, r))
        batch = draw(shapes(min_dims=0, max_dims=2, max_size=max(1, MAX_SIZE // _nz_prod(S[k:])),
                            allow_zero=nz))
        if any(S[j] == 0 for j in range(k)) and math.prod(batch):
            batch = _force_empty(batch)
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
        ishape.insert(a, draw(st.integers(lo, max(lo, min(4, cap)))))
        ishape = tuple(ishape)
        if S[a] == 0 and math.prod(ishape):
            ishape = _force_empty(ishape)
        ushape = ishape
        bounds = (S[a],)
        axis = ax if draw(st.booleans()) else np.int64(ax)

    idtype = draw(index_dtypes())
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
        out = draw(recipes(dtype, S, objects, ("strided", "transposed", "F")))
    return Case(func, data, indices, updates, axis, reduction, inc, out_mode, out)


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
def out_of_range_cases(draw, position=None, **kw):
    """(case, flat position, bad value, axis named, size): a valid call whose indices hold
    exactly one out-of-range value, at position ("first", "middle", "last" or anywhere)."""
    kw.setdefault("out_modes", ("separate", "inplace", "strided"))
    case = draw(cases(nonempty_indices=True, **kw))
    ivals = case.indices.values
    n = ivals.size
    where = position or draw(st.sampled_from(["first", "middle", "last", "any"]))
    flat = {"first": 0, "middle": n // 2, "last": n - 1}.get(where)
    if flat is None:
        flat = draw(st.integers(0, n - 1))
    S = case.data.shape
    if case.func == "scatter_nd":
        axis = flat % ivals.shape[-1]
    else:
        axis = case.axis_value % len(S)
    size = S[axis]
    value = draw(st.sampled_from(bad_values(ivals.dtype, size)))
    bad = ivals.astype(ivals.dtype.newbyteorder("="))
    bad.reshape(-1)[flat] = value
    bad = bad.astype(ivals.dtype)
    case = Case(case.func, case.data, Recipe(bad, case.indices.layout), case.updates, case.axis,
                case.reduction, case.include_self, case.out_mode, case.out)
    pos = tuple(int(p) for p in np.unravel_index(flat, ivals.shape))
    return case, pos, value, axis, size


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

"""Coverage-guided fuzzing (atheris / libFuzzer) of scatterops' public surfaces:
scatter_update, scatter_nd and scatter_elements (mode= too) against
scatterops.reference, scatterops.at against NumPy's ufunc.at, the Dask routing
(_core.route) against a plain-Python routing, scatterops.dask against the
top-level functions, and the group reductions against scatterops.reference
(fuzz/fuzz_groups.py).  The last byte of an input chooses the surface (SURFACES).

The three functions.  Every input (a byte string) is decoded, deterministically,
into one call: the function, data's dtype (bool, every integer width,
float16/32/64, longdouble, complex, datetime64/timedelta64, object, bytes/str,
structured with and without objects or padding, byte-swapped), shapes (zero-size
dims, high ranks), layouts (transposed, strided, negative strides, unaligned,
broadcast stride-0 views, read-only), axis (in and out of range, numpy ints,
1-element arrays, bool, float), reduction names (valid, aliases, invalid,
non-str), include_self, mode= (left out, the four modes, invalid), out= (None,
data itself, fresh in several layouts, wrong shape / dtype, read-only, not an
ndarray, aliasing updates), index dtypes and values (out of range, negative,
int64 min/max, uint64 >= 2**63, non-integer dtypes, Python lists, a view of
out).  The same bytes are decoded twice, so the C-backed call and the reference
each get fresh, identical arguments.  Checked on every input:
  * both succeed and the results are identical: same dtype (byte order too),
    shape, bits -- except that where both hold a NaN produced by an arithmetic
    reduction (add/sub/mul/mean) the NaN's sign/payload may differ (README);
    object elements of equal type and value; longdouble on its 80 value bits;
    structured dtypes field by field (padding bytes carry no value);
    the result is ``out`` when out= was given, C-contiguous otherwise;
  * or both raise the same exception class, one of those docs/contract.md documents;
  * either way, ``data`` is unchanged unless it is ``out``, and after an
    exception ``out`` is unchanged.
A rare "large" case (1e4..1e5 updates, typed dtypes, random values, any mode=)
takes the threaded and GIL-released paths; its oracle is NumPy's ufunc.at via the
package's generic path (the reference is too slow there).

scatterops.at.  The ufunc (add, subtract, multiply, maximum, minimum; others
that have no C loop; unary ones), a's dtype, shape and layout (read-only too),
the index (an int, a slice, None, Ellipsis, an integer array of any rank and
index dtype or a list, a boolean mask, or a tuple mixing them; index arrays of
1024 values and more now and then) and b (left out, None, Python and NumPy
scalars, arrays of a[indices]'s shape or one that broadcasts to it, a wrong
shape, a list).  The oracle is NumPy's ufunc.at on identical arguments with b
broadcast to a[indices]'s shape first (NumPy 2.4's ufunc.at reads past b when
a 1-d a meets an N-d index array and b broadcasts; docs/contract.md), and a
ValueError for a read-only a.  The same result bits, or an exception of the
same class (IndexError, TypeError, ValueError), with a unchanged.

The Dask routing.  _core.route called as scatterops/dask.py calls it: 1 to 3
routed axes of any size, chunked evenly or not (zero-width chunks too), index
values of every integer dtype and layout, each mode, int32 / intp / no local
indices, scatter_elements' flat offsets, payloads of any dtype (objects too)
and strides.  Every count, local index and grouped payload byte (object:
the very object), or the same first bad value, as the plain-Python routing.

scatterops.dask (where dask is installed).  A small call of one of the three
functions on data, indices and updates each chunked at random or left NumPy,
computed, against the top-level function: the same bits or the same exception
class.

Anything else -- a different outcome, an undocumented exception, a crash or a
sanitizer report in the C core -- is a finding (an AssertionError, or
libFuzzer's crash report).  With $SCATTEROPS_FUZZ_RECORD set to a folder
(fuzz/run.sh sets it), a mismatch is written there and the run goes on.

Without atheris (the smoke run in tests/test_fuzz.py), the bytes are decoded as
atheris would decode them and nothing is instrumented.

Run: see fuzz/README.md.
"""
from __future__ import annotations

import bisect
import math
import os
import sys
import warnings

import numpy as np

try:
    import atheris
except ImportError:         # the smoke run (tests/test_fuzz.py) needs no atheris
    atheris = None


class _BytesProvider:
    """atheris' FuzzedDataProvider for the two calls the decoder makes, byte for byte
    (an integer from the end of the input, little end last; bytes from the front), so
    that an input decodes to the same call with and without atheris."""

    def __init__(self, buf: bytes):
        self.buf, self.lo, self.hi = bytes(buf), 0, len(buf)

    def ConsumeIntInRange(self, lo, hi):  # noqa: N802 -- atheris' name
        span, value, shift = hi - lo, 0, 0
        while shift < 64 and span >> shift and self.hi > self.lo:
            self.hi -= 1
            value = (value << 8) | self.buf[self.hi]
            shift += 8
        return lo + (value % (span + 1) if span != (1 << 64) - 1 else value)

    def ConsumeBytes(self, n):  # noqa: N802
        out = self.buf[self.lo:min(self.lo + n, self.hi)]
        self.lo += len(out)
        return out


_Provider = _BytesProvider if atheris is None else atheris.FuzzedDataProvider
if atheris is not None:
    with atheris.instrument_imports():
        import scatterops
        import scatterops.reference as reference
        from scatterops import _generic
        from scatterops import _reference_checks as _args
else:
    import scatterops
    import scatterops.reference as reference
    from scatterops import _generic
    from scatterops import _reference_checks as _args

import fuzz_groups          # noqa: E402 -- the group surface, after scatterops' import

try:                        # the Dask surface runs where dask is installed
    import dask.array as _da            # (imported first: only scatterops is instrumented)
    if atheris is not None:
        with atheris.instrument_imports():
            import scatterops.dask as so_dask
    else:
        import scatterops.dask as so_dask
except ImportError:
    so_dask = _da = None

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError  # type: ignore

warnings.simplefilter("ignore")

DOCUMENTED = (AxisError, ValueError, TypeError, IndexError, MemoryError)
FUNCS = ("scatter_update", "scatter_nd", "scatter_elements")
# what an input drives, from its last byte: the three functions, at, the routing, Dask, the
# group reductions
SURFACES = FUNCS + ("at", "at", "at", "route", "dask", "groups", "groups")
ARITH = {"add", "sum", "sub", "mul", "prod", "multiply", "mean"}

DATA_DTYPES = [np.dtype(x) for x in (
    "?", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "e", "f", "d", "g", "F", "D", "G",
    "M8[s]", "m8[ns]", "O", "S1", "S5", "U2", "U17", "V3",
    ">f4", ">i8", ">c16", ">f2", ">u2", ">m8[s]", "<f8",
)] + [
    np.dtype([("a", "<i2"), ("b", ">f4")]),
    np.dtype([("a", "u1"), ("b", "f8")], align=True),          # padding bytes
    np.dtype([("a", "O"), ("b", "f8")]),                       # structured holding objects
    np.dtype([("a", "f4", (2,)), ("b", "i1")]),                # subarray field
]
TYPED = [np.dtype(x) for x in "?bBhHiIlLqQefdFD"]
INDEX_DTYPES = [np.dtype(x) for x in (
    "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "p", "P", ">i8", ">u4", ">i2", "<i4",
    "?", "f8", "O", "U1", "M8[s]", "c8",
)]
REDUCTIONS = ["none", "add", "sum", "sub", "mul", "prod", "multiply", "max", "amax", "min",
              "amin", "mean"]
BAD_REDUCTIONS = ["avg", "", "ADD", "none ", "mean\x00", None, 3, b"add", "n\u00f6ne"]
MODES = ("raise", "wrap", "clip", "drop")
BAD_MODES = ("WRAP", "", "drop ", None, 1, b"clip", "wrap\x00")
U64 = 2 ** 64


# ---- decoding ------------------------------------------------------------------------

class Source:
    """The fuzzer's bytes as decisions (a FuzzedDataProvider with helpers)."""

    def __init__(self, buf: bytes):
        self.f = _Provider(buf)

    def int(self, lo, hi):
        return self.f.ConsumeIntInRange(lo, hi)

    def pick(self, seq):
        return seq[self.f.ConsumeIntInRange(0, len(seq) - 1)]

    def chance(self, percent):
        # an exhausted input reads as 0s: make that the common branch
        return self.f.ConsumeIntInRange(0, 99) >= 100 - percent

    def bytes(self, n):
        return self.f.ConsumeBytes(n)


def _special(dt: np.dtype):
    if dt.kind == "f" or dt.kind == "c":
        return [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 0.5, 3.0, 1e-40,
                65504.0, 7e4, 1e308]
    return [0, 1, -1, 2, 3]


def fill_values(src: Source, dt: np.dtype, n: int):
    """n values of dtype dt (a 1-d contiguous array)."""
    if n == 0:
        return np.empty(0, dt)
    mode = src.int(0, 3)
    if dt.hasobject:
        if dt.kind == "O":
            raw = src.bytes(n)
            vals = []
            for i in range(n):
                b = raw[i] if i < len(raw) else 0
                vals.append(b - 128 if b % 4 else (b - 128) / 4.0)  # ints and floats
            a = np.empty(n, dt)
            a[:] = vals
            return a
        a = np.zeros(n, dt)
        for name in dt.names:
            a[name] = fill_values(src, dt.fields[name][0], n)
        return a
    if mode == 0 and dt.kind in "iufcb":
        # small values: exact arithmetic, valid index values when used as indices
        raw = src.bytes(n)
        v = np.array([(raw[i] if i < len(raw) else 0) % 7 - 3 for i in range(n)])
        if dt.kind == "u":
            v = v % 4
        return (v != 0).astype(dt) if dt.kind == "b" else v.astype(dt)
    if mode == 1 and dt.kind in "fc":
        sp = _special(dt)
        raw = src.bytes(n)
        with np.errstate(all="ignore"):
            return np.array([sp[(raw[i] if i < len(raw) else 0) % len(sp)] for i in range(n)]
                            ).astype(dt)
    # raw bytes: every bit pattern (NaN payloads, subnormals, NaT, odd code points)
    nbytes = n * dt.itemsize
    raw = src.bytes(nbytes)
    raw = raw + bytes(nbytes - len(raw))
    a = np.frombuffer(raw, dtype=dt).copy()
    if dt.kind == "U":            # valid code points only (NumPy cannot print the others)
        a = (a.view(np.uint32) % 0x110000).view(dt)
    if dt.kind == "b":
        a = a.view(np.uint8) & 1
        a = a.view(np.bool_)
    return a


def make_array(src: Source, dt: np.dtype, shape: tuple, layout_choices=None):
    """A fresh array of dtype/shape in a layout the bytes choose."""
    n = math.prod(shape)
    layouts = layout_choices or ("c", "c", "c", "t", "f", "s", "n", "u", "b")
    layout = src.pick(layouts)
    if layout == "u" and (dt.hasobject or dt.itemsize == 1):
        layout = "s"
    if layout == "b" and dt.hasobject:
        layout = "c"
    if len(shape) > 6 and layout in ("s", "b"):
        layout = "c"
    r = len(shape)
    if layout == "t" and r >= 2:            # a transposed view of C-order memory
        perm = list(range(r))
        perm.reverse()
        base = fill_values(src, dt, n).reshape(tuple(shape[p] for p in perm))
        return base.transpose(np.argsort(perm))
    if layout == "f":                       # Fortran order
        return np.asfortranarray(fill_values(src, dt, n).reshape(shape))
    if layout == "s" and r >= 1:            # every dim with step 2
        big = tuple(2 * s for s in shape)
        base = fill_values(src, dt, math.prod(big)).reshape(big)
        return base[tuple(slice(None, None, 2) for _ in shape)]
    if layout == "n" and r >= 1:            # negative strides
        base = fill_values(src, dt, n).reshape(shape)
        return base[tuple(slice(None, None, -1) for _ in shape)]
    if layout == "u":                       # unaligned: one byte into a uint8 buffer
        flat = fill_values(src, dt, n)
        buf = np.zeros(n * dt.itemsize + 1, np.uint8)
        buf[1:] = flat.view(np.uint8)
        return buf[1:].view(dt).reshape(shape)
    if layout == "p" and not dt.hasobject:  # followed in memory by 64 bytes of 0xA5, so that a
        nbytes = n * dt.itemsize            # read past the end gives other values each time
        buf = np.full(nbytes + 64, 0xA5, np.uint8)
        buf[:nbytes] = fill_values(src, dt, n).view(np.uint8)
        return buf[:nbytes].view(dt).reshape(shape)
    if layout == "b" and r >= 1:            # broadcast view: stride 0 on some dims (read-only)
        small = tuple(1 if src.chance(50) else s for s in shape)
        base = fill_values(src, dt, math.prod(small)).reshape(small)
        return np.broadcast_to(base, shape)
    return fill_values(src, dt, n).reshape(shape)


def index_values(src: Source, n: int, sizes, dt: np.dtype, bad: bool = True):
    """n index values; sizes[i % len(sizes)] is the axis size entry i addresses.  Each is
    valid, out of range or extreme; only valid where the axis has any (bad=False)."""
    vals = []
    for i in range(n):
        s = sizes[i % len(sizes)] if sizes else 1
        mode = src.int(0, 15) if bad else 0
        if mode < 11 and s > 0:
            v = src.int(-s, s - 1)                        # valid
        elif mode < 13:
            v = src.pick([s, -s - 1, s + 1, -s - 2, 2 * s, -2 * s - 1])
        else:
            v = src.pick([-2 ** 63, 2 ** 63 - 1, 2 ** 63, U64 - 1, 2 ** 63 + 5, 2 ** 31,
                          -2 ** 31, 2 ** 32 + 1, 127, -128, 128, 255, 256, 32767, -32768,
                          65535, 65536])
        vals.append(v)
    if dt.kind in "iu":
        bits = 8 * dt.itemsize
        u = np.array([v % (1 << bits) for v in vals], dtype=np.uint64).astype(f"u{dt.itemsize}")
        if dt.kind == "i":
            u = u.view(f"i{dt.itemsize}")
        return u.astype(dt)
    if dt.kind == "O":
        return np.array(vals, dtype=object)
    if dt.kind == "b":
        return np.array([v % 2 for v in vals], dtype=dt)
    if dt.kind in "fc":
        return np.array([float(v) for v in vals]).astype(dt)
    if dt.kind == "U":
        return np.array([str(v % 10) for v in vals], dtype=dt)
    return np.array([(v + 2 ** 63) % U64 - 2 ** 63 for v in vals], dtype=np.int64).astype(dt)


def make_indices(src: Source, shape, sizes, dt, bad: bool = True):
    n = math.prod(shape)
    flat = index_values(src, n, sizes, dt, bad)
    layout = src.pick(("c", "c", "c", "t", "s", "n", "b", "list", "u"))
    if layout == "list":
        return flat.reshape(shape).tolist()
    if layout == "t" and len(shape) >= 2:
        return flat.reshape(shape[::-1]).T if len(shape) == 2 else \
            np.ascontiguousarray(flat.reshape(shape).transpose()).transpose()
    if layout == "s" and len(shape) >= 1:
        big = np.empty((2 * shape[0],) + tuple(shape[1:]), dt)
        big[::2] = flat.reshape(shape)
        return big[::2]
    if layout == "n" and len(shape) >= 1:
        return np.ascontiguousarray(flat.reshape(shape)[::-1])[::-1]
    if layout == "b" and len(shape) >= 1 and n:
        # an expanded index (graph message passing): the same values along the last dims
        keep = src.int(1, len(shape))
        small = flat.reshape(shape)[tuple(slice(None) if d < keep else slice(0, 1)
                                          for d in range(len(shape)))]
        return np.broadcast_to(small, shape)
    if layout == "u" and not dt.hasobject and dt.itemsize > 1:
        buf = np.zeros(n * dt.itemsize + 1, np.uint8)
        buf[1:] = flat.view(np.uint8)
        return buf[1:].view(dt).reshape(shape)
    return flat.reshape(shape)


def small_dim(src: Source):
    return src.pick((0, 1, 1, 2, 2, 2, 3, 3, 4, 9))


def required_shape(func, dshape, ishape, axis):
    """updates' shape for a valid call (None when the call cannot be valid)."""
    r = len(dshape)
    try:
        if func == "scatter_update":
            a = axis % r
            return dshape[:a] + ishape + dshape[a + 1:]
        if func == "scatter_nd":
            k = ishape[-1]
            return ishape[:-1] + dshape[k:]
        return ishape
    except Exception:
        return None


def build(buf: bytes):
    """Decode buf into (func, args, kwargs, data, out). Deterministic: two calls give
    equal, independent arguments."""
    src = Source(buf)
    func = src.pick(SURFACES)
    assert func in FUNCS, func
    if src.chance(3):
        return build_large(src, func)

    dt = src.pick(DATA_DTYPES)
    if src.chance(2):                                        # high rank
        r = src.int(0, 64)
        dshape = tuple(src.pick((1, 1, 1, 2)) if d < 8 else 1 for d in range(r))
    else:
        r = src.int(0, 4) if src.chance(5) else src.int(1, 4)
        dshape = tuple(small_dim(src) for _ in range(r))
    data = make_array(src, dt, dshape)
    if src.chance(10):
        data = data.copy()
        data.flags.writeable = False
    r = max(r, 1)

    # axis
    axis_mode = src.int(0, 19)
    axis_int = src.int(-r - 1, r)
    if axis_mode < 14:
        axis = src.int(-r, r - 1)
    elif axis_mode == 14:
        axis = axis_int
    elif axis_mode == 15:
        axis = np.int16(src.int(-r, r - 1))
    elif axis_mode == 16:
        adt = np.dtype(src.pick(("i8", "u1", "f8")))
        axis = np.array([src.int(-r, r - 1) % (256 if adt.kind == "u" else 1 << 62)], dtype=adt)
    else:
        axis = src.pick((True, 1.0, "0", None, np.array([0, 1]), np.array(0), 2 ** 70))
    ax_norm = axis_int if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) \
        else int(axis)

    # indices
    idt = src.pick(INDEX_DTYPES) if src.chance(35) else np.dtype(np.intp)
    if func == "scatter_update":
        q = src.pick((0, 1, 1, 1, 2, 2, 3)) if not src.chance(2) else src.int(0, 64)
        ishape = tuple(small_dim(src) if d < 6 else 1 for d in range(q))
        sizes = [dshape[ax_norm % len(dshape)]] if dshape and -r <= ax_norm < r else [3]
    elif func == "scatter_nd":
        q = src.pick((1, 1, 2, 2, 3)) if not src.chance(3) else src.int(0, 4)
        if src.chance(2):                                    # high rank (q - 1 + r - k > 64)
            q = src.int(0, 64)
        lead = tuple(small_dim(src) if d < 4 else 1 for d in range(max(q - 1, 0)))
        k = src.int(0, len(dshape)) if not src.chance(5) else src.int(0, len(dshape) + 2)
        ishape = (lead + (k,)) if q >= 1 else ()
        sizes = list(dshape[:k]) if k and len(dshape) >= k else [3]
    else:
        q = len(dshape) if not src.chance(5) else src.int(0, len(dshape) + 1)
        ishape = []
        a = ax_norm % len(dshape) if dshape else 0
        for d in range(q):
            lim = dshape[d] if d < len(dshape) else 3
            if d == a:
                ishape.append(small_dim(src))
            else:
                ishape.append(src.int(0, lim) if not src.chance(5) else lim + 1)
        ishape = tuple(ishape)
        sizes = [dshape[a]] if dshape else [3]
    if math.prod(max(s, 1) for s in ishape) > 512:
        ishape = tuple(min(s, 1) for s in ishape)
    indices = make_indices(src, ishape, sizes, idt)
    if src.chance(2):
        indices = src.pick(([], [[]], 0, -1, 1.5, "x", None, [[0, 1], [2]]))

    # updates
    req = required_shape(func, dshape, ishape, ax_norm) if dshape else None
    umode = src.int(0, 19)
    if req is None or umode == 17:
        ushape = tuple(small_dim(src) for _ in range(src.int(0, 3)))
    elif umode == 18:                                         # wrong shape
        ushape = req[:-1] + (req[-1] + 1,) if req else (2,)
    elif umode >= 14:                                         # broadcastable
        drop = src.int(0, len(req))
        ushape = tuple(1 if src.chance(50) else s for s in req[drop:])
    else:
        ushape = req
    if math.prod(max(s, 1) for s in ushape) > 4096 or len(ushape) > 64:
        ushape = ()
    udt = src.pick(DATA_DTYPES) if src.chance(20) else dt
    updates = make_array(src, udt, ushape)
    if src.chance(4) and not udt.hasobject and udt.names is None:
        updates = updates.tolist()
    elif src.chance(3):
        updates = src.pick((1, 2.5, True, 1j, "a", b"a", None, []))

    # reduction, include_self
    reduction = src.pick(BAD_REDUCTIONS) if src.chance(8) else src.pick(REDUCTIONS)
    include_self = src.pick((1, None, "yes")) if src.chance(4) else \
        src.pick((True, False, np.True_, np.False_))

    # out
    out_mode = src.pick(("none", "none", "none", "data", "data", "fresh", "fresh", "wrongshape",
                         "wrongdtype", "readonly", "list", "alias_upd", "alias_idx"))
    out = None
    if out_mode in ("data", "alias_upd", "alias_idx") and data.flags.writeable:
        out = data
    elif out_mode in ("fresh", "alias_upd", "alias_idx"):
        out = make_array(src, dt, dshape, ("c", "t", "f", "s", "n", "u"))
    elif out_mode == "wrongshape":
        out = np.zeros(dshape + (1,), dt)
    elif out_mode == "wrongdtype":
        out = np.zeros(dshape, np.float32 if dt != np.float32 else np.float64)
    elif out_mode == "readonly":
        out = np.zeros(dshape, dt)
        out.flags.writeable = False
    elif out_mode == "list":
        out = [0] * (dshape[0] if dshape else 1)
    if out is not None and isinstance(out, np.ndarray) and out.flags.writeable:
        if out_mode == "alias_upd" and req is not None and out.ndim:
            flat = out.reshape(-1) if out.flags.c_contiguous else None
            n = math.prod(req)
            if req == out.shape:
                updates = out if src.chance(50) else out[::-1]
            elif flat is not None and n <= flat.size and len(req) <= 64:
                updates = flat[:n].reshape(req)          # (NumPy holds at most 64 dims)
        elif out_mode == "alias_idx" and dt.kind in "iu" and dt.isnative and \
                out.flags.c_contiguous and isinstance(indices, np.ndarray):
            n = indices.size
            flat = out.reshape(-1)
            if 0 < n <= flat.size:
                idx_view = flat[:n].reshape(indices.shape)
                idx_view[...] = indices.astype(dt) if indices.dtype.kind in "iu" else 0
                indices = idx_view
    if out is data and isinstance(indices, np.ndarray) and src.chance(10) and \
            isinstance(updates, np.ndarray) and updates.shape == data.shape:
        updates = data

    kw = dict(reduction=reduction, include_self=include_self, out=out)
    mode = draw_mode(src)
    if mode is not None:
        kw["mode"] = mode
    if func == "scatter_nd":
        args = (data, indices, updates)
        if src.chance(3):
            kw["axis"] = 0        # scatter_nd takes no axis: both must raise TypeError
    else:
        args = (data, indices, updates, axis)
    return func, args, kw, data, out


def draw_mode(src: Source):
    """mode= for a call, or None to leave it out (the default, "raise")."""
    if src.chance(3):
        return src.pick(BAD_MODES)
    if src.chance(35):
        return src.pick(MODES)
    return None


def build_large(src: Source, func: str):
    """A large, valid call on a typed dtype (threads, GIL release, dedup, prefetch)."""
    dt = src.pick(TYPED)
    seed = src.int(0, 2 ** 31)
    rng = np.random.default_rng(seed)
    red = src.pick(("none", "add", "sub", "mul", "max", "min", "mean"))
    if dt.kind == "b" and red in ("sub", "mean"):
        red = "add"
    include_self = src.chance(70)
    mode = src.pick(MODES) if src.chance(40) else "raise"
    reach = 1 if mode == "raise" else 3         # wrap, clip, drop: indices up to 3x the axis
    if func != "scatter_update" and src.chance(30):
        # element by element, 2**16 updates or more: into an out small enough for the
        # cache (the index check on a second thread while the walk runs, py/checked.c) or of
        # 4 MiB and more (split by index value, owners that check and count, walk/split.c)
        size = src.pick((5000, (4 << 20) // dt.itemsize + src.int(0, 999)))
        n = src.pick((70000, 150000))
        data = rng.integers(-3, 4, size=size).astype(dt)
        idx = rng.integers(-reach * size, reach * size,
                           size=(n, 1) if func == "scatter_nd" else n)
        upd = rng.integers(-3, 4, size=n).astype(dt)
        if dt.kind == "b":
            upd, data = upd != 0, data != 0
        out = data if src.chance(30) else None
        kw = dict(reduction=red, include_self=include_self, out=out, mode=mode)
        args = (data, idx, upd) if func == "scatter_nd" else (data, idx, upd, 0)
        return func, args, kw, data, "large"
    rows = src.pick((2, 3, 64, 1000, 5000))
    cols = src.pick((1, 2, 8, 64, 300, 600))     # 600: rows long enough to split by threads
    n = src.pick((1, 100, 2000, 40000))
    n = max(1, min(n, 200000 // max(rows, cols)))       # at most 2e5 updates
    data = (rng.integers(-3, 4, size=(rows, cols))).astype(dt)
    if src.chance(30):
        data = np.ascontiguousarray(data.T).T               # F-order data
    if func == "scatter_update":
        axis = src.pick((0, 0, 1, -1))
        a = axis % 2
        idx = rng.integers(-reach * data.shape[a], reach * data.shape[a], size=n)
        ushape = data.shape[:a] + idx.shape + data.shape[a + 1:]
    elif func == "scatter_nd":
        axis = None
        k = src.int(1, 2)
        idx = np.stack([rng.integers(-reach * data.shape[j], reach * data.shape[j], size=n)
                        for j in range(k)], axis=-1)
        ushape = idx.shape[:-1] + data.shape[k:]
    else:
        axis = src.pick((0, 1))
        other = 1 - axis
        m = data.shape[other]
        if src.chance(50):                                   # expanded index (graph scatter)
            idx = np.broadcast_to(rng.integers(0, data.shape[axis], size=(n, 1)), (n, m)) \
                if axis == 0 else np.broadcast_to(rng.integers(0, data.shape[axis],
                                                               size=(1, n)), (m, n))
        else:
            shape = (n, m) if axis == 0 else (m, n)
            idx = rng.integers(-reach * data.shape[axis], reach * data.shape[axis], size=shape)
        ushape = idx.shape
    if math.prod(ushape) > 300000:
        ushape = ushape  # still valid; only slower
    upd = rng.integers(-3, 4, size=ushape).astype(dt)
    if dt.kind == "b":
        upd = upd != 0
        data = data != 0
    out = data if src.chance(30) else None
    kw = dict(reduction=red, include_self=include_self, out=out, mode=mode)
    args = (data, idx, upd) if func == "scatter_nd" else (data, idx, upd, axis)
    return func, args, kw, data, "large"


# ---- comparing -----------------------------------------------------------------------

def snapshot(a):
    """Something equal iff a still holds the same bits / the same objects."""
    if not isinstance(a, np.ndarray):
        return repr(a)
    dt = a.dtype
    if dt.names:
        return tuple(snapshot(a[name]) for name in dt.names)
    if dt.hasobject:
        return tuple(id(x) for x in a.reshape(-1))
    return (a.shape, np.ascontiguousarray(a).tobytes())


def _bytes_per_element(a, width=None):
    c = np.ascontiguousarray(a)
    isz = c.dtype.itemsize
    b = c.view(np.uint8) if c.size else np.empty(0, np.uint8)
    b = b.reshape(-1, isz) if isz else np.empty((c.size, 0), np.uint8)
    return b if width is None else b[:, :width]


def _same_object_value(x, y):
    """Two elements of object arrays hold the same value: same type, NaN equal to NaN
    (real or complex parts, Python or NumPy scalars), the sign of zero kept, tuples
    (a structured element) item by item, ndarrays element by element."""
    if type(x) is not type(y):
        return False
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same_object_value(p, q) for p, q in zip(x, y))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and x.shape == y.shape and differ(x, y, "none") is None
    if isinstance(x, (float, np.floating)):
        x, y = float(x), float(y)
        return (math.isnan(x) and math.isnan(y)) or \
            (x == y and math.copysign(1, x) == math.copysign(1, y))
    if isinstance(x, (complex, np.complexfloating)):
        return _same_object_value(float(x.real), float(y.real)) and \
            _same_object_value(float(x.imag), float(y.imag))
    try:
        return bool(x == y)
    except (TypeError, ValueError):
        return False


def differ(a, b, reduction):
    """A description of the first difference of a (scatterops) from b (reference), or None."""
    dt = b.dtype
    if dt.names:
        for name in dt.names:
            d = differ(a[name], b[name], reduction)
            if d:
                return f"field {name!r}: {d}"
        return None
    if dt.kind == "O":
        for i, (x, y) in enumerate(zip(a.reshape(-1), b.reshape(-1))):
            if not _same_object_value(x, y):
                return f"element {i}: {x!r} vs {y!r}"
        return None
    if dt.kind == "c":
        d = differ(a.real, b.real, reduction) or differ(a.imag, b.imag, reduction)
        return d
    width = None
    if dt.kind == "f" and dt.itemsize > 8 and np.finfo(dt).nmant == 63:
        width = 10                    # x87 extended: 80 value bits, the rest is padding
        if dt.byteorder == ">":
            ab = _bytes_per_element(a)[:, -10:]
            bb = _bytes_per_element(b)[:, -10:]
            width = -1
    if width != -1:
        ab = _bytes_per_element(a, width)
        bb = _bytes_per_element(b, width)
    neq = (ab != bb).any(axis=1) if ab.size else np.zeros(a.size, bool)
    if dt.kind == "f" and reduction in ARITH:
        both_nan = (np.isnan(a) & np.isnan(b)).reshape(-1)
        neq &= ~both_nan
    if neq.any():
        i = int(np.argmax(neq))
        return (f"element {i} (flat C order): {a.reshape(-1)[i]!r} vs {b.reshape(-1)[i]!r} "
                f"(bytes {ab[i].tobytes().hex()} vs {bb[i].tobytes().hex()})")
    return None


def run(module, buf):
    """(exception type or None, result, data-unchanged?, out-unchanged-after-error?, extra)."""
    func, args, kw, data, out = build(buf)
    out_given = kw.get("out")
    data_before = snapshot(data)
    out_before = snapshot(out_given) if out_given is not None else None
    try:
        res = getattr(module, func)(*args, **kw)
    except Exception as exc:  # noqa: BLE001 -- classified below
        problems = []
        if out_given is not data and snapshot(data) != data_before:
            problems.append("data changed by a call that raised")
        if out_given is not None and snapshot(out_given) != out_before:
            problems.append("out changed by a call that raised")
        return exc, None, problems, (func, args, kw)
    problems = []
    if out_given is not data and snapshot(data) != data_before:
        problems.append("data changed (it is not out)")
    if not isinstance(res, np.ndarray):
        problems.append(f"returned {type(res).__name__}")
    elif out_given is not None:
        if res is not out_given:
            problems.append("did not return out")
    elif not res.flags.c_contiguous:
        problems.append("result is not C-contiguous")
    return None, res, problems, (func, args, kw)


def _flat_targets(call, out):
    """The C-order flat position in out of every update element, in update order, from
    NumPy's own indexing (an oracle independent of the C core's plan)."""
    lin = np.arange(out.size, dtype=np.intp).reshape(out.shape)
    idx = call.indices
    if call.keep is not None:               # "drop": a dropped index reads position 0
        bounds = out.shape[:idx.shape[-1]] if call.func == "scatter_nd" else \
            out.shape[call.axis]
        idx = np.where((idx >= -np.asarray(bounds)) & (idx < np.asarray(bounds)), idx, 0)
    if call.func == "scatter_update":
        t = np.take(lin, idx, axis=call.axis)
    elif call.func == "scatter_nd":
        k = idx.shape[-1]
        t = lin[tuple(idx[..., j] for j in range(k))] if k else lin
        t = np.broadcast_to(t, call.updates.shape)
    else:
        sub = tuple(slice(None) if d == call.axis else slice(0, idx.shape[d])
                    for d in range(idx.ndim))
        t = np.take_along_axis(lin[sub], idx, axis=call.axis)
    return t.reshape(-1)


def _kept_updates(call):
    """mode="drop": which update elements (flat, C order) stay, from the reference's mask
    of the index positions that stay."""
    keep, shape = call.keep, call.updates.shape
    if call.func == "scatter_update":
        keep = keep.reshape((1,) * call.axis + keep.shape + (1,) * (len(shape) - call.axis -
                                                                 keep.ndim))
    elif call.func == "scatter_nd":
        keep = keep.reshape(keep.shape + (1,) * (len(shape) - keep.ndim))
    return np.broadcast_to(keep, shape).reshape(-1)


def _oracle_large(buf):
    func, args, kw, data, _ = build(buf)
    axis = None if func == "scatter_nd" else args[3]
    call = _args.check(func, args[0], args[1], args[2], axis, kw["reduction"],
                       kw["include_self"], kw["out"], kw["mode"])
    out = np.array(call.data, order="C", copy=True)
    if call.updates.size:
        ufunc = None if call.reduction == "none" else _args.UFUNCS[call.reduction]
        targets, updates = _flat_targets(call, out), call.updates.reshape(-1)
        if call.keep is not None:
            kept = _kept_updates(call)
            targets, updates = targets[kept], updates[kept]
        _generic.apply(out, targets, updates, ufunc, call.include_self,
                       call.reduction == "mean")
    return None, out, [], (func, args, kw)


_NOTED = set()


def _note(msg):
    """Not a failure, but worth a look: written once per kind to $SCATTEROPS_FUZZ_NOTES."""
    path = os.environ.get("SCATTEROPS_FUZZ_NOTES")
    key = msg.split(":")[0:2]
    key = tuple(key)
    if path and key not in _NOTED:
        _NOTED.add(key)
        with open(path, "a") as f:
            f.write(msg.replace("\n", " ") + "\n")


class _Lazy:
    def __init__(self, fn):
        self.fn = fn

    def __str__(self):
        return self.fn()


def describe(func, args, kw):
    def show(x):
        if isinstance(x, np.ndarray):
            try:
                values = x.tolist() if x.size <= 32 else "..."
            except Exception:  # noqa: BLE001
                values = np.ascontiguousarray(x).view(np.uint8).tobytes().hex() \
                    if not x.dtype.hasobject else "?"
            return (f"ndarray(dtype={x.dtype.descr if x.dtype.names else x.dtype.str!r}, "
                    f"shape={x.shape}, strides={x.strides}, writeable={x.flags.writeable}, "
                    f"values={values})")
        return repr(x)[:200]
    return f"{func}(" + ", ".join(show(a) for a in args) + ", " + \
        ", ".join(f"{k}={show(v)}" for k, v in kw.items()) + ")"


# ---- scatterops.at against NumPy's ufunc.at --------------------------------------------

# the ufuncs with a C reduction (most draws), others that run NumPy's own ufunc.at, and
# unary ones (b must be left out)
AT_UFUNCS = (np.add, np.add, np.add, np.subtract, np.multiply, np.maximum, np.maximum,
             np.minimum, np.fmax, np.power, np.logaddexp, np.bitwise_or, np.true_divide,
             np.negative, np.invert)
AT_DTYPES = [np.dtype(x) for x in ("g", ">f8", ">i4", "O", "m8[s]", "G", "V3")]
AT_INDEX_DTYPES = [np.dtype(x) for x in ("b", "B", "h", "H", "i", "I", "q", "Q", ">i8", "<i2",
                                         "?", "f8")]
AT_ITEMS = ("int", "slice", "slice", "array", "array", "array", "list", "none", "ellipsis",
            "mask")
_B_NOT_GIVEN = type("_BNotGiven", (), {"__repr__": lambda self: "<b not given>"})()


def _at_slice_end(src, size):
    return src.pick((None, None, 0, 1, -1, 2, size, size - 1, -size, -size - 1, 2 * size + 3))


def at_item(src: Source, shape, axis, kind, adv):
    """One item of an index tuple at axis (a's axes from there): (item, axes it uses)."""
    size = shape[axis] if axis < len(shape) else 3
    if kind == "int":
        if size and not src.chance(10):
            v = src.int(-size, size - 1)
        else:
            v = src.pick((size, -size - 1, 2 ** 63 - 1, -2 ** 63))
        return (np.intp(v) if src.chance(20) else v), 1
    if kind == "slice":
        step = src.pick((None, None, 1, 2, -1, -2, 3, 0 if src.chance(5) else None))
        return slice(_at_slice_end(src, size), _at_slice_end(src, size), step), 1
    if kind == "none":
        return None, 0
    if kind == "ellipsis":
        return Ellipsis, 0
    if kind == "mask":
        m = src.int(1, max(1, len(shape) - axis))
        mshape = tuple(shape[axis:axis + m]) or (size,)
        if src.chance(5):
            mshape = mshape[:-1] + (mshape[-1] + 1,)            # a wrong shape
        raw = src.bytes(math.prod(mshape))
        vals = np.array([(raw[i] if i < len(raw) else 0) % 3 == 0
                         for i in range(math.prod(mshape))], dtype=bool)
        return vals.reshape(mshape), m
    # an integer array (or a list), of the shape every array of the index shares, or one
    # that broadcasts to it, or of 1024 and more values (past the small 1-d shortcut)
    ashape = adv
    if src.chance(20):
        ashape = tuple(1 if src.chance(50) else s for s in adv[src.int(0, len(adv)):])
    if src.chance(8):
        ashape = src.pick(((1024,), (1500,), (2, 700), (2100,)))
    dt = src.pick(AT_INDEX_DTYPES) if src.chance(15) else np.dtype(np.intp)
    # every value in range in most draws: one bad value of many makes the call an error
    arr = make_indices(src, ashape, [size], dt, bad=src.chance(30))
    if kind == "list" and isinstance(arr, np.ndarray):
        arr = arr.tolist()
    return arr, 1


def at_indices(src: Source, shape):
    """The index of an at call: a single item of any kind, or a tuple mixing them."""
    r = len(shape)
    adv = tuple(small_dim(src) for _ in range(src.pick((0, 1, 1, 1, 2, 2, 3))))
    form = src.int(0, 9)
    single = {0: "int", 1: "array", 2: "array", 3: "list", 4: "mask", 5: "slice"}
    if form in single:
        return at_item(src, shape, 0, single[form], adv)[0]
    if form == 6:
        return src.pick((Ellipsis, None, (), (Ellipsis, None)))
    items, axis = [], 0
    for _ in range(src.int(1, r + 1) if r else src.int(0, 2)):
        item, used = at_item(src, shape, axis, src.pick(AT_ITEMS), adv)
        items.append(item)
        axis += used
    return tuple(items)


def at_b(src: Source, ufunc, a, indices):
    """b for an at call: arrays of a[indices]'s shape (the common draw, and what an
    exhausted input gives) or one that broadcasts to it, a wrong shape, a list, Python and
    NumPy scalars, left out (most unary ufuncs), None."""
    try:
        target = a[indices].shape
    except Exception:  # noqa: BLE001 -- the call raises; b's shape does not matter
        target = (2,)
    if ufunc.nin == 1 and not src.chance(20):
        return _B_NOT_GIVEN
    mode = src.int(0, 15)
    if mode == 13:
        return _B_NOT_GIVEN
    if mode == 14:
        return None
    if mode == 10:
        return src.pick((0, 1, -1, 3, 300, -129, 2 ** 40, 2 ** 63, True, False))
    if mode == 11:
        return src.pick((0.5, -1.25, 1e-8, 3.0, math.nan, math.inf, -0.0, 1e300, 65504.0,
                         1 + 2 ** -11))
    if mode == 12:
        return src.pick((1j, 2.5 - 1j, "x", b"1", [[1], [2, 3]]))
    bdt = a.dtype if not src.chance(40) else src.pick(TYPED)
    if mode == 9:                                            # a NumPy scalar, or 0-d array
        v = fill_values(src, bdt, 1)
        return v[0] if not src.chance(30) else v.reshape(())
    if mode == 7:
        bshape = target[:-1] + (target[-1] + 1,) if target else (3,)
    elif mode in (4, 5, 6):                                  # broadcast: fewer dimensions
        bshape = target[src.int(1, len(target)):] if target else ()
    elif mode == 15:                                         # broadcast: some of size 1
        bshape = tuple(1 if src.chance(40) else s for s in target[src.int(0, len(target)):])
    else:
        bshape = target
    if math.prod(bshape) > 4096:
        bshape = ()
    b = make_array(src, bdt, bshape, ("p", "p", "c", "t", "s", "n", "b"))
    if mode == 8 and not bdt.hasobject:
        return b.tolist()
    return b


def build_at(buf: bytes):
    """Decode buf into an at call (ufunc, a, indices, b). Deterministic."""
    src = Source(buf)
    src.pick(SURFACES)
    ufunc = src.pick(AT_UFUNCS)
    dt = src.pick(AT_DTYPES) if src.chance(20) else src.pick(TYPED)
    r = src.int(0, 4) if src.chance(5) else src.pick((1, 1, 2, 3))
    shape = tuple(small_dim(src) for _ in range(r))
    if r and src.chance(10):
        shape = (src.pick((200, 1000, 1100)),) + shape[1:]
    a = make_array(src, dt, shape, ("c", "c", "c", "c", "t", "f", "s", "n", "u", "b"))
    if src.chance(3):
        a = a.copy()
        a.flags.writeable = False
    indices = at_indices(src, shape)
    b = at_b(src, ufunc, a, indices)
    return ufunc, a, indices, b


def numpy_at(ufunc, a, indices, b):
    """What at must do: NumPy's ufunc.at with b broadcast to a[indices]'s shape first
    (NumPy 2.4's ufunc.at reads past b when a 1-d a meets an N-d index array and b
    broadcasts); a read-only a is a ValueError for every index (docs/contract.md)."""
    if not a.flags.writeable:
        raise ValueError("a is read-only")
    if b is _B_NOT_GIVEN:
        ufunc.at(a, indices)
        return
    try:
        full = np.asarray(b)
        if full.dtype != object:
            b = np.broadcast_to(full, a[indices].shape)
    except Exception:  # noqa: BLE001 -- ufunc.at raises its own error for this b
        pass
    ufunc.at(a, indices, b)


def _error_class(exc):
    """The documented class an exception belongs to (NumPy raises subclasses of them)."""
    if exc is None:
        return None
    for cls in (IndexError, TypeError, ValueError, MemoryError):
        if isinstance(exc, cls):
            return cls.__name__
    return type(exc).__name__


def _show(x):
    if isinstance(x, np.ndarray):
        try:
            values = x.tolist() if x.size <= 32 else "..."
        except Exception:  # noqa: BLE001
            values = "?"
        return (f"ndarray(dtype={x.dtype.descr if x.dtype.names else x.dtype.str!r}, "
                f"shape={x.shape}, strides={x.strides}, writeable={x.flags.writeable}, "
                f"values={values})")
    if isinstance(x, tuple):
        return "(" + ", ".join(_show(i) for i in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return repr(x) if len(repr(x)) < 300 else f"<list of {len(x)}>"
    return repr(x)[:200]


def _form(x):
    """A short name of an argument's form, for the signature of a finding."""
    if isinstance(x, np.ndarray):
        return f"{x.dtype.kind}{x.ndim}d"
    if isinstance(x, tuple):
        return "(" + ",".join(_form(i) for i in x) + ")"
    if isinstance(x, slice):
        return ":"
    if x is Ellipsis:
        return "..."
    return type(x).__name__


def check_at(buf: bytes):
    ufunc, a, indices, b = build_at(buf)
    where = _Lazy(lambda: f"scatterops.at(np.{ufunc.__name__}, {_show(a)}, {_show(indices)}"
                          + ("" if b is _B_NOT_GIVEN else f", {_show(b)}") + ")")
    sig = f"at {ufunc.__name__} a {_form(a)} index {_form(indices)} b {_form(b)}"
    before = snapshot(a)
    exc_c = None
    try:
        if b is _B_NOT_GIVEN:
            scatterops.at(ufunc, a, indices)
        else:
            scatterops.at(ufunc, a, indices, b)
    except Exception as exc:  # noqa: BLE001 -- compared below
        exc_c = exc
    ufunc_r, a_r, indices_r, b_r = build_at(buf)
    before_r = snapshot(a_r)
    exc_r = None
    try:
        numpy_at(ufunc_r, a_r, indices_r, b_r)
    except Exception as exc:  # noqa: BLE001
        exc_r = exc
    _count("at", exc_c)
    if _error_class(exc_c) != _error_class(exc_r):
        c_loop = ufunc in (np.add, np.subtract, np.multiply, np.maximum, np.minimum)
        raise Finding(f"at: outcome differs: scatterops {exc_c!r}, NumPy {exc_r!r}\n{where}",
                      f"at {'C-loop' if c_loop else 'other'} ufunc, b {type(b).__name__}: "
                      f"outcome {_error_class(exc_c)} vs {_error_class(exc_r)}")
    if exc_c is not None:
        if snapshot(a) != before:
            also = " (NumPy's ufunc.at changes a too)" if snapshot(a_r) != before_r else ""
            raise Finding(f"at: a changed by a call that raised {exc_c!r}{also}\n{where}",
                          f"at {ufunc.__name__} a {a.dtype.kind}: a changed on "
                          f"{type(exc_c).__name__}{also}")
        return
    red = "max" if ufunc in (np.maximum, np.minimum, np.fmax) else "add"
    d = differ(a, a_r, red)
    if d:
        raise Finding(f"at: result differs from NumPy's ufunc.at (b broadcast): {d}\n{where}",
                      f"{sig}: result differs")


# ---- the Dask routing: _core.route against a plain-Python routing ----------------------

ROUTE_INDEX_DTYPES = [np.dtype(x) for x in "bBhHiIlLqQ"]
ROUTE_PAYLOAD_DTYPES = [np.dtype(x) for x in ("f8", "i1", "O", "c16", "V3", "f4", "u2")]
ROUTE_MAX_TARGETS = 1 << 16


def _chunks(src: Source, size):
    """The chunks of one axis, as Dask would give them: equal widths and a shorter last
    one, or any widths (zero-width ones too)."""
    if size == 0:
        return [0] * src.int(1, 2)
    if src.chance(60):
        w = src.int(1, size) if size < 64 else src.pick((1, 7, 64, 1000, size // 2 + 1, size))
        w = max(w, 1)
        return [w] * (size // w) + ([size % w] if size % w else [])
    cuts, left = [], size
    while left > 0:
        c = min(left, src.int(0, max(1, size // 2)))
        cuts.append(c)
        left -= c
        if len(cuts) > 64:
            cuts.append(left)
            left = 0
    return cuts


def build_route(buf: bytes):
    """Decode buf into the arguments of one _core.route call, as scatterops/dask.py makes
    them: (indices, sizes, starts, mode, local_dtype, payloads, elements)."""
    src = Source(buf)
    src.pick(SURFACES)
    k = src.pick((1, 1, 1, 2, 3))
    sizes, starts, ntargets = [], [], 1
    for _ in range(k):
        s = src.pick((0, 1, 2, 3, 5, 7, 10, 16, 100, 1000, 2 ** 20 + 3))
        widths = _chunks(src, s)
        if ntargets * len(widths) > ROUTE_MAX_TARGETS:
            widths = [s]
        ntargets *= len(widths)
        sizes.append(s)
        starts.append(np.concatenate(([0], np.cumsum(widths))).astype(np.intp))
    mode = src.int(0, 3)
    local_dtype = src.pick((np.dtype(np.int32), np.dtype(np.intp), None))
    elements = None
    if k == 1 and local_dtype is not None and src.chance(35):
        pre, naxis, post = src.pick((1, 1, 2, 3)), src.pick((0, 1, 2, 5, 40)), \
            src.pick((1, 1, 2, 4))
        n = pre * naxis * post
        elements = (np.array([src.int(0, 9) for _ in range(pre)], np.intp), naxis,
                    np.array([src.int(0, 9) for _ in range(post)], np.intp),
                    np.diff(starts[0]).astype(np.intp), src.int(1, 5))
    else:
        n = src.pick((0, 1, 2, 3, 7, 16, 100, 300, 2000))
    dt = src.pick(ROUTE_INDEX_DTYPES) if src.chance(50) else np.dtype(np.intp)
    flat = index_values(src, n * k, sizes, dt)      # entry i: component i % k
    layout = src.int(0, 3)
    if layout == 1 and n:                           # column-major memory
        rows = np.asfortranarray(flat.reshape(n, k))
    elif layout == 2:                               # every other row of a larger array
        big = np.zeros((2 * n, k), dt)
        big[::2] = flat.reshape(n, k)
        rows = big[::2]
    else:
        rows = flat.reshape(n, k)
    payloads = []
    for _ in range(src.pick((0, 1, 1, 2))):
        pre = elements[0].size if elements is not None and src.chance(50) else \
            src.pick((1, 1, 2, 3))
        post = src.pick((1, 1, 2, 4))
        pdt = src.pick(ROUTE_PAYLOAD_DTYPES)
        p = fill_values(src, pdt, pre * n * post).reshape(pre, n, post)
        if src.chance(30) and p.size and not pdt.hasobject:
            big = np.zeros((pre, n, 2 * post), pdt)
            big[:, :, ::2] = p
            p = big[:, :, ::2]
        payloads.append(p)
    return (rows, tuple(sizes), tuple(starts), mode, local_dtype, tuple(payloads), elements)


def _mode_position(v, unsigned, s, mode):
    """(0, position), (1, None) dropped, or (-1, None) raises: docs/contract.md's mode=."""
    if (v < s) if unsigned else (-s <= v < s):
        return 0, v + s if v < 0 else v
    if mode == 0:
        return -1, None
    if mode == 3:
        return 1, None
    if s == 0:
        return -1, None
    if mode == 1:
        return 0, v % s
    return 0, (0 if v < 0 else s - 1)


def route_oracle(rows, sizes, starts, mode, local_dtype, payloads, elements):
    """What _core.route must return, in plain Python."""
    unsigned = rows.dtype.kind == "u"
    values = rows.tolist()
    nblocks = [len(st) - 1 for st in starts]
    block_starts = [st[:-1].tolist() for st in starts]
    kept = []                                   # (target, row, local components)
    for i, row in enumerate(values):
        target, local, dropped = 0, [], False
        for j, v in enumerate(row):
            st, pos = _mode_position(v, unsigned, sizes[j], mode)
            if st < 0:
                return (i, j, v), None, None, None
            if st > 0:
                dropped = True
                continue
            b = bisect.bisect_right(block_starts[j], pos) - 1     # the last block at or before
            local.append(pos - int(starts[j][b]))
            target = target * nblocks[j] + b
        if not dropped:
            kept.append((target, i, local))
    counts = np.zeros(math.prod(nblocks), np.intp)
    for t, _, _ in kept:
        counts[t] += 1
    if local_dtype is None:
        return None, counts, None, None
    kept.sort(key=lambda e: e[0])               # stable: the chunk's order in each block
    order = np.array([i for _, i, _ in kept], np.intp)
    if elements is not None:
        pre_map, naxis, post_map, axis_len, block_post = elements
        npost = post_map.size
        local = [(int(pre_map[i // npost // naxis]) * int(axis_len[t]) + loc[0]) * block_post +
                 int(post_map[i % npost]) for t, i, loc in kept]
        local = np.array(local, local_dtype).reshape(len(kept))
    else:
        local = np.array([loc for _, _, loc in kept], local_dtype).reshape(len(kept),
                                                                           len(sizes))
    grouped = tuple(np.take(p, order, axis=1) for p in payloads)
    return None, counts, local, grouped


def check_route(buf: bytes):
    call = build_route(buf)
    rows, sizes, starts, mode, local_dtype, payloads, elements = call
    where = _Lazy(lambda: "_core.route(" + ", ".join(_show(x) for x in call) + ")")
    sig = (f"route k={rows.shape[1]} {rows.dtype.str} mode={mode} "
           f"{'elements' if elements is not None else 'rows'}")
    got = _core_route(*call)
    want = route_oracle(*call)
    _count("route", None if want[0] is None else IndexError())
    if (got[0] is None) != (want[0] is None) or (got[0] is not None and
                                                 tuple(got[0]) != tuple(want[0])):
        raise Finding(f"route: error {got[0]!r}, expected {want[0]!r}\n{where}",
                      f"{sig}: error differs")
    if want[0] is not None:
        return
    if got[1].dtype != np.intp or not np.array_equal(got[1], want[1]):
        raise Finding(f"route: counts {got[1]!r}, expected {want[1]!r}\n{where}",
                      f"{sig}: counts differ")
    if local_dtype is None:
        if got[2] is not None or got[3] is not None:
            raise Finding(f"route: counting only returned {got!r}\n{where}", f"{sig}: count only")
        return
    if got[2].dtype != want[2].dtype or got[2].shape != want[2].shape or \
            not np.array_equal(got[2], want[2]):
        raise Finding(f"route: local {got[2]!r}, expected {want[2]!r}\n{where}",
                      f"{sig}: local indices differ")
    for m, (g, w) in enumerate(zip(got[3], want[3])):
        same = g.dtype == w.dtype and g.shape == w.shape and (
            all(x is y for x, y in zip(g.reshape(-1), w.reshape(-1))) if w.dtype.hasobject
            else np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes())
        if not same:
            raise Finding(f"route: payload {m} grouped as {g!r}, expected {w!r}\n{where}",
                          f"{sig}: payload differs")


def _core_route(rows, sizes, starts, mode, local_dtype, payloads, elements):
    """_core.route as scatterops/dask.py (_locate) calls it."""
    return scatterops._core.route(rows, sizes, starts, mode, local_dtype, payloads, elements)


# ---- scatterops.dask against the top-level functions ----------------------------------

def build_dask(buf: bytes, lazy: bool):
    """Decode buf into a small call of one of the three functions, on Dask arrays when
    lazy (data, indices and updates each chunked or left NumPy) or on NumPy arrays."""
    src = Source(buf)
    src.pick(SURFACES)
    func = src.pick(FUNCS)
    dt = src.pick(TYPED) if not src.chance(10) else src.pick(
        [np.dtype(x) for x in ("g", "O", "M8[s]", ">f4")])
    r = src.int(1, 3)
    dshape = tuple(src.pick((0, 1, 2, 3, 4, 5, 7)) for _ in range(r))
    data = make_array(src, dt, dshape, ("c", "c", "t", "s"))
    axis = src.int(-r, r - 1)
    a = axis % r
    if func == "scatter_update":
        ishape = tuple(small_dim(src) for _ in range(src.pick((0, 1, 1, 2))))
        sizes, req = [dshape[a]], dshape[:a] + ishape + dshape[a + 1:]
    elif func == "scatter_nd":
        k = src.int(0, r)
        ishape = tuple(small_dim(src) for _ in range(src.pick((0, 1, 1, 2)))) + (k,)
        sizes, req = (list(dshape[:k]) or [1]), ishape[:-1] + dshape[k:]
    else:
        ishape = tuple(small_dim(src) if d == a else src.int(0, dshape[d]) for d in range(r))
        sizes, req = [dshape[a]], ishape
    idt = src.pick((np.dtype("i1"), np.dtype("u4"), np.dtype(">i8"))) if src.chance(20) \
        else np.dtype(np.intp)
    indices = make_indices(src, ishape, [max(s, 1) for s in sizes], idt)
    umode = src.int(0, 9)
    if umode == 0:
        updates = fill_values(src, dt, 1)[0]
    elif umode == 1:                                        # broadcast
        updates = make_array(src, dt, tuple(1 if src.chance(50) else s for s in req))
    elif umode == 2 and req:                                # a wrong shape
        updates = make_array(src, dt, req[:-1] + (req[-1] + 1,))
    else:
        updates = make_array(src, dt, req, ("c", "t", "s"))
    reduction = src.pick(REDUCTIONS)
    include_self = src.chance(50)
    mode = src.pick(MODES) if src.chance(50) else None
    kw = dict(reduction=reduction, include_self=include_self)
    if mode is not None:
        kw["mode"] = mode
    chunks = tuple(max(1, src.int(1, max(s, 1))) for s in dshape)
    if lazy:
        if src.chance(50):
            data = _da.from_array(data, chunks=chunks)
        else:
            kw["chunks"] = chunks
        if isinstance(indices, np.ndarray) and indices.ndim and src.chance(50):
            indices = _da.from_array(indices, chunks=tuple(max(1, src.int(1, max(s, 1)))
                                                           for s in indices.shape))
        if isinstance(updates, np.ndarray) and updates.ndim and src.chance(50):
            updates = _da.from_array(updates, chunks=tuple(max(1, src.int(1, max(s, 1)))
                                                           for s in updates.shape))
    args = (data, indices, updates) if func == "scatter_nd" else (data, indices, updates, axis)
    return func, args, kw


def check_dask(buf: bytes):
    func, args, kw = build_dask(buf, lazy=True)
    where = _Lazy(lambda: f"scatterops.dask.{func}(" + ", ".join(
        repr(x) if _da is not None and isinstance(x, _da.Array) else _show(x) for x in args)
        + ", " + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")")
    exc_d = res_d = None
    try:
        res_d = getattr(so_dask, func)(*args, **kw).compute(scheduler="sync")
    except Exception as exc:  # noqa: BLE001 -- compared below
        exc_d = exc
    func, args_r, kw_r = build_dask(buf, lazy=False)
    exc_t = res_t = None
    try:
        res_t = getattr(scatterops, func)(*args_r, **kw_r)
    except Exception as exc:  # noqa: BLE001
        exc_t = exc
    _count("dask", exc_t)
    indices = args_r[1]
    empty = np.size(indices) == 0 if not isinstance(indices, np.ndarray) else \
        0 in (indices.shape[:-1] if func == "scatter_nd" else indices.shape)
    sig = f"dask {func}{' (no update)' if empty else ''}"
    if type(exc_d) is not type(exc_t):
        raise Finding(f"dask: outcome differs: scatterops.dask {exc_d!r}, top level "
                      f"{exc_t!r}\n{where}", f"{sig}: outcome {type(exc_d).__name__} vs "
                      f"{type(exc_t).__name__}")
    if exc_t is None:
        d = None
        if res_d.dtype.str != res_t.dtype.str or res_d.shape != res_t.shape:
            d = f"dtype/shape {res_d.dtype.str}{res_d.shape} vs {res_t.dtype.str}{res_t.shape}"
        d = d or differ(res_d, res_t, kw["reduction"])
        if d:
            raise Finding(f"dask: result differs from the top-level function: {d}\n{where}",
                          f"{sig}: result differs")


# ---- the target --------------------------------------------------------------------------

class Finding(AssertionError):
    """A failed check; sig names its kind (the surface, the argument forms, what differs),
    so that a recording run keeps a few reproducers of each kind."""

    def __init__(self, msg, sig):
        super().__init__(msg)
        self.sig = sig


#: (surface, outcome) -> how many inputs ended so: the smoke test checks each surface ran
#: valid calls, not only errors
STATS: dict = {}


def _count(surface, exc):
    key = (surface, "valid" if exc is None else type(exc).__name__)
    STATS[key] = STATS.get(key, 0) + 1


_RECORDED: dict = {}


def _record(buf: bytes, exc: AssertionError) -> bool:
    """With $SCATTEROPS_FUZZ_RECORD set (a folder), a mismatch is written there instead of
    ending the run: the input as mismatch-<sha1> (the first 3 of each kind) and a line in
    mismatches.txt; the fuzzer goes on.  Crashes and sanitizer reports still end it."""
    folder = os.environ.get("SCATTEROPS_FUZZ_RECORD")
    if not folder:
        return False
    import hashlib
    sig = getattr(exc, "sig", str(exc).split("\n")[0][:80])
    n = _RECORDED[sig] = _RECORDED.get(sig, 0) + 1
    if n <= 3:
        name = "mismatch-" + hashlib.sha1(buf).hexdigest()
        with open(os.path.join(folder, name), "wb") as f:
            f.write(buf)
        with open(os.path.join(folder, "mismatches.txt"), "a") as f:
            f.write(f"{sig}\t{name}\t{str(exc)[:2000]!r}\n")
    return True


def TestOneInput(buf: bytes):
    surface = Source(buf).pick(SURFACES)
    try:
        if surface == "at":
            check_at(buf)
        elif surface == "route":
            check_route(buf)
        elif surface == "dask":
            if so_dask is not None:
                check_dask(buf)
        elif surface == "groups":
            fuzz_groups.check(sys.modules[__name__], buf)
        else:
            check_scatter(buf)
    except AssertionError as exc:
        if not _record(buf, exc):
            raise


def check_scatter(buf: bytes):
    src = Source(buf)
    src.pick(SURFACES)
    large = src.chance(3)
    exc_c, res_c, prob_c, call = run(scatterops, buf)
    if large:
        exc_r, res_r, prob_r, _ = _oracle_large(buf)
    else:
        exc_r, res_r, prob_r, _ = run(reference, buf)
    func, args, kw = call
    reduction = kw["reduction"]
    where = _Lazy(lambda: describe(func, args, kw))
    _count(func, exc_c)
    sig = f"{func} {reduction!r} mode={kw.get('mode')!r}{' large' if large else ''}"

    if exc_c is not None and not isinstance(exc_c, DOCUMENTED):
        raise Finding(f"undocumented exception from scatterops: {exc_c!r}\n{where}",
                      f"{sig}: undocumented {type(exc_c).__name__}") from exc_c
    if exc_r is not None and not isinstance(exc_r, DOCUMENTED):
        raise Finding(f"undocumented exception from the reference: {exc_r!r}\n{where}",
                      f"{sig}: reference raised {type(exc_r).__name__}") from exc_r
    if exc_c is not None and type(exc_c) not in DOCUMENTED:
        _note(f"{func}: {type(exc_c).__name__} (a subclass of a documented class): "
              f"{str(exc_c)[:200]}")
    if type(exc_c) is not type(exc_r):
        raise Finding(f"outcome differs: scatterops {exc_c!r}, reference {exc_r!r}\n{where}",
                      f"{sig}: outcome {type(exc_c).__name__} vs {type(exc_r).__name__}")
    if prob_c:
        raise Finding(f"scatterops: {prob_c} ({exc_c!r})\n{where}", f"{sig}: {prob_c}")
    if prob_r:
        raise Finding(f"reference: {prob_r} ({exc_r!r})\n{where}", f"{sig}: reference {prob_r}")
    if exc_c is None:
        if res_c.dtype.str != res_r.dtype.str or res_c.shape != res_r.shape:
            raise Finding(f"result dtype/shape {res_c.dtype.str}{res_c.shape} vs "
                          f"{res_r.dtype.str}{res_r.shape}\n{where}", f"{sig}: dtype/shape")
        d = differ(res_c, res_r, reduction)
        if d:
            raise Finding(f"result differs from the reference: {d}\n{where}",
                          f"{sig}: result differs")


def main():
    # the C core must be the instrumented build when the harness says so
    core = scatterops._core.__file__
    print(f"fuzz_scatter: scatterops from {scatterops.__file__}, _core {core}", file=sys.stderr)
    if os.environ.get("SCATTEROPS_FUZZ_THREADS"):
        scatterops.set_num_threads(int(os.environ["SCATTEROPS_FUZZ_THREADS"]))
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

"""Coverage-guided fuzzing (atheris / libFuzzer) of scatter_update, scatter_nd and
scatter_elements against scatterops.reference.

Every input (a byte string) is decoded, deterministically, into one call: the
function, data's dtype (bool, every integer width, float16/32/64, longdouble,
complex, datetime64/timedelta64, object, bytes/str, structured with and without
objects or padding, byte-swapped), shapes (zero-size dims, high ranks), layouts
(transposed, strided, negative strides, unaligned, broadcast stride-0 views,
read-only), axis (in and out of range, numpy ints, 1-element arrays, bool,
float), reduction names (valid, aliases, invalid, non-str), include_self,
out= (None, data itself, fresh in several layouts, wrong shape / dtype,
read-only, not an ndarray, aliasing updates), index dtypes and values (out of
range, negative, int64 min/max, uint64 >= 2**63, non-integer dtypes, Python
lists, a view of out).  The same bytes are decoded twice, so the C-backed call
and the reference each get fresh, identical arguments.

Checked on every input:
  * both succeed and the results are identical: same dtype (byte order too),
    shape, bits -- except that where both hold a NaN produced by an arithmetic
    reduction (add/sub/mul/mean) the NaN's sign/payload may differ (README);
    object elements of equal type and value; longdouble on its 80 value bits;
    structured dtypes field by field (padding bytes carry no value);
    the result is ``out`` when out= was given, C-contiguous otherwise;
  * or both raise the same exception class, one of those docs/contract.md documents;
  * either way, ``data`` is unchanged unless it is ``out``, and after an
    exception ``out`` is unchanged.
Anything else -- a different outcome, an undocumented exception, a crash or a
sanitizer report in the C core -- is a finding (an AssertionError, or
libFuzzer's crash report).

A rare "large" case (1e4..1e5 updates, typed dtypes, random values) takes the
threaded and GIL-released paths; its oracle is NumPy's ufunc.at via the
package's generic path (the reference is too slow there).

Run: see fuzz/README.md.
"""
from __future__ import annotations

import math
import os
import sys
import warnings

import atheris
import numpy as np

with atheris.instrument_imports():
    import scatterops
    import scatterops.reference as reference
    from scatterops import _generic
    from scatterops import _reference_checks as _args

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError  # type: ignore

warnings.simplefilter("ignore")

DOCUMENTED = (AxisError, ValueError, TypeError, IndexError, MemoryError)
FUNCS = ("scatter_update", "scatter_nd", "scatter_elements")
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
U64 = 2 ** 64


# ---- decoding ------------------------------------------------------------------------

class Source:
    """The fuzzer's bytes as decisions (a FuzzedDataProvider with helpers)."""

    def __init__(self, buf: bytes):
        self.f = atheris.FuzzedDataProvider(buf)

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
    if layout == "b" and r >= 1:            # broadcast view: stride 0 on some dims (read-only)
        small = tuple(1 if src.chance(50) else s for s in shape)
        base = fill_values(src, dt, math.prod(small)).reshape(small)
        return np.broadcast_to(base, shape)
    return fill_values(src, dt, n).reshape(shape)


def index_values(src: Source, n: int, sizes, dt: np.dtype):
    """n index values; sizes[i % len(sizes)] is the axis size entry i addresses."""
    vals = []
    for i in range(n):
        s = sizes[i % len(sizes)] if sizes else 1
        mode = src.int(0, 15)
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


def make_indices(src: Source, shape, sizes, dt):
    n = math.prod(shape)
    flat = index_values(src, n, sizes, dt)
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
    func = src.pick(FUNCS)
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
    if func == "scatter_nd":
        args = (data, indices, updates)
        if src.chance(3):
            kw["axis"] = 0        # scatter_nd takes no axis: both must raise TypeError
    else:
        args = (data, indices, updates, axis)
    return func, args, kw, data, out


def build_large(src: Source, func: str):
    """A large, valid call on a typed dtype (threads, GIL release, dedup, prefetch)."""
    dt = src.pick(TYPED)
    seed = src.int(0, 2 ** 31)
    rng = np.random.default_rng(seed)
    red = src.pick(("none", "add", "sub", "mul", "max", "min", "mean"))
    if dt.kind == "b" and red in ("sub", "mean"):
        red = "add"
    include_self = src.chance(70)
    if func != "scatter_update" and src.chance(30):
        # element by element, 2**16 updates or more: into an out small enough for the
        # cache (the index check on a second thread while the walk runs, py/checked.c) or of
        # 4 MiB and more (split by index value, owners that check and count, walk/split.c)
        size = src.pick((5000, (4 << 20) // dt.itemsize + src.int(0, 999)))
        n = src.pick((70000, 150000))
        data = rng.integers(-3, 4, size=size).astype(dt)
        idx = rng.integers(-size, size, size=(n, 1) if func == "scatter_nd" else n)
        upd = rng.integers(-3, 4, size=n).astype(dt)
        if dt.kind == "b":
            upd, data = upd != 0, data != 0
        out = data if src.chance(30) else None
        kw = dict(reduction=red, include_self=include_self, out=out)
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
        idx = rng.integers(-data.shape[a], data.shape[a], size=n)
        ushape = data.shape[:a] + idx.shape + data.shape[a + 1:]
    elif func == "scatter_nd":
        axis = None
        k = src.int(1, 2)
        idx = np.stack([rng.integers(-data.shape[j], data.shape[j], size=n) for j in range(k)],
                       axis=-1)
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
            idx = rng.integers(-data.shape[axis], data.shape[axis], size=shape)
        ushape = idx.shape
    if math.prod(ushape) > 300000:
        ushape = ushape  # still valid; only slower
    upd = rng.integers(-3, 4, size=ushape).astype(dt)
    if dt.kind == "b":
        upd = upd != 0
        data = data != 0
    out = data if src.chance(30) else None
    kw = dict(reduction=red, include_self=include_self, out=out)
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


def _oracle_large(buf):
    func, args, kw, data, _ = build(buf)
    axis = None if func == "scatter_nd" else args[3]
    call = _args.check(func, args[0], args[1], args[2], axis, kw["reduction"],
                       kw["include_self"], kw["out"])
    out = np.array(call.data, order="C", copy=True)
    if call.updates.size:
        ufunc = None if call.reduction == "none" else _args.UFUNCS[call.reduction]
        _generic.apply(out, _flat_targets(call, out), call.updates, ufunc, call.include_self,
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


def TestOneInput(buf: bytes):
    src = Source(buf)
    src.pick(FUNCS)
    large = src.chance(3)
    exc_c, res_c, prob_c, call = run(scatterops, buf)
    if large:
        exc_r, res_r, prob_r, _ = _oracle_large(buf)
    else:
        exc_r, res_r, prob_r, _ = run(reference, buf)
    func, args, kw = call
    reduction = kw["reduction"]
    where = _Lazy(lambda: describe(func, args, kw))

    if exc_c is not None and not isinstance(exc_c, DOCUMENTED):
        raise AssertionError(f"undocumented exception from scatterops: {exc_c!r}\n{where}") \
            from exc_c
    if exc_r is not None and not isinstance(exc_r, DOCUMENTED):
        raise AssertionError(f"undocumented exception from the reference: {exc_r!r}\n{where}") \
            from exc_r
    if exc_c is not None and type(exc_c) not in DOCUMENTED:
        _note(f"{func}: {type(exc_c).__name__} (a subclass of a documented class): "
              f"{str(exc_c)[:200]}")
    if type(exc_c) is not type(exc_r):
        raise AssertionError(f"outcome differs: scatterops {exc_c!r}, reference {exc_r!r}\n{where}")
    if prob_c:
        raise AssertionError(f"scatterops: {prob_c} ({exc_c!r})\n{where}")
    if prob_r:
        raise AssertionError(f"reference: {prob_r} ({exc_r!r})\n{where}")
    if exc_c is None:
        if res_c.dtype.str != res_r.dtype.str or res_c.shape != res_r.shape:
            raise AssertionError(f"result dtype/shape {res_c.dtype.str}{res_c.shape} vs "
                                 f"{res_r.dtype.str}{res_r.shape}\n{where}")
        d = differ(res_c, res_r, reduction)
        if d:
            raise AssertionError(f"result differs from the reference: {d}\n{where}")


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

"""The group reductions' surface of the fuzz target (fuzz/fuzz_scatter.py dispatches here
when an input's last byte picks "groups").

An input decodes, deterministically, into one call of group_reduce, segment_reduce,
group_softmax or segment_softmax: values of any dtype the contract's table names (and
some it refuses), shapes with zero-size and single dims, every layout make_array knows,
axis (in and out of range), groups of any integer dtype (and a float or bool array, a
list, a wrong length) with ids in range, -1, past size or extreme, size (left out, too
small, larger), func (every name and NumPy callable of the table, nan-variants, a bad
name), fill_value, ddof, dtype=, mode= and out= (None, of the result's shape and dtype,
wrong shape or dtype, read-only); indptr for the segment forms (valid, unsorted, not
covering values, negative, of a float dtype).  A rare "large" case (2e3..3e4 members,
1..3 threads) reaches the threaded and GIL-released loops.  The same bytes decode twice,
so the C-backed call and scatterops.reference each get fresh, identical arguments.

Checked on every input: both succeed with the same dtype, shape and bits (a NaN made by
an arithmetic function may differ from the reference's in sign and payload: the contract
promises no NaN's sign where two meet), the result is out when out= was given; or both
raise the same documented exception class (a MemoryError on either side, from a group
table too large for the machine, is compared no further).  Either way values and groups are unchanged,
and after an exception out is unchanged.
"""
from __future__ import annotations

import numpy as np

import scatterops
import scatterops.reference as reference

GROUP_FUNCS = ("group_reduce", "group_reduce", "group_reduce", "group_reduce",
               "segment_reduce", "segment_reduce", "group_softmax", "segment_softmax")
VALUE_DTYPES = [np.dtype(x) for x in (
    "?", "b", "B", "h", "i", "l", "Q", "e", "f", "d", "g", "F", "D",
    "M8[s]", "m8[ns]", "O", "S3", "U2", "V3", ">f8", ">i4", ">e",
)]
ID_DTYPES = [np.dtype(x) for x in ("b", "B", "h", "i", "l", "L", "q", "Q", "p", ">i8", ">u4")]
FUNC_NAMES = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin",
              "first", "last", "any", "all", "count", "logsumexp",
              "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
              "nanargmax", "nanargmin", "nanfirst", "nanlast", "nancount")
BAD_FUNCS = ("avg", "", "SUM", "sum ", None, 3, np.median, "softmax")
CALLABLES = (np.sum, np.max, np.nanmean, np.argmin, np.any, np.var)
#: functions that compute with their values' arithmetic (their NaN's sign is not promised)
ARITHMETIC = {"sum", "prod", "mean", "var", "std", "logsumexp", "nansum", "nanprod",
              "nanmean", "nanvar", "nanstd", "softmax", np.sum, np.nanmean, np.var}
FILLS = (0, -1, 1.5, np.nan, -np.inf, True, 2 ** 70, "x", None, np.float32(3), 7)
MODES = ("raise", "drop", "wrap", "DROP", None)


def _ids(fs, src, n, size, dt):
    """n group ids for groups of size `size` (>= 1 for drawing): mostly valid, some -1,
    some past the end or extreme."""
    vals = []
    for _ in range(n):
        kind = src.int(0, 19)
        if kind < 15:
            vals.append(src.int(0, max(size, 1) - 1))
        elif kind < 17:
            vals.append(-1)
        elif kind < 19:
            vals.append(src.pick([size, size + 1, -2]))
        else:
            # past the group table's limit (a ValueError without size=) or an IndexError;
            # an id of 2**31 would ask for a legitimate table of many GiB
            vals.append(src.pick([2 ** 63 - 1, -2 ** 63, 2 ** 62, 255, 2 ** 64 - 1]))
    bits = 8 * dt.itemsize
    u = np.array([v % (1 << bits) for v in vals], dtype=np.uint64).astype(f"u{dt.itemsize}")
    return (u.view(f"i{dt.itemsize}") if dt.kind == "i" else u).astype(dt)


def _indptr(src, n, nseg):
    """nseg + 1 offsets that cover n members in order, sometimes broken."""
    cuts = sorted(src.int(0, n) for _ in range(max(nseg - 1, 0)))
    ptr = [0] + cuts + [n] if nseg else [0]
    kind = src.int(0, 19)
    if kind == 16 and len(ptr) > 2:
        ptr[1], ptr[2] = ptr[2] + 1, ptr[1]              # decreasing
    elif kind == 17:
        ptr[-1] = n + src.pick([-1, 1])                  # does not cover values
    elif kind == 18:
        ptr[0] = -1
    arr = np.array(ptr, np.int64).astype(src.pick((np.intp, np.int32, np.uint16, np.int8)))
    if kind == 19:
        return arr.astype(np.float64)
    return arr.tolist() if src.chance(10) else arr


def build(fs, buf: bytes):
    """Decode buf into (public function name, positional args, keywords, large?)."""
    src = fs.Source(buf)
    src.pick(fs.SURFACES)
    name = src.pick(GROUP_FUNCS)
    large = src.chance(3)
    dt = src.pick(VALUE_DTYPES)
    if large:
        dt = src.pick([np.dtype(x) for x in ("f", "d", "l", "i", "?", "e")])
    r = src.int(1, 3)
    shape = [src.pick((0, 1, 2, 3, 5, 7)) for _ in range(r)]
    axis = src.int(-r, r - 1) if not src.chance(5) else src.pick((r, -r - 1, 0.0, None))
    a = axis % r if isinstance(axis, int) and -r <= axis < r else 0
    if large:
        shape = [1] * r
        shape[a] = src.int(2000, 30000)
        if r > 1:
            shape[(a + 1) % r] = src.int(1, 4)
    n = shape[a]
    values = fs.make_array(src, dt, tuple(shape))
    kw = {}
    segment = name.startswith("segment")
    size = src.int(0, 6) if not large else src.int(1, 3000)
    if segment:
        second = _indptr(src, max(n + (src.int(-1, 1) if src.chance(5) else 0), 0), size)
    else:
        idt = src.pick(ID_DTYPES)
        m = n + (src.pick((-1, 1)) if src.chance(4) else 0)
        groups = _ids(fs, src, max(m, 0), size, idt)
        if src.chance(8):
            groups = groups.astype(src.pick((np.float64, np.bool_)))
        elif src.chance(8):
            groups = groups.tolist()
        second = groups
        if src.chance(70):
            kw["size"] = size + src.pick((0, 0, 0, 1, 2)) if not src.chance(5) else -1
        if src.chance(40):
            kw["mode"] = src.pick(MODES)
    if not isinstance(axis, int) or axis != 0 or src.chance(30):
        kw["axis"] = axis
    if name.endswith("softmax"):
        if src.chance(50):
            kw["log"] = src.chance(50)
        func = "softmax"
    else:
        func = src.pick(FUNC_NAMES) if not src.chance(6) else src.pick(BAD_FUNCS + CALLABLES)
        kw["func"] = func
        if src.chance(15):
            kw["fill_value"] = src.pick(FILLS)
        if src.chance(15):
            kw["ddof"] = src.pick((1, 2, -1, 1.5))
        if src.chance(15):
            kw["dtype"] = src.pick((np.float32, np.float64, np.int64, np.complex128, np.int8,
                                    "f2", bool, "U3", None))
    out_kind = src.pick(("none",) * 6 + ("like", "like", "like", "wrong-shape", "wrong-dtype",
                                        "read-only"))
    return name, (values, second), kw, large, out_kind


def _call(module, name, args, kw):
    kw = dict(kw)
    func = kw.pop("func", None)
    f = getattr(module, name)
    return f(args[0], args[1], func, **kw) if func is not None else f(*args, **kw)


def _with_out(fs, module, buf, out_kind):
    """The call decoded from buf, on module, with out= as out_kind says (shaped after the
    reference's result): (exception, result, out, problem)."""
    name, args, kw, large, _ = build(fs, buf)
    out = None
    if out_kind != "none":
        try:
            shaped = _call(reference, *build(fs, buf)[:3])
        except Exception:  # noqa: BLE001 -- no result to shape out after: out stays None
            shaped = None
        if shaped is not None:
            out = np.full_like(shaped, 7 if shaped.dtype.kind in "biufc" else shaped.flat[0]) \
                if shaped.size else np.empty_like(shaped)
            if out_kind == "wrong-shape":
                out = np.zeros(shaped.shape + (2,), shaped.dtype)
            elif out_kind == "wrong-dtype":
                out = out.astype(np.complex64 if shaped.dtype.kind != "c" else np.int8)
            elif out_kind == "read-only":
                out.flags.writeable = False
            kw["out"] = out
    before = [fs.snapshot(x) for x in args]
    out_before = fs.snapshot(out) if out is not None else None
    exc = res = None
    try:
        res = _call(module, name, args, kw)
    except Exception as e:  # noqa: BLE001 -- compared by the caller
        exc = e
    problem = None
    if [fs.snapshot(x) for x in args] != before:
        problem = "values or groups/indptr changed"
    elif exc is not None and out is not None and fs.snapshot(out) != out_before:
        problem = "out written by a call that raised"
    elif exc is None and out is not None and res is not out:
        problem = "the result is not out"
    return exc, res, kw, problem


def check(fs, buf: bytes):
    """The group surface's check of one input (fs: the fuzz_scatter module)."""
    name, args, kw, large, out_kind = build(fs, buf)
    threads = 1 + buf[0] % 3 if large and buf else 1
    with scatterops.threads(threads):
        exc_c, res_c, kw_c, prob_c = _with_out(fs, scatterops, buf, out_kind)
    exc_r, res_r, _, prob_r = _with_out(fs, reference, buf, out_kind)
    fs._count("groups", exc_c)
    where = fs._Lazy(lambda: f"scatterops.{name}({fs._show(args[0])}, {fs._show(args[1])}, "
                     + ", ".join(f"{k}={fs._show(v)}" for k, v in kw_c.items())
                     + f") on {threads} thread(s)")
    func = kw.get("func", "softmax")
    sig = f"groups {name} {func!r}{' large' if large else ''}"
    for who, exc in (("scatterops", exc_c), ("reference", exc_r)):
        if exc is not None and not isinstance(exc, fs.DOCUMENTED):
            raise fs.Finding(f"undocumented exception from {who}: {exc!r}\n{where}",
                             f"{sig}: {who} raised {type(exc).__name__}") from exc
    if isinstance(exc_c, MemoryError) or isinstance(exc_r, MemoryError):
        return                  # a table too large for this machine: its memory decides
    if type(exc_c) is not type(exc_r):
        raise fs.Finding(f"outcome differs: scatterops {exc_c!r}, reference {exc_r!r}\n{where}",
                         f"{sig}: outcome {type(exc_c).__name__} vs {type(exc_r).__name__}")
    for who, prob in (("scatterops", prob_c), ("reference", prob_r)):
        if prob:
            raise fs.Finding(f"{who}: {prob}\n{where}", f"{sig}: {who} {prob}")
    if exc_c is None:
        if res_c.dtype.str != res_r.dtype.str or res_c.shape != res_r.shape:
            raise fs.Finding(f"result dtype/shape {res_c.dtype.str}{res_c.shape} vs "
                             f"{res_r.dtype.str}{res_r.shape}\n{where}", f"{sig}: dtype/shape")
        d = fs.differ(res_c, res_r, "add" if func in ARITHMETIC else "none")
        if d:
            raise fs.Finding(f"result differs from the reference: {d}\n{where}",
                             f"{sig}: result differs")

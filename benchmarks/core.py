"""The pieces the benchmark is made of: cases, implementations, result checks, floors and timing.

Nothing here asserts a time.  See ``run.py`` for the program and ``cases.py`` for what is timed.
"""
from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

Inputs = Dict[str, np.ndarray]
Call = Callable[[], object]

# ---------------------------------------------------------------------------------------------
# What a case is


@dataclass
class Impl:
    """One way one library does a case.

    ``build(x)`` gets the case's inputs and returns a zero-argument callable doing the whole operation
    (out of place: the copy of ``data`` included; in place: on ``x["data"]`` itself) and returning the
    result as something ``np.asarray`` takes.  Whatever the callable needs that is not the operation
    itself (an ONNX Runtime session, an OpenVINO compiled model, torch tensors sharing the NumPy
    inputs' memory, a materialised index) is made in ``build``, untimed.

    ``check`` says how its result is compared with scatterops' result:

    * ``"exact"``: ``np.array_equal`` (NaN equal to NaN) -- the peer defines the same result;
    * ``"close"``: a float reduction whose order the peer does not define: bit-equal, or else
      ``np.allclose(rtol, atol)`` and the cell is marked ``~``;
    * ``"anyof"``: ``reduction="none"`` with duplicate indices, whose winner the peer does not define:
      bit-equal, or else every element that several updates hit must hold one of the values written
      there and every other element must be equal (the cell is marked ``~``).

    ``ref``: set for a *bar* -- a different operation timed beside the case as the cost to beat
    (``np.add.at`` beside ``reduction="mean"``, which NumPy has no call for).  Its result is
    checked against ``ref(x)`` (scatterops doing the bar's own operation) instead of the case's
    result.
    """
    peer: str
    label: str
    build: Callable[[Inputs], Call]
    check: str = "exact"
    rtol: float = 1e-5
    atol: float = 1e-6
    threads: Optional[int] = None    # set when this variant does not use the common thread count
    ref: Optional[Callable[[Inputs], object]] = None   # a bar: the result it must give (see above)


@dataclass
class Target:
    """What a small-call row (``-k s``) should reach: ``NumPy time / scatterops time >= ratio``,
    NumPy being the implementation labelled ``bar``.  Reported as pass / short, never asserted."""
    form: str       # the call form, e.g. "arrays", "updates list", "out=data"
    n: int          # number of updates
    ratio: float
    bar: str        # the label of the NumPy Impl that is the bar


@dataclass
class Case:
    key: str                                    # short name, for the plot and -k
    name: str                                   # the row's title
    make: Callable[[], Inputs]                  # builds the inputs, once, just before the case runs
    impls: List[Impl]                           # the scatterops entry is the reference
    floor: Optional[Callable[[Inputs], Tuple[Call, str]]]  # the bandwidth floor: (callable, how
    # it is made); None: no floor (a small call, whose floor would only be NumPy's call overhead)
    inplace: bool = False                       # the callables modify x["data"] (out=data forms)
    dests: Optional[Callable[[Inputs], Iterator[Tuple[np.ndarray, np.ndarray]]]] = None
    # ^ for "anyof" checks: (updates, flat destination in data) in chunks covering every update
    extras: Dict[str, Callable[[Inputs], Call]] = field(default_factory=dict)
    # ^ more things timed beside the case (e.g. a bare C call), reported in the notes
    notes: List[str] = field(default_factory=list)
    na: Dict[str, str] = field(default_factory=dict)   # peer -> why it cannot do this case
    time_copy: bool = True      # out of place: also time data.copy() (reported in the notes)
    target: Optional[Target] = None   # set for the small-call rows, which have a table of their own
    # the performance-v2 cases (sweep.py) set out_size: each runs at 1 thread and at --threads, in
    # a table of its own, judged against the targets in run.py's ``v2_target``
    out_size: Optional[int] = None              # elements of the output (in cache: <= 10**6)
    not_slower_than: Optional[str] = None       # key of the case scatterops must not be slower
    # than at the same thread count (int32 indices against int64)
    tags: Tuple[str, ...] = ()                  # more names -k selects the case by ("v2")


# ---------------------------------------------------------------------------------------------
# Checking a result against the reference


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def same(a: np.ndarray, b) -> bool:
    return _equal(np.asarray(a), np.asarray(b))


def describe_diff(res: np.ndarray, ref: np.ndarray) -> str:
    if res.shape != ref.shape or res.dtype != ref.dtype:
        return f"result is {res.dtype}{res.shape}, scatterops' is {ref.dtype}{ref.shape}"
    ne = res != ref
    if ref.dtype.kind in "fc":
        ne &= ~(np.isnan(res) & np.isnan(ref))
    n = int(np.count_nonzero(ne))
    if ref.dtype.kind in "fciu":
        d = np.abs(res[ne].astype(np.float64) - ref[ne].astype(np.float64))
        big = float(d.max()) if d.size else 0.0
        return f"{n} of {ref.size} elements differ, max |diff| {big:.3g}"
    return f"{n} of {ref.size} elements differ"


def check_result(impl: Impl, res, ref: np.ndarray, data: np.ndarray,
                 dests: Optional[Callable[[], Iterator[Tuple[np.ndarray, np.ndarray]]]]
                 ) -> Tuple[str, str]:
    """-> (status, note): status "ok" (bit-equal), "~" (accepted under the impl's check) or
    "MISMATCH"."""
    res = np.asarray(res)
    if _equal(res, ref):
        return "ok", ""
    diff = describe_diff(res, ref)
    if res.shape == ref.shape and res.dtype == ref.dtype:
        if impl.check == "close":
            if np.allclose(res, ref, rtol=impl.rtol, atol=impl.atol, equal_nan=True):
                return "~", f"{diff} (allclose rtol={impl.rtol:g} atol={impl.atol:g}: the order of the sum is the peer's own)"
        elif impl.check == "anyof" and dests is not None:
            if _any_of(res, data, dests()):
                return "~", (f"{diff}, all at elements that several updates hit, each holding one of "
                             f"the values written there: the peer does not define which write wins")
    return "MISMATCH", diff


def _any_of(res: np.ndarray, data: np.ndarray,
            chunks: Iterable[Tuple[np.ndarray, np.ndarray]]) -> bool:
    rf = np.ascontiguousarray(res).reshape(-1)
    df = np.ascontiguousarray(data).reshape(-1)
    hit = np.zeros(rf.size, bool)
    ok = np.zeros(rf.size, bool)
    for u, d in chunks:
        hit[d] = True
        ok[d[rf[d] == u]] = True
    return bool(np.all(np.where(hit, ok, rf == df)))


# Flat destinations of every update element, in chunks (for the "anyof" check) -----------------

_CHUNK = 1 << 22


def dests_update(data_shape, idx: np.ndarray, upd: np.ndarray, axis: int):
    lin = np.arange(math.prod(data_shape), dtype=np.int64).reshape(data_shape)
    if axis > 0:
        step = max(1, _CHUNK // max(1, upd[0].size))
        for i in range(0, data_shape[0], step):
            yield (upd[i:i + step].reshape(-1),
                   np.take(lin[i:i + step], idx, axis=axis).reshape(-1))
    else:
        flat = idx.reshape(-1)
        u2 = upd.reshape(flat.size, -1)
        step = max(1, _CHUNK // max(1, u2.shape[1]))
        for j in range(0, flat.size, step):
            yield u2[j:j + step].reshape(-1), np.take(lin, flat[j:j + step], axis=0).reshape(-1)


def dests_elements(data_shape, idx: np.ndarray, upd: np.ndarray, axis: int):
    lin = np.arange(math.prod(data_shape), dtype=np.int64).reshape(data_shape)
    sub = lin[tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(idx.shape))]
    if axis == 0 or idx.ndim == 1:
        yield upd.reshape(-1), np.take_along_axis(sub, idx, axis=axis).reshape(-1)
        return
    step = max(1, _CHUNK // max(1, idx[0].size))
    for i in range(0, idx.shape[0], step):
        yield (upd[i:i + step].reshape(-1),
               np.take_along_axis(sub[i:i + step], idx[i:i + step], axis=axis).reshape(-1))


def dests_nd(data_shape, idx: np.ndarray, upd: np.ndarray):
    k = idx.shape[-1]
    tuples = idx.reshape(-1, k)
    inner = math.prod(data_shape[k:])
    base = np.ravel_multi_index(tuple(tuples.T), data_shape[:k]).astype(np.int64) * inner
    u2 = upd.reshape(tuples.shape[0], inner)
    step = max(1, _CHUNK // max(1, inner))
    ar = np.arange(inner, dtype=np.int64)
    for j in range(0, tuples.shape[0], step):
        yield u2[j:j + step].reshape(-1), (base[j:j + step, None] + ar).reshape(-1)


# ---------------------------------------------------------------------------------------------
# Bandwidth floors


def raw_u64(a: np.ndarray, nbytes: Optional[int] = None) -> np.ndarray:
    """The first ``nbytes`` (rounded down to 8) of contiguous ``a``'s memory, as uint64 (a view)."""
    if not a.flags.c_contiguous:
        raise ValueError("raw_u64 needs a C-contiguous array")
    b = a.reshape(-1).view(np.uint8)
    n = b.size if nbytes is None else min(int(nbytes), b.size)
    n -= n % 8
    return b[:n].view(np.uint64)


def floor_call(copy_from: Optional[np.ndarray] = None,
               reads: Iterable[Tuple[np.ndarray, Optional[int]]] = (),
               moves: Iterable[Tuple[np.ndarray, int]] = ()) -> Tuple[Call, str]:
    """A callable doing, with NumPy on one thread:

    * ``copy_from``: ``np.copyto(buf, data)`` into a preallocated, already-touched C-contiguous
      buffer of ``data``'s shape -- the copy every out-of-place scatter makes; for an F-ordered
      ``data`` (a transposed array) the bytes are copied in memory order (``data.T``), which moves
      as many bytes as a transposing copy done well;
    * ``reads``: for each (array, nbytes), ``np.count_nonzero`` over the first nbytes of the array's
      own memory viewed as uint64 (the fastest plain read NumPy has here, ~28 GB/s);
    * ``moves``: for each (array, nbytes), ``np.copyto`` of the array's first nbytes into another
      preallocated, touched buffer: nbytes read and nbytes written.

    Reads and moves under ``SMALL`` bytes are left out: they cost less than the NumPy call that
    would do them.  Returns the callable and a description of the bytes it moves."""
    parts: List[Call] = []
    desc: List[str] = []
    keep: List[np.ndarray] = []
    if copy_from is not None:
        src, how = copy_from, ""
        if not src.flags.c_contiguous and src.T.flags.c_contiguous:
            # a transposed (F-ordered) data: move its bytes in memory order -- the same traffic a
            # cache-blocked transposing copy makes; NumPy's own transposing copy is far slower
            src, how = src.T, " (in data's memory order: data is F-ordered)"
        elif not src.flags.c_contiguous:
            how = " (a strided copy: data is not contiguous)"
        buf = np.empty(src.shape, src.dtype)
        np.copyto(buf, src)
        keep.append(buf)
        parts.append(lambda b=buf, s=src: np.copyto(b, s))
        desc.append(f"copy {fmt_bytes(src.nbytes)}{how}")
    for a, n in reads:
        v = raw_u64(a, n)
        if v.nbytes < SMALL:
            continue
        parts.append(lambda v=v: np.count_nonzero(v))
        desc.append(f"read {fmt_bytes(v.nbytes)}")
    for a, n in moves:
        src = raw_u64(a, n)
        if src.nbytes < SMALL:
            continue
        dst = src.copy()
        keep.append(dst)
        parts.append(lambda d=dst, s=src: np.copyto(d, s))
        desc.append(f"read+write {fmt_bytes(src.nbytes)}")
    if len(parts) == 1:
        fn = parts[0]
    else:
        def fn(parts=tuple(parts), keep=keep):
            for p in parts:
                p()
    return fn, " + ".join(desc)


SMALL = 4096


def fmt_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


# ---------------------------------------------------------------------------------------------
# Timing


def calls_per_run(fn: Call, target: float) -> int:
    """How many calls make one timed run last about ``target`` seconds (1 for slow calls)."""
    t0 = time.perf_counter()
    fn()
    t = time.perf_counter() - t0
    if t >= target:
        return 1
    n = 1
    while True:          # measure a batch: one call's time is too coarse for microsecond calls
        n = min(n * 10, 1_000_000)
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= target / 10 or n >= 1_000_000:
            return max(1, min(1_000_000, math.ceil(n * target / max(t, 1e-9))))


def time_round_robin(entries: Dict[str, Call], repeat: int, target: float, pause: float,
                     budget: float) -> Tuple[Dict[str, List[float]], Dict[str, str]]:
    """Seconds per call of every entry, ``repeat`` runs each, interleaved (run 1 of every entry,
    then run 2 of every entry, ...) so that noise from other processes falls on all of them
    alike.  Before each run: ``gc.collect()`` and a short pause, so thread pools that spin after a
    call (OpenMP, ONNX Runtime, oneTBB) are idle again.  Once ``budget`` seconds have gone by, no
    entry gets more than 3 runs.  -> (samples, errors): an entry that raises is dropped and its
    error kept."""
    samples: Dict[str, List[float]] = {k: [] for k in entries}
    errors: Dict[str, str] = {}
    number: Dict[str, int] = {}
    for k, fn in entries.items():
        try:
            number[k] = calls_per_run(fn, target)
        except Exception as exc:
            errors[k] = f"{type(exc).__name__}: {exc}"
    start = time.perf_counter()
    for r in range(repeat):
        if r >= 3 and time.perf_counter() - start > budget:
            break
        for k, fn in entries.items():
            if k in errors:
                continue
            gc.collect()
            time.sleep(pause)
            n = number[k]
            try:
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                samples[k].append((time.perf_counter() - t0) / n)
            except Exception as exc:
                errors[k] = f"{type(exc).__name__}: {exc}"
                samples[k] = []
    return samples, errors


def fmt_time(t: Optional[float]) -> str:
    """Seconds as the tables print them: "0.185 us", "817 us", "1.18 ms", "2.14 s"."""
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.3g} us" if t < 1e-4 else f"{t * 1e6:.0f} us"
    if t < 1:
        return f"{t * 1e3:.3g} ms" if t < 0.1 else f"{t * 1e3:.0f} ms"
    return f"{t:.2f} s"


def median(xs: List[float]) -> Optional[float]:
    return statistics.median(xs) if xs else None

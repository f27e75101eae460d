"""The group reductions (``-k groups``): ``group_reduce`` / ``segment_reduce`` /
``group_softmax`` against what people use for them, each case at 1 CPU (the whole process pinned
to one CPU, so every library's threads share it) and at ``--threads``, the median of at least
``REPEAT`` (7) interleaved rounds.

The cases: sum float32 1e6 into 1e3 groups; sum float64 1e6 into 1e5; mean float64 1e6 into 1e5;
max float32 1e6 into 1e5; argmax float64 1e6 into 1e3; var float64 1e6 into 1e3; first float64
1e6 into 1e5; logsumexp float64 1e6 into 1e3; softmax of float32 scores (1e6 edges x 8 heads)
into 1e5 nodes; sum of 1e6 x 64 float32 rows into 1e5 groups (message passing); a segment sum of
float32 1e7 into 1e5 sorted segments (``indptr``).  ``--quick`` divides every size by 100.  Each
case's notes say what its draw holds (members per group, empty groups).

The peers, each with its own API: NumPy (``ufunc.at`` and the compositions: for mean and var
``np.add.at`` and ``np.bincount``, for logsumexp and softmax ``np.maximum.at``, ``np.exp``,
``np.add.at``, the division), numpy_groupies (both backends), numbagg, pandas' groupby, torch
(``scatter_reduce``, ``index_add_``, ``segment_reduce``; logsumexp and softmax as PyG composes
them, and ``torch_geometric.utils.softmax``) and JAX (``jax.ops.segment_*``).  Every result is
checked against scatterops': ``ok`` is bit-equal, ``~`` equal within the peer's own order
(compensated or float64 sums, one-pass variances, torch.exp).  A peer whose answer for an empty
group is not scatterops' default fill (``np.maximum.at`` from -inf, torch's 0, JAX's -inf) is
compared with scatterops given that answer as ``fill_value``: its label names the answer, and
``ok`` means every group is bit-equal under it.

Targets, per case and thread count (printed as met / not met, never asserted): best bit-equal peer
time / scatterops time >= 1.0, and best peer of any kind / scatterops >= 0.7; for the segment sum
also scatterops' 1-thread time / its ``--threads`` time >= 1.6; with ``--memory`` scatterops'
peak memory over the call below ``values.nbytes``.

``--memory`` (``modes.py``): for each implementation, in a fresh process (pinned to one CPU for a
1-CPU row), the rise of the resident-set high-water mark over one call, after a warm-up call:
what the call allocates and touches, its result included.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Dict, List, Optional, Tuple

import numpy as np

from benchmarks import core, peers, record
from benchmarks.core import Case, Impl

TAG = "groups"
SAME, ANY, SCALING = 1.0, 0.7, 1.6
REPEAT = 7                  # rounds at least: run.py gives the group cases no fewer
#: case key -> values.nbytes, the bar of its peak memory (set by group_cases)
VALUES_NBYTES: Dict[str, int] = {}


# ---------------------------------------------------------------------------------------------
# inputs

def _inputs(n: int, size: int, dtype, features: Optional[int] = None, seed: int = 0,
            sort: bool = False):
    rng = np.random.default_rng(seed)
    shape = (n,) if features is None else (n, features)
    values = rng.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False)
    groups = rng.integers(0, size, n)
    if sort:
        groups.sort()
    # run.py reads "data" (checked unchanged by every peer) and "updates" (counted)
    return {"data": values, "updates": values, "groups": groups, "size": np.array(size)}


def _indptr(x):
    return np.concatenate(([0], np.cumsum(np.bincount(x["groups"], minlength=int(x["size"])))))


def _draw(x) -> str:
    """What the case's draw holds: a note made from the data itself."""
    counts = np.bincount(x["groups"], minlength=int(x["size"]))
    empty = int(np.count_nonzero(counts == 0))
    return (f"the draw (seed 0): {x['groups'].size:,} ids into {counts.size:,} groups, "
            f"{counts.min()} to {counts.max()} members a group, {empty} "
            f"{'group' if empty == 1 else 'groups'} empty")


# ---------------------------------------------------------------------------------------------
# the implementations


@dataclasses.dataclass
class _Filled:
    """The result a peer is held to when its answer for an empty group is not scatterops'
    default fill: scatterops' own, given that answer as ``fill_value`` (``_case`` sets the func
    and its keywords)."""
    fill: object
    func: str = ""
    kw: Dict[str, object] = dataclasses.field(default_factory=dict)

    def __call__(self, x):
        import scatterops
        return scatterops.group_reduce(x["data"], x["groups"], self.func, size=int(x["size"]),
                                       fill_value=self.fill, **self.kw)


def _close(peer, label, build, rtol=1e-4, empty=None):
    """A peer's implementation, its result compared with scatterops': bit-equal (ok), or else
    within rtol and 1e-5 (~: its own order of operations; float32 sums of about ten values).
    ``empty``: the peer's answer for an empty group where it is not scatterops' default fill."""
    if empty is None:
        return Impl(peer, label, build, check="close", rtol=rtol, atol=1e-5)
    return Impl(peer, f"{label} (empty group: {empty})", build, check="close", rtol=rtol,
                atol=1e-5, ref=_Filled(empty))


def _so(func, **kw):
    def build(x):
        import scatterops
        v, g, size = x["data"], x["groups"], int(x["size"])
        return lambda: scatterops.group_reduce(v, g, func, size=size, **kw)
    return Impl(peers.SUBJECT, f"group_reduce(func={func!r})", build)


def _np_at(ufunc, start, empty=None):
    def build(x):
        v, g, size = x["data"], x["groups"], int(x["size"])

        def run():
            out = np.full((size,) + v.shape[1:], start, v.dtype)
            ufunc.at(out, g, v)
            return out
        return run
    return _close("numpy", f"np.{ufunc.__name__}.at", build, empty=empty)


def _npg(func, backend, fill=None):
    """numpy_groupies' aggregate; ``fill``: passed as its fill_value where its default (0) is
    not scatterops' (NaN)."""
    def build(x):
        if backend == "numba":
            from numpy_groupies import aggregate_numba as m
        else:
            from numpy_groupies import aggregate_numpy as m
        v, g, size = x["data"], x["groups"], int(x["size"])
        kw = {} if fill is None else {"fill_value": fill}
        if v.ndim > 1:
            kw["axis"] = 0
        m.aggregate(g[:10], v[:10], func, size=size, **kw)       # compiles (numba)
        return lambda: m.aggregate(g, v, func, size=size, **kw)
    return _close("numpy_groupies", f"aggregate_{backend}({func!r}"
                  + ("" if fill is None else f", fill_value={fill!r}") + ")", build)


def _numbagg(func, as_intp=False, **kw):
    def build(x):
        import numbagg
        v, g, size = x["data"], x["groups"], int(x["size"])
        fn = getattr(numbagg, "group_" + func)
        if v.ndim > 1:
            kw["axis"] = 0
        fn(v[:10], g[:10], num_labels=size, **kw)               # compiles
        if as_intp:         # numbagg gives positions as float64
            return lambda: fn(v, g, num_labels=size, **kw).astype(np.intp)
        if v.ndim > 1:      # numbagg puts the groups on the last axis
            return lambda: fn(v, g, num_labels=size, **kw).T
        return lambda: fn(v, g, num_labels=size, **kw)
    return _close("numbagg", f"group_{func}" + (" (as intp)" if as_intp else ""), build)


def _pandas(method, fill, **kw):
    def build(x):
        import pandas as pd
        v, g, size = x["data"], x["groups"], int(x["size"])
        frame = pd.DataFrame(v) if v.ndim > 1 else pd.Series(v)
        index = np.arange(size)

        def run():
            res = getattr(frame.groupby(g), method)(**kw).reindex(index, fill_value=fill)
            return res.to_numpy()
        return run
    return _close("pandas", f"groupby(...).{method}()", build)


def _torch_scatter(reduce, empty=None):
    def build(x):
        import torch
        v, g, size = x["data"], x["groups"], int(x["size"])
        src, index = torch.from_numpy(v), torch.from_numpy(g)
        if v.ndim > 1:
            index = index[:, None].expand(-1, v.shape[1])
        return lambda: torch.zeros((size,) + v.shape[1:], dtype=src.dtype).scatter_reduce(
            0, index, src, reduce, include_self=False).numpy()
    return _close("torch", f"scatter_reduce({reduce!r}, include_self=False)", build, empty=empty)


def _torch_index_add():
    def build(x):
        import torch
        v, g, size = x["data"], x["groups"], int(x["size"])
        src, index = torch.from_numpy(v), torch.from_numpy(g)
        return lambda: torch.zeros((size,) + v.shape[1:], dtype=src.dtype).index_add_(
            0, index, src).numpy()
    return _close("torch", "index_add_", build)


def _jax_segment(name, empty=None):
    def build(x):
        jax = peers._jax()
        v, g, size = x["data"], x["groups"], int(x["size"])
        fn = jax.jit(lambda a, b: getattr(jax.ops, name)(a, b, num_segments=size))
        dv, dg = jax.device_put(v), jax.device_put(g)
        fn(dv, dg).block_until_ready()
        return lambda: np.asarray(fn(dv, dg).block_until_ready())
    return _close("jax", f"jax.ops.{name}", build, empty=empty)


def _numpy_mean(x):
    """np.add.at from 0, divided once by np.bincount's counts: the contract's mean."""
    v, g, size = x["data"], x["groups"], int(x["size"])

    def run():
        s = np.zeros(size, v.dtype)
        np.add.at(s, g, v)
        with np.errstate(invalid="ignore"):
            return s / np.bincount(g, minlength=size)
    return run


def _numpy_two_pass_var(x):
    v, g, size = x["data"], x["groups"], int(x["size"])

    def run():
        s = np.zeros(size)
        np.add.at(s, g, v)
        n = np.bincount(g, minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = s / n
            d = v - mean[g]
            ss = np.zeros(size)
            np.add.at(ss, g, d * d)
            return ss / n
    return run


def _numpy_logsumexp(x):
    v, g, size = x["data"], x["groups"], int(x["size"])

    def run():
        m = np.full(size, -np.inf, v.dtype)
        np.maximum.at(m, g, v)
        s = np.zeros(size, v.dtype)
        np.add.at(s, g, np.exp(v - m[g]))
        with np.errstate(divide="ignore"):
            return m + np.log(s)
    return run


def _torch_logsumexp(x):
    """PyG's way: scatter amax, exp, index_add_, log."""
    import torch
    v, g, size = x["data"], x["groups"], int(x["size"])
    src, index = torch.from_numpy(v), torch.from_numpy(g)

    def run():
        m = torch.full((size,), -torch.inf, dtype=src.dtype).scatter_reduce(0, index, src, "amax")
        s = torch.zeros(size, dtype=src.dtype).index_add_(0, index, (src - m[index]).exp())
        return (m + s.log()).numpy()
    return run


def _numpy_softmax(x):
    v, g, size = x["data"], x["groups"], int(x["size"])

    def run():
        m = np.full((size,) + v.shape[1:], -np.inf, v.dtype)
        np.maximum.at(m, g, v)
        e = np.exp(v - m[g])
        s = np.zeros((size,) + v.shape[1:], v.dtype)
        np.add.at(s, g, e)
        return e / s[g]
    return run


def _torch_softmax(x):
    """PyG's composition: scatter amax, exp, index_add_, the division."""
    import torch
    v, g, size = x["data"], x["groups"], int(x["size"])
    src, index = torch.from_numpy(v), torch.from_numpy(g)
    wide = index[:, None].expand(-1, v.shape[1]) if v.ndim > 1 else index

    def run():
        m = torch.full((size,) + v.shape[1:], -torch.inf, dtype=src.dtype).scatter_reduce(
            0, wide, src, "amax", include_self=True)
        e = (src - m[index]).exp()
        s = torch.zeros((size,) + v.shape[1:], dtype=src.dtype).index_add_(0, index, e)
        return (e / s[index]).numpy()
    return run


def _pyg_softmax(x):
    import torch
    from torch_geometric.utils import softmax
    v, g, size = x["data"], x["groups"], int(x["size"])
    src, index = torch.from_numpy(v), torch.from_numpy(g)
    return lambda: softmax(src, index, num_nodes=size).numpy()


def _torch_segment(x):
    import torch
    v = torch.from_numpy(x["data"])
    lengths = torch.from_numpy(np.bincount(x["groups"], minlength=int(x["size"])))
    return lambda: torch.segment_reduce(v, "sum", lengths=lengths, unsafe=True).numpy()


def _jax_sorted(x):
    jax = peers._jax()
    size = int(x["size"])
    fn = jax.jit(lambda a, b: jax.ops.segment_sum(a, b, num_segments=size, indices_are_sorted=True))
    dv, dg = jax.device_put(x["data"]), jax.device_put(x["groups"])
    fn(dv, dg).block_until_ready()
    return lambda: np.asarray(fn(dv, dg).block_until_ready())


def _numpy_reduceat(x):
    v, p = x["data"], _indptr(x)
    starts, empty = p[:-1], p[:-1] == p[1:]

    def run():
        out = np.add.reduceat(v, np.minimum(starts, len(v) - 1))
        out[empty] = 0
        return out
    return run


# ---------------------------------------------------------------------------------------------
# the cases


def _case(key, name, n, size, dtype, subject, impls, features=None, sort=False, notes=(),
          func=None, kw=None) -> Case:
    """A case whose notes end with what its draw holds; ``func`` and ``kw``: the group_reduce
    call a peer marked with ``_Filled`` is held to."""
    impls = [dataclasses.replace(im, ref=dataclasses.replace(im.ref, func=func, kw=dict(kw or {})))
             if isinstance(im.ref, _Filled) else im for im in impls]
    case = Case(f"groups-{key}", f"groups: {name}", None, [subject] + impls, None,
                time_copy=False, tags=(TAG,), notes=list(notes))

    def make():
        x = _inputs(n, size, dtype, features, sort=sort)
        case.notes[:] = list(notes) + [_draw(x)]
        return x
    case.make = make
    VALUES_NBYTES[case.key] = n * (features or 1) * np.dtype(dtype).itemsize
    return case


def _reduce(key, name, n, size, dtype, func, impls, **kw) -> Case:
    return _case(key, name, n, size, dtype, _so(func), impls, func=func, **kw)


def group_cases(quick: bool) -> List[Case]:
    d = 100 if quick else 1
    m, k = 10**6 // d, lambda s: max(10, s // d)
    nan = np.nan
    empty_note = ("an empty group: scatterops gives its fill (NaN), np.maximum.at the -inf it "
                  "starts from, torch's scatter_reduce (include_self=False) the 0 it starts from, "
                  "JAX -inf; numpy_groupies is given fill_value=nan, pandas' reindex fills NaN")
    return [
        _reduce("sum-f32", "sum float32 1e6 into 1e3", m, k(10**3), np.float32, "sum", [
            _np_at(np.add, 0), _npg("sum", "numba"), _npg("sum", "numpy"),
            _numbagg("nansum"), _pandas("sum", 0.0), _torch_scatter("sum"),
            _torch_index_add(), _jax_segment("segment_sum")]),
        _reduce("sum-f64", "sum float64 1e6 into 1e5", m, k(10**5), np.float64, "sum", [
            _np_at(np.add, 0), _npg("sum", "numba"), _npg("sum", "numpy"),
            _numbagg("nansum"), _pandas("sum", 0.0), _torch_scatter("sum"),
            _torch_index_add(), _jax_segment("segment_sum")]),
        _reduce("mean-f64", "mean float64 1e6 into 1e5", m, k(10**5), np.float64, "mean", [
            _close("numpy", "np.add.at, divided by np.bincount", _numpy_mean),
            _npg("mean", "numba", nan), _npg("mean", "numpy", nan), _numbagg("nanmean"),
            _pandas("mean", nan), _torch_scatter("mean", empty=0.0)],
            notes=["an empty group: torch's scatter_reduce (include_self=False) gives the 0 it "
                   "starts from, the others NaN (numpy_groupies given fill_value=nan)"]),
        _reduce("max-f32", "max float32 1e6 into 1e5", m, k(10**5), np.float32, "max", [
            _np_at(np.maximum, -np.inf, empty=-np.inf), _npg("max", "numba", nan),
            _npg("max", "numpy", nan), _numbagg("nanmax"), _pandas("max", nan),
            _torch_scatter("amax", empty=0.0), _jax_segment("segment_max", empty=-np.inf)],
            notes=[empty_note]),
        _reduce("argmax-f64", "argmax float64 1e6 into 1e3", m, k(10**3), np.float64, "argmax", [
            _npg("argmax", "numba"), _npg("argmax", "numpy"),
            _numbagg("nanargmax", as_intp=True), _pandas("idxmax", -1)]),
        _reduce("var-f64", "var float64 1e6 into 1e3", m, k(10**3), np.float64, "var", [
            _close("numpy", "two passes: np.add.at, np.bincount", _numpy_two_pass_var),
            _npg("var", "numba", nan), _npg("var", "numpy", nan), _numbagg("nanvar", ddof=0),
            _pandas("var", nan, ddof=0)]),
        _reduce("first-f64", "first float64 1e6 into 1e5", m, k(10**5), np.float64, "first", [
            _npg("first", "numba", nan), _npg("first", "numpy", nan), _numbagg("nanfirst"),
            _pandas("first", nan)],
            notes=["numbagg's nanfirst and pandas' first skip NaN: the draw holds none"]),
        _reduce("logsumexp-f64", "logsumexp float64 1e6 into 1e3", m, k(10**3), np.float64,
                "logsumexp", [
                    _close("numpy", "np.maximum.at, np.exp, np.add.at, np.log", _numpy_logsumexp),
                    _close("torch", "scatter_reduce amax, exp, index_add_, log (as PyG)",
                           _torch_logsumexp)]),
        _case("softmax-f32", "softmax float32 (1e6 edges x 8 heads) into 1e5 nodes", m,
              k(10**5), np.float32,
              Impl(peers.SUBJECT, "group_softmax",
                   lambda x: (lambda v, g, s: (lambda: __import__("scatterops").group_softmax(
                       v, g, size=s)))(x["data"], x["groups"], int(x["size"]))),
              [_close("numpy", "np.maximum.at, np.exp, np.add.at, divide", _numpy_softmax),
               _close("torch", "scatter_reduce amax, exp, index_add_, divide (as PyG)",
                      _torch_softmax),
               _close("torch", "torch_geometric.utils.softmax", _pyg_softmax)], features=8,
              notes=["the result has values' shape and dtype: out of place its own pages are "
                     "values.nbytes, so the memory target is out of reach without out="]),
        _reduce("rows-f32", "sum of 1e6 x 64 float32 rows into 1e5 groups", m, k(10**5),
                np.float32, "sum", [
                    _np_at(np.add, 0), _torch_index_add(), _torch_scatter("sum"),
                    _jax_segment("segment_sum"), _npg("sum", "numba"), _npg("sum", "numpy"),
                    _numbagg("nansum"), _pandas("sum", 0.0)], features=64),
        _case("segment-f32", "segment sum float32 1e7 into 1e5 (sorted, indptr)", 10 * m,
              k(10**5), np.float32,
              Impl(peers.SUBJECT, "segment_reduce(func='sum')",
                   lambda x: (lambda v, p: (lambda: __import__("scatterops").segment_reduce(v, p)))(
                       x["data"], _indptr(x))),
              [_close("torch", "segment_reduce('sum')", _torch_segment),
               _close("jax", "jax.ops.segment_sum(indices_are_sorted=True)", _jax_sorted),
               _close("numpy", "np.add.reduceat (pairwise sums)", _numpy_reduceat),
               _np_at(np.add, 0), _npg("sum", "numba"), _numbagg("nansum")], sort=True),
    ]

# ---------------------------------------------------------------------------------------------
# one CPU for the whole process


@contextlib.contextmanager
def pinned(n: int):
    """With n == 1, every thread of this process (torch's, XLA's, numba's pools included) on
    one CPU, the first this process may use; the affinity is set back afterwards."""
    if n != 1 or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = {}
    cpu = min(os.sched_getaffinity(0))
    for tid in (int(t) for t in os.listdir("/proc/self/task")):
        try:
            before[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, {cpu})
        except OSError:         # the thread ended meanwhile
            pass
    try:
        yield
    finally:
        for tid, cpus in before.items():
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------
# the table


def judge(row, by_key: Dict[Tuple[str, int], object]) -> List[Tuple[str, str, Optional[bool]]]:
    """Each target of a row: (its name, what was measured, True / False = met / not met, None =
    could not be judged).  ``by_key``: (case key, threads) -> row, for the segment sum's 1-CPU
    time."""
    so = row.subject()
    out: List[Tuple[str, str, Optional[bool]]] = []
    for name, bar, ok_only in ((f"bit-equal >= {SAME:g}x", SAME, True),
                               (f"any >= {ANY:g}x", ANY, False)):
        timed = [r for r in row.results if r.impl.peer != peers.SUBJECT and r.time is not None
                 and (r.status == "ok" or not ok_only)]
        if so is None or not timed:
            out.append((name, "-", None))
            continue
        best = min(timed, key=lambda r: r.time)
        agreed = record.runs_agreed(so.samples, best.samples)
        ratio = best.time / so.time
        out.append((name, f"{ratio:.2f}x {best.impl.peer}"
                    + (f" ({agreed}/{min(len(so.samples), len(best.samples))} runs)"
                       if agreed is not None else ""), ratio >= bar))
    if row.case.key == "groups-segment-f32" and (row.threads or 1) > 1:
        one = by_key.get((row.case.key, 1))
        name = f"1t / {row.threads}t >= {SCALING:g}"
        if so is None or one is None or one.subject() is None:
            out.append((name, "-", None))
        else:
            ratio = one.subject().time / so.time
            out.append((name, f"{ratio:.2f}", ratio >= SCALING))
    nbytes = VALUES_NBYTES.get(row.case.key)
    if so is not None and so.peak is not None and nbytes:
        out.append(("memory < values.nbytes",
                    f"{so.peak / 2**20:.1f} MiB / {nbytes / 2**20:.1f} MiB", so.peak < nbytes))
    return out


def _mark(ok: Optional[bool]) -> str:
    return "-" if ok is None else ("met" if ok else "not met")


def target(row, by_key: Dict[Tuple[str, int], object]) -> Tuple[str, Optional[bool]]:
    """-> (the targets and what was measured, as text; True / False = every target that could be
    judged is met / one is not; None = none could be judged): for the run's record."""
    judged = judge(row, by_key)
    oks = [ok for _, _, ok in judged if ok is not None]
    return ("; ".join(f"{name}: {got}: {_mark(ok)}" for name, got, ok in judged),
            all(oks) if oks else None)


def table(rows, columns: List[str], cell, grid) -> Tuple[str, int, int]:
    """-> (the table, rows that meet every target, rows that could be judged)."""
    by_key = {(r.case.key, r.threads or 1): r for r in rows}
    shown = [c for c in columns if any(res.impl.peer == c for r in rows for res in r.results)]
    names: List[str] = []
    for row in rows:
        for name, _, _ in judge(row, by_key):
            if name not in names:
                names.append(name)
    head = ["case", "CPUs"] + shown + names + ["result"]
    body = []
    passed = judged = 0
    for row in rows:
        cells = [f"{row.case.key[len('groups-'):]}: {row.case.name.split(': ', 1)[-1]}",
                 f"{row.threads or 1}" + (" (pinned)" if (row.threads or 1) == 1 else "")]
        cells += [cell(row, p) for p in shown]
        got = {name: (text, ok) for name, text, ok in judge(row, by_key)}
        cells += [f"{got[n][0]}: {_mark(got[n][1])}" if n in got and got[n][1] is not None
                  else (got[n][0] if n in got else "") for n in names]
        oks = [ok for _, ok in got.values() if ok is not None]
        cells.append(("met" if all(oks) else "not met") if oks else "-")
        if oks:
            judged += 1
            passed += all(oks)
        body.append(cells)
    return grid(head, body, left=(0,)), passed, judged


LEGEND = ("Times are medians per call of at least 7 interleaved rounds (a target's cell: in how "
          "many rounds the best peer and scatterops fell on the medians' side); a cell marked ~ "
          "is not bit-equal to scatterops (the peer's own order: compensated or float64 sums, "
          "one-pass variances, torch.exp), the others are bit-equal (a peer whose label names "
          "its answer for an empty group: bit-equal to scatterops given that fill_value). 1 CPU: "
          "the whole process pinned to one CPU, every library on it; the other rows: --threads "
          "for every library with a setting (JAX's XLA pool uses every CPU). Targets: best "
          f"bit-equal peer / scatterops >= {SAME:g}, best peer of any kind / scatterops >= "
          f"{ANY:g}; the segment sum: its 1-CPU time / its all-CPU time >= {SCALING:g}; with "
          "--memory, scatterops' peak memory over the call (+N MiB in each cell: the rise of the "
          "resident high-water mark over one call, in a fresh process) below values.nbytes "
          "(printed, never asserted).")

"""The group reductions (``-k groups``): ``group_reduce`` / ``segment_reduce`` /
``group_softmax`` against what people use for them, each case at 1 CPU (the whole process pinned
to one CPU, so every library's threads share it) and at ``--threads``.

The cases: sum float32 1e6 into 1e3 groups; sum float64 1e6 into 1e5; mean float64 1e6 into 1e5;
max float32 1e6 into 1e5; argmax float64 1e6 into 1e3; var float64 1e6 into 1e3; first float64
1e6 into 1e5; logsumexp float64 1e6 into 1e3; softmax of float32 scores (1e6 edges x 8 heads)
into 1e5 nodes; sum of 1e6 x 64 float32 rows into 1e5 groups (message passing); a segment sum of
float32 1e7 into 1e5 sorted segments (``indptr``).  ``--quick`` divides every size by 100.

The peers, each with its own API: NumPy (``ufunc.at`` and the compositions: for logsumexp and
softmax ``np.maximum.at``, ``np.exp``, ``np.add.at``, the division), numpy_groupies (both
backends), numbagg, pandas' groupby, torch (``scatter_reduce``, ``index_add_``,
``segment_reduce``; softmax as PyG composes it, and ``torch_geometric.utils.softmax``) and JAX
(``jax.ops.segment_*``).  Every result is checked against scatterops': ``ok`` is bit-equal, ``~``
equal within the peer's own order (compensated or float64 sums, one-pass variances, torch.exp).

Targets, per case and thread count (reported, never asserted): best bit-equal peer time /
scatterops time >= 1.0, and best peer of any kind / scatterops >= 0.7; for the segment sum also
scatterops' 1-thread time / its ``--threads`` time >= 1.6.
"""
from __future__ import annotations

import contextlib
import os
from typing import Dict, List, Optional, Tuple

import numpy as np

from benchmarks import core, peers
from benchmarks.core import Case, Impl

TAG = "groups"
SAME, ANY, SCALING = 1.0, 0.7, 1.6


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


# ---------------------------------------------------------------------------------------------
# the implementations


def _so(func, **kw):
    def build(x):
        import scatterops
        v, g, size = x["data"], x["groups"], int(x["size"])
        return lambda: scatterops.group_reduce(v, g, func, size=size, **kw)
    return Impl(peers.SUBJECT, f"group_reduce(func={func!r})", build)


def _np_at(ufunc, start):
    def build(x):
        v, g, size = x["data"], x["groups"], int(x["size"])

        def run():
            out = np.full((size,) + v.shape[1:], start, v.dtype)
            ufunc.at(out, g, v)
            return out
        return run
    return _close("numpy", f"np.{ufunc.__name__}.at", build)


def _npg(func, backend, fill=None):
    def build(x):
        if backend == "numba":
            from numpy_groupies import aggregate_numba as m
        else:
            from numpy_groupies import aggregate_numpy as m
        v, g, size = x["data"], x["groups"], int(x["size"])
        kw = {} if fill is None else {"fill_value": fill}
        m.aggregate(g[:10], v[:10], func, size=size, **kw)       # compiles (numba)
        return lambda: m.aggregate(g, v, func, size=size, axis=0 if v.ndim > 1 else None, **kw)
    return _close("numpy_groupies", f"aggregate_{backend}({func!r})", build)


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


def _torch_scatter(reduce):
    def build(x):
        import torch
        v, g, size = x["data"], x["groups"], int(x["size"])
        src, index = torch.from_numpy(v), torch.from_numpy(g)
        if v.ndim > 1:
            index = index[:, None].expand(-1, v.shape[1])
        return lambda: torch.zeros((size,) + v.shape[1:], dtype=src.dtype).scatter_reduce(
            0, index, src, reduce, include_self=False).numpy()
    return _close("torch", f"scatter_reduce({reduce!r}, include_self=False)", build)


def _torch_index_add():
    def build(x):
        import torch
        v, g, size = x["data"], x["groups"], int(x["size"])
        src, index = torch.from_numpy(v), torch.from_numpy(g)
        return lambda: torch.zeros((size,) + v.shape[1:], dtype=src.dtype).index_add_(
            0, index, src).numpy()
    return _close("torch", "index_add_", build)


def _jax_segment(name):
    def build(x):
        jax = peers._jax()
        v, g, size = x["data"], x["groups"], int(x["size"])
        fn = jax.jit(lambda a, b: getattr(jax.ops, name)(a, b, num_segments=size))
        dv, dg = jax.device_put(v), jax.device_put(g)
        fn(dv, dg).block_until_ready()
        return lambda: np.asarray(fn(dv, dg).block_until_ready())
    return _close("jax", f"jax.ops.{name}", build)


def _numpy_logsumexp(x):
    v, g, size = x["data"], x["groups"], int(x["size"])
    m = np.full(size, -np.inf, v.dtype)
    np.maximum.at(m, g, v)
    s = np.zeros(size, v.dtype)
    np.add.at(s, g, np.exp(v - m[g]))
    with np.errstate(divide="ignore"):
        return m + np.log(s)


def _numpy_softmax(x):
    v, g, size = x["data"], x["groups"], int(x["size"])
    m = np.full((size,) + v.shape[1:], -np.inf, v.dtype)
    np.maximum.at(m, g, v)
    e = np.exp(v - m[g])
    s = np.zeros((size,) + v.shape[1:], v.dtype)
    np.add.at(s, g, e)
    return e / s[g]


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


def _torch_logsumexp(x):
    import torch
    v, g, size = x["data"], x["groups"], int(x["size"])
    src, index = torch.from_numpy(v), torch.from_numpy(g)

    def run():
        m = torch.full((size,), -torch.inf, dtype=src.dtype).scatter_reduce(0, index, src, "amax")
        s = torch.zeros(size, dtype=src.dtype).index_add_(0, index, (src - m[index]).exp())
        return (m + s.log()).numpy()
    return run


def _close(peer, label, build, rtol=1e-4):
    """A peer's implementation, its result compared with scatterops': bit-equal (ok), or else
    within rtol and 1e-5 (~: its own order of operations; float32 sums of about ten values)."""
    return Impl(peer, label, build, check="close", rtol=rtol, atol=1e-5)


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


# ---------------------------------------------------------------------------------------------
# the cases


def _case(key, name, n, size, dtype, impls, features=None, sort=False, notes=()):
    return Case(f"groups-{key}", f"groups: {name}",
                lambda: _inputs(n, size, dtype, features, sort=sort), impls, None,
                time_copy=False, tags=(TAG,), notes=list(notes))


def group_cases(quick: bool) -> List[Case]:
    d = 100 if quick else 1
    m, k = 10**6 // d, lambda s: max(10, s // d)
    nan_fill = np.nan
    cases = [
        _case("sum-f32", "sum float32 1e6 into 1e3", m, k(10**3), np.float32, [
            _so("sum"), _np_at(np.add, 0), _npg("sum", "numba"), _npg("sum", "numpy"),
            _numbagg("nansum"), _pandas("sum", 0.0), _torch_scatter("sum"),
            _torch_index_add(), _jax_segment("segment_sum")]),
        _case("sum-f64", "sum float64 1e6 into 1e5", m, k(10**5), np.float64, [
            _so("sum"), _np_at(np.add, 0), _npg("sum", "numba"), _npg("sum", "numpy"),
            _numbagg("nansum"), _pandas("sum", 0.0), _torch_scatter("sum"),
            _torch_index_add(), _jax_segment("segment_sum")]),
        _case("mean-f64", "mean float64 1e6 into 1e5", m, k(10**5), np.float64, [
            _so("mean"), _npg("mean", "numba"), _npg("mean", "numpy"), _numbagg("nanmean"),
            _pandas("mean", nan_fill), _torch_scatter("mean")]),
        _case("max-f32", "max float32 1e6 into 1e5", m, k(10**5), np.float32, [
            _so("max"), _np_at(np.maximum, -np.inf), _npg("max", "numba"), _npg("max", "numpy"),
            _numbagg("nanmax"), _pandas("max", nan_fill), _torch_scatter("amax"),
            _jax_segment("segment_max")],
            notes=["np.maximum.at starts from -inf and torch / JAX leave 0 / -inf in an empty "
                   "group: with 1e6 into 1e5 no group is empty in this draw"]),
        _case("argmax-f64", "argmax float64 1e6 into 1e3", m, k(10**3), np.float64, [
            _so("argmax"), _npg("argmax", "numba"), _npg("argmax", "numpy"),
            _numbagg("nanargmax", as_intp=True),
            _pandas("idxmax", -1)]),
        _case("var-f64", "var float64 1e6 into 1e3", m, k(10**3), np.float64, [
            _so("var"), _close("numpy", "two passes: np.add.at, np.bincount", _numpy_two_pass_var),
            _npg("var", "numba"), _npg("var", "numpy"), _numbagg("nanvar", ddof=0),
            _pandas("var", nan_fill, ddof=0)]),
        _case("first-f64", "first float64 1e6 into 1e5", m, k(10**5), np.float64, [
            _so("first"), _npg("first", "numba"), _npg("first", "numpy"), _numbagg("nanfirst"),
            _pandas("first", nan_fill)]),
        _case("logsumexp-f64", "logsumexp float64 1e6 into 1e3", m, k(10**3), np.float64, [
            _so("logsumexp"),
            _close("numpy", "np.maximum.at, np.exp, np.add.at, np.log",
                   lambda x: lambda: _numpy_logsumexp(x)),
            _close("torch", "scatter_reduce amax, exp, index_add_, log", _torch_logsumexp)]),
        Case("groups-softmax-f32", "groups: softmax float32 (1e6 edges x 8 heads) into 1e5 nodes",
             lambda: _inputs(m, k(10**5), np.float32, features=8),
             [Impl(peers.SUBJECT, "group_softmax",
                   lambda x: (lambda v, g, s: (lambda: __import__("scatterops").group_softmax(
                       v, g, size=s)))(x["data"], x["groups"], int(x["size"]))),
              _close("numpy", "np.maximum.at, np.exp, np.add.at, divide",
                     lambda x: lambda: _numpy_softmax(x)),
              _close("torch", "scatter_reduce amax, exp, index_add_, divide (as PyG)",
                     _torch_softmax),
              _close("torch", "torch_geometric.utils.softmax", _pyg_softmax)],
             None, time_copy=False, tags=(TAG,)),
        _case("rows-f32", "sum of 1e6 x 64 float32 rows into 1e5 groups", m, k(10**5), np.float32, [
            _so("sum"), _torch_index_add(), _torch_scatter("sum"), _jax_segment("segment_sum"),
            _numbagg("nansum"), _pandas("sum", 0.0)], features=64),
        Case("groups-segment-f32", "groups: segment sum float32 1e7 into 1e5 (sorted, indptr)",
             lambda: _inputs(10 * m, k(10**5), np.float32, sort=True),
             [Impl(peers.SUBJECT, "segment_reduce(func='sum')",
                   lambda x: (lambda v, p: (lambda: __import__("scatterops").segment_reduce(v, p)))(
                       x["data"], _indptr(x))),
              _close("torch", "segment_reduce('sum')", _torch_segment),
              _close("jax", "jax.ops.segment_sum(indices_are_sorted=True)", _jax_sorted),
              _close("numpy", "np.add.reduceat (pairwise sums)", _numpy_reduceat),
              _npg("sum", "numba")],
             None, time_copy=False, tags=(TAG,)),
    ]
    return cases


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


def target(row, by_key: Dict[Tuple[str, int], object]) -> Tuple[str, Optional[bool]]:
    """-> (the targets as text, True / False = reached / short, None = could not be judged)."""
    so = row.subject()
    if so is None:
        return "-", None
    same = [r.time for r in row.results if r.impl.peer != peers.SUBJECT and r.time is not None
            and r.status == "ok"]
    every = [r.time for r in row.results if r.impl.peer != peers.SUBJECT and r.time is not None]
    texts, oks = [f">= {SAME:g}x best bit-equal", f">= {ANY:g}x best"], []
    if same:
        oks.append(min(same) / so.time >= SAME)
    if every:
        oks.append(min(every) / so.time >= ANY)
    if row.case.key == "groups-segment-f32" and (row.threads or 1) > 1:
        one = by_key.get((row.case.key, 1))
        texts.append(f"1t / {row.threads}t >= {SCALING:g}")
        if one is not None and one.subject() is not None:
            oks.append(one.subject().time / so.time >= SCALING)
    return ", ".join(texts), (all(oks) if oks else None)


def table(rows, columns: List[str], cell, grid) -> Tuple[str, int, int]:
    """-> (the table, rows that reach their targets, rows that could be judged)."""
    by_key = {(r.case.key, r.threads or 1): r for r in rows}
    shown = [c for c in columns if any(res.impl.peer == c for r in rows for res in r.results)]
    head = ["case", "CPUs"] + shown + ["vs best bit-equal", "vs best", "target", "result"]
    body = []
    passed = judged = 0
    for row in rows:
        so = row.subject()
        cells = [f"{row.case.key[len('groups-'):]}: {row.case.name.split(': ', 1)[-1]}",
                 f"{row.threads or 1}" + (" (pinned)" if (row.threads or 1) == 1 else "")]
        cells += [cell(row, p) for p in shown]
        for ok_only in (True, False):
            timed = [(r.time, r.impl.peer) for r in row.results if r.impl.peer != peers.SUBJECT
                     and r.time is not None and (r.status == "ok" or not ok_only)]
            cells.append(f"{min(timed)[0] / so.time:.2f}x {min(timed)[1]}" if so and timed else "-")
        text, ok = target(row, by_key)
        cells += [text, "-" if ok is None else ("pass" if ok else "SHORT")]
        if ok is not None:
            judged += 1
            passed += ok
        body.append(cells)
    return grid(head, body, left=(0,)), passed, judged


LEGEND = ("Times are medians per call; a cell marked ~ is not bit-equal to scatterops (the peer's "
          "own order: compensated or float64 sums, one-pass variances, torch.exp), the others are "
          "bit-equal. 1 CPU: the whole process pinned to one CPU, every library on it; the other "
          "rows: --threads for every library with a setting (JAX's XLA pool uses every CPU). "
          f"Targets: best bit-equal peer / scatterops >= {SAME:g}, best peer of any kind / "
          f"scatterops >= {ANY:g}; the segment sum: its 1-CPU time / its all-CPU time >= "
          f"{SCALING:g} (reported, never asserted). python -m benchmarks -k groups --memory adds "
          "each call's peak memory above its inputs, in a fresh process.")

"""The performance-v2 cases: sizes, shapes and index dtypes swept, against every peer.

Each runs at 1 thread and at ``--threads`` (two rows), in a table of its own with a target per row
(``run.py``'s ``v2_target``).  Keys (``-k``; ``-k v2`` selects them all):

* ``sweep-out-N`` / ``sweep-out-N-inplace``: 10^6 float32 updates, random int64 indices, added
  into N = 10^3, 3*10^4, 10^6, 10^7, 5*10^7 float32 elements (L1, L2, L3, DRAM, DRAM);
* ``sweep-upd-M`` / ``sweep-upd-M-inplace``: M = 10^3 ... 10^7 updates added into 10^5 elements;
* ``hist-N``: 10^6 updates added into 10^2 and 10^3 elements (histogram shapes: every element is
  hit 10^3-10^4 times);
* ``count-N``: the same with int64 data and updates (an integer sum, whose bits do not depend on
  the order of the updates), 10^6 into 10^3 and 10^5 elements;
* ``idx-DTYPE-N``: the add with int8, int32, int64 and uint64 indices (10^6 updates into 10^2, and
  into 10^6 for those that can address it);
* ``rows-FN``: ``scatter_update(reduction="add")`` of (m, F) rows into (10^5, F), F = 1, 2, 4, 8,
  64, m * F = 4*10^6;
* ``pyg-dense`` / ``pyg-bcast``: PyG-style message passing, ``scatter_elements`` of 10^6 x 64
  messages into (10^5, 64) with the row index expanded to the message width -- materialised
  (int64, 512 MB), or a stride-0 ``np.broadcast_to`` view;
* ``sorted``: 10^6 updates with sorted indices into 10^5 (segment sums);
* ``mean``: ``reduction="mean"`` (include_self), 10^6 updates into 10^5.

``--quick`` divides the update counts by 10 (the output sizes of the out-size sweep stay).  Inputs
are made with fixed seeds; data is random (zeros for the message passing).  Every case is out of
place except the ``-inplace`` ones, which every implementation runs on its own copy of data.
"""
from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

from . import peers
from .core import Case, Impl
from .targets import TWIN

f32 = np.float32
TORCH_RED = {"add": "sum", "max": "amax", "min": "amin", "mean": "mean"}
ORT_RED = {"add": "add", "max": "max", "min": "min"}
OV_RED = {"add": "sum", "max": "max", "min": "min", "mean": "mean"}
NP_UFUNC = {"add": np.add, "max": np.maximum, "min": np.minimum}


def _fmt(n: int) -> str:
    """10**6 -> '1e6', 3*10**4 -> '3e4'."""
    e = len(str(n)) - 1
    m = n // 10**e
    return f"{m}e{e}" if m * 10**e == n else str(n)


def _np_call(red: str, d, ix, u, inplace: bool) -> Callable[[], object]:
    if red == "mean":           # (data + sum) / (count + 1), divided in float64, rounded once
        def run():
            o = d if inplace else d.copy()
            np.add.at(o, ix, u)
            c = np.bincount(ix, minlength=o.shape[0])
            hit = c > 0
            o[hit] = (o[hit] / (c[hit] + 1)).astype(o.dtype)
            return o
        return run
    uf = NP_UFUNC[red]
    if inplace:
        return lambda: (uf.at(d, ix, u), d)[1]

    def run():
        o = d.copy()
        uf.at(o, ix, u)
        return o
    return run


def _torch(api: str, red: str, inplace: bool, index: str = "indices"):
    """``torch.scatter_reduce`` (api ``"scatter"``: an index of updates' shape) or
    ``torch.index_add`` / ``index_reduce`` (api ``"index"``: a 1-D index) along axis 0, with
    ``include_self``; in place, the ``_`` method on a tensor sharing data's memory."""
    def build(x):
        import torch
        d, tt, ix = x["data"], peers.t, x[index]
        td, tu = tt(d), tt(x["updates"])
        if ix.ndim == 2 and ix.strides[1] == 0:      # a stride-0 view: the same, as a torch view
            ti = tt(x["rows"]).view(-1, 1).expand(-1, ix.shape[1])
        else:
            ti = tt(ix)
        if api == "index" and red == "add":
            name, args, kw = "index_add", (), {}
        else:
            name = "scatter_reduce" if api == "scatter" else "index_reduce"
            args, kw = (TORCH_RED[red],), {"include_self": True}
        if inplace:
            method = getattr(td, name + "_")
            return lambda: (method(0, ti, tu, *args, **kw), d)[1]
        fn = getattr(torch, name)
        return lambda: fn(td, 0, ti, tu, *args, **kw).numpy()
    return build


def _ort(op: str, red: str, index: str = "indices"):
    def build(x):
        d = x["data"]
        return peers.ort_call(op, {"data": d, "indices": x[index], "updates": x["updates"]},
                              d.shape, d.dtype, reduction=ORT_RED[red],
                              **({"axis": 0} if op == "ScatterElements" else {}))
    return build


def _ov(op: str, red: str, index: str = "indices"):
    def build(x):
        if op == "ScatterElementsUpdate":
            node = lambda ops, p: ops.scatter_elements_update(           # noqa: E731
                p[0], p[1], p[2], ops.constant(np.int64(0)), reduction=OV_RED[red],
                use_init_val=True)
        else:
            node = lambda ops, p: ops.scatter_nd_update(p[0], p[1], p[2], OV_RED[red])  # noqa: E731
        return peers.ov_call(node, [x["data"], x[index], x["updates"]])
    return build


def _so(fn: str, red: str, inplace: bool, index: str = "indices"):
    def build(x):
        import scatterops
        f, d, i, u = getattr(scatterops, fn), x["data"], x[index], x["updates"]
        if inplace:
            return lambda: f(d, i, u, 0, reduction=red, out=d)
        return lambda: f(d, i, u, 0, reduction=red)
    return build


def _int64_twin() -> Impl:
    """scatterops with the case's indices as int64 (made untimed), timed in the same rounds as the
    int32 call: the comparison ``targets.v2_target`` judges for int32 against int64."""
    def build(x):
        import scatterops
        d, i, u = x["data"], x["indices"].astype(np.int64), x["updates"]
        return lambda: scatterops.scatter_elements(d, i, u, 0, reduction="add")
    return Impl(TWIN, "scatter_elements(add), the indices as int64", build)


def _peer_impls(red: str, inplace: bool, rows: bool = False, index: str = "indices",
                sorted_idx: bool = False) -> List[Impl]:
    """Every peer's implementations of a 1-D scatter with ``red`` (``rows``: of (m, F) rows
    along axis 0, the index ``x["rows"]`` being 1-D), in the case's form."""
    exact = "exact" if red in ("max", "min") else "close"
    tol = dict(rtol=1e-4, atol=1e-4)
    one = "rows" if rows else index          # the 1-D index a row-wise API takes
    form = "_" if inplace else ""
    impls = [Impl("numpy", ("np.add.at + np.bincount, a division" if red == "mean" else
                            f"np.{NP_UFUNC[red].__name__}.at") + (" in place" if inplace else ""),
                  lambda x: _np_call(red, x["data"], x[one], x["updates"], inplace),
                  "close" if red == "mean" else "exact", **tol)]
    if not rows or index == "indices":           # scatter_reduce: an index of updates' shape
        impls.append(Impl("torch", f"scatter_reduce{form}({TORCH_RED[red]})",
                          _torch("scatter", red, inplace, index), exact, **tol))
    impls.append(Impl("torch", (f"index_add{form}" if red == "add" else
                                f"index_reduce{form}({TORCH_RED[red]})"),
                      _torch("index", red, inplace, one), exact, **tol))
    if not inplace:
        # a row scatter: ScatterND with a (m, 1) index; else ScatterElements(Update)
        nd = rows and index == "rows"
        idx = "nd_indices" if nd else ("dense" if rows else index)
        ort_op, ov_op = ("ScatterND", "ScatterNDUpdate") if nd else ("ScatterElements",
                                                                     "ScatterElementsUpdate")
        if red in ORT_RED:
            impls.append(Impl("onnxruntime", f"{ort_op} {red}" + (" (k=1)" if nd else ""),
                              _ort(ort_op, red, idx), exact, **tol))
        impls.append(Impl("openvino", f"{ov_op}-{15 if nd else 12} {OV_RED[red]}" +
                          (" (k=1)" if nd else ""), _ov(ov_op, red, idx), exact, **tol))
        kw = {"indices_are_sorted": True} if sorted_idx else {}
        impls.append(Impl("jax", f"jit(d.at[i].{red}(u" + (", indices_are_sorted=True" if kw else "")
                          + "))" if red != "mean" else "jit(.at[i].add sums and counts, a division)",
                          lambda x: peers.jax_call(red, [x["data"], x[one], x["updates"]], **kw),
                          exact, **tol))
    loop = "add_rows" if rows else red
    impls.append(Impl("numba", "serial @njit loop" + ("" if inplace else " on data.copy()"),
                      lambda x: peers.numba_call(loop, x["data"], x[one], x["updates"], inplace),
                      exact, **tol))
    if not rows:
        for backend, label in (("numba", "aggregate"), ("numpy", "aggregate_np")):
            impls.append(Impl("numpy_groupies", f"{label}({'sum' if red == 'add' else red}), "
                              "combined with data",
                              lambda x, b=backend: peers.npg_call(red, x["data"], x[one],
                                                                  x["updates"], inplace, b),
                              exact, **tol))
    return impls


NA_INPLACE = {"onnxruntime": "no in-place form", "openvino": "no in-place form",
              "jax": "arrays are immutable: no in-place form"}
NA_ROWS = {"numpy_groupies": "aggregates 1-D values only"}


def case_1d(key: str, name: str, n: int, m: int, red: str = "add", inplace: bool = False,
            idx_dtype=np.int64, sorted_idx: bool = False, extra: Optional[List[Impl]] = None,
            seed: int = 200, dtype=f32, **kw) -> Case:
    """``scatter_elements(data, indices, updates, 0, reduction=red)``: m updates into n, float32
    in [0, 1), or an integer dtype: data in [0, 1000), updates in [-8, 8]."""
    def make():
        rng = np.random.default_rng(seed)
        ix = rng.integers(0, n, size=m)
        if sorted_idx:
            ix.sort()
        if np.dtype(dtype).kind in "iu":
            return {"data": rng.integers(0, 1000, size=n).astype(dtype),
                    "indices": ix.astype(idx_dtype),
                    "updates": rng.integers(-8, 9, size=m).astype(dtype)}
        return {"data": rng.random(n, dtype=dtype), "indices": ix.astype(idx_dtype),
                "updates": rng.random(m, dtype=dtype)}

    impls = _peer_impls(red, inplace, sorted_idx=sorted_idx) + (extra or [])
    impls.append(Impl("scatterops", f"scatter_elements({red}" + (", out=data)" if inplace else ")"),
                      _so("scatter_elements", red, inplace)))
    form = " in place" if inplace else ""
    return Case(key=key, name=name + form, make=make, impls=impls, floor=None, inplace=inplace,
                na=NA_INPLACE if inplace else {}, out_size=n, tags=("v2",), **kw)


def _bincount(x):
    d, ix, u = x["data"], x["indices"], x["updates"]
    return lambda: d + np.bincount(ix, weights=u, minlength=d.shape[0]).astype(d.dtype)


def _reduceat(x):
    d, ix, u = x["data"], x["indices"], x["updates"]

    def run():                  # the segments' starts are found in the call, as a user would
        starts = np.flatnonzero(np.concatenate(([True], ix[1:] != ix[:-1])))
        o = d.copy()
        o[ix[starts]] += np.add.reduceat(u, starts)
        return o
    return run


def case_rows(f: int, quick: bool, shrink: int = 1) -> Case:
    n, m = max(4, 10**5 // shrink), max(4, (4 * 10**6 // f) // (10 if quick else 1) // shrink)

    def make():
        rng = np.random.default_rng(300 + f)
        rows = rng.integers(0, n, size=m)
        return {"data": rng.random((n, f), dtype=f32), "rows": rows, "indices": rows,
                "nd_indices": rows[:, None], "updates": rng.random((m, f), dtype=f32)}

    impls = _peer_impls("add", False, rows=True, index="rows")
    impls.append(Impl("scatterops", 'scatter_update(reduction="add")',
                      _so("scatter_update", "add", False)))
    return Case(key=f"rows-F{f}", name=f"rows: add {_fmt(m)} rows of {f} f32 into ({_fmt(n)},{f})",
                make=make, impls=impls, floor=None, na=NA_ROWS, out_size=n * f, tags=("v2",),
                notes=["onnxruntime and openvino: ScatterND with the index as (m, 1)"])


def case_pyg(dense: bool, quick: bool, shrink: int = 1) -> Case:
    nodes, edges, feat = (10**4, 10**5, 64) if quick else (10**5, 10**6, 64)
    nodes, edges = max(4, nodes // shrink), max(4, edges // shrink)

    def make():
        rng = np.random.default_rng(400)
        rows = rng.integers(0, nodes, size=edges)
        bcast = np.broadcast_to(rows[:, None], (edges, feat))
        return {"data": np.zeros((nodes, feat), f32), "rows": rows,
                "indices": np.ascontiguousarray(bcast) if dense else bcast,
                "updates": rng.standard_normal((edges, feat), dtype=f32)}

    def dense_index(x):
        if "dense" not in x:
            x["dense"] = np.ascontiguousarray(x["indices"])
        return x["dense"]

    def with_dense(build):
        return lambda x: (dense_index(x), build(x))[1]

    impls = _peer_impls("add", False, rows=True)
    for im in impls:
        if im.peer in ("onnxruntime", "openvino"):
            im.build = with_dense(im.build)
    impls.append(Impl("scatterops", 'scatter_elements(reduction="add")',
                      _so("scatter_elements", "add", False)))
    how = "materialised int64" if dense else "a stride-0 np.broadcast_to view"
    return Case(key=f"pyg-{'dense' if dense else 'bcast'}",
                name=f"pyg: {_fmt(edges)} x {feat} messages into ({_fmt(nodes)},{feat}), "
                     f"index {'materialised' if dense else 'stride 0'}",
                make=make, impls=impls, floor=None, na=NA_ROWS, out_size=nodes * feat,
                tags=("v2",),
                notes=[f"scatter_elements axis 0, index (edges, {feat}) = the row index expanded, "
                       f"{how}; torch scatter_reduce gets the same index, torch index_add, numpy, "
                       "jax and numba take the 1-D row index; onnxruntime and openvino a "
                       "materialised int64 index (made untimed)"])


def sweep_cases(quick: bool, shrink: int = 1) -> List[Case]:
    """In the order they run (and are listed).  ``shrink`` divides every size (keys and names
    keep the full sizes): a test runs them all in a moment."""
    def sz(n: int) -> int:
        return max(4, n // shrink)
    m = 10**6 // (10 if quick else 1)
    cases: List[Case] = []
    for inplace in (False, True):
        sfx = "-inplace" if inplace else ""
        for n in (10**3, 3 * 10**4, 10**6, 10**7, 5 * 10**7):
            cases.append(case_1d(f"sweep-out-{_fmt(n)}{sfx}", f"sweep: add {_fmt(m)} f32 into "
                                 f"{_fmt(n)}", sz(n), sz(m), inplace=inplace))
        for mm in (10**3, 10**4, 10**5, 10**6, 10**7):
            if quick and mm > 10**6:
                continue
            cases.append(case_1d(f"sweep-upd-{_fmt(mm)}{sfx}", f"sweep: add {_fmt(mm)} f32 into "
                                 "1e5", sz(10**5), sz(mm), inplace=inplace))
    for n in (10**2, 10**3):
        cases.append(case_1d(f"hist-{_fmt(n)}", f"hist: add {_fmt(m)} f32 into {_fmt(n)}", sz(n), sz(m),
                             extra=[Impl("numpy", "data + np.bincount(weights=u)", _bincount,
                                         "close", rtol=1e-4, atol=1e-4)]))
    for n in (10**3, 10**5):
        cases.append(case_1d(f"count-{_fmt(n)}", f"count: add {_fmt(m)} int64 into {_fmt(n)} int64",
                             sz(n), sz(m), dtype=np.int64))
    for n, dtypes in ((10**2, ("int8", "int32", "int64", "uint64")),
                      (10**6, ("int32", "int64", "uint64"))):
        for dt in dtypes:
            cases.append(case_1d(
                f"idx-{dt}-{_fmt(n)}", f"idx: add {_fmt(m)} f32 into {_fmt(n)}, {dt} indices", sz(n),
                sz(m), idx_dtype=dt,
                extra=[_int64_twin()] if dt == "int32" else None,
                not_slower_than=(f"idx-int64-{_fmt(n)}" if dt == "int32" else None)))
    for f in (1, 2, 4, 8, 64):
        cases.append(case_rows(f, quick, shrink))
    cases += [case_pyg(True, quick, shrink), case_pyg(False, quick, shrink)]
    cases.append(case_1d("sorted", f"sorted: add {_fmt(m)} f32 into 1e5, sorted indices", sz(10**5),
                         sz(m),
                         sorted_idx=True,
                         extra=[Impl("numpy", "np.add.reduceat over the segments", _reduceat,
                                     "close", rtol=1e-4, atol=1e-4)]))
    cases.append(case_1d("mean", f"mean: {_fmt(m)} f32 into 1e5, include_self", sz(10**5), sz(m),
                         red="mean"))
    return cases

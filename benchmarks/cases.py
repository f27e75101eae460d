"""The cases: the same inputs for every implementation, and each case's bandwidth floor.

Bandwidth floors
----------------
The floor of a case is the time of the cheapest memory traffic the operation has to do whatever
its algorithm, done by NumPy on one thread in the same run, on buffers that are allocated and
touched before timing (so it pays no page faults), timed like the implementations (median, same
rounds).  It is built from three NumPy primitives (``core.floor_call``):

* *copy* ``data``: ``np.copyto(buf, data)``; for a transposed (F-ordered) ``data`` the copy is
  done in memory order (``np.copyto(buf.T, data.T)``): the same bytes a transposing copy moves,
  which a cache-blocked transpose moves at about copy speed (NumPy's own transposing copy, several
  times slower, is reported beside it, not used as the floor);
* *read* N bytes: ``np.count_nonzero`` over N bytes of the array's own memory viewed as uint64
  (the fastest plain read in NumPy here, about 28 GB/s; a copy is about 24 GB/s counting read and
  write);
* *read+write* N bytes: ``np.copyto`` of N bytes of the array's memory into another buffer.

Per case:

* out of place, ``reduction="none"``: copy ``data`` + read the *visible* update bytes + read the
  index bytes.  Visible updates are the last write to each destination: (number of distinct
  destinations, from ``np.unique``) x (bytes per destination).  For ScatterUpdate-3 example 1
  the 2500 indices hold ~255 distinct values, so ~0.1 of the 1.5 GB of updates is visible.
* out of place, a reduction: copy ``data`` + read all update bytes + read the index bytes (every
  update takes part).
* in place (``out=data``), ``"none"``: read+write the visible update bytes (read each visible
  update, write it over its destination) + read the index bytes.
* in place, a reduction: read+write the touched output bytes (distinct destinations x item size:
  read the old value, write the new one) + read all update bytes + read the index bytes.
* the index bytes are those of the index array the operation is given, once: for an index
  expanded along the feature axis (a stride-0 view, graph cases) the 1-D row index under it.

The floor ignores the cost of random access (it reads and writes contiguous runs of the same
size) and the allocation of the output, so it is a lower bound, not a target an out-of-place call
can always reach: every out-of-place case also times ``data.copy()`` (a fresh array, as every
out-of-place call returns one) and reports it in the notes, so what the allocation costs can be
read off.  On the project's 2-core machine a second thread does not raise memory bandwidth
(docs/design.md, "The benchmarks' floor"), so the one-thread NumPy floor holds for
multi-threaded implementations too.  Reads under 4 kB are left out of every floor (they cost less
than the NumPy call that would time them); so the tiny case's floor is one ``np.copyto`` of 64
bytes, i.e. NumPy's call overhead.  The small-call cases (``s-FORM-N``, see ``case_small``) have
no floor at all: what they measure is the call, and their bar is ``np.add.at``.
"""
from __future__ import annotations

import warnings
from typing import List

import numpy as np

from . import core
from .core import Case, Impl
from .peers import ort_call, ov_call, t
from .small import np_at, np_mean, so_call, small_cases as small_f32_cases
from .sweep import sweep_cases

warnings.filterwarnings("ignore", message=r"index_reduce\(\) is in beta")

f32 = np.float32


def _so():
    import scatterops
    return scatterops


def _torch():
    import torch
    return torch


def _idx_bytes(x):
    return (x["indices"], None)


# --------------------------------------------------------------------------------------------
# a / h-a: OpenVINO ScatterUpdate-3 example 1 at full size


def case_update_seed(quick: bool, inplace: bool) -> Case:
    n0 = 100 if quick else 1000

    def make():
        rng = np.random.default_rng(101)
        return {"data": rng.random((n0, 256, 10, 15), dtype=f32),
                "indices": rng.integers(0, 256, size=(125, 20)),
                "updates": rng.random((n0, 125, 20, 10, 15), dtype=f32)}

    def so(x):
        f, d, i, u = _so().scatter_update, x["data"], x["indices"], x["updates"]
        if inplace:
            return lambda: f(d, i, u, 1, out=d)
        return lambda: f(d, i, u, 1)

    def npy(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        if inplace:
            def run():
                d[:, i] = u
                return d
        else:
            def run():
                o = d.copy()
                o[:, i] = u
                return o
        return run

    def torch_index_copy(x):
        torch = _torch()
        d, i, u = x["data"], x["indices"], x["updates"]
        td, ti, tu = t(d), t(i.reshape(-1)), t(u.reshape(n0, i.size, 10, 15))
        if inplace:
            return lambda: (td.index_copy_(1, ti, tu), d)[1]
        return lambda: torch.index_copy(td, 1, ti, tu).numpy()

    def ort_nd(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        nd = np.empty((n0, i.size, 2), np.int64)
        nd[..., 0] = np.arange(n0)[:, None]
        nd[..., 1] = i.reshape(-1)[None, :]
        return ort_call("ScatterND", {"data": d, "indices": nd,
                                      "updates": u.reshape(n0, i.size, 10, 15)}, d.shape, d.dtype)

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_update(p[0], p[1], p[2], ops.constant(np.int64(1))),
                       [x["data"], x["indices"], x["updates"]])

    def floor(x):
        u, i = x["updates"], x["indices"]
        visible = np.unique(i).size * n0 * 10 * 15 * u.itemsize
        if inplace:
            return core.floor_call(moves=[(u, visible)], reads=[(i, None)])
        return core.floor_call(copy_from=x["data"], reads=[(u, visible), (i, None)])

    impls: List[Impl] = [
        Impl("numpy", "o[:, idx] = u" if not inplace else "data[:, idx] = u", npy, check="anyof"),
        Impl("torch", "index_copy_" if inplace else "index_copy", torch_index_copy, check="anyof"),
    ]
    na = {}
    if inplace:
        na = {"onnxruntime": "no in-place form", "openvino": "no in-place form"}
    else:
        impls += [Impl("onnxruntime", "ScatterND, index of (row, idx) pairs", ort_nd, check="anyof"),
                  Impl("openvino", "ScatterUpdate-3", ov, check="anyof")]
    impls.append(Impl("scatterops", "scatter_update(..., axis=1" + (", out=data)" if inplace else ")"), so))
    shape = f"({n0},256,10,15)"
    return Case(
        key="h-a" if inplace else "a",
        name=(f"{'h-a in place' if inplace else 'a'}: ScatterUpdate-3 ex.1, {shape} f32, "
              f"idx (125,20), axis 1"),
        make=make, impls=impls, floor=floor, inplace=inplace, na=na,
        dests=lambda x: core.dests_update(x["data"].shape, x["indices"], x["updates"], 1),
        notes=[f"updates ({n0},125,20,10,15) f32 = {n0 * 375000 * 4 / 1e9:.2g} GB; 2500 indices on an axis "
               "of 256: only the last write to each of ~255 slices is visible",
               "torch: indices flattened to 2500, updates reshaped to "
               f"({n0},2500,10,15) (views)"]
              + ([] if inplace else ["onnxruntime has no ScatterUpdate: ScatterND with a "
                                     f"({n0},2500,2) int64 index of (row, idx) pairs, made untimed "
                                     f"({n0 * 2500 * 16 / 1e6:.0f} MB)"]))


# --------------------------------------------------------------------------------------------
# b: OpenVINO ScatterNDUpdate-3 example, full size


def case_nd_seed(quick: bool) -> Case:
    n0 = 100 if quick else 1000

    def make():
        rng = np.random.default_rng(102)
        flat = rng.choice(n0 * 256 * 10, size=25 * 125, replace=False)
        idx = np.stack(np.unravel_index(flat, (n0, 256, 10)), axis=-1).reshape(25, 125, 3)
        return {"data": rng.random((n0, 256, 10, 15), dtype=f32),
                "indices": idx.astype(np.int64),
                "updates": rng.random((25, 125, 15), dtype=f32)}

    def npy(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        where = tuple(i[..., j] for j in range(3))

        def run():
            o = d.copy()
            o[where] = u
            return o
        return run

    def torch_index_put(x):
        torch = _torch()
        td, tu = t(x["data"]), t(x["updates"])
        where = tuple(t(np.ascontiguousarray(x["indices"][..., j])) for j in range(3))
        return lambda: torch.index_put(td, where, tu).numpy()

    def ort(x):
        d = x["data"]
        return ort_call("ScatterND", {"data": d, "indices": x["indices"], "updates": x["updates"]},
                        d.shape, d.dtype)

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_nd_update(p[0], p[1], p[2]),
                       [x["data"], x["indices"], x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_nd, x["data"], x["indices"], x["updates"]
        return lambda: f(d, i, u)

    def floor(x):
        return core.floor_call(copy_from=x["data"], reads=[(x["updates"], None), _idx_bytes(x)])

    return Case(
        key="b", name=f"b: ScatterNDUpdate-3 ex., ({n0},256,10,15) f32, idx (25,125,3), upd (25,125,15)",
        make=make, floor=floor,
        impls=[Impl("numpy", "o[i, j, k] = u", npy),
               Impl("torch", "index_put", torch_index_put),
               Impl("onnxruntime", "ScatterND", ort),
               Impl("openvino", "ScatterNDUpdate-15", ov),
               Impl("scatterops", "scatter_nd", so)],
        notes=["3125 distinct index triples (no duplicates)"])


# --------------------------------------------------------------------------------------------
# c / h-c: scatter_nd add, 10^7 random updates into 10^7 elements


def case_nd_add(quick: bool, inplace: bool) -> Case:
    n = 10**6 if quick else 10**7

    def make():
        rng = np.random.default_rng(103)
        return {"data": rng.random(n, dtype=f32),
                "indices": rng.integers(0, n, size=(n, 1)),
                "updates": rng.random(n, dtype=f32)}

    def npy(x):
        d, i, u = x["data"], x["indices"][:, 0], x["updates"]
        if inplace:
            return lambda: (np.add.at(d, i, u), d)[1]

        def run():
            o = d.copy()
            np.add.at(o, i, u)
            return o
        return run

    def torch_index_put(x):
        torch = _torch()
        d = x["data"]
        td, ti, tu = t(d), t(np.ascontiguousarray(x["indices"][:, 0])), t(x["updates"])
        if inplace:
            return lambda: (td.index_put_((ti,), tu, accumulate=True), d)[1]
        return lambda: torch.index_put(td, (ti,), tu, accumulate=True).numpy()

    def torch_scatter_add(x):
        torch = _torch()
        d = x["data"]
        td, ti, tu = t(d), t(np.ascontiguousarray(x["indices"][:, 0])), t(x["updates"])
        if inplace:
            return lambda: (td.scatter_add_(0, ti, tu), d)[1]
        return lambda: torch.scatter_add(td, 0, ti, tu).numpy()

    def ort(threads=None):
        def build(x):
            d = x["data"]
            return ort_call("ScatterND", {"data": d, "indices": x["indices"], "updates": x["updates"]},
                            d.shape, d.dtype, threads=threads, reduction="add")
        return build

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_nd_update(p[0], p[1], p[2], "sum"),
                       [x["data"], x["indices"], x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_nd, x["data"], x["indices"], x["updates"]
        if inplace:
            return lambda: f(d, i, u, reduction="add", out=d)
        return lambda: f(d, i, u, reduction="add")

    def floor(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        if inplace:
            touched = np.unique(i).size * d.itemsize
            return core.floor_call(moves=[(d, touched)], reads=[(u, None), (i, None)])
        return core.floor_call(copy_from=d, reads=[(u, None), (i, None)])

    impls = [Impl("numpy", "np.add.at", npy),
             Impl("torch", "index_put_(accumulate=True)" if inplace else "index_put(accumulate=True)",
                  torch_index_put, check="close"),
             Impl("torch", "scatter_add_" if inplace else "scatter_add", torch_scatter_add, check="close")]
    na = {}
    if inplace:
        na = {"onnxruntime": "no in-place form", "openvino": "no in-place form"}
    else:
        impls += [Impl("onnxruntime", "ScatterND add", ort(), check="close"),
                  Impl("onnxruntime", "ScatterND add, 1 thread", ort(1), check="close", threads=1),
                  Impl("openvino", "ScatterNDUpdate-15 sum", ov, check="close")]
    impls.append(Impl("scatterops", "scatter_nd(add" + (", out=data)" if inplace else ")"), so))
    return Case(
        key="h-c" if inplace else "c",
        name=(f"{'h-c in place' if inplace else 'c'}: scatter_nd add, {n:.0e} f32 updates into "
              f"{n:.0e}, idx ({n:.0e},1)").replace("e+0", "e"),
        make=make, impls=impls, floor=floor, inplace=inplace, na=na,
        notes=[f"random indices: ~{1 - 1 / np.e:.0%} of elements hit, up to ~10 times"]
              + ([] if inplace else [
                  "onnxruntime ScatterND add is timed at the common thread count and at 1 thread: "
                  "its multi-threaded reduction is only exact (race-free) on 1 thread"]))


# --------------------------------------------------------------------------------------------
# d: graph message passing, scatter_elements along axis 0 with an expanded row index


def case_graph(quick: bool, red: str) -> Case:
    nodes, edges, feat = (10_000, 100_000, 64) if quick else (100_000, 1_000_000, 64)

    def make():
        rng = np.random.default_rng(104)
        rows = rng.integers(0, nodes, size=edges)
        return {"data": np.zeros((nodes, feat), f32),
                "rows": rows,
                "indices": np.broadcast_to(rows[:, None], (edges, feat)),   # stride-0 view
                "updates": rng.standard_normal((edges, feat), dtype=f32)}

    def dense(x):
        if "index_dense" not in x:
            x["index_dense"] = np.ascontiguousarray(x["indices"])
        return x["index_dense"]

    def npy(x):
        d, r, u = x["data"], x["rows"], x["updates"]
        if red == "add":
            def run():
                o = d.copy()
                np.add.at(o, r, u)
                return o
        elif red == "max":
            def run():
                o = d.copy()
                np.maximum.at(o, r, u)
                return o
        else:
            def run():
                o = d.copy()
                np.add.at(o, r, u)
                c = np.bincount(r, minlength=nodes) + 1          # include_self: data counts once
                hit = c > 1
                o[hit] = (o[hit] / c[hit, None]).astype(o.dtype)  # divide in float64, round once
                return o
        return run

    def torch_scatter_reduce(name):
        def build(x):
            torch = _torch()
            td, tu = t(x["data"]), t(x["updates"])
            ti = t(x["rows"]).view(-1, 1).expand(-1, feat)        # stride 0, as scatterops gets it
            if name == "scatter_add":
                return lambda: torch.scatter_add(td, 0, ti, tu).numpy()
            return lambda: torch.scatter_reduce(td, 0, ti, tu, name, include_self=True).numpy()
        return build

    def torch_index(name):
        def build(x):
            torch = _torch()
            td, tr, tu = t(x["data"]), t(x["rows"]), t(x["updates"])
            if name == "add":
                return lambda: torch.index_add(td, 0, tr, tu).numpy()
            return lambda: torch.index_reduce(td, 0, tr, tu, name, include_self=True).numpy()
        return build

    def ort(x):
        d = x["data"]
        return ort_call("ScatterElements", {"data": d, "indices": dense(x), "updates": x["updates"]},
                        d.shape, d.dtype, axis=0, reduction=red)

    def ov(x):
        ovred = {"add": "sum"}.get(red, red)
        return ov_call(lambda ops, p: ops.scatter_elements_update(
            p[0], p[1], p[2], ops.constant(np.int64(0)), reduction=ovred, use_init_val=True),
            [x["data"], dense(x), x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_elements, x["data"], x["indices"], x["updates"]
        return lambda: f(d, i, u, 0, reduction=red)

    def floor(x):
        return core.floor_call(copy_from=x["data"], reads=[(x["updates"], None), (x["rows"], None)])

    close = "exact" if red == "max" else "close"
    tol = dict(rtol=1e-4, atol=1e-5)
    if red == "add":
        torch_impls = [Impl("torch", "scatter_add", torch_scatter_reduce("scatter_add"), close, **tol),
                       Impl("torch", "scatter_reduce(sum)", torch_scatter_reduce("sum"), close, **tol),
                       Impl("torch", "index_add", torch_index("add"), close, **tol)]
        np_label = "np.add.at(o, rows, u)"
    elif red == "max":
        torch_impls = [Impl("torch", "scatter_reduce(amax)", torch_scatter_reduce("amax"), close),
                       Impl("torch", "index_reduce(amax)", torch_index("amax"), close)]
        np_label = "np.maximum.at(o, rows, u)"
    else:
        torch_impls = [Impl("torch", "scatter_reduce(mean)", torch_scatter_reduce("mean"), close, **tol),
                       Impl("torch", "index_reduce(mean)", torch_index("mean"), close, **tol)]
        np_label = "np.add.at + np.bincount"
    impls = [Impl("numpy", np_label, npy)] + torch_impls
    na = {}
    if red != "mean":
        impls.append(Impl("onnxruntime", f"ScatterElements {red}", ort, close, **tol))
    else:
        na["onnxruntime"] = "ONNX ScatterElements has no mean"
    impls += [Impl("openvino", f"ScatterElementsUpdate-12 {'sum' if red == 'add' else red}", ov,
                   close, **tol),
              Impl("scatterops", f"scatter_elements({red})", so)]
    return Case(
        key=f"d-{red}",
        name=f"d: graph {red}, {edges:.0e} x {feat} f32 messages into ({nodes:.0e},{feat}), axis 0"
             .replace("e+0", "e"),
        make=make, impls=impls, floor=floor, na=na,
        notes=["data = zeros; index = the row index expanded (stride 0) to (edges, 64) for scatterops "
               "and torch scatter*; torch index_* take the 1-D row index; onnxruntime and openvino "
               "get it materialised (int64, made untimed); include_self=True everywhere"]
              + (["mean with include_self: (0 + sum) / (count + 1); numpy divides in float64 "
                  "and rounds once, as scatterops"] if red == "mean" else []))


# --------------------------------------------------------------------------------------------
# e: scatter_elements none along axis 1


def case_elements_none(quick: bool) -> Case:
    rows, cols, k = (1024, 4096, 1024) if quick else (4096, 4096, 1024)

    def make():
        rng = np.random.default_rng(105)
        return {"data": rng.random((rows, cols), dtype=f32),
                "indices": rng.integers(0, cols, size=(rows, k)),
                "updates": rng.random((rows, k), dtype=f32)}

    def npy(x):
        d, i, u = x["data"], x["indices"], x["updates"]

        def run():
            o = d.copy()
            np.put_along_axis(o, i, u, axis=1)
            return o
        return run

    def torch_scatter(x):
        torch = _torch()
        td, ti, tu = t(x["data"]), t(x["indices"]), t(x["updates"])
        return lambda: torch.scatter(td, 1, ti, tu).numpy()

    def ort(x):
        d = x["data"]
        return ort_call("ScatterElements", {"data": d, "indices": x["indices"], "updates": x["updates"]},
                        d.shape, d.dtype, axis=1)

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_elements_update(p[0], p[1], p[2],
                                                                  ops.constant(np.int64(1))),
                       [x["data"], x["indices"], x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_elements, x["data"], x["indices"], x["updates"]
        return lambda: f(d, i, u, 1)

    def floor(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        flat = (np.arange(rows)[:, None] * cols + i).reshape(-1)
        visible = np.unique(flat).size * u.itemsize
        return core.floor_call(copy_from=d, reads=[(u, visible), (i, None)])

    return Case(
        key="e", name=f"e: scatter_elements none, ({rows},{cols}) f32, {k} random idx per row, axis 1",
        make=make, floor=floor,
        impls=[Impl("numpy", "np.put_along_axis", npy, check="anyof"),
               Impl("torch", "scatter", torch_scatter, check="anyof"),
               Impl("onnxruntime", "ScatterElements", ort, check="anyof"),
               Impl("openvino", "ScatterElementsUpdate-12", ov, check="anyof"),
               Impl("scatterops", "scatter_elements", so)],
        dests=lambda x: core.dests_elements(x["data"].shape, x["indices"], x["updates"], 1),
        notes=[f"~{cols * (1 - (1 - 1 / cols) ** k):.0f} of each row's {k} indices are distinct; "
               "with duplicates in a row the last wins (scatterops, the contract)"])


# --------------------------------------------------------------------------------------------
# f: other dtypes, and a non-contiguous data


def case_1d(quick: bool, kind: str) -> Case:
    """f-f16: add on float16; f-i64: max on int64 (scatter_elements along axis 0 of 1-D data)."""
    n, m = (10**4, 10**5) if quick else (10**5, 10**6)
    if kind == "f16":
        dtype, red, ovred = np.float16, "add", "sum"
    else:
        dtype, red, ovred = np.int64, "max", "max"

    def make():
        rng = np.random.default_rng(106)
        if kind == "f16":
            data = rng.random(n, dtype=f32).astype(np.float16)
            upd = rng.random(m, dtype=f32).astype(np.float16)
        else:
            data = rng.integers(-2**40, 2**40, size=n)
            upd = rng.integers(-2**40, 2**40, size=m)
        return {"data": data, "indices": rng.integers(0, n, size=m), "updates": upd}

    def npy(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        uf = np.add if red == "add" else np.maximum

        def run():
            o = d.copy()
            uf.at(o, i, u)
            return o
        return run

    def torch_scatter(x):
        torch = _torch()
        td, ti, tu = t(x["data"]), t(x["indices"]), t(x["updates"])
        if red == "add":
            return lambda: torch.scatter_add(td, 0, ti, tu).numpy()
        return lambda: torch.scatter_reduce(td, 0, ti, tu, "amax", include_self=True).numpy()

    def torch_index(x):
        torch = _torch()
        td, ti, tu = t(x["data"]), t(x["indices"]), t(x["updates"])
        if red == "add":
            return lambda: torch.index_add(td, 0, ti, tu).numpy()
        return lambda: torch.index_reduce(td, 0, ti, tu, "amax", include_self=True).numpy()

    def ort(x):
        d = x["data"]
        return ort_call("ScatterElements", {"data": d, "indices": x["indices"], "updates": x["updates"]},
                        d.shape, d.dtype, axis=0, reduction=red)

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_elements_update(
            p[0], p[1], p[2], ops.constant(np.int64(0)), reduction=ovred, use_init_val=True),
            [x["data"], x["indices"], x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_elements, x["data"], x["indices"], x["updates"]
        return lambda: f(d, i, u, 0, reduction=red)

    def floor(x):
        return core.floor_call(copy_from=x["data"], reads=[(x["updates"], None), _idx_bytes(x)])

    check = "close" if kind == "f16" else "exact"
    tol = dict(rtol=1e-2, atol=1e-2)
    tname = "scatter_add" if red == "add" else "scatter_reduce(amax)"
    iname = "index_add" if red == "add" else "index_reduce(amax)"
    label = "float16 add" if kind == "f16" else "int64 max"
    return Case(
        key=f"f-{kind}",
        name=f"f: {label}, {m:.0e} updates into {n:.0e}, scatter_elements axis 0".replace("e+0", "e"),
        make=make, floor=floor,
        impls=[Impl("numpy", f"np.{'add' if red == 'add' else 'maximum'}.at", npy),
               Impl("torch", tname, torch_scatter, check, **tol),
               Impl("torch", iname, torch_index, check, **tol),
               Impl("onnxruntime", f"ScatterElements {red}", ort, check, **tol),
               Impl("openvino", f"ScatterElementsUpdate-12 {ovred}", ov, check, **tol),
               Impl("scatterops", f"scatter_elements({red})", so)],
        notes=(["float16: one rounding per update (np.add.at); a peer that sums in float32 is "
                "checked with allclose(rtol=1e-2, atol=1e-2)"] if kind == "f16" else
               ["values in [-2^40, 2^40): int64 that does not fit int32"]))


def _transposing_copy(x):
    d = x["data"]
    buf = np.empty(d.shape, d.dtype)
    np.copyto(buf, d)
    return lambda: np.copyto(buf, d)


def case_view(quick: bool) -> Case:
    """f-view: scatter_update add along axis 0 of a transposed (non-contiguous) data."""
    rows, cols, k = (1024, 2048, 512) if quick else (2048, 4096, 1024)

    def make():
        rng = np.random.default_rng(107)
        base = rng.random((cols, rows), dtype=f32)
        idx = rng.integers(0, rows, size=k)
        return {"data": base.T,                      # (rows, cols), strides (4, 4 * rows)
                "indices": idx, "nd_indices": np.ascontiguousarray(idx[:, None]),
                "updates": rng.random((k, cols), dtype=f32)}

    def npy(x):
        d, i, u = x["data"], x["indices"], x["updates"]

        def run():
            o = d.copy()            # C order
            np.add.at(o, i, u)
            return o
        return run

    def torch_index_add(x):
        torch = _torch()
        td, ti, tu = t(x["data"]), t(x["indices"]), t(x["updates"])
        return lambda: torch.index_add(td, 0, ti, tu).numpy()

    def ort(x):
        d = x["data"]       # the view: ORT's binding makes it contiguous itself, inside the call
        return ort_call("ScatterND", {"data": d, "indices": x["nd_indices"], "updates": x["updates"]},
                        d.shape, d.dtype, reduction="add")

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_nd_update(p[0], p[1], p[2], "sum"),
                       [x["data"], x["nd_indices"], x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_update, x["data"], x["indices"], x["updates"]
        return lambda: f(d, i, u, 0, reduction="add")

    def floor(x):
        return core.floor_call(copy_from=x["data"], reads=[(x["updates"], None), _idx_bytes(x)])

    return Case(
        key="f-view",
        name=f"f: add on a transposed view, ({rows},{cols}) f32, {k} rows, scatter_update axis 0",
        make=make, floor=floor,
        impls=[Impl("numpy", "o = data.copy(); np.add.at", npy),
               Impl("torch", "index_add", torch_index_add, "close"),
               Impl("onnxruntime", "ScatterND add (k=1)", ort, "close"),
               Impl("openvino", "ScatterNDUpdate-15 sum (k=1)", ov, "close"),
               Impl("scatterops", "scatter_update(add)", so)],
        extras={"np.copyto(C-ordered buffer, data) (NumPy's transposing copy)": _transposing_copy},
        notes=["data = base.T, a transposed view, given as is to every implementation (torch as a "
               "strided tensor; onnxruntime's and openvino's bindings make it contiguous inside "
               "the call); onnxruntime and openvino get the index as (k, 1) for ScatterND"])



# --------------------------------------------------------------------------------------------
# g: a tiny call (per-call overhead)


def case_tiny(quick: bool) -> Case:
    def make():
        return {"data": np.arange(16, dtype=f32), "indices": np.array([3, 1, 12, 7], np.int64),
                "updates": np.array([-1.0, -2.0, -3.0, -4.0], f32)}

    def npy(x):
        d, i, u = x["data"], x["indices"], x["updates"]

        def run():
            o = d.copy()
            o[i] = u
            return o
        return run

    def torch_index_copy(x):
        torch = _torch()
        td, ti, tu = t(x["data"]), t(x["indices"]), t(x["updates"])
        return lambda: torch.index_copy(td, 0, ti, tu).numpy()

    def ort(x):
        d = x["data"]
        return ort_call("ScatterElements", {"data": d, "indices": x["indices"], "updates": x["updates"]},
                        d.shape, d.dtype, axis=0)

    def ov(x):
        return ov_call(lambda ops, p: ops.scatter_update(p[0], p[1], p[2], ops.constant(np.int64(0))),
                       [x["data"], x["indices"], x["updates"]])

    def so(x):
        f, d, i, u = _so().scatter_update, x["data"], x["indices"], x["updates"]
        return lambda: f(d, i, u)

    def floor(x):
        return core.floor_call(copy_from=x["data"], reads=[(x["updates"], None), _idx_bytes(x)])

    def bare_noop(x):
        d = x["data"]
        return lambda: len(d)

    return Case(
        key="g", name="g: tiny, 4 updates into 16 f32 (per-call overhead), scatter_update axis 0",
        make=make, floor=floor,
        impls=[Impl("numpy", "o = d.copy(); o[idx] = u", npy),
               Impl("torch", "index_copy", torch_index_copy),
               Impl("onnxruntime", "ScatterElements", ort),
               Impl("openvino", "ScatterUpdate-3", ov),
               Impl("scatterops", "scatter_update", so)],
        extras={"len(data)": bare_noop},
        notes=["the floor here is one np.copyto call (the 48 bytes of updates and indices are below "
               "what a timed read can show), so it is mostly NumPy's call overhead"])


# --------------------------------------------------------------------------------------------
# s: small calls -- everyday calls of a few updates, where the cost is mostly the call itself


#: (form key, form as printed, target ratio NumPy / scatterops); see ``case_small``
SMALL_FORMS = [
    ("arrays", "arrays", 2.0),
    ("scalar", "updates a Python float", 2.0),
    ("list-upd", "updates a Python list", 1.0),
    ("list-idx", "indices a Python list", 1.0),
    ("cast", "float32 updates (a cast)", 2.0),
    ("int32", "int32 indices", 2.0),
    ("uint8", "uint8 indices", 2.0),
    ("bcast", "broadcast updates (1,)", 2.0),
    ("mean", 'reduction="mean"', 2.0),
    ("noself", "include_self=False", 2.0),
    ("out", "out= a preallocated array", 2.0),
    ("inplace", "in place, out=data", 1.0),
]
SMALL_SIZES = (4, 64, 1000)


def case_small(form: str, n: int) -> Case:
    """s-FORM-N: ``scatter_elements(data, indices, updates, 0, reduction="add")`` with ``n``
    updates into ``max(16, n)`` float64 elements (random int64 indices, the last one repeating the
    first, so there is always a duplicate), in one call form, against ``np.add.at`` -- which gives
    the same bits for ``add`` -- on a copy of data (``o = d.copy(); np.add.at(o, i, u)``), or in
    place for the in-place form.  Whatever the form needs (a list, a cast array, an output) is made
    once, untimed; the timed calls of both libraries get the same objects.

    Targets (NumPy time / scatterops time): at least 2 where the arguments are arrays or scalars,
    at least 1 where a Python list has to be converted and in place.  ``mean`` has no NumPy call:
    its bar is the add (``np.add.at`` on a copy), and its NumPy spelling (``np.add.at`` sums,
    ``np.bincount`` counts, a division) is shown beside it; ``include_self=False`` likewise, with
    ``o[i] = 0`` before the add as its spelling."""
    m = max(16, n)
    label, ratio = {k: (lbl, r) for k, lbl, r in SMALL_FORMS}[form]
    op = {"mean": "mean", "noself": "add"}.get(form, "add")

    def make():
        rng = np.random.default_rng(108)
        d = rng.standard_normal(m)
        i = rng.integers(0, m, size=n)
        i[-1] = i[0]
        u = rng.standard_normal(n)
        x = {"data": d, "indices": i, "updates": u}
        if form == "scalar":
            x["updates"] = 1.5
        elif form == "list-upd":
            x["updates"] = u.tolist()
        elif form == "list-idx":
            x["indices"] = i.tolist()
        elif form == "cast":
            x["updates"] = u.astype(np.float32)
        elif form in ("int32", "uint8"):
            x["indices"] = i.astype(form)
        elif form == "bcast":
            x["updates"] = np.array([1.5])
        return x

    def so(x):
        return so_call(x, form, op)

    def so_add(x):              # what the add bar must give, as scatterops gives it
        return _so().scatter_elements(x["data"], x["indices"], x["updates"], 0, reduction="add")

    np_add = np_at(np.add, inplace=form == "inplace", out=form == "out")

    def np_noself(x):
        d, i, u = x["data"], x["indices"], x["updates"]

        def run():
            o = d.copy()
            o[i] = 0.0
            np.add.at(o, i, u)
            return o
        return run

    if form == "inplace":
        bar = "np.add.at(d, i, u)"
    elif form == "out":
        bar = "np.copyto(o, d); np.add.at(o, i, u)"
    else:
        bar = "o = d.copy(); np.add.at(o, i, u)"
    impls = [Impl("scatterops", "scatter_elements(" + {
        "mean": 'reduction="mean"', "noself": 'reduction="add", include_self=False',
        "out": 'reduction="add", out=o', "inplace": 'reduction="add", out=data'}.get(
            form, 'reduction="add"') + ")", so)]
    if form in ("mean", "noself"):
        impls.append(Impl("numpy", bar + " (the add: the bar)", np_add, ref=so_add))
        bar += " (the add: the bar)"
        if form == "mean":
            impls.append(Impl("numpy", "np.add.at + np.bincount + a division", np_mean(m), "close",
                              rtol=1e-12, atol=0.0))
        else:
            impls.append(Impl("numpy", "o[i] = 0; np.add.at(o, i, u)", np_noself, "close",
                              rtol=1e-12, atol=0.0))
    else:
        impls.append(Impl("numpy", bar, np_add))
    return Case(
        key=f"s-{form}-{n}", name=f"s: small call, {label}, {n} updates into {m} f64",
        make=make, impls=impls, floor=None, inplace=form == "inplace", time_copy=False,
        target=core.Target(form=label, n=n, ratio=ratio, bar=bar),
        na={p: "not timed for small calls" for p in ("torch", "onnxruntime", "openvino")})


def small_cases() -> List[Case]:
    return [case_small(form, n) for form, _, _ in SMALL_FORMS for n in SMALL_SIZES
            if not (form == "uint8" and n > 255)]        # uint8 cannot address 1000 elements


# --------------------------------------------------------------------------------------------
# threads: one large call at 1, 2, 4 and 64 requested threads, side by side


#: the thread counts asked for with ``scatterops.threads(n)``; calls use at most the CPUs this
#: process may use, so on a 2-CPU machine 4 and 64 run 2 threads
THREAD_COUNTS = (1, 2, 4, 64)


def case_threads(quick: bool) -> Case:
    """threads: message passing (scatter_elements add along axis 0, an index expanded along the
    features) with 1, 2, 4 and 64 threads requested: a count above the CPUs this process may
    use runs that many, so on 2 CPUs the last three rows time the same 2 threads."""
    nodes, edges, feats = (20000, 100000, 32) if quick else (100000, 500000, 64)

    def make():
        rng = np.random.default_rng(211)
        rows = rng.integers(0, nodes, edges)
        msg = rng.standard_normal((edges, feats)).astype(f32)
        return {"data": rng.standard_normal((nodes, feats)).astype(f32),
                "indices": np.broadcast_to(rows[:, None], msg.shape), "rows": rows,
                "updates": msg}

    def so_threads(n):
        def build(x):
            f, d, i, u = _so().scatter_elements, x["data"], x["indices"], x["updates"]
            block = _so().threads(n)

            def run():
                with block:
                    return f(d, i, u, 0, reduction="add")
            return run
        return build

    def floor(x):
        return core.floor_call(copy_from=x["data"], reads=[(x["updates"], None), (x["rows"], None)])

    try:
        cap = _thread_cap()
    except ImportError:                 # no scatterops: the case reports that itself
        cap = max(THREAD_COUNTS)
    return Case(
        key="threads",
        name=f"threads: scatter_elements add, ({nodes},{feats}) f32, {edges} rows along axis 0, "
             f"threads(n), n = {', '.join(map(str, THREAD_COUNTS))}",
        make=make, floor=floor,
        impls=[Impl("scatterops", f"threads({n})", so_threads(n), threads=min(n, cap))
               for n in THREAD_COUNTS],
        na={p: "scatterops' own thread counts only" for p in ("numpy", "torch", "onnxruntime",
                                                               "openvino")},
        notes=[f"threads(n) runs min(n, {cap}) threads, {cap} being the CPUs this process may use "
               "(affinity and cgroup CPU quota); the results are bit-identical"])


def _thread_cap() -> int:
    """The most threads a call may use here (asking for more warns once: not here)."""
    import warnings
    so = _so()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with so.threads(so._core.POOL_MAX):
            return so.get_num_threads()


# --------------------------------------------------------------------------------------------


def all_cases(quick: bool) -> List[Case]:
    """In the order they run (and are listed)."""
    return [
        case_update_seed(quick, inplace=False),
        case_nd_seed(quick),
        case_nd_add(quick, inplace=False),
        case_graph(quick, "add"),
        case_graph(quick, "max"),
        case_graph(quick, "mean"),
        case_elements_none(quick),
        case_1d(quick, "f16"),
        case_1d(quick, "i64"),
        case_view(quick),
        case_tiny(quick),
        case_update_seed(quick, inplace=True),
        case_nd_add(quick, inplace=True),
    ] + sweep_cases(quick) + small_cases() + small_f32_cases() + [
        case_threads(quick),
    ]

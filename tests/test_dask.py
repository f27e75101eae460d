"""scatterops.dask: lazy scatters on Dask arrays, bit-identical to the top-level functions.

Hypothesis draws calls of all three functions (every reduction, include_self, every mode,
several dtypes, negative and duplicate indices, out-of-range ones now and then, broadcast and
scalar updates)
and chunkings of data, indices and updates (chunks of size 1, uneven chunks), runs them on the
threaded scheduler and compares bytes with the top-level call -- or, when the top-level call
raises, the exception: the same class and message, at call time, or when computed for a bad
index value.  The tests marked ``cluster`` start a 2-process distributed.LocalCluster on
loopback (one of them kills a worker during the compute); tools/sanitize.sh leaves them out.
Needs the ``dask`` extra; skips without it (tests/test_strategies.py checks the import error
that names the extra).
"""
from __future__ import annotations

import contextlib
import os
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

from extras import need

dask = need("dask")        # skips with "needs dask: pip install -e '.[dask]'"
import dask.array as da    # noqa: E402

import scatterops
import scatterops.dask as sd
from scatterops.strategies import assert_identical
from strategies import assert_lazy_as_top, chunking

FUNCS = ("scatter_update", "scatter_nd", "scatter_elements")
REDUCTIONS = ("none", "add", "sub", "mul", "max", "min", "mean", "sum", "prod", "amax")
DTYPES = [np.dtype(t) for t in ("f2", "f4", "f8", "i1", "u2", "i8", "c8", "?", "g", "U2", "O")]


# ----------------------------------------------------------------------------- drawing calls

def _values(draw, dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    raw = draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n))
    if dtype.kind == "U":
        return np.array([str(v) for v in raw], dtype=dtype).reshape(shape)
    if dtype.kind == "O":
        return np.array(raw + [None], dtype=object)[:-1].reshape(shape)
    vals = np.array(raw).reshape(shape)
    if dtype.kind in "fc":
        vals = vals / 4          # inexact sums: the order of the updates shows in the bits
    if dtype.kind == "u":
        vals = np.abs(vals)
    return vals.astype(dtype)


@st.composite
def calls(draw):
    func = draw(st.sampled_from(FUNCS))
    dtype = draw(st.sampled_from(DTYPES))
    r = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=r, max_size=r)))
    axis = draw(st.integers(-r, r - 1))
    bad = draw(st.integers(0, 3)) == 0             # now and then an index out of range
    if func == "scatter_update":
        ishape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=2)))
        s = shape[axis]
        ushape = shape[:axis % r] + ishape + shape[axis % r + 1:]
        sizes = [s] * int(np.prod(ishape, dtype=np.int64))
    elif func == "scatter_nd":
        k = draw(st.integers(0, r))
        lead = tuple(draw(st.lists(st.integers(0, 6), min_size=0, max_size=2)))
        ishape = lead + (k,)
        ushape = lead + shape[k:]
        sizes = list(shape[:k]) * int(np.prod(lead, dtype=np.int64))
    else:
        ishape = tuple(draw(st.integers(0, shape[d] if d != axis % r else 6)) for d in range(r))
        ushape = ishape
        sizes = [shape[axis]] * int(np.prod(ishape, dtype=np.int64))
    values = [draw(st.integers(-s, s - 1)) for s in sizes]   # negatives and duplicates
    if bad and values:
        for _ in range(draw(st.integers(1, 2))):
            j = draw(st.integers(0, len(values) - 1))
            values[j] = sizes[j] + draw(st.integers(0, 2)) if draw(st.booleans()) \
                else -sizes[j] - 1
    idt = np.dtype(np.int64) if bad else np.dtype(draw(st.sampled_from(("i8", "i4", "u1", "i2"))))
    if idt.kind == "u":
        values = [v % s for v, s in zip(values, sizes)]
    indices = np.array(values, dtype=idt).reshape(ishape)
    upd_form = draw(st.sampled_from(("full", "broadcast", "scalar")))
    if upd_form == "scalar":
        updates = 1 if dtype.kind not in "fcUO" else 0.5 if dtype.kind != "U" else "x"
        if dtype.kind == "O":
            updates = 1
    elif upd_form == "broadcast" and ushape:
        updates = _values(draw, dtype, (1,) * (len(ushape) - 1) + ushape[-1:])
    else:
        updates = _values(draw, dtype, ushape)
    data = _values(draw, dtype, shape)
    chunks = tuple(draw(chunking(n)) for n in shape)
    return dict(func=func, data=data, indices=indices, updates=updates, axis=axis,
                reduction=draw(st.sampled_from(REDUCTIONS)), include_self=draw(st.booleans()),
                mode=draw(st.sampled_from(("raise", "wrap", "clip", "drop"))),
                chunks=chunks,
                idx_chunks=tuple(draw(chunking(n)) for n in indices.shape),
                forms=(draw(st.sampled_from(("dask", "numpy"))),       # data
                       draw(st.sampled_from(("dask", "numpy", "list"))),  # indices
                       draw(st.sampled_from(("dask", "numpy")))))      # updates


def _top(c):
    args = (c["data"], c["indices"], c["updates"])
    if c["func"] != "scatter_nd":
        args += (c["axis"],)
    return getattr(scatterops, c["func"])(*args, reduction=c["reduction"],
                                          include_self=c["include_self"], mode=c["mode"])


def _lazy(c):
    data, indices, updates = c["data"], c["indices"], c["updates"]
    kw = {}
    if c["forms"][0] == "dask":
        data = da.from_array(data, chunks=c["chunks"])
    else:
        kw["chunks"] = c["chunks"]
    if c["forms"][1] == "dask":
        indices = da.from_array(indices, chunks=c["idx_chunks"])
    elif c["forms"][1] == "list" and indices.size:     # (an empty list would lose its shape)
        indices = indices.tolist()
    if c["forms"][2] == "dask" and isinstance(updates, np.ndarray):
        updates = da.from_array(updates, chunks=1)
    args = (data, indices, updates)
    if c["func"] != "scatter_nd":
        args += (c["axis"],)
    return getattr(sd, c["func"])(*args, reduction=c["reduction"],
                                  include_self=c["include_self"], mode=c["mode"], **kw)


def _same_bits(want: np.ndarray, got: np.ndarray):
    # bits, padding aside (longdouble's); object elements equal (a cluster pickles them)
    assert_identical(got, want, objects="eq")


@given(calls())
def test_matches_the_top_level_function_bit_for_bit_or_raises_as_it_does(c):
    def same(want, lazy):
        assert lazy.chunks == da.from_array(c["data"], chunks=c["chunks"]).chunks
        _same_bits(want, lazy.compute(scheduler="threads"))
    assert_lazy_as_top(lambda: _top(c), lambda: _lazy(c), same)


# ----------------------------------------------------------------------------- fixed cases

@pytest.mark.parametrize("indices", [[], np.empty((9, 9, 0)), np.empty((0,), np.float32)],
                         ids=["empty-list", "float-9x9x0", "float-0"])
def test_an_empty_index_array_of_any_dtype_routes_as_the_top_level_call_takes_it(indices):
    # scatter_nd with k = 0 components: each index tuple is the whole of data, whatever the
    # (empty) index array's dtype; the routing once refused a non-integer one
    data = np.array([-1.0, -2.0, 0.0, -3.0, -1.0])
    updates = np.arange(5.0) if np.ndim(indices) <= 1 else np.arange(405.0).reshape(9, 9, 5)
    for red in ("none", "mul"):
        want = scatterops.scatter_nd(data, indices, updates, reduction=red)
        got = sd.scatter_nd(data, indices, updates, reduction=red, chunks=(1,)).compute()
        _same_bits(want, got)


def test_multi_dimensional_index_chunks_keep_the_global_c_order():
    # indices chunked on both axes: chunk order is not C order; the last write must still win
    # and the float sums must be added in C order
    rng = np.random.default_rng(1)
    data = np.zeros(3, np.float32)
    indices = rng.integers(0, 3, (6, 6))
    updates = rng.standard_normal((6, 6)).astype(np.float32) * 1e4
    for red in ("none", "add", "mean"):
        want = scatterops.scatter_update(data, indices, updates, reduction=red)
        got = sd.scatter_update(data, da.from_array(indices, chunks=(2, 3)),
                                da.from_array(updates, chunks=(3, 2)), reduction=red,
                                chunks=1).compute(scheduler="threads")
        _same_bits(want, got)
        nd = sd.scatter_nd(data, da.from_array(indices[..., None], chunks=(2, 3, 1)), updates,
                           reduction=red, chunks=2).compute(scheduler="threads")
        _same_bits(scatterops.scatter_nd(data, indices[..., None], updates, reduction=red), nd)


def test_the_first_bad_index_in_c_order_is_reported_whichever_chunk_runs_first():
    indices = np.zeros(100, np.int64)
    indices[[17, 60, 90]] = [-50, 11, 10]
    data = np.zeros(10)
    with pytest.raises(IndexError) as want:
        scatterops.scatter_update(data, indices, 1.0)
    for idx in (indices, da.from_array(indices, chunks=7)):
        lazy = sd.scatter_update(data, idx, 1.0, chunks=3)
        with pytest.raises(IndexError) as got:
            lazy.compute(scheduler="threads")
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("mode", ["wrap", "clip", "drop"])
def test_each_mode_sends_an_index_outside_where_the_top_level_call_does(mode):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((9, 4)).astype(np.float32)
    idx = rng.integers(-30, 30, 40)                    # most of them outside
    pairs = np.stack([idx, rng.integers(-9, 9, 40)], axis=-1)
    elements = rng.integers(-30, 30, (8, 4))
    upd = rng.standard_normal((40, 4)).astype(np.float32)
    calls = [("scatter_update", (data, idx, upd)), ("scatter_nd", (data, pairs, upd[:, 0])),
             ("scatter_elements", (data, elements, upd[:8]))]
    for func, (d, i, u) in calls:
        want = getattr(scatterops, func)(d, i, u, reduction="add", mode=mode)
        for lazy_i in (i, da.from_array(i, chunks=7)):
            got = getattr(sd, func)(d, lazy_i, u, reduction="add", mode=mode, chunks=(2, 3))
            _same_bits(want, got.compute(scheduler="threads"))


def _task_count(lazy):
    return len(lazy.dask.layers[lazy.name])


def test_graph_with_numpy_indices_has_tasks_only_for_pairs_that_carry_updates():
    data = np.zeros(100)
    indices = np.array([31, 32, 35, 38] * 10)      # all in block 3 of 10
    lazy = sd.scatter_update(data, indices, 1.0, reduction="add", chunks=10)
    # U' routing tasks + P pieces + B blocks: update chunks of one block's size (10), so
    # U' = 4, each with one piece, B = 10
    assert _task_count(lazy) == 4 + 4 + 10
    want = scatterops.scatter_update(data, indices, 1.0, reduction="add")
    _same_bits(want, lazy.compute(scheduler="threads"))
    # spread over blocks 0 and 9, in two update chunks of ~1 block each
    indices = np.array([1, 95] * 10)
    lazy = sd.scatter_update(data, indices, 1.0, chunks=10)
    assert _task_count(lazy) == 2 + 4 + 10


def test_graph_with_dask_indices_is_built_without_computing_anything():
    computed = []

    def watched(block):
        computed.append(block.shape)
        return block

    indices = da.from_array(np.arange(40) % 20, chunks=8).map_blocks(
        watched, dtype=np.int64, meta=np.array((), np.int64))
    lazy = sd.scatter_update(np.zeros(20), indices, 1.0, reduction="add", chunks=5)
    assert computed == []
    # U routing + U error items + 1 check + U * R pieces + B applies; U = 5, R = B = 4
    assert _task_count(lazy) == 5 + 5 + 1 + 5 * 4 + 4
    _same_bits(np.full(20, 2.0), lazy.compute(scheduler="threads"))


def test_call_time_errors_are_the_top_level_ones_for_lazy_arguments():
    data = da.zeros((4, 5), chunks=2, dtype=np.uint8)
    indices = da.zeros(3, chunks=2, dtype=np.int64)
    cases = [
        (dict(updates=da.zeros((3, 4), chunks=2, dtype=np.uint8)), ValueError),
        (dict(updates=da.zeros((3, 5), chunks=2, dtype=np.float64)), TypeError),
        (dict(updates=da.zeros((3, 5), chunks=2, dtype=np.uint8), reduction="mean2"), ValueError),
        (dict(updates=1, axis=2), np.exceptions.AxisError),
        (dict(updates=1, indices=da.zeros(3, chunks=2)), TypeError),
    ]
    for kw, exc in cases:
        kw = dict(dict(indices=indices, axis=0, reduction="none"), **kw)
        with pytest.raises(exc) as want:
            scatterops.scatter_update(np.zeros((4, 5), np.uint8), kw["indices"].compute()
                                      if hasattr(kw["indices"], "compute") else kw["indices"],
                                      np.asarray(kw["updates"]) if hasattr(kw["updates"], "compute")
                                      else kw["updates"], kw["axis"], reduction=kw["reduction"])
        with pytest.raises(exc) as got:
            sd.scatter_update(data, kw["indices"], kw["updates"], kw["axis"],
                              reduction=kw["reduction"])
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("arg", ["data", "indices", "updates"])
def test_unknown_chunk_sizes_are_a_value_error_naming_the_argument(func, arg):
    """x[x > 3] has chunks of unknown (NaN) size: a ValueError that names the argument and
    compute_chunk_sizes(), as dask's own errors do, before any graph is built."""
    x = da.from_array(np.arange(8), chunks=3)
    unknown = x[x > 3]
    call = {"data": np.zeros(8), "indices": np.arange(4) % 2 if func != "scatter_nd"
            else (np.arange(4) % 2)[:, None], "updates": 1.0}
    call[arg] = {"data": unknown.astype(np.float64), "updates": unknown.astype(np.float64),
                 "indices": (unknown % 2) if func != "scatter_nd" else (unknown % 2)[:, None]}[arg]
    with pytest.raises(ValueError, match=rf"{arg} has unknown chunk sizes .* "
                                         rf"{arg}\.compute_chunk_sizes\(\)"):
        getattr(sd, func)(call["data"], call["indices"], call["updates"])


def test_out_is_refused_and_chunks_applies_to_numpy_data_only():
    with pytest.raises(TypeError, match="lazy result has no place to write"):
        sd.scatter_nd(np.zeros(3), [[0]], [1.0], out=np.zeros(3))
    with pytest.raises(TypeError, match="chunks= applies to a NumPy data"):
        sd.scatter_nd(da.zeros(3, chunks=1), [[0]], [1.0], chunks=2)
    assert sd.scatter_nd(np.zeros(6), [[0]], [1.0], chunks=4).chunks == ((4, 2),)


def test_each_task_runs_its_core_call_under_a_thread_local_count(monkeypatch):
    seen = []

    @contextlib.contextmanager
    def threads(n):
        seen.append((n, threading.get_ident()))
        yield

    monkeypatch.setattr(scatterops, "threads", threads, raising=False)
    sd.scatter_update(np.zeros(10), [1, 8], 1.0, chunks=5).compute(scheduler="sync")
    assert [n for n, _ in seen] == [1, 1]
    seen.clear()
    with dask.config.set({"scatterops.threads-per-task": 2}):
        lazy = sd.scatter_update(np.zeros(10), [1, 8], 1.0, chunks=5)
    lazy.compute(scheduler="sync")
    assert [n for n, _ in seen] == [2, 2]


# ----------------------------------------------------------------------------- a real cluster

def _big_case(seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(20_000).astype(np.float32)
    indices = rng.integers(-20_000, 20_000, 200_000)
    updates = rng.standard_normal(200_000).astype(np.float32)
    return data, indices, updates


@pytest.mark.cluster
def test_on_a_two_process_cluster_the_bits_are_those_of_one_process(client):
    data, indices, updates = _big_case()
    for red in ("add", "mean", "none"):
        want = scatterops.scatter_update(data, indices, updates, reduction=red)
        lazy = sd.scatter_update(da.from_array(data, chunks=3000),
                                 da.from_array(indices, chunks=30_000),
                                 da.from_array(updates, chunks=30_000), reduction=red)
        _same_bits(want, client.compute(lazy).result())


def _slow(block):
    import time
    time.sleep(0.3)
    return block


@pytest.mark.cluster
def test_a_worker_killed_during_the_compute_does_not_change_the_result(client):
    import signal
    data, indices, updates = _big_case(1)
    want = scatterops.scatter_update(data, indices, updates, reduction="add")
    slow_updates = da.from_array(updates, chunks=20_000).map_blocks(_slow, dtype=np.float32)
    lazy = sd.scatter_update(da.from_array(data, chunks=3000),
                             da.from_array(indices, chunks=20_000), slow_updates,
                             reduction="add")
    future = client.compute(lazy)
    while not any(client.processing().values()):   # wait until tasks run on the workers
        threading.Event().wait(0.05)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    assert not future.done()
    os.kill(pids[victim], signal.SIGKILL)
    _same_bits(want, future.result())
    assert victim not in client.run(os.getpid) or client.run(os.getpid)[victim] != pids[victim]


# A call with no update (an empty index space) is a copy of data at the top level; the
# Dask routing had no value to route and failed when computed: found by the fuzz target.
@pytest.mark.parametrize("func,args,kw", [
    ("scatter_elements", (np.zeros(3), [], np.zeros(0)), {}),
    ("scatter_elements", (np.zeros((2, 3)), np.zeros(0, np.intp), np.zeros(0), 1), {}),
    ("scatter_update", (np.zeros((2, 3)), np.zeros((0, 2), int), np.zeros((2, 0, 3)), 1), {}),
    ("scatter_nd", (np.arange(6.).reshape(2, 3), np.zeros((0, 1), int), 5.0), {}),
    ("scatter_elements", (np.arange(3, dtype=np.int16), [], 1), {"reduction": "add"}),
])
def test_a_call_with_no_update_computes_to_data(func, args, kw):
    want = getattr(scatterops, func)(*args, **kw)
    got = getattr(sd, func)(*args, chunks=2, **kw)
    assert isinstance(got, da.Array)
    assert_identical(got.compute(), want)

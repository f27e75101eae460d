"""scatterops.dask.group_reduce and group_softmax: lazy, and bit-identical to the top-level
functions on the computed inputs for every chunking, every func, NumPy or dask groups.

Hypothesis draws the call (every func the dtype takes, 1-D or 2-D values, any axis, ids out of
range under both modes, fill values, ddof) and the chunkings of values and groups (chunks of
size 1, uneven chunks); the threaded scheduler computes it and the bytes are compared with the
top-level call -- or, when the top-level call raises, the exception: the same class and message,
at call time, or when computed for an id out of range.  The tests marked ``cluster`` run on a
2-process distributed.LocalCluster on loopback.  Needs the ``dask`` extra; skips without it.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, strategies as st

from extras import need

dask = need("dask")
import dask.array as da    # noqa: E402

import scatterops
import scatterops.dask as sd
from scatterops._reference_groups import BASE, FUNCS, check_pair
from scatterops.strategies import assert_identical
from strategies import assert_lazy_as_top, chunking

DTYPES = [np.dtype(t) for t in ("f8", "f4", "f2", "i4", "u1", "?", "c8", "M8[s]", "U2", "O")]


def _takes(func, dtype):
    try:
        check_pair("group_reduce", func, dtype)
    except TypeError:
        return False
    return True


def _values(draw, dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    raw = np.array(draw(st.lists(st.sampled_from([-2.5, -1.0, -0.0, 0.0, 1.0, 3.0, np.inf,
                                                  -np.inf, np.nan]), min_size=n, max_size=n)))
    raw = raw.reshape(shape)
    if dtype.kind == "U":
        return np.where(np.isnan(raw), "", raw.astype("U2"))
    if dtype.kind == "O":
        return np.where(np.isfinite(raw), raw, 7.0).astype(int).astype(object)
    if dtype.kind == "M":
        return np.where(np.isfinite(raw), raw, 9).astype(np.int64).astype(dtype)
    if dtype.kind in "iub":
        return np.where(np.isfinite(raw), raw, 2).astype(dtype)
    return raw.astype(dtype)


@st.composite
def calls(draw):
    dtype = draw(st.sampled_from(DTYPES))
    func = draw(st.sampled_from([f for f in FUNCS if _takes(f, dtype)]))
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(-ndim, ndim - 1))
    n = shape[axis]
    size = draw(st.one_of(st.none(), st.integers(0, 6)))
    mode = draw(st.sampled_from(("raise", "drop")))
    low, high = (-1, 6) if draw(st.booleans()) else (0, (size or 4) - 1)
    groups = np.array(draw(st.lists(st.integers(min(low, high), max(low, high)), min_size=n,
                                    max_size=n)), dtype=np.int64)
    kind = draw(st.sampled_from(("i8", "i2", "u1")))
    groups = (np.abs(groups) if kind == "u1" else groups).astype(kind)
    kw = {"size": size, "axis": axis, "mode": mode}
    if func in ("var", "std", "nanvar", "nanstd") and draw(st.booleans()):
        kw["ddof"] = draw(st.integers(0, 2))
    if draw(st.integers(0, 4)) == 0 and dtype.kind in "fiu":
        kw["fill_value"] = draw(st.sampled_from([0, 5, -1]))
    return dict(values=_values(draw, dtype, shape), groups=groups, func=func, kw=kw,
                chunks=tuple(draw(chunking(s)) for s in shape),
                group_chunks=draw(chunking(n)), dask_groups=draw(st.booleans()),
                dask_values=draw(st.booleans()))


def _lazy(c):
    values = da.from_array(c["values"], chunks=c["chunks"]) if c["dask_values"] else c["values"]
    groups = c["groups"]
    kw = dict(c["kw"])
    if c["dask_groups"]:
        groups = da.from_array(groups, chunks=(c["group_chunks"],))
        if kw["size"] is None:
            kw["size"] = int(c["groups"].max()) + 1 if c["groups"].size else 0
    extra = {} if c["dask_values"] else {"chunks": c["chunks"]}
    return sd.group_reduce(values, groups, c["func"], **kw, **extra)


@given(calls())
def test_matches_the_top_level_function_bit_for_bit_or_raises_as_it_does(c):
    kw = dict(c["kw"])
    if c["dask_groups"] and kw["size"] is None:
        kw["size"] = int(c["groups"].max()) + 1 if c["groups"].size else 0

    def same(want, lazy):
        assert isinstance(lazy, da.Array) and lazy.dtype == want.dtype
        assert lazy.shape == want.shape
        assert_identical(lazy.compute(scheduler="threads"), want, objects="eq")
    assert_lazy_as_top(lambda: scatterops.group_reduce(c["values"], c["groups"], c["func"], **kw),
                       lambda: _lazy(c), same)


@pytest.mark.parametrize("func", BASE)
def test_every_func_on_many_chunks_is_the_top_level_result(func):
    rng = np.random.default_rng(4)
    values = rng.standard_normal((500, 3))
    values[rng.integers(0, 500, 20)] = np.nan
    groups = rng.integers(-3, 60, 500)
    want = scatterops.group_reduce(values, groups, func, size=60, mode="drop")
    for chunks in ((37, 2), (500, 1), (7, 3)):
        got = sd.group_reduce(da.from_array(values, chunks=chunks),
                              da.from_array(groups, chunks=91), func, size=60, mode="drop")
        assert got.chunks[1] == da.from_array(values, chunks=chunks).chunks[1]
        assert_identical(got.compute(scheduler="threads"), want)


def test_size_is_required_with_dask_groups():
    with pytest.raises(ValueError, match="size="):
        sd.group_reduce(np.ones(4), da.from_array(np.zeros(4, int), chunks=2))


def test_out_is_refused_and_chunks_applies_to_numpy_values_only():
    with pytest.raises(TypeError, match="out="):
        sd.group_reduce(np.ones(4), [0, 0, 1, 1], out=np.zeros(2))
    with pytest.raises(TypeError, match="chunks="):
        sd.group_reduce(da.ones(4, chunks=2), [0, 0, 1, 1], chunks=2)


def test_the_graph_with_dask_groups_is_built_without_computing_anything():
    calls = []

    def seen(block):
        if block.size:              # (dask calls it on empty stand-ins to learn the meta)
            calls.append(block.shape)
        return block
    groups = da.from_array(np.arange(10) % 3, chunks=4).map_blocks(seen, dtype=np.int64)
    values = da.from_array(np.arange(10.0), chunks=3).map_blocks(seen, dtype=np.float64)
    lazy = sd.group_reduce(values, groups, "sum", size=3)
    assert calls == []
    assert_identical(lazy.compute(scheduler="sync"),
                     scatterops.group_reduce(np.arange(10.0), np.arange(10) % 3, "sum"))


def test_the_first_bad_id_along_the_axis_is_reported_whichever_chunk_runs_first():
    groups = np.array([0, 1, 1, 7, 0, -1, 2, 9])
    want = pytest.raises(IndexError)
    with want as top:
        scatterops.group_reduce(np.ones(8), groups, size=3)
    for dg in (groups, da.from_array(groups, chunks=3)):
        lazy = sd.group_reduce(da.from_array(np.ones(8), chunks=2), dg, size=3)
        with pytest.raises(IndexError) as got:
            lazy.compute(scheduler="threads")
        assert str(got.value) == str(top.value)


def test_each_task_runs_its_call_under_a_thread_local_count(monkeypatch):
    seen = []

    @contextlib.contextmanager
    def threads(n):
        seen.append(n)
        yield

    monkeypatch.setattr(scatterops, "threads", threads, raising=False)
    sd.group_reduce(da.ones(10, chunks=5), np.arange(10) % 4).compute(scheduler="sync")
    assert seen == [1, 1]
    seen.clear()
    with dask.config.set({"scatterops.threads-per-task": 2}):
        lazy = sd.group_reduce(da.ones(10, chunks=5), np.arange(10) % 4)
    lazy.compute(scheduler="sync")
    assert seen == [2, 2]


# ----------------------------------------------------------------------------- group_softmax

SOFTMAX_DTYPES = [np.dtype(t) for t in ("f8", "f4", "f2", "i4", "u1", "?", "c8")]  # c8: refused


@st.composite
def softmax_calls(draw):
    dtype = draw(st.sampled_from(SOFTMAX_DTYPES))
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(-ndim, ndim - 1))
    n = shape[axis]
    size = draw(st.one_of(st.none(), st.integers(0, 6)))
    low, high = (-1, 6) if draw(st.booleans()) else (0, (size or 4) - 1)
    groups = np.array(draw(st.lists(st.integers(min(low, high), max(low, high)), min_size=n,
                                    max_size=n)), dtype=np.int64)
    return dict(values=_values(draw, dtype, shape), groups=groups,
                kw={"size": size, "axis": axis, "log": draw(st.booleans())},
                chunks=tuple(draw(chunking(s)) for s in shape),
                group_chunks=draw(chunking(n)), dask_groups=draw(st.booleans()),
                dask_values=draw(st.booleans()))


@given(softmax_calls())
def test_softmax_matches_the_top_level_function_bit_for_bit_or_raises_as_it_does(c):
    kw = dict(c["kw"])
    if c["dask_groups"] and kw["size"] is None:
        kw["size"] = int(c["groups"].max()) + 1 if c["groups"].size else 0
    values = da.from_array(c["values"], chunks=c["chunks"]) if c["dask_values"] else c["values"]
    groups = da.from_array(c["groups"], chunks=(c["group_chunks"],)) if c["dask_groups"] \
        else c["groups"]
    extra = {} if c["dask_values"] else {"chunks": c["chunks"]}

    def same(want, lazy):
        assert isinstance(lazy, da.Array) and lazy.dtype == want.dtype
        assert lazy.shape == want.shape and lazy.chunks == da.from_array(
            c["values"], chunks=c["chunks"]).chunks
        assert_identical(lazy.compute(scheduler="threads"), want)
    assert_lazy_as_top(lambda: scatterops.group_softmax(c["values"], c["groups"], **kw),
                       lambda: sd.group_softmax(values, groups, **kw, **extra), same)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_on_many_chunks_is_the_top_level_result(log):
    rng = np.random.default_rng(5)
    values = rng.standard_normal((600, 3)).astype(np.float32) * 20
    groups = rng.integers(0, 40, 600)
    want = scatterops.group_softmax(values, groups, size=50, log=log)
    for chunks in ((37, 2), (600, 1), (7, 3)):
        got = sd.group_softmax(da.from_array(values, chunks=chunks),
                               da.from_array(groups, chunks=91), size=50, log=log)
        assert_identical(got.compute(scheduler="threads"), want)


def test_softmax_needs_size_with_dask_groups_and_refuses_out():
    with pytest.raises(ValueError, match="size="):
        sd.group_softmax(np.ones(4), da.from_array(np.zeros(4, int), chunks=2))
    with pytest.raises(TypeError, match="out="):
        sd.group_softmax(np.ones(4), [0, 0, 1, 1], out=np.zeros(4))


# ----------------------------------------------------------------------------- a real cluster

@pytest.mark.cluster
def test_on_a_two_process_cluster_the_bits_are_those_of_one_process(client):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((100_000, 4)).astype(np.float32)
    groups = rng.integers(0, 3000, 100_000)
    dv = da.from_array(values, chunks=(7000, 2))
    dg = da.from_array(groups, chunks=13_000)
    for func in ("sum", "mean", "var", "argmax", "logsumexp", "first"):
        want = scatterops.group_reduce(values, groups, func, size=3000)
        assert_identical(client.compute(sd.group_reduce(dv, dg, func, size=3000)).result(), want)
    for log in (False, True):
        want = scatterops.group_softmax(values, groups, size=3000, log=log)
        got = client.compute(sd.group_softmax(dv, dg, size=3000, log=log)).result()
        assert_identical(got, want)


def test_the_group_module_imports_first_as_a_worker_imports_it():
    # a worker that unpickles a group task imports scatterops._dask_groups before
    # scatterops.dask; that order once failed with a circular ImportError (so the
    # cluster's workers died and the call never finished)
    import subprocess
    import sys
    code = "import scatterops._dask_groups as g, scatterops.dask as d; assert d.group_reduce is g.group_reduce"
    subprocess.run([sys.executable, "-c", code], check=True)


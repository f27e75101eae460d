"""Memory: no temporary the size of data, updates or indices when they already
have the dtype they need (NumPy reports its array memory to tracemalloc)."""
import tracemalloc

import numpy as np
import pytest

import scatterops as so

SMALL = 64 * 1024          # the "small constant": plan, argument objects


def _peak_during(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak - before


def _cases():
    rng = np.random.default_rng(3)
    big = rng.standard_normal((400, 300)).astype(np.float32)          # 480 KB
    rows = rng.integers(-400, 400, 2000)
    return [
        ("update-none", so.scatter_update, big, rows[:300],
         rng.standard_normal((300, 300)).astype(np.float32), dict(axis=0)),
        ("elements-add", so.scatter_elements, big, np.broadcast_to(rows[:, None], (2000, 300)),
         rng.standard_normal((2000, 300)).astype(np.float32), dict(axis=0, reduction="add")),
        ("nd-max", so.scatter_nd, big.reshape(-1), (rows[:, None] % 120000),
         rng.standard_normal(2000).astype(np.float32), dict(reduction="max")),
        ("elements-none-strided", so.scatter_elements, big, rows[:, None][:300] % 300,
         rng.standard_normal((600, 1)).astype(np.float32)[::2], dict(axis=1)),
    ]


@pytest.mark.parametrize("name,func,data,idx,upd,kw", _cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_in_place_allocates_a_small_constant(name, func, data, idx, upd, kw):
    data = data.copy()
    _, extra = _peak_during(lambda: func(data, idx, upd, out=data, **kw))
    assert extra < SMALL, f"{name}: {extra} bytes allocated in place"


@pytest.mark.parametrize("name,func,data,idx,upd,kw", _cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_out_of_place_allocates_the_output_and_a_small_constant(name, func, data, idx, upd, kw):
    result, extra = _peak_during(lambda: func(data, idx, upd, **kw))
    assert result.nbytes > 0
    assert extra < result.nbytes + SMALL, f"{name}: {extra} bytes for a {result.nbytes}-byte output"


@pytest.mark.parametrize("model", [False, True], ids=["every-split", "cost-model"])
@pytest.mark.parametrize("dtype", ["int32", "uint16"])
def test_narrow_indices_on_the_owned_split_are_not_copied(dtype, model):
    # 2**19 indices into 2**22 float32 (16 MB: beyond a core's L2, split by index value with
    # the model on as without): the owned split reads them in their own dtype (walk/owned.c),
    # where a copy to intp would take 4 MB.  In place: the call allocates no output either.
    was, before = so._core.set_cost_model(model), so.get_num_threads()
    try:
        rng = np.random.default_rng(3)
        n, m = 1 << 22, 1 << 19
        d = rng.standard_normal(n).astype(np.float32)
        i = rng.integers(0, min(n, np.iinfo(dtype).max + 1), m).astype(dtype)
        u = rng.standard_normal(m).astype(np.float32)
        want = d.copy()
        np.add.at(want, i, u)
        so.set_num_threads(2)
        out = d.copy()
        _, peak = _peak_during(lambda: so.scatter_elements(out, i, u, 0, reduction="add", out=out))
        assert out.tobytes() == want.tobytes()
        assert peak < SMALL, peak
    finally:
        so._core.set_cost_model(was)
        so.set_num_threads(before)

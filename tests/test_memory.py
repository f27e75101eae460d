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

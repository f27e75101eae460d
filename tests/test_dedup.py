"""csrc/plan/dedup.c finds, for slices, the last writer of each destination (reduction "none")
or the hits of each destination (reduction "mean") in one walk over the indices: with one
slot per index value when the index space is at most a few times the number of indices,
else with a hash table.  Both ways, and an out whose slices overlap one another, against
the reference."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import scatterops as so
import fast_reference as reference     # the reference's bits, whole-array


def _cases():
    rng = np.random.default_rng(8)
    cases = []
    for name, n_rows, n_idx in (("direct", 300, 2000), ("hashed", 6000, 120)):
        data = rng.standard_normal((n_rows, 24))
        idx = rng.integers(-n_rows, n_rows, n_idx)
        upd = rng.standard_normal((n_idx, 24))
        for red in ("none", "mean"):
            cases.append(pytest.param(so.scatter_update, (data, idx, upd), dict(axis=0, reduction=red),
                                      id=f"update-{name}-{red}"))
        # two index components (scatter_nd, k=2): the flat number is row-major in them
        d3 = rng.standard_normal((n_rows // 30, 30, 16))
        i3 = np.stack([rng.integers(0, n_rows // 30, n_idx), rng.integers(-30, 30, n_idx)], axis=1)
        u3 = rng.standard_normal((n_idx, 16))
        for red in ("none", "mean"):
            cases.append(pytest.param(so.scatter_nd, (d3, i3, u3), dict(reduction=red),
                                      id=f"nd-k2-{name}-{red}"))
        # a reversed data: destinations come in the other order
        cases.append(pytest.param(so.scatter_update, (data[::-1], idx, upd), dict(axis=0),
                                  id=f"update-{name}-reversed"))
    return cases


@pytest.mark.parametrize("func,args,kw", _cases())
def test_dedup_and_hits_match_reference(func, args, kw):
    expected = getattr(reference, func.__name__)(*args, **kw)
    assert func(*args, **kw).tobytes() == expected.tobytes()
    out = np.array(args[0], copy=True)
    func(*args, **kw, out=out)
    assert out.tobytes() == expected.tobytes()


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_out_whose_rows_overlap(reduction):
    """Rows of 8 float64 two elements apart: different index values, shared bytes.  The
    writes must land in update order, as the reference makes them."""
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 40, 3000)
    upd = rng.standard_normal((3000, 8))
    results = []
    for impl in (so, reference):
        buf = np.zeros(8 + 2 * 39)
        view = as_strided(buf, shape=(40, 8), strides=(16, 8))
        impl.scatter_update(view, idx, upd, axis=0, reduction=reduction, out=view)
        results.append(buf)
    assert results[0].tobytes() == results[1].tobytes()


def test_out_whose_rows_overlap_on_several_threads():
    """Splitting by output ownership assumes different rows are different bytes; with
    rows that overlap, the call stays on one thread and matches the reference."""
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 3000, (64, 3000))
    upd = rng.standard_normal((64, 3000))
    before = so.get_num_threads()
    results = []
    try:
        so.set_num_threads(2)
        for impl in (so, reference):
            buf = np.zeros(1500 * 63 + 3000)
            view = as_strided(buf, shape=(64, 3000), strides=(8 * 1500, 8))
            impl.scatter_elements(view, idx, upd, axis=1, reduction="add", out=view)
            results.append(buf)
    finally:
        so.set_num_threads(before)
    assert results[0].tobytes() == results[1].tobytes()

"""Out of place on a large contiguous ``data`` (1 MiB and more), the C core copies data into
the fresh output band by band, together with the updates, and under ``reduction="none"``
skips the bytes that a visible update overwrites (csrc/walk/fused.c, so_run_copying).  The small
arrays of the property tests never take that path; these calls do, one for each shape of
plan it accepts or declines, each held bit for bit at 1, 2 and 3 threads to the in-place
form on a copy of data (which copies first and then walks: the path the property tests hold
to the reference), and to the reference itself where the updates are small enough for it
to be quick."""
import numpy as np
import pytest

import scatterops as so
import fast_reference as reference     # the reference's bits, whole-array


@pytest.fixture
def restore_threads():
    before = so.get_num_threads()
    yield
    so.set_num_threads(before)


def _calls():
    rng = np.random.default_rng(2026)
    f32, f64 = np.float32, np.float64
    calls = []

    def add(name, func, data, idx, upd, **kw):
        calls.append(pytest.param(func, data, idx, upd, kw, id=name))

    # scatter_update along axis 1: bands along axis 0, winners' slices leave gaps
    d = rng.standard_normal((60, 256, 10, 15)).astype(f32)            # 9.2 MB
    dense = rng.integers(-256, 256, (125, 20))                          # nearly every slice
    sparse = np.array([[3, -56], [100, 3], [7, 8]])                     # few slices, duplicates
    for name, idx in (("dense", dense), ("sparse", sparse)):
        u = rng.standard_normal((60,) + idx.shape + (10, 15)).astype(f32)
        for red in ("none", "add", "max"):
            add(f"update-axis1-{name}-{red}", so.scatter_update, d, idx, u, axis=1, reduction=red)
    # every slice overwritten: nothing of data to copy
    every = np.arange(256)[::-1].reshape(16, 16)
    add("update-axis1-all-slices", so.scatter_update, d, every,
        rng.standard_normal((60, 16, 16, 10, 15)).astype(f32), axis=1)
    # slices of 60 bytes (below the winner list's threshold): the whole band is copied
    d3 = rng.standard_normal((300, 400, 15)).astype(f32)
    add("update-axis1-small-slices", so.scatter_update, d3, rng.integers(0, 400, 500),
        rng.standard_normal((300, 500, 15)).astype(f32), axis=1)
    # two leading dims: bands along the first, winners repeat inside a band
    d4 = rng.standard_normal((20, 6, 64, 300)).astype(f32)
    add("update-axis2-two-lead-dims", so.scatter_update, d4, rng.integers(0, 64, 90),
        rng.standard_normal((20, 6, 90, 300)).astype(f32), axis=2)
    # scatter_elements along the last axis: rows are bands; fewer index rows than data rows
    e = rng.standard_normal((1500, 1000)).astype(f64)                   # 12 MB
    ie = rng.integers(-1000, 1000, (1200, 300))
    ue = rng.standard_normal((1200, 300)).astype(f64)
    for red in ("none", "add", "min", "mul"):
        add(f"elements-axis1-{red}", so.scatter_elements, e, ie, ue, axis=1, reduction=red)
    # a narrower index than data in the band dim's inner dims
    e3 = rng.standard_normal((50, 80, 300)).astype(f32)
    add("elements-axis2-narrow", so.scatter_elements, e3, rng.integers(0, 300, (50, 40, 100)),
        rng.standard_normal((50, 40, 100)).astype(f32), axis=2, reduction="add")
    # plans whose outer group dim does not own bands: copy first, then the walk
    add("update-axis0", so.scatter_update, e, rng.integers(0, 1500, 40),
        rng.standard_normal((40, 1000)), axis=0)
    add("elements-axis0", so.scatter_elements, e, ie, ue, axis=0, reduction="add")
    add("nd-k1-slices", so.scatter_nd, e, rng.integers(0, 1500, (700, 1)),
        rng.standard_normal((700, 1000)), reduction="none")
    add("nd-elementwise", so.scatter_nd, rng.standard_normal(300000).astype(f32),
        rng.integers(0, 300000, (500000, 1)), rng.standard_normal(500000).astype(f32),
        reduction="add")
    # not C-contiguous: the plain copy
    add("elements-transposed", so.scatter_elements, e.T, rng.integers(0, 1500, (1000, 50)),
        rng.standard_normal((1000, 50)), axis=1, reduction="max")
    return calls


@pytest.mark.parametrize("func,data,idx,upd,kw", _calls())
def test_large_out_of_place_equals_reference(func, data, idx, upd, kw, restore_threads):
    so.set_num_threads(1)
    expected = np.array(data, copy=True)
    func(data, idx, upd, **kw, out=expected)
    if upd.size <= 4 * 10**5:
        ref = getattr(reference, func.__name__)(data, idx, upd, **kw)
        assert ref.tobytes() == expected.tobytes()
    before = data.tobytes()
    for n in (1, 2, 3):
        so.set_num_threads(n)
        got = func(data, idx, upd, **kw)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes(), f"{n} threads"
    assert data.tobytes() == before

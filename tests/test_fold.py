"""scatter_elements' index written out with equal rows (csrc/call/fold.c): graph message passing
repeats each message's row index across its features.  When every row along the last dim holds
one value, the call runs as the stride-0 view of the first column; the result must be the
reference's, the fold must happen exactly then (``_core.folded_calls()``), and a bad value in
such an index must raise the IndexError the unfolded index raises, with data untouched."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops as so
from scatterops import _core, reference

FOLD_MIN = 1 << 12         # below this many index values the pass is not tried

IDX_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64]
REDUCTIONS = ["none", "add", "mul", "max", "min", "mean"]


def _call(d, i, u, axis, red, include_self=True):
    return so.scatter_elements(d, i, u, axis, reduction=red, include_self=include_self)


def _expanded(rows, feat, dtype):
    """the row index of every message, repeated across its feat features, in C order"""
    return np.ascontiguousarray(np.broadcast_to(rows[:, None], (rows.size, feat))).astype(dtype)


@given(nodes=st.integers(1, 60), feat=st.integers(2, 24), idx_dtype=st.sampled_from(IDX_DTYPES),
       red=st.sampled_from(REDUCTIONS), include_self=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int8]),
       change=st.sampled_from([None, "first", "middle", "last"]), seed=st.integers(0, 2**32 - 1))
def test_equal_rows_fold_and_equal_the_reference(nodes, feat, idx_dtype, red, include_self, dtype,
                                                 change, seed):
    rng = np.random.default_rng(seed)
    edges = -(-FOLD_MIN // feat) + int(rng.integers(0, 50))
    lo = -nodes if np.issubdtype(idx_dtype, np.signedinteger) else 0
    hi = min(nodes, np.iinfo(idx_dtype).max + 1)
    lo = max(lo, np.iinfo(idx_dtype).min)
    i = _expanded(rng.integers(lo, hi, edges), feat, idx_dtype)
    if change is not None:
        # one element of one row differs: no fold, and the result still the reference's
        r = {"first": 0, "middle": edges // 2, "last": edges - 1}[change]
        i[r, int(rng.integers(0, feat))] = (int(i[r, 0]) + 1) % hi if hi > 1 else i[r, 0]
    d = (rng.standard_normal((nodes, feat)) * 8).astype(dtype)
    u = (rng.standard_normal((edges, feat)) * 8).astype(dtype)
    if red == "mean" and not np.issubdtype(dtype, np.floating):
        red = "add"
    want = reference.scatter_elements(d, i, u, 0, reduction=red, include_self=include_self)
    equal_rows = bool((i == i[:, :1]).all())
    before = _core.folded_calls()
    got = _call(d, i, u, 0, red, include_self)
    assert _core.folded_calls() - before == int(equal_rows)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    # in place, into a Fortran-ordered out
    out = np.asfortranarray(d.copy())
    so.scatter_elements(d, i, u, 0, reduction=red, include_self=include_self, out=out)
    assert out.tobytes(order="C") == want.tobytes()


@pytest.mark.parametrize("axis", [0, 1])
def test_three_dims_fold_along_the_last(axis):
    rng = np.random.default_rng(1)
    shape = (40, 30, 8)
    i = np.broadcast_to(rng.integers(-shape[axis], shape[axis], shape[:2])[:, :, None], shape).copy()
    d = rng.standard_normal(shape).astype(np.float32)
    u = rng.standard_normal(shape).astype(np.float32)
    before = _core.folded_calls()
    got = so.scatter_elements(d, i, u, axis, reduction="add")
    assert _core.folded_calls() - before == 1
    want = reference.scatter_elements(d, i, u, axis, reduction="add")
    assert got.tobytes() == want.tobytes()


def test_not_folded_along_the_axis_or_when_not_contiguous():
    rng = np.random.default_rng(2)
    i = np.broadcast_to(rng.integers(0, 100, (1000, 1)), (1000, 8)).copy()
    d = rng.standard_normal((100, 8)).astype(np.float32)
    u = rng.standard_normal((1000, 8)).astype(np.float32)
    before = _core.folded_calls()
    # axis 1 is the last dim: its values pick the column, nothing to fold
    di = rng.standard_normal((1000, 100)).astype(np.float32)
    ii = np.broadcast_to(rng.integers(0, 100, (1000, 1)), (1000, 8)).copy()
    assert (so.scatter_elements(di, ii, u, 1, reduction="add").tobytes()
            == reference.scatter_elements(di, ii, u, 1, reduction="add").tobytes())
    # a Fortran-ordered index: rows not contiguous
    fi = np.asfortranarray(i)
    assert (so.scatter_elements(d, fi, u, 0, reduction="add").tobytes()
            == reference.scatter_elements(d, fi, u, 0, reduction="add").tobytes())
    assert _core.folded_calls() == before


@pytest.mark.parametrize("where", [0, 517, 999])
@pytest.mark.parametrize("value", [100, -101, 2**40])
@pytest.mark.parametrize("inplace", [False, True])
def test_a_bad_value_raises_as_unfolded(where, value, inplace):
    rng = np.random.default_rng(3)
    rows = rng.integers(-100, 100, 1000)
    rows[where] = value
    i = _expanded(rows, 8, np.int64)
    d = rng.standard_normal((100, 8)).astype(np.float32)
    u = rng.standard_normal((1000, 8)).astype(np.float32)
    keep = d.copy()
    out = d if inplace else None
    # the message of the same values in a form that is never folded (Fortran order)
    with pytest.raises(IndexError) as unfolded:
        so.scatter_elements(d, np.asfortranarray(i), u, 0, reduction="add", out=out)
    with pytest.raises(IndexError, match=rf"indices\[{where}, 0\] = {value} ") as folded:
        so.scatter_elements(d, i, u, 0, reduction="add", out=out)
    assert str(folded.value) == str(unfolded.value)
    assert d.tobytes() == keep.tobytes()
    # under mode="drop" the bad rows are skipped, as the reference does
    got = so.scatter_elements(d, i, u, 0, reduction="add", mode="drop")
    want = reference.scatter_elements(d, i, u, 0, reduction="add", mode="drop")
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("materialised", [False, True])
def test_a_repeated_narrow_index_is_converted_once(materialised):
    """an int32 index repeated along its last dim, as a stride-0 view or written out (then
    folded), becomes intp one row value at a time: no (edges, feat) intp copy"""
    import tracemalloc
    rng = np.random.default_rng(4)
    edges, feat, nodes = 400_000, 16, 1000
    rows = rng.integers(-nodes, nodes, edges)
    i = np.broadcast_to(rows.astype(np.int32)[:, None], (edges, feat))
    if materialised:
        i = np.ascontiguousarray(i)
    u = rng.standard_normal((edges, feat)).astype(np.float32)
    d = rng.standard_normal((nodes, feat)).astype(np.float32)
    want = so.scatter_elements(d, np.broadcast_to(rows[:, None], (edges, feat)), u, 0,
                               reduction="add")
    out = d.copy()
    tracemalloc.start()
    try:
        so.scatter_elements(d, i, u, 0, reduction="add", out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.tobytes() == want.tobytes()
    assert peak < edges * feat * 8 // 8       # an intp copy would take edges * feat * 8 bytes


@pytest.mark.parametrize("change", [None, "first share", "second share"])
def test_a_large_index_folds_the_same_on_two_threads(change):
    # 2^16 rows of 40: more than 2^21 values, so the pass is split between two threads, each
    # keeping the values of its share of the rows; one changed value in either share stops the fold
    rng = np.random.default_rng(7)
    rows = rng.integers(-1000, 1000, 1 << 16)
    i = _expanded(rows, 40, np.int16)
    if change is not None:
        r = 1000 if change == "first share" else (1 << 16) - 1000
        i[r, 17] = (int(i[r, 0]) + 1) % 1000
    d = rng.standard_normal((1000, 40)).astype(np.float32)
    u = rng.standard_normal((1 << 16, 40)).astype(np.float32)
    # the same values in a form that is never folded (Fortran order), itself held to the
    # reference by the tests above
    want = _call(d, np.asfortranarray(i), u, 0, "add")
    for n in (1, 2):
        before = _core.folded_calls()
        with so.threads(n):
            got = _call(d, i, u, 0, "add")
        assert _core.folded_calls() - before == int(change is None)
        assert got.tobytes() == want.tobytes()

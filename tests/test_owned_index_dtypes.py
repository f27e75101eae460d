"""The split by index value (walk/owned.c) reads indices of every integer dtype as they are,
with no copy to intp first (call/general_way.c keeps them): on any thread count its result has the
reference's bits, and a bad value -- a uint64 above intp's range included -- raises the
reference's IndexError.  (tests/test_memory.py: no copy of them is made.)  The bits come from NumPy's ufunc.at, which the reference runs for
these reductions (docs/contract.md), a hundred times faster than the reference's own loop."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops as so
from scatterops import _core, reference

NARROW = ["int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64"]
# every split needs 2**15 updates a thread (call/cost.h): 3 threads, and a tail that is
# no whole vector nor whole chunk of the compaction
M = 3 * (1 << 15) + 2051
UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}


@pytest.fixture
def restore_threads():
    before = so.get_num_threads()
    yield
    so.set_num_threads(before)


def _indices(rng, dtype, n, m):
    info = np.iinfo(dtype)
    lo = max(-n, int(info.min))
    hi = min(n, int(info.max) + 1)
    i = rng.integers(lo, hi, m, dtype=np.int64)
    i[:8] = [lo, hi - 1, 0, lo, hi - 1, lo, 0, hi - 1]       # the ends of the range
    return i.astype(dtype)


@given(dtype=st.sampled_from(NARROW), n=st.integers(1, 5000),
       red=st.sampled_from(sorted(UFUNCS)), data_dtype=st.sampled_from(["float32", "float64", "int32"]),
       threads=st.sampled_from([1, 2, 3]), inplace=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_narrow_indices_on_the_owned_split_give_the_reference(dtype, n, red, data_dtype, threads,
                                                             inplace, seed):
    # the suite runs with the cost model off: every call of these sizes on 2 or 3 threads is
    # split by index value, and one thread runs the direct form
    before = so.get_num_threads()
    rng = np.random.default_rng(seed)
    d = (rng.standard_normal(n) * 10).astype(data_dtype)
    i = _indices(rng, dtype, n, M)
    u = (rng.standard_normal(M) * 10).astype(data_dtype)
    want = d.copy()
    with np.errstate(all="ignore"):          # a product may overflow, here as in the call
        UFUNCS[red].at(want, i, u)
    try:
        so.set_num_threads(threads)
        out = d.copy() if inplace else None
        got = so.scatter_elements(d, i, u, 0, reduction=red, out=out)
        assert got.tobytes() == want.tobytes()
    finally:
        so.set_num_threads(before)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "in-place"])
@pytest.mark.parametrize("dtype", NARROW)
def test_a_bad_narrow_index_on_the_owned_split_raises_the_reference_error(dtype, inplace, threads,
                                                                         restore_threads):
    # out of place the owners check the values as they read them; in place the check runs
    # first, in the indices' own dtype.  A uint64 with its top bit set must not wrap.
    rng = np.random.default_rng(4)
    n = 100
    d = rng.standard_normal(n).astype(np.float32)
    u = rng.standard_normal(M).astype(np.float32)
    so.set_num_threads(threads)
    bad_values = [n] + ([2**64 - 1, 2**63] if dtype == "uint64" else []) + \
        ([-n - 1] if np.iinfo(dtype).min < -n else [])
    for k, value in enumerate(bad_values):
        i = _indices(rng, dtype, n, M)
        i[M - 1 - 1000 * k] = value
        with pytest.raises(IndexError) as theirs:
            reference.scatter_elements(d, i, u, 0, reduction="add")
        out = d.copy() if inplace else None
        with pytest.raises(IndexError) as mine:
            so.scatter_elements(d, i, u, 0, reduction="add", out=out)
        assert str(mine.value) == str(theirs.value)
        if out is not None:
            assert out.tobytes() == d.tobytes()          # nothing written

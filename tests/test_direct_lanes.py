"""The direct loop into an out in cache (kernels/indexed.c) reads its indices four at a time: it
wraps the four, tests them with one branch, then applies the four updates in order; a group with a
bad index goes to the loop of one update at a time, which stops at the first bad one.  Here, on one
thread and out of place (the one pass, where the loop's own test names the bad index):

* a bad index in each of the four places of a group, at the start of the call, around the loop's
  chunks of 2048 and at the end, alone or with a second bad one later in its group, is named at
  its own position, never at the group's start or at the second one;
* calls of every length from 0 to 13 updates and around a chunk (the groups' remainders), for
  every index dtype, float and integer data and each reduction, are bit-equal to the reference.
"""
import numpy as np
import pytest

import scatterops as so
from scatterops import _core, reference

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SIZE = 100                  # elements of out: in L1, and in range of every index dtype
CHUNK = 2048                # kernels/indexed.c's RUN_CHUNK


@pytest.fixture(autouse=True)
def one_thread():
    with so.threads(1):
        yield


def _indices(dtype, n, seed):
    lo = -SIZE if np.dtype(dtype).kind == "i" else 0
    return np.random.default_rng(seed).integers(lo, SIZE, n).astype(dtype)


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("idx_dtype", ["int8", "int64", "uint16"])
@pytest.mark.parametrize("pos", [0, 1, 2, 3, 6, CHUNK - 1, CHUNK, CHUNK + 1, CHUNK + 2,
                                 CHUNK + 3, 3 * CHUNK + 9])
@pytest.mark.parametrize("later", [None, 1, 3])
def test_the_first_bad_index_of_a_group_is_named(idx_dtype, pos, later):
    n = 3 * CHUNK + 10
    idx = _indices(idx_dtype, n, pos)
    idx[pos] = SIZE
    if later is not None and pos + later < n:
        idx[pos + later] = SIZE + 1
    data = np.random.default_rng(1).random(SIZE, dtype=np.float32)
    kept = data.copy()
    upd = np.ones(n, np.float32)
    before = _core.direct_one_pass()
    for reduction in ("add", "max"):
        with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {SIZE} is out of bounds"):
            so.scatter_elements(data, idx, upd, 0, reduction=reduction)
    _same(data, kept)
    assert _core.direct_one_pass() == before + 2


@pytest.mark.parametrize("idx_dtype", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("place", [0, 1, 2, 3])
def test_a_negative_index_below_the_range_is_named(idx_dtype, place):
    n = 64
    idx = _indices(idx_dtype, n, place)
    pos = 40 + place
    idx[pos] = -SIZE - 1
    data = np.zeros(SIZE, np.float64)
    with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {-SIZE - 1} is out of bounds"):
        so.scatter_elements(data, idx, np.ones(n), 0, reduction="add")


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype,reduction", [
    (d, r) for d in ["float32", "int64", "complex64"]
    for r in ["add", "sub", "mul", "max", "min"] if not (d == "complex64" and r in ("max", "min"))])
def test_every_remainder_of_four(idx_dtype, dtype, reduction):
    rng = np.random.default_rng(7)
    data = (rng.standard_normal(SIZE) * 4).astype(dtype)
    for n in list(range(14)) + [CHUNK - 3, CHUNK + 5]:
        idx = _indices(idx_dtype, n, n)
        idx[: n // 2] = idx[0] if n else idx[: n // 2]     # duplicates: the order shows
        upd = (rng.standard_normal(n) * 3).astype(dtype)
        want = reference.scatter_elements(data, idx, upd, 0, reduction=reduction)
        _same(so.scatter_elements(data, idx, upd, 0, reduction=reduction), want)

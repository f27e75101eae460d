"""Unsigned indices reach the direct loop (kernels/indexed.c) through a copy, 2048 at a time,
into int32 (uint8, uint16) or int64 (uint32, uint64; a value above int64's range becomes int64's
maximum) (kernels/widen.c): a value the copy turned negative would wrap, and one the loop finds
outside is named at its position in the call, not in the copy's chunk.  Here, on one thread:

* a bad index (out's size, half the dtype's top, the top itself: for uint64 above intp's range)
  in each of the four places of a group, at the start, around the loop's chunks of 2048 and at
  the end, is named at its own position, and data is unchanged (out of place and in place);
* calls of lengths around a group and a chunk, for five dtypes and every reduction, are
  bit-equal to the reference, out of place and in place.
"""
import numpy as np
import pytest

import scatterops as so
from direct_helpers import CASES, assert_bad_index_named, assert_both_ways_equal_the_reference

SMALL = 100                 # elements of out: in L1
MID = 30000                 # float32 elements: in L2
CHUNK = 2048                # kernels/indexed.c's RUN_CHUNK
N = 3 * CHUNK + 20

# the index dtypes and the sizes of out they can address (uint8: up to 255); uint32 and uint16
# run in the plain suite only: under the sanitizers uint64 and uint8 cover the widest and the
# narrowest loads of the one loop they share
DTYPE_SIZES = [("uint64", SMALL), ("uint64", MID),
               pytest.param("uint32", SMALL, marks=pytest.mark.slow),
               pytest.param("uint32", MID, marks=pytest.mark.slow),
               pytest.param("uint16", MID, marks=pytest.mark.slow), ("uint8", SMALL)]


@pytest.fixture(autouse=True)
def one_thread():
    with so.threads(1):
        yield


def _indices(n, size, seed, dtype):
    return np.random.default_rng(seed).integers(0, size, n).astype(dtype)


@pytest.mark.parametrize("idx_dtype, size", DTYPE_SIZES)
@pytest.mark.parametrize("bad", ["size", "half", "top"])
@pytest.mark.parametrize("pos", [0, 1, 2, 3, 4, 7, CHUNK - 1, CHUNK, CHUNK + 3, N - 5, N - 1])
def test_a_bad_index_in_each_place_of_a_group_is_named(idx_dtype, size, bad, pos):
    idx = _indices(N, size, pos, idx_dtype)
    top = int(np.iinfo(idx_dtype).max)
    value = {"size": size, "half": top // 2 if top // 2 >= size else top, "top": top}[bad]
    idx[pos] = value
    assert_bad_index_named(np.random.default_rng(1).random(size, dtype=np.float32), idx, pos, value)


LENGTHS = [0, 3, 4, 5, 8, 21, CHUNK + 9, N]


@pytest.mark.parametrize("idx_dtype, size", DTYPE_SIZES)
def test_every_length_equals_the_reference(idx_dtype, size):
    rng = np.random.default_rng(size)
    for dtype, reduction in CASES:
        data = (rng.standard_normal(size) * 4).astype(dtype)
        for n in LENGTHS:
            idx = _indices(n, size, n, idx_dtype)
            upd = (rng.standard_normal(n) * 2).astype(dtype)
            assert_both_ways_equal_the_reference(data, idx, upd, reduction)

"""With int64, int32, int16 and int8 indices (the last two copied to int32 first, kernels/widen.c)
on a CPU with AVX2, the direct loop into a contiguous out within L2 (kernels/indexed.c) reads four indices, tests each with one unsigned compare (no wrap)
and applies it; an index that fails the compare -- a negative one, or a bad one -- goes to a step of one
update that wraps and tests it, and stops there if it is bad.  After 16 such steps in a call the
rest of the call takes the loop of eight.  Here, on one thread, with non-negative indices (the
fast path; the tests of the loop of eight draw half their indices negative):

* a bad index in each of the four places of a group, at the start, around the loop's chunks of
  2048 and at the end, alone or right after a negative one, is named at its own position, and
  data is unchanged (out of place and in place);
* calls with 0, 1, 15, 16, 17 and 300 negative indices among them (so the switch to the loop of
  eight comes never, at its edge, or early), of lengths around a group and a chunk, for five
  dtypes and every reduction, are bit-equal to the reference, out of place and in place.
"""
import numpy as np
import pytest

import scatterops as so
from direct_helpers import CASES, assert_bad_index_named, assert_both_ways_equal_the_reference

SMALL = 100                 # elements of out: in L1
MID = 30000                 # float32 elements: in L2
CHUNK = 2048                # kernels/indexed.c's RUN_CHUNK
N = 3 * CHUNK + 20


@pytest.fixture(autouse=True)
def one_thread():
    with so.threads(1):
        yield


# the index dtypes and the sizes of out they can address (int8: up to 127)
# (int16 in the plain suite only: it is copied to int32 as int8 is, which the sanitizer run
# covers)
DTYPE_SIZES = [("int64", SMALL), ("int64", MID), ("int32", SMALL), ("int32", MID),
               pytest.param("int16", SMALL, marks=pytest.mark.slow),
               pytest.param("int16", MID, marks=pytest.mark.slow), ("int8", SMALL)]


def _nonneg(n, size, seed, dtype):
    return np.random.default_rng(seed).integers(0, size, n).astype(dtype)


@pytest.mark.parametrize("idx_dtype, size", DTYPE_SIZES)
@pytest.mark.parametrize("bad", ["size", "big", "below"])
@pytest.mark.parametrize("after_negative", [False, True])
@pytest.mark.parametrize("pos", [0, 1, 2, 3, 4, 7, CHUNK - 1, CHUNK, CHUNK + 3, N - 5, N - 1])
def test_a_bad_index_in_each_place_of_a_group_is_named(idx_dtype, size, bad, after_negative, pos):
    idx = _nonneg(N, size, pos, idx_dtype)
    top = int(np.iinfo(idx_dtype).max)
    value = {"size": size, "big": top // 2 if top // 2 >= size else top, "below": -size - 1}[bad]
    idx[pos] = value
    if after_negative and pos > 0:
        idx[pos - 1] = -1
    assert_bad_index_named(np.random.default_rng(1).random(size, dtype=np.float32), idx, pos, value)


LENGTHS = [0, 3, 4, 5, 8, 21, CHUNK + 9, N]


@pytest.mark.parametrize("idx_dtype, size", DTYPE_SIZES)
@pytest.mark.parametrize("negatives", [0, 1, 15, 16, 17, 300])
def test_negative_indices_among_non_negative_ones_equal_the_reference(idx_dtype, size, negatives):
    rng = np.random.default_rng(negatives)
    for dtype, reduction in CASES:
        data = (rng.standard_normal(size) * 4).astype(dtype)
        for n in LENGTHS:
            idx = _nonneg(n, size, n + negatives, idx_dtype)
            at = rng.choice(n, min(n, negatives), replace=False) if n else []
            idx[at] -= size                             # the same element, from the end
            idx[: n // 3] = idx[0] if n else idx[: n // 3]     # duplicates: the order shows
            upd = (rng.standard_normal(n) * 3).astype(dtype)
            assert_both_ways_equal_the_reference(data, idx, upd, reduction)

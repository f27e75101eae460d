"""With signed indices on a CPU with AVX2, the direct loop into a contiguous out
(kernels/indexed.c) reads its indices eight at a time (int64 as two vectors; int32 as one, wrapped
and tested in 32-bit lanes, then widened; int16 and int8 copied to int32 first, kernels/widen.c),
wraps and tests the eight with one
branch, then
applies the eight updates in order; a group with a bad index goes to the loop of one update at a
time, which stops at the first bad one.  Into an out beyond L2 it also reads, as vectors, the
indices 128 updates ahead, clamps them and prefetches their elements.  Here, on one thread:

* a bad index in each of the eight places of a group -- at the start, around the loop's chunks of
  2048, inside the last 136 updates (which prefetch nothing) and at the end -- is named at its
  own position, and data is unchanged: into an out in L1, alone or with a second bad one later
  in its group, and into one beyond L2;
* a bad index that the loop first reads as an index 128 ahead (to prefetch) is clamped there, and
  named when its own group comes;
* calls of every length from 0 to 20 updates and around a chunk into an out in L1 (five dtypes,
  every reduction), and of the lengths around the prefetch's end into one beyond L2 (float32 add
  and max, int64 mul and sub), with int64, int32, int16 and int8 indices (the narrow ones within
  their range) and uint64 ones (copied to int64 first),
  duplicates and negative indices, are bit-equal to the reference;
* the same calls in a child with ``SCATTEROPS_NO_AVX2=1`` (the loops of four), bit-equal too;
* into an out of 2**31 + 16 and 2**32 + 16 int8 elements (zero pages, touched at a few), whose
  size the 32-bit lanes cannot hold, a negative index still wraps from the end.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)
from scatterops.strategies import assert_identical as _same

from direct_helpers import indices as _indices

SMALL = 100                 # elements of out: in L1
BIG = 1 << 20               # float32 elements: 4 MiB, beyond one core's L2 (prefetching)
CHUNK = 2048                # kernels/indexed.c's RUN_CHUNK
AHEAD = 128                 # kernels/indexed.c's PREFETCH_AHEAD


@pytest.fixture(autouse=True)
def one_thread():
    with so.threads(1):
        yield


N_BAD = 3 * CHUNK + 20


# a bad index is one of idx's own dtype: size itself; int16 and int8 only into SMALL
@pytest.mark.parametrize("size,later,idx_dtype",
                         [(size, later, d) for size, later in [(SMALL, None), (SMALL, 1), (SMALL, 4),
                                                               (BIG, None)]
                          for d in ["int64", "int32", "int16", "int8", "uint64"]
                          if size == SMALL or d not in ("int16", "int8")])
@pytest.mark.parametrize("pos", [0, 1, 3, 4, 5, 7, 8, 13, CHUNK - 1, CHUNK, CHUNK + 4, CHUNK + 7,
                                 N_BAD - AHEAD - 9, N_BAD - AHEAD - 8, N_BAD - AHEAD - 1,
                                 N_BAD - 5, N_BAD - 1])
def test_the_first_bad_index_of_a_group_of_eight_is_named(size, idx_dtype, pos, later):
    idx = _indices(idx_dtype, N_BAD, size, pos)
    idx[pos] = size
    if later is not None and pos + later < N_BAD:
        idx[pos + later] = size + 1
    data = np.random.default_rng(1).random(size, dtype=np.float32)
    kept = data.copy()
    upd = np.ones(N_BAD, np.float32)
    for reduction in ("add", "max"):
        with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {size} is out of bounds"):
            so.scatter_elements(data, idx, upd, 0, reduction=reduction)
    _same(data, kept)


@pytest.mark.parametrize("idx_dtype,bad", [("int64", BIG), ("int64", -BIG - 1),
                                           ("int64", 2**62), ("int32", BIG), ("int32", -BIG - 1),
                                           ("int32", 2**31 - 1), ("int32", -2**31)])
def test_a_bad_index_read_ahead_is_clamped_then_named(idx_dtype, bad):
    # the groups before position 500 read it as an index 128 ahead, to prefetch its element
    # (int16 and int8 indices cannot be bad into an out beyond L2: every value is inside it)
    n, pos = 4 * CHUNK, 500
    idx = _indices(idx_dtype, n, BIG, 11)
    idx[pos] = bad
    data = np.zeros(BIG, np.float32)
    with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {bad} is out of bounds"):
        so.scatter_elements(data, idx, np.ones(n, np.float32), 0, reduction="add")
    assert not data.any()


LENGTHS = list(range(21)) + [CHUNK - 3, CHUNK + 9, AHEAD + 7, AHEAD + 8, AHEAD + 9, AHEAD + 16,
                             AHEAD + 17, 2 * CHUNK + AHEAD + 8]
# beyond L2 (the prefetching loop): the lengths around where the prefetch stops
LENGTHS_BIG = [9, AHEAD + 7, AHEAD + 8, AHEAD + 9, AHEAD + 16, AHEAD + 17, CHUNK + AHEAD + 8]
CASES = [(d, r) for d in ["float32", "float64", "int64", "int8", "complex64"]
         for r in ["add", "sub", "mul", "max", "min"]
         if not (d == "complex64" and r in ("max", "min"))]
CASES_BIG = [("float32", "add"), ("float32", "max"), ("int64", "mul"), ("int64", "sub")]


def _calls(idx_dtype, size):
    """(data, idx, upd, reduction) of every length and case, into size elements."""
    rng = np.random.default_rng(size)
    for dtype, reduction in (CASES if size == SMALL else CASES_BIG):
        data = (rng.standard_normal(size) * 4).astype(dtype)
        for n in (LENGTHS if size == SMALL else LENGTHS_BIG):
            idx = _indices(idx_dtype, n, size, n)
            idx[: n // 3] = idx[0] if n else idx[: n // 3]     # duplicates: the order shows
            upd = (rng.standard_normal(n) * 3).astype(dtype)
            yield data, idx, upd, reduction


# beyond L2: fresh results of 4-8 MiB a call, which the sanitizers' allocator makes slow (12 s
# there); the bad-index calls above and tests/test_direct_prefetch.py run that loop under them
# int16 (copied to int32 as int8 is) and uint64 (copied to int64) run once, in the plain suite,
# not under the sanitizers
@pytest.mark.parametrize("size", [SMALL, pytest.param(BIG, marks=pytest.mark.slow)])
@pytest.mark.parametrize("idx_dtype", ["int64", "int32", "int8",
                                       pytest.param("int16", marks=pytest.mark.slow),
                                       pytest.param("uint64", marks=pytest.mark.slow)])
def test_every_length_equals_the_reference(idx_dtype, size):
    calls = _core.direct_calls() + _core.direct_one_pass()
    for data, idx, upd, reduction in _calls(idx_dtype, size):
        want = reference.scatter_elements(data, idx, upd, 0, reduction=reduction)
        _same(so.scatter_elements(data, idx, upd, 0, reduction=reduction), want)
        inplace = data.copy()
        so.scatter_elements(inplace, idx, upd, 0, reduction=reduction, out=inplace)
        _same(inplace, want)
    assert _core.direct_calls() + _core.direct_one_pass() > calls


_CHILD = """
import sys
import numpy as np
import scatterops as so
from scatterops import _core
sys.path.insert(0, {tests!r})
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)
import test_direct_eights as t
assert not _core.cpu_features()[2], _core.cpu_features()
so.set_num_threads(1)
for size in (t.SMALL, t.BIG):
    for idx_dtype in ("int64", "int32", "int16", "int8", "uint64"):
        for data, idx, upd, reduction in t._calls(idx_dtype, size):
            want = reference.scatter_elements(data, idx, upd, 0, reduction=reduction)
            got = so.scatter_elements(data, idx, upd, 0, reduction=reduction)
            assert got.tobytes() == want.tobytes(), (size, idx_dtype, reduction, len(idx))
print("ok")
"""


@pytest.mark.slow      # every call again in a child: the plain suite's, not the sanitizers'
def test_the_loops_of_four_without_avx2():
    """SCATTEROPS_NO_AVX2=1 holds for a whole process, so in a child."""
    env = dict(os.environ, SCATTEROPS_NO_AVX2="1", SCATTEROPS_NO_AVX512="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(so.__file__)),
                                         env.get("PYTHONPATH", "")])
    child = _CHILD.format(tests=os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]


# slow: under the sanitizers an out of 2-4 GiB takes about a second to allocate (8 s for the 8)
@pytest.mark.slow
@pytest.mark.parametrize("n", [2**31 + 16, 2**32 + 16])
@pytest.mark.parametrize("idx_dtype", ["int32", "int16", "int8", "int64"])
def test_an_out_of_2_31_elements_or_more_keeps_the_64_bit_wrap(idx_dtype, n):
    # the 32-bit lanes wrap a negative index only into an out below 2**31 elements; a larger
    # one takes the loop of four, whose wrap is 64-bit: -1 is the last element (from 2**32 on,
    # a size cut to 32 bits would wrap -1 to 15).  np.zeros maps zero pages; the call touches
    # a few of them, in place
    data = np.zeros(n, np.int8)
    info = np.iinfo(idx_dtype)
    # two groups of eight near both ends (a group with an extreme value takes the loop of one
    # at a time), then the extremes of idx's dtype
    vals = [0, 1, -1, -2, 5, -1, 7, -3] * 2 + [min(int(info.max), n - 1), max(int(info.min), -n),
                                               -1, 3, -5, 2, -1, 0]
    idx = np.array(vals, idx_dtype)
    upd = np.arange(1, 25, dtype=np.int8)
    so.scatter_elements(data, idx, upd, 0, reduction="add", out=data)
    want = {}
    for i, u in zip(idx.tolist(), upd.tolist()):
        j = i + n if i < 0 else i
        want[j] = want.get(j, 0) + u
    for j, v in want.items():
        assert data[j] == np.int8(v), (j, int(data[j]), v)
    data[list(want)] = 0
    assert not data[:1 << 20].any() and not data[-(1 << 20):].any()

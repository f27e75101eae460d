"""Two forms of the direct loop (call/direct.c, kernels/indexed.c) against scatterops.reference, bit
for bit, on one thread:

* into a contiguous out beyond one core's L2 and beyond 4 MiB (or half of L3), the loop prefetches
  the element 128 updates ahead (the last 128 updates of a call without): calls of every index
  dtype, of lengths around that distance and the loop's chunk of 2048, into an out of 2^21
  elements (8 MiB of float32, beyond any L2 in use and beyond 4 MiB);
* the one pass, where the loop tests each index as it reads it: out of place always (into the
  fresh result), in place for many updates into an out in L2 (in L1: indices of 4 bytes or
  more), into a scratch copy of data copied into out at the end: calls on either side of the
  in-place gate (``_core.direct_one_pass()`` counts them), every index dtype, and a bad index
  near the start, in the middle or at the end, which must leave out untouched and name the
  first bad position.
"""
import numpy as np
import pytest

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)

from direct_helpers import indices as _indices

# every index dtype, with int16, uint8, uint16 and uint32 run once, in the plain suite: under the
# sanitizers int32 and int64 cover the loops of eight (both lane widths) and int8 and uint64 the
# copies to them (kernels/widen.c), which the others share but for their loads (10 s of the
# sanitizer run, CI's longest step)
INDEX_DTYPES = [pytest.param(d, marks=pytest.mark.slow)
                if d in ("int16", "uint8", "uint16", "uint32") else d
                for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
BIG = 1 << 21               # elements: 8 MiB of float32, beyond L2 and 4 MiB: the loop prefetches
ONE_PASS_MIN = 1 << 14      # call/cost.h's SO_ONE_PASS_MIN (SO_GIL_RELEASE_MIN)
CHUNK = 2048                # kernels/indexed.c's RUN_CHUNK: the loop's own chunks


@pytest.fixture(autouse=True)
def one_thread():
    with so.threads(1):
        yield


def _values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, n).astype(dtype)
    return (rng.standard_normal(n) * 3).astype(dtype)


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8),
                                  np.ascontiguousarray(b).view(np.uint8))


def _add_both_ways(data, idx, upd):
    """The add out of place and in place, each checked against the reference; the result."""
    want = reference.scatter_elements(data, idx, upd, 0, reduction="add")
    _same(so.scatter_elements(data, idx, upd, 0, reduction="add"), want)
    inplace = data.copy()
    so.scatter_elements(inplace, idx, upd, 0, reduction="add", out=inplace)
    _same(inplace, want)
    return want


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("n", [5, 128, 129, 2048 + 128, 3 * 2048 + 77])
def test_prefetching_loop_matches_reference(idx_dtype, n):
    data = _values("float32", BIG, 1)
    idx = _indices(idx_dtype, n, BIG, 2 + n)
    upd = _values("float32", n, 3)
    calls = _core.direct_calls()
    _add_both_ways(data, idx, upd)
    assert _core.direct_calls() == calls + 2


@pytest.mark.parametrize("dtype,red", [("float64", "max"), ("int64", "mul"), ("complex64", "add"),
                                       ("uint8", "min")])
def test_prefetching_loop_other_dtypes(dtype, red):
    size = BIG // 2 if np.dtype(dtype).itemsize >= 8 else BIG * 2
    n = 3 * 2048 + 300
    data = _values(dtype, size, 4)
    idx = _indices("int64", n, size, 5)
    idx[100:600] = idx[100]                 # a repeated index within and across the 128 ahead
    upd = _values(dtype, n, 6)
    want = reference.scatter_elements(data, idx, upd, 0, reduction=red)
    _same(so.scatter_elements(data, idx, upd, 0, reduction=red), want)


def _one_pass_call(idx_dtype, size, n, seed=7):
    data = _values("float32", size, seed)
    idx = _indices(idx_dtype, n, size, seed + 1)
    upd = _values("float32", n, seed + 2)
    return data, idx, upd


@pytest.mark.parametrize("idx_dtype,n,size,taken", [
    ("int64", ONE_PASS_MIN, 100, True), ("int64", ONE_PASS_MIN - 1, 100, False),
    ("int64", 2 * 10_000, 10_000, True), ("int64", 2 * 10_000 - 1, 10_000, False),
    ("int32", ONE_PASS_MIN, 100, True), ("int16", ONE_PASS_MIN, 100, False),
    ("uint8", ONE_PASS_MIN, 100, False), ("uint8", 2 * 20_000, 20_000, True),
])
def test_one_pass_gate(idx_dtype, n, size, taken):
    data, idx, upd = _one_pass_call(idx_dtype, size, n)
    before = _core.direct_one_pass()
    want = _add_both_ways(data, idx, upd)
    # out of place always, in place where the gate lets it
    assert _core.direct_one_pass() == before + 1 + taken


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
def test_one_pass_every_index_dtype(idx_dtype):
    size = 20_000           # 80 kB: beyond L1, where narrow indices take it too
    n = 5 * CHUNK + 123 + 2 * size
    data, idx, upd = _one_pass_call(idx_dtype, size, n)
    before = _core.direct_one_pass()
    want = _add_both_ways(data, idx, upd)
    other = np.zeros_like(data)
    so.scatter_elements(data, idx, upd, 0, reduction="add", out=other)
    _same(other, want)
    nd = reference.scatter_nd(data, idx[:, None], upd, reduction="add")
    _same(so.scatter_nd(data, idx[:, None], upd, reduction="add"), nd)
    assert _core.direct_one_pass() == before + 4


def test_one_pass_into_a_strided_out():
    n, size = ONE_PASS_MIN + 999, 300
    base = _values("float64", 2 * size, 8)
    idx = _indices("int32", n, size, 9)
    upd = _values("float64", n, 10)
    view = base[::2]
    want = reference.scatter_elements(view, idx, upd, 0, reduction="max")
    before = _core.direct_one_pass()
    so.scatter_elements(view, idx, upd, 0, reduction="max", out=view)
    _same(view, want)
    _same(base[1::2], _values("float64", 2 * size, 8)[1::2])
    assert _core.direct_one_pass() == before + 1


@pytest.mark.parametrize("idx_dtype", ["int32", "int64", "uint16"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_one_pass_bad_index_leaves_out_untouched(idx_dtype, where):
    # into 20000 elements (beyond L1: uint16 takes the one pass; int8 could hold no bad value)
    n, size = 2 * 20_000 + 3 * CHUNK + 11, 20_000
    data, idx, upd = _one_pass_call(idx_dtype, size, n)
    pos = {"first": 5, "middle": n // 2, "last": n - 1}[where]
    idx[pos] = size                         # the first bad value
    idx[pos + 1:][::7] = size + 1 if np.iinfo(idx_dtype).max > size else size
    kept = data.copy()
    inplace = data.copy()
    before = _core.direct_one_pass()
    with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {size} is out of bounds"):
        so.scatter_elements(inplace, idx, upd, 0, reduction="add", out=inplace)
    _same(inplace, kept)
    other = np.full_like(data, 7)
    with pytest.raises(IndexError, match=rf"indices\[{pos}\]"):
        so.scatter_elements(data, idx, upd, 0, reduction="add", out=other)
    _same(other, np.full_like(data, 7))
    with pytest.raises(IndexError, match=rf"indices\[{pos}\]"):
        so.scatter_elements(data, idx, upd, 0, reduction="add")
    _same(data, kept)
    assert _core.direct_one_pass() == before + 3

"""The direct form's one pass (call/direct.c): where what the element or row loop writes can be
dropped -- a fresh result, a mean's scratch pairs, a scratch copy of an ``out`` in L2 that is
small next to the updates -- the loop is the only reader of the indices: it tests each one as
it reads it (kernels/indexed.c) and the call drops its writes at the first bad one.

Held here: the results are NumPy's ``ufunc.at`` bit for bit on every index dtype, in place,
into another ``out`` (strided too) and out of place; a bad index at the start, in the middle or
at the end raises the IndexError that names it and leaves ``out`` and ``data``
exactly as they were; the scratch copy costs one copy of ``out``; and which calls take the
one pass (shown by indices rewritten after the point where a separate check would have run:
only a call that reads them once sees the rewritten values as bad).
"""
import tracemalloc

import numpy as np
import pytest

import scatterops as so
from scatterops import _core

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
UFUNC = {"add": np.add, "max": np.maximum, "mul": np.multiply}
N = 40_000          # the GIL released, the loop in several pieces for the small dtypes
SIZE = 100          # out: 400 bytes of float32, far below a quarter of the indices


@pytest.fixture(params=[1, 2], ids=["1t", "2t"])
def threads(request):
    with so.threads(request.param):
        yield request.param


def _indices(dtype, n=N, size=SIZE, seed=0):
    rng = np.random.default_rng(seed)
    lo = -size if np.dtype(dtype).kind == "i" else 0
    return rng.integers(lo, size, n).astype(dtype)


def _expected(data, idx, upd, red):
    ref = data.copy()
    UFUNC[red].at(ref, idx.astype(np.intp), upd)
    return ref


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("red", ["add", "max", "mul"])
@pytest.mark.parametrize("where", ["in place", "other out", "strided out", "fresh"])
def test_one_pass_matches_ufunc_at(threads, idx_dtype, red, where):
    rng = np.random.default_rng(1)
    data = rng.standard_normal(SIZE).astype(np.float32)
    idx = _indices(idx_dtype)
    upd = (rng.standard_normal(N) * 0.01 + 1).astype(np.float32)
    want = _expected(data, idx, upd, red)
    if where == "in place":
        out = data.copy()
        got = so.scatter_elements(out, idx, upd, 0, reduction=red, out=out)
        assert got is out
    elif where == "other out":
        out = np.full(SIZE, 7, np.float32)
        got = so.scatter_elements(data, idx, upd, 0, reduction=red, out=out)
        assert got is out
    elif where == "strided out":
        base = np.full(3 * SIZE, 7, np.float32)
        out = base[::3]
        got = so.scatter_elements(data, idx, upd, 0, reduction=red, out=out)
        assert got is out
        assert (base[1::3] == 7).all() and (base[2::3] == 7).all()
    else:
        got = so.scatter_elements(data, idx, upd, 0, reduction=red)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _bad_at(idx_dtype, pos):
    idx = _indices(idx_dtype)
    idx[pos] = SIZE if np.dtype(idx_dtype).kind == "u" else -SIZE - 1
    return idx


def _message(func, data, idx, upd, **kw):
    with pytest.raises(IndexError) as e:
        func(data, idx, upd, **kw)
    return str(e.value)


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("pos", [0, N // 2 + 3, N - 1])
@pytest.mark.parametrize("red", ["add", "mean"])
@pytest.mark.parametrize("where", ["in place", "other out", "fresh"])
def test_a_bad_index_writes_nothing_and_says_where(threads, idx_dtype, pos, red, where):
    rng = np.random.default_rng(2)
    data = rng.standard_normal(SIZE).astype(np.float32)
    keep = data.copy()
    idx = _bad_at(idx_dtype, pos)
    upd = np.ones(N, np.float32)
    out = data if where == "in place" else np.full(SIZE, 7, np.float32)
    before = out.copy()
    kw = {} if where == "fresh" else {"out": out}
    msg = _message(so.scatter_elements, data, idx, upd, axis=0, reduction=red, **kw)
    assert msg == (f"scatter_elements: indices[{pos}] = {idx[pos]} is out of bounds for axis 0 "
                   f"of data with size {SIZE} (valid: -{SIZE} <= index < {SIZE})")
    np.testing.assert_array_equal(_bits(out), _bits(before))
    np.testing.assert_array_equal(_bits(data), _bits(keep))


def test_the_scratch_copy_is_one_copy_of_out(one_thread):
    idx = _indices("int64", n=200_000, size=4000)          # 1.6 MB of indices, out 16 kB
    upd = np.ones(idx.size, np.float32)
    out = np.zeros(4000, np.float32)
    before_calls = _core.direct_one_pass()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        so.scatter_elements(out, idx, upd, 0, reduction="add", out=out)
        extra = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert _core.direct_one_pass() == before_calls + 1
    assert out.sum() == idx.size
    # the scratch copy and its array object, nothing per index
    assert out.nbytes <= extra <= out.nbytes + 4096, extra


@pytest.fixture
def one_thread():
    # the suite turns the cost model off (tests/conftest.py): on several threads every call
    # then takes a split, and the direct form runs on one thread only
    with so.threads(1):
        yield


@pytest.fixture
def rewrite():
    yield _core._test_rewrite_indices
    _core._test_rewrite_indices(None)


@pytest.mark.parametrize("idx_dtype", ["int8", "int64", "uint32"])
@pytest.mark.parametrize("case", ["fresh", "small out", "mean", "large out", "few updates"])
def test_which_calls_read_the_indices_once(one_thread, rewrite, idx_dtype, case):
    """Indices rewritten to a bad value right after the point where a separate check runs: a
    call that checked first finishes (its loop stops at the rewritten value: the result is
    unspecified, every write inside out), one that reads them once raises, writing nothing."""
    n = 10_000 if case == "few updates" else 50_000
    size = 30_000 if case == "large out" and idx_dtype != "int8" else 60
    one_pass = {
        "fresh": True,              # out of place: always one pass
        "mean": True,               # a mean's pairs are scratch
        # in place into an out in L2, at least 2**14 updates and twice its elements; into
        # an out in L1 (all that int8 can address) only for indices of 4 bytes or more
        "small out": idx_dtype != "int8",
        "large out": False,         # fewer than twice out's elements: checked first
        "few updates": False,       # fewer than 2**14 updates: checked first
    }[case]
    idx = _indices(idx_dtype, n=n, size=size)
    data = np.zeros(size, np.float32)
    upd = np.ones(n, np.float32)
    kw = {"reduction": "mean" if case == "mean" else "add"}
    if case != "fresh":
        kw["out"] = data
    rewrite(127 if idx_dtype == "int8" else 10**9)    # outside, cut to the index's size
    if one_pass:
        with pytest.raises(IndexError):
            so.scatter_elements(data, idx, upd, 0, **kw)
        assert not data.any()
    else:
        assert so.scatter_elements(data, idx, upd, 0, **kw) is data


# ---- rows: scatter_update and scatter_nd of rows of contiguous elements out of place -------
# The row loop (kernels/rows.c) tests each index as it reads it too: out of place it is the
# only reader of the indices, into out the whole check runs first.

ROW_N = 20_000      # the GIL released, several pieces of the loop for the narrow rows


def _row_call(func, data, idx, upd, red, **kw):
    ix = idx if func == "scatter_update" else idx[:, None]
    return getattr(so, func)(data, ix, upd, reduction=red, **kw)


ROW_SHAPES = [(1, "float32"), (2, "float64"), (4, "float32"), (8, "float32"), (8, "int16"),
              (16, "float32"), (64, "float32"), (3, "complex64")]


def _rows_expected(data, idx, upd, red):
    ref = data.copy()
    if red == "none":           # the last update of each row wins, as in C order
        last = idx.size - 1 - np.unique(idx[::-1], return_index=True)[1]
        ref[idx[last]] = upd[last]
    else:
        UFUNC[red].at(ref, idx, upd)
    return ref


@pytest.mark.parametrize("func", ["scatter_update", "scatter_nd"])
@pytest.mark.parametrize("idx_dtype", ["int8", "int32", "int64", "uint16", "uint64"])
@pytest.mark.parametrize("f,dtype,red", [(f, d, r) for f, d in ROW_SHAPES
                                         for r in ("add", "max", "none")
                                         if not (r == "max" and d == "complex64")])
def test_rows_one_pass_matches_ufunc_at(one_thread, func, idx_dtype, f, dtype, red):
    rng = np.random.default_rng(3)
    size = 100
    idx = _indices(idx_dtype, n=ROW_N, size=size, seed=4)
    data = (rng.standard_normal((size, f)) * 8).astype(dtype)
    upd = (rng.standard_normal((ROW_N, f)) * 8).astype(dtype)
    keep = data.copy()
    before = _core.direct_one_pass(), _core.rows_direct_calls()
    got = _row_call(func, data, idx, upd, red)
    assert (_core.direct_one_pass() - before[0], _core.rows_direct_calls() - before[1]) == (1, 1)
    ix = idx.astype(np.intp)
    np.testing.assert_array_equal(_bits(got), _bits(_rows_expected(data, ix % size, upd, red)))
    np.testing.assert_array_equal(_bits(data), _bits(keep))


def _row_message(func, data, idx, upd, **kw):
    with pytest.raises(IndexError) as e:
        _row_call(func, data, idx, upd, "add", **kw)
    return str(e.value)


@pytest.mark.parametrize("func", ["scatter_update", "scatter_nd"])
@pytest.mark.parametrize("idx_dtype", ["int8", "int64", "uint32"])
@pytest.mark.parametrize("pos", [0, ROW_N // 2 + 3, ROW_N - 1])
@pytest.mark.parametrize("f", [1, 8, 64])
def test_a_bad_row_index_out_of_place_writes_nothing_and_says_where(one_thread, func, idx_dtype,
                                                                    pos, f):
    size = 100
    idx = _indices(idx_dtype, n=ROW_N, size=size, seed=5)
    idx[pos] = 127 if idx_dtype == "int8" else 10**6
    data = np.arange(size * f, dtype=np.float32).reshape(size, f)
    keep = data.copy()
    upd = np.ones((ROW_N, f), np.float32)
    before = _core.direct_one_pass()
    fresh = _row_message(func, data, idx, upd)
    assert _core.direct_one_pass() == before + 1          # the one pass found it
    where = f"indices[{pos}]" if func == "scatter_update" else f"indices[{pos}, 0]"
    assert fresh == (f"{func}: {where} = {idx[pos]} is out of bounds for axis 0 of data with "
                     f"size {size} (valid: -{size} <= index < {size})")
    # the same words as the whole check's, which runs first into out
    out = data.copy()
    assert _row_message(func, data, idx, upd, out=out) == fresh
    np.testing.assert_array_equal(_bits(out), _bits(keep))
    np.testing.assert_array_equal(_bits(data), _bits(keep))


@pytest.mark.parametrize("func", ["scatter_update", "scatter_nd"])
@pytest.mark.parametrize("where", ["fresh", "in place"])
def test_which_row_calls_read_the_indices_once(one_thread, rewrite, func, where):
    """As above for rows: out of place the row loop is the only reader of the indices and
    raises at the rewritten value, writing nothing; into out the check ran first and the loop
    stops at the rewritten value, every write inside out."""
    size = 100
    idx = _indices("int64", n=ROW_N, size=size, seed=6)
    data = np.zeros((size, 8), np.float32)
    upd = np.ones((ROW_N, 8), np.float32)
    kw = {"out": data} if where == "in place" else {}
    rewrite(10**9)
    if where == "fresh":
        with pytest.raises(IndexError):
            _row_call(func, data, idx, upd, "add", **kw)
        assert not data.any()
    else:
        assert _row_call(func, data, idx, upd, "add", **kw) is data

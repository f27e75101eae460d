"""Two loops of the direct form of a 1-D call (call/direct.c), held to ``scatterops.reference`` bit
for bit: the run loop of kernels/indexed.c (an element kept in a register while its index
repeats, taken by a chunk of 2048 indices whose head repeats in long runs) and the mean in one
pass over the updates (kernels/mean_indexed.c: sums and counts side by side, then the division).

Every call here is checked to have run in the direct form (``_core.direct_calls``,
``_core.direct_means``), float16 aside: it has no direct loop and must still match through the
general walk.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)
from scatterops.strategies import assert_identical

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"]
CHUNK = 2048                    # the check's chunk and the run loop's
PIECE = 1 << 18                 # SO_PIECE: the loop's pieces between polls


@pytest.fixture(autouse=True)
def one_thread():
    with so.threads(1):
        yield


def _special(dtype):
    """Values that tell operand order and rounding apart: NaN, signed zeros, infinities, and
    integers that wrap."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return [info.min, info.max, info.max - 1, 0, 1, 3, -1 if dt.kind == "i" else 2]
    real = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.25, 1e-3, 3e4 if dt.itemsize == 2 else 1e30]
    if dt.kind == "c":
        return [complex(a, b) for a, b in zip(real, real[3:] + real[:3])] + [complex(np.nan, 0)]
    return real


def _array(dtype, draw_list):
    values = _special(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array([values[k % len(values)] for k in draw_list]).astype(dtype)


@st.composite
def runs_call(draw):
    """Runs of one index, long ones crossing the chunk boundaries, some values negative (the
    same element as their wrapped value, a different raw index)."""
    dtype = draw(st.sampled_from(DTYPES))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    size = draw(st.integers(1, 100))
    signed = np.dtype(idx_dtype).kind == "i"
    lengths = draw(st.lists(st.integers(1, 700), min_size=2, max_size=12))
    total = sum(lengths)
    if total <= CHUNK:                          # at least one chunk boundary inside a run
        lengths[-1] += CHUNK + 1 - total
    idx = []
    for n in lengths:
        v = draw(st.integers(-size if signed else 0, size - 1))
        idx += [v] * n
    idx = np.array(idx, dtype=idx_dtype)
    n = idx.size
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))   # too many values to draw one by one
    upd = _array(dtype, rng.integers(0, 20, n))
    data = _array(dtype, rng.integers(0, 20, size))
    red = draw(st.sampled_from(["add", "sub", "mul", "max", "min"]))
    return data, idx, upd, red


def _same(got, want):
    # bit for bit; where two NaNs meet, which NaN survives is not promised (docs/contract.md)
    assert_identical(got, want, nans="any")


def _direct(run, mean=False):
    """run(), which must have taken the direct form (its mean loops when mean)."""
    calls, means = _core.direct_calls(), _core.direct_means()
    result = run()
    assert _core.direct_calls() == calls + 1
    assert _core.direct_means() == means + int(mean)
    return result


def _call(data, idx, upd, red, direct, mean=False, **kw):
    run = lambda: so.scatter_elements(data, idx, upd, 0, reduction=red, **kw)  # noqa: E731
    return _direct(run, mean) if direct else run()


@given(runs_call())
def test_runs_of_one_index_give_the_reference(call):
    data, idx, upd, red = call
    want = reference.scatter_elements(data, idx, upd, 0, reduction=red)
    direct = data.dtype != np.float16 and red != "sub"
    _same(_call(data, idx, upd, red, direct), want)
    inplace = data.copy()
    assert _call(inplace, idx, upd, red, direct, out=inplace) is inplace
    _same(inplace, want)


@pytest.mark.parametrize("dtype,red", [("float32", "add"), ("float64", "max"), ("int8", "add"),
                                       ("complex64", "mul"), ("float32", "min")])
def test_a_run_across_a_piece_boundary(dtype, red):
    """One run from the middle of a chunk before SO_PIECE to past it (the loop is cut there
    into pieces asking for Ctrl-C), then short runs: NumPy's ufunc.at in C order, as the
    reference applies each update."""
    n = PIECE + 3 * CHUNK
    idx = np.repeat(np.arange(n // 37 + 1) % 50, 37)[:n].astype(np.int32)
    idx[PIECE - 1000:PIECE + 5000] = 7
    rng = np.random.default_rng(3)
    upd = _array(dtype, rng.integers(0, 20, n))
    data = _array(dtype, rng.integers(0, 20, 50))
    want = data.copy()
    with np.errstate(all="ignore"):
        {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}[red].at(
            want, idx.astype(np.intp), upd)
    _same(_call(data, idx, upd, red, True), want)


@st.composite
def mean_call(draw):
    dtype = draw(st.sampled_from(DTYPES))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    size = draw(st.integers(1, 40))
    n = draw(st.integers(1, 300))
    signed = np.dtype(idx_dtype).kind == "i"
    idx = np.array(draw(st.lists(st.integers(-size if signed else 0, size - 1), min_size=n,
                                 max_size=n)), dtype=idx_dtype)
    if draw(st.booleans()):
        idx.sort()
    upd = _array(dtype, draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)))
    data = _array(dtype, draw(st.lists(st.integers(0, 20), min_size=size, max_size=size)))
    return data, idx, upd, draw(st.booleans())


@given(mean_call())
def test_mean_gives_the_reference(call):
    data, idx, upd, include_self = call
    want = reference.scatter_elements(data, idx, upd, 0, reduction="mean",
                                      include_self=include_self)
    direct = data.dtype != np.float16
    _same(_call(data, idx, upd, "mean", direct, direct, include_self=include_self), want)
    inplace = data.copy()
    _call(inplace, idx, upd, "mean", direct, direct, include_self=include_self, out=inplace)
    _same(inplace, want)
    other = np.zeros_like(data)
    _call(data, idx, upd, "mean", direct, direct, include_self=include_self, out=other)
    _same(other, want)


@st.composite
def sparse_mean_call(draw):
    """A mean of a few updates into an out of many more elements: its scratch pairs are
    started and divided only where the indices point (call/cost.h, so_mean_pairs_at_hits; an
    out of at most 1024 elements keeps the direct form: so_mean_out_small), so
    every element the updates miss must keep data's value (NaN, -0.0 among them), and an
    element hit several times (by negative and positive spellings) is divided once."""
    dtype = draw(st.sampled_from([d for d in DTYPES if d != "float16"]))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    size = draw(st.integers(40, 250 if np.dtype(idx_dtype).itemsize == 1 else 1024))
    n = draw(st.integers(1, 24))
    signed = np.dtype(idx_dtype).kind == "i"
    low = max(-size, np.iinfo(idx_dtype).min) if signed else 0
    high = min(size - 1, np.iinfo(idx_dtype).max)
    idx = np.array(draw(st.lists(st.integers(low, high), min_size=n, max_size=n)),
                   dtype=idx_dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    upd = _array(dtype, rng.integers(0, 20, n))
    data = _array(dtype, rng.integers(0, 20, size))
    return data, idx, upd, draw(st.booleans())


@given(sparse_mean_call())
def test_sparse_mean_gives_the_reference(call):
    data, idx, upd, include_self = call
    want = reference.scatter_elements(data, idx, upd, 0, reduction="mean",
                                      include_self=include_self)
    _same(_call(data, idx, upd, "mean", True, True, include_self=include_self), want)
    inplace = data.copy()
    _call(inplace, idx, upd, "mean", True, True, include_self=include_self, out=inplace)
    _same(inplace, want)
    other = np.zeros_like(data)
    _call(data, idx, upd, "mean", True, True, include_self=include_self, out=other)
    _same(other, want)
    _same(_direct(lambda: so.scatter_nd(data, idx[:, None], upd, reduction="mean",
                                        include_self=include_self), True), want)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("idx_dtype", ["int16", "uint64"])
def test_long_mean_every_form(idx_dtype, include_self):
    """A mean long enough to release the GIL and run in pieces, through the three functions,
    in place and into another out."""
    rng = np.random.default_rng(5)
    n, size = 30_000, 300
    idx = rng.integers(0, size, n).astype(idx_dtype)
    upd = rng.integers(-1000, 1000, n).astype(np.int32)
    data = rng.integers(-1000, 1000, size).astype(np.int32)
    want = reference.scatter_elements(data, idx, upd, 0, reduction="mean",
                                      include_self=include_self)
    kw = dict(reduction="mean", include_self=include_self)
    _same(_direct(lambda: so.scatter_update(data, idx, upd, **kw), True), want)
    _same(_direct(lambda: so.scatter_nd(data, idx[:, None], upd, **kw), True), want)
    inplace = data.copy()
    _direct(lambda: so.scatter_elements(inplace, idx, upd, 0, out=inplace, **kw), True)
    _same(inplace, want)


@pytest.mark.parametrize("idx_dtype", ["int8", "int64", "uint32"])
@pytest.mark.parametrize("n,size", [(300, 100), (30_000, 100), (5, 100)])
def test_bad_index_in_a_mean_writes_nothing(idx_dtype, n, size):
    """(5, 100): the pairs only where the indices point, the bad one among them."""
    idx = (np.arange(n) % 90).astype(idx_dtype)
    idx[n - 3] = 100
    data = np.arange(size, dtype=np.float32)
    before = data.copy()
    calls = _core.direct_means()
    for include_self in (True, False):
        with pytest.raises(IndexError, match=rf"indices\[{n - 3}\] = 100 "):
            so.scatter_elements(data, idx, np.ones(n, np.float32), 0, reduction="mean",
                                include_self=include_self, out=data)
        _same(data, before)
    assert _core.direct_means() == calls

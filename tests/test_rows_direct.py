"""The direct form on rows (call/choose.c, call/direct.c, kernels/rows.c): a reduction or "none" along axis 0 into
rows of contiguous elements -- ``scatter_update`` with 1-D indices, ``scatter_nd`` with indices
``(n, 1)`` -- reads the indices in their own dtype, checks them all first, then runs one loop.

Held here to the plain NumPy reference bit for bit over dtypes, index dtypes, row lengths (the
compile-time ones, 1, 2, 4 and 8, and others), reductions, duplicates, negative indices, row
strides of data and out, ``out=`` and in place; that the form ran exactly where the gate says
(``_core.rows_direct_calls()``); long calls (the loop in pieces); a bad index (IndexError, nothing
written in place); indices rewritten after the check (every write stays inside out); and which
calls on two threads keep the form.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)
from scatterops.strategies import array_values, assert_identical

LOOP_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "complex64", "complex128"]
# "none" copies items of 1, 2, 4, 8 or 16 bytes, whatever their dtype
ASSIGN_ONLY = ["bool", "float16", "datetime64[s]", "V16"]
INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REDUCTIONS = ["none", "add", "sub", "mul", "max", "min"]
ROW_LENGTHS = [1, 2, 3, 4, 5, 8, 9, 16]


@pytest.fixture
def one_thread():
    with so.threads(1):
        yield


def _same(got, want):
    # bit for bit; where two NaNs meet, which NaN survives is not promised (docs/contract.md)
    assert_identical(np.ascontiguousarray(got), np.ascontiguousarray(want), nans="any")


def _rows_of(draw, dtype, shape, layout):
    """an array of shape: C-contiguous, or a view with rows further apart (its rows still
    contiguous), or with elements further apart (not of the form)"""
    dtype = np.dtype(dtype)
    if dtype.kind == "V":
        vals = np.frombuffer(draw(st.binary(min_size=dtype.itemsize * int(np.prod(shape)),
                                            max_size=dtype.itemsize * int(np.prod(shape)))),
                             dtype).reshape(shape)
    else:
        vals = draw(array_values(dtype, shape))
    if layout == "C":
        return vals.copy()
    if layout == "rows apart":
        wide = np.zeros((shape[0], shape[1] + 3), dtype)
        view = wide[:, 1:1 + shape[1]]
    else:                                   # "elements apart"
        wide = np.zeros((shape[0], 2 * shape[1]), dtype)
        view = wide[:, ::2]
    view[...] = vals
    return view


@given(dtype=st.sampled_from(LOOP_DTYPES + ASSIGN_ONLY), idx_dtype=st.sampled_from(INDEX_DTYPES),
       red=st.sampled_from(REDUCTIONS), f=st.sampled_from(ROW_LENGTHS),
       size=st.integers(1, 6), n=st.integers(1, 12), nd=st.booleans(),
       data_layout=st.sampled_from(["C", "rows apart", "elements apart"]),
       upd_layout=st.sampled_from(["C", "rows apart", "elements apart"]),
       target=st.sampled_from(["fresh", "out", "in place"]), data=st.data())
def test_rows_equal_the_reference(dtype, idx_dtype, red, f, size, n, nd, data_layout,
                                  upd_layout, target, data):
    if dtype in ASSIGN_ONLY:
        red = "none"
    signed = np.dtype(idx_dtype).kind == "i"
    values = data.draw(st.lists(st.integers(-size if signed else 0, size - 1), min_size=n,
                                max_size=n))            # duplicates, negatives
    idx = np.array(values, idx_dtype)
    d = _rows_of(data.draw, dtype, (size, f), data_layout)
    u = _rows_of(data.draw, dtype, (n, f), upd_layout)
    call = (lambda **kw: so.scatter_nd(d, idx[:, None], u, reduction=red, **kw)) if nd else \
        (lambda **kw: so.scatter_update(d, idx, u, reduction=red, **kw))
    want_fn = reference.scatter_nd if nd else reference.scatter_update
    with np.errstate(all="ignore"):
        want = want_fn(d, idx[:, None] if nd else idx, u, reduction=red)
    got = _rows_of(data.draw, dtype, (size, f), data_layout) if target == "out" else d
    before = _core.rows_direct_calls()
    with so.threads(1):
        if target == "fresh":
            got = call()
        else:
            assert call(out=got) is got
    # written: a fresh C-ordered result, or out as laid out
    written = "C" if target == "fresh" else data_layout
    _same(got, want)
    # (a row of one element is contiguous at any stride)
    of_the_form = ((f == 1 or (upd_layout != "elements apart" and written != "elements apart"))
                   and (dtype not in ASSIGN_ONLY or red == "none"))
    assert _core.rows_direct_calls() - before == int(of_the_form)


@pytest.mark.parametrize("dtype,red,idx_dtype,f", [
    ("float32", "add", "int64", 2), ("float32", "add", "int32", 4), ("float64", "max", "uint16", 8),
    ("float32", "min", "int8", 3), ("int32", "mul", "uint8", 1), ("complex64", "sub", "int16", 4),
    ("complex128", "add", "uint64", 5), ("float32", "none", "int64", 2),
    ("uint16", "none", "int32", 8), ("complex128", "none", "uint32", 3)])
def test_long_calls_in_pieces(one_thread, dtype, red, idx_dtype, f):
    """past the size that releases the GIL and past one piece of the loop (2^18 elements)"""
    rng = np.random.default_rng(f)
    n, size = (1 << 18) // f + 1000, 100
    lo = -size if np.dtype(idx_dtype).kind == "i" else 0
    idx = rng.integers(lo, size, n).astype(idx_dtype)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        u = rng.integers(0, 3, (n, f)).astype(dtype)
        d = rng.integers(0, 9, (size, f)).astype(dtype)
    else:
        u = (rng.standard_normal((n, f)) + (1j * rng.standard_normal((n, f)) if kind == "c" else 0)
             ).astype(dtype)
        u[::101] = np.nan
        d = (rng.standard_normal((size, f)) * 3).astype(dtype)
    want = d.copy()
    if red == "none":
        want[idx.astype(np.intp)] = u            # NumPy's assignment: the last write wins
    else:
        ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
                 "min": np.minimum}[red]
        with np.errstate(all="ignore"):
            ufunc.at(want, idx.astype(np.intp), u)
    before = _core.rows_direct_calls()
    _same(so.scatter_update(d, idx, u, reduction=red), want)
    _same(so.scatter_nd(d, idx[:, None], u, reduction=red), want)
    assert _core.rows_direct_calls() - before == 2


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("n", [40, 20_000])
@pytest.mark.parametrize("red", ["add", "none"])
def test_bad_index_writes_nothing(one_thread, idx_dtype, n, red):
    size, f = 50, 4
    idx = (np.arange(n) % size).astype(idx_dtype)
    where = n - 3
    idx[where] = size                            # one past the end, in every index type
    data = np.arange(size * f, dtype=np.float32).reshape(size, f)
    before = data.copy()
    with pytest.raises(IndexError, match=rf"indices\[{where}\] = {size} "):
        so.scatter_update(data, idx, np.ones((n, f), np.float32), reduction=red, out=data)
    _same(data, before)
    with pytest.raises(IndexError):
        so.scatter_nd(data, idx[:, None], np.ones((n, f), np.float32), reduction=red, out=data)
    _same(data, before)


@pytest.fixture
def rewrite():
    yield _core._test_rewrite_indices
    _core._test_rewrite_indices(None)


@pytest.mark.parametrize("idx_dtype", ["int8", "int64", "uint16"])
@pytest.mark.parametrize("f", [2, 4, 7])
@pytest.mark.parametrize("value", [-100, 100])
def test_rewritten_indices_stay_inside_out(one_thread, rewrite, idx_dtype, f, value):
    """indices rewritten after the check, out of range: every write stays inside out"""
    guard = 4096
    buf = np.zeros(2 * guard + 50 * f, np.float32)
    data = buf[guard:guard + 50 * f].reshape(50, f)
    idx = (np.arange(40) % 50).astype(idx_dtype)
    rewrite(value)
    before = _core.rows_direct_calls()
    so.scatter_update(data, idx, np.ones((40, f), np.float32), reduction="add", out=data)
    assert _core.rows_direct_calls() - before == 1
    assert not buf[:guard].any() and not buf[guard + 50 * f:].any()


def test_unaligned_items_under_none_take_the_general_way(one_thread):
    """'none' reads items as words of their size: a packed struct of two int32 (alignment 1)
    at an odd address goes the general way, with the same bits"""
    dt = np.dtype([("a", "<i4"), ("b", "<i4")])
    raw = np.zeros(1 + 6 * 2 * dt.itemsize, np.uint8)
    data = raw[1:].view(dt).reshape(6, 2)
    data["a"] = np.arange(12).reshape(6, 2)
    u = np.zeros((3, 2), dt)
    u["b"] = 7
    idx = np.array([5, 0, 5])
    want = reference.scatter_update(data, idx, u)
    before = _core.rows_direct_calls()
    so.scatter_update(data, idx, u, out=data)
    assert _core.rows_direct_calls() == before
    _same(data, want)


@pytest.mark.parametrize("f,dtype,size,kept", [
    (2, "float32", 1000, True), (16, "float32", 1000, True), (8, "float64", 1000, True),
    (32, "float32", 1000, True), (8, "complex128", 1000, True),
    # wider rows: the one-thread form unless a split would run -- none into an out
    # in L2 with so few rows, the split by index value into one beyond L2
    (33, "float32", 1000, True), (64, "float32", 1000, True), (9, "complex128", 1000, True),
    (33, "float32", 100_000, False), (64, "float32", 100_000, False),
    (9, "complex128", 100_000, False)])
def test_two_threads_keep_rows_of_two_cache_lines(f, dtype, size, kept):
    """on two threads (the cost model on), rows of up to 128 bytes keep the one-thread form, and
    wider ones where no split would run; with the cost model off (the suite's default) every call
    of 2^16 update elements or more takes the split"""
    n = -(-(1 << 16) // f)
    rng = np.random.default_rng(f)
    idx = rng.integers(0, size, n)
    d = np.zeros((size, f), dtype)
    u = np.ones((n, f), dtype)
    want = reference.scatter_update(d, idx, u, reduction="add")
    old = _core.set_cost_model(True)        # also forgets what the back-off learnt
    try:
        with so.threads(2):
            before = _core.rows_direct_calls()
            _same(so.scatter_update(d, idx, u, reduction="add"), want)
            assert _core.rows_direct_calls() - before == int(kept)
    finally:
        _core.set_cost_model(old)
    with so.threads(2):
        before = _core.rows_direct_calls()
        _same(so.scatter_update(d, idx, u, reduction="add"), want)
        assert _core.rows_direct_calls() == before

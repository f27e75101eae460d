"""The direct form on rows for ``scatter_elements`` along axis 0 with an expanded index (decided in call/choose.c):
every dim of the index after the first of data's size and of stride 0 (``np.broadcast_to`` of a
row index, or a materialised one once call/fold.c has made it such a view), so each update row goes
whole to one row of data, read through the index's column ``idx[:, 0, ...]``.

Held to the plain NumPy reference bit for bit over dtypes, index dtypes, reductions, row lengths
(the loop's compile-time ones and others), negative indices, 2-D and 3-D data, ``out=`` and in
place; that the form ran exactly where the gate says (``_core.rows_direct_calls()``: a column of
stride other than the item size, an index not expanded, axis 1, updates whose rows are not contiguous go
the general way, with the same bits); a bad index (the same IndexError as the general way, at the same
element, nothing written in place); and the row loop's prefetching path (rows of 128 bytes or
more into an out beyond a core's L2).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)
from scatterops.strategies import array_values, assert_identical

DTYPES = ["int8", "int32", "uint16", "int64", "float32", "float64", "complex64", "complex128"]
INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REDUCTIONS = ["none", "add", "sub", "mul", "max", "min"]
# the loop's constants (1, 2, 4, 8, 16) and lengths on either side of them
ROW_SHAPES = [(1,), (2,), (3,), (4,), (8,), (9,), (15,), (16,), (17,), (2, 8), (3, 1, 2)]


@pytest.fixture
def one_thread():
    with so.threads(1):
        yield


def _same(got, want):
    # bit for bit; where two NaNs meet, which NaN survives is not promised (docs/contract.md)
    assert_identical(np.ascontiguousarray(got), np.ascontiguousarray(want), nans="any")


def _expanded(col, row_shape):
    """col (n,) expanded along rows of row_shape: stride 0 after dim 0"""
    return np.broadcast_to(col.reshape((-1,) + (1,) * len(row_shape)), col.shape + row_shape)


@given(dtype=st.sampled_from(DTYPES), idx_dtype=st.sampled_from(INDEX_DTYPES),
       red=st.sampled_from(REDUCTIONS), row_shape=st.sampled_from(ROW_SHAPES),
       size=st.integers(1, 6), n=st.integers(1, 12),
       column=st.sampled_from(["contiguous", "strided"]),
       target=st.sampled_from(["fresh", "out", "in place"]), data=st.data())
def test_expanded_index_equals_the_reference(dtype, idx_dtype, red, row_shape, size, n, column,
                                             target, data):
    signed = np.dtype(idx_dtype).kind == "i"
    values = data.draw(st.lists(st.integers(-size if signed else 0, size - 1), min_size=n,
                                max_size=n))            # duplicates, negatives
    col = np.array(values, idx_dtype)
    if column == "strided":                 # a column of stride twice the item size
        col = np.repeat(col, 2)[::2]
    idx = _expanded(col, row_shape)
    d = data.draw(array_values(dtype, (size,) + row_shape)).copy()
    u = data.draw(array_values(dtype, (n,) + row_shape)).copy()
    with np.errstate(all="ignore"):
        want = reference.scatter_elements(d, idx, u, 0, reduction=red)
    before = _core.rows_direct_calls()
    with so.threads(1):
        if target == "fresh":
            got = so.scatter_elements(d, idx, u, 0, reduction=red)
        else:
            got = d if target == "in place" else np.zeros_like(d)
            assert so.scatter_elements(d, idx, u, 0, reduction=red, out=got) is got
    _same(got, want)
    # a column of one value is contiguous at any stride
    assert _core.rows_direct_calls() - before == int(column == "contiguous" or n == 1)


@pytest.mark.parametrize("case", ["not expanded", "column-major index", "narrower index", "axis 1",
                                  "updates elements apart", "expanded on dim 2 only"])
def test_other_shapes_take_the_general_way(one_thread, case):
    rng = np.random.default_rng(7)
    n, size, f = 30, 6, 4
    col = rng.integers(-size, size, n)
    d = rng.standard_normal((size, f)).astype(np.float32)
    u = rng.standard_normal((n, f)).astype(np.float32)
    axis = 0
    if case == "not expanded":              # each element its own row
        idx = rng.integers(0, size, (n, f))
    elif case == "column-major index":      # its first column contiguous, the others differ
        idx = np.asfortranarray(rng.integers(0, size, (n, f)))
    elif case == "narrower index":          # the index covers 3 of the 4 columns
        idx, u = _expanded(col, (3,)), u[:, :3]
    elif case == "axis 1":
        idx, axis = np.broadcast_to(rng.integers(0, f, (1, f)), (size, f)), 1
        u = rng.standard_normal((size, f)).astype(np.float32)
    elif case == "updates elements apart":
        idx, u = _expanded(col, (f,)), np.repeat(u, 2, axis=1)[:, ::2]
    else:                                   # (n, 2, 2): constant along dim 2 only
        d, u = d.reshape(size, 2, 2), u.reshape(n, 2, 2)
        idx = np.broadcast_to(rng.integers(0, size, (n, 2, 1)), (n, 2, 2))
    want = reference.scatter_elements(d, idx, u, axis, reduction="add")
    before = _core.rows_direct_calls()
    _same(so.scatter_elements(d, idx, u, axis, reduction="add"), want)
    assert _core.rows_direct_calls() == before


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("n", [40, 20_000])
@pytest.mark.parametrize("red", ["add", "none"])
def test_bad_index_raises_as_the_general_way_and_writes_nothing(one_thread, idx_dtype, n, red):
    size, f = 50, 4
    col = (np.arange(n) % size).astype(idx_dtype)
    where = n - 3
    col[where] = size                        # one past the end, in every index type
    data = np.arange(size * f, dtype=np.float32).reshape(size, f)
    before = data.copy()
    u = np.ones((n, f), np.float32)
    message = rf"scatter_elements: indices\[{where}, 0\] = {size} is out of bounds"
    for idx in (_expanded(col, (f,)), np.ascontiguousarray(_expanded(col, (f,)))):
        with pytest.raises(IndexError, match=message):
            so.scatter_elements(data, idx, u, 0, reduction=red, out=data)
        _same(data, before)
    if np.dtype(idx_dtype).kind == "i":      # below -size, the first of two bad rows
        col[where - 1] = -size - 1
        with pytest.raises(IndexError, match=rf"indices\[{where - 1}, 0\] = {-size - 1} "):
            so.scatter_elements(data, _expanded(col, (f,)), u, 0, reduction=red, out=data)
        _same(data, before)
    # mode="clip" runs again on the clipped index, through the same form
    col[col < 0] = 0
    col[where] = size - 1
    want = reference.scatter_elements(data, _expanded(col, (f,)), u, 0, reduction=red)
    col[where] = size
    _same(so.scatter_elements(data, _expanded(col, (f,)), u, 0, reduction=red, mode="clip"),
          want)


@pytest.mark.parametrize("f", [16, 32, 40, 64])
@pytest.mark.parametrize("kind", ["update", "elements", "elements materialised"])
def test_rows_into_an_out_beyond_l2(one_thread, f, kind):
    """rows of 128 bytes or more into an out of more than 2 MiB: the loop that prefetches the row
    ahead (f = 16 float32, 64-byte rows, the same loop without), negative indices, duplicates"""
    rng = np.random.default_rng(f)
    size, n = (3 << 20) // (4 * f), 20_000
    col = rng.integers(-size, size, n).astype(np.int32)
    col[::7] = col[0]
    d = rng.standard_normal((size, f)).astype(np.float32)
    u = rng.standard_normal((n, f)).astype(np.float32)
    want = d.copy()
    np.add.at(want, col.astype(np.intp), u)
    before = _core.rows_direct_calls()
    if kind == "update":
        got = so.scatter_update(d, col, u, 0, reduction="add")
    else:
        idx = _expanded(col, (f,))
        got = so.scatter_elements(d, idx if kind == "elements" else np.ascontiguousarray(idx), u, 0,
                                  reduction="add")
    _same(got, want)
    assert _core.rows_direct_calls() - before == 1

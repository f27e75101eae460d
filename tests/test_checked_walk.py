"""Out of place, element by element into a small out (csrc/py/checked.c: so_checked_while_walking):
the index check runs on a second thread while the walk writes a fresh result, whose
element kernels clamp every index.  The result must be the reference's; a bad index
anywhere must raise the usual IndexError, leave data as it was, and write nothing
outside the result (the sanitizer run of the suite would see that)."""
import numpy as np
import pytest

import scatterops as so
import fast_reference as reference     # the reference's bits, whole-array

N, M = 1 << 17, 5000          # 2**16 updates or more take that path


@pytest.fixture
def two_threads():
    before = so.get_num_threads()
    so.set_num_threads(2)
    yield
    so.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_, np.complex64])
@pytest.mark.parametrize("red", ["none", "add", "max", "mul"])
def test_equals_the_reference(dtype, red, two_threads):
    rng = np.random.default_rng(3)
    d = (rng.standard_normal(M) * 10).astype(dtype)
    i = rng.integers(-M, M, N)
    u = (rng.standard_normal(N) * 10).astype(dtype)
    # one reference for the four calls: on 1-D data, scatter_nd with indices[:, None] and
    # scatter_elements are the same updates in the same order, whatever the index type (the
    # pure-NumPy reference took nearly all of this test's time when computed four times)
    want = reference.scatter_elements(d, i, u, reduction=red).tobytes()
    for idx_dtype in (np.int64, np.int32):
        ii = i.astype(idx_dtype)
        assert so.scatter_elements(d, ii, u, reduction=red).tobytes() == want
        assert so.scatter_nd(d, ii[:, None], u, reduction=red).tobytes() == want


def _assert_bad_index_raises(size, where, value, seed):
    """N updates into `size` float32 elements with indices[where] = value: both functions
    raise the usual IndexError (add and none) and data is left as it was."""
    rng = np.random.default_rng(seed)
    d = rng.standard_normal(size).astype(np.float32)
    before = d.copy()
    i = rng.integers(-size, size, N)
    i[where] = value
    u = np.ones(N, np.float32)
    for red in ("add", "none"):
        with pytest.raises(IndexError, match=rf"scatter_elements: indices\[{where}\] = {value} "):
            so.scatter_elements(d, i, u, reduction=red)
        with pytest.raises(IndexError, match=rf"scatter_nd: indices\[{where}, 0\] = {value} "):
            so.scatter_nd(d, i[:, None], u, reduction=red)
    assert d.tobytes() == before.tobytes()


@pytest.mark.parametrize("where", [0, N // 2, N - 1])
@pytest.mark.parametrize("value", [M, -M - 1, 2**62, -2**63, np.iinfo(np.int64).max])
def test_a_bad_index_raises_and_leaves_data(where, value, two_threads):
    _assert_bad_index_raises(M, where, value, seed=4)


# Out of place into a large out (4 MiB or more), split by index value (py/checked.c:
# checked_by_owners): every thread checks the indices it reads, no pass before.
BIG = 1 << 20


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("red", ["none", "add", "min", "mul"])
def test_owners_check_and_equal_the_reference(threads, red):
    before = so.get_num_threads()
    so.set_num_threads(threads)
    try:
        rng = np.random.default_rng(5)
        d = rng.standard_normal(BIG).astype(np.float32)
        i = rng.integers(-BIG, BIG, N)
        u = rng.standard_normal(N).astype(np.float32)
        want = reference.scatter_elements(d, i, u, reduction=red).tobytes()  # as above
        assert so.scatter_nd(d, i[:, None], u, reduction=red).tobytes() == want
        assert so.scatter_elements(d, i, u, reduction=red).tobytes() == want
    finally:
        so.set_num_threads(before)


@pytest.mark.parametrize("where", [0, N // 2, N - 1])
@pytest.mark.parametrize("value", [BIG, -BIG - 1, -2**63])
def test_owners_find_a_bad_index(where, value, two_threads):
    _assert_bad_index_raises(BIG, where, value, seed=6)


# The same with rows: an expanded row index (graph message passing) and k = 1 of
# scatter_nd fold the feature dim into a block, and the owners still check.
ROWS, FEAT, EDGES = 1 << 14, 64, 1 << 12         # out 4 MiB of float32


def _graph(rng, dtype=np.float32):
    d = (rng.standard_normal((ROWS, FEAT)) * 10).astype(dtype)
    r = rng.integers(-ROWS, ROWS, EDGES)
    u = (rng.standard_normal((EDGES, FEAT)) * 10).astype(dtype)
    return d, r, u


@pytest.mark.parametrize("red", ["none", "add", "max", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_owners_of_rows_equal_the_reference(red, dtype):
    d, r, u = _graph(np.random.default_rng(7), dtype)
    i = np.broadcast_to(r[:, None], u.shape)
    want = reference.scatter_elements(d, i, u, 0, reduction=red).tobytes()
    before = so.get_num_threads()
    try:
        for threads in (2, 3):
            so.set_num_threads(threads)
            assert so.scatter_elements(d, i, u, 0, reduction=red).tobytes() == want
            assert so.scatter_nd(d, r[:, None], u, reduction=red).tobytes() == want
            out = d.copy()
            so.scatter_elements(d, i, u, 0, reduction=red, out=out)
            assert out.tobytes() == want
    finally:
        so.set_num_threads(before)


@pytest.mark.parametrize("where", [0, EDGES // 2, EDGES - 1])
@pytest.mark.parametrize("value", [ROWS, -ROWS - 1, -2**63])
def test_owners_of_rows_find_a_bad_index(where, value, two_threads):
    d, r, u = _graph(np.random.default_rng(8))
    before = d.copy()
    r[where] = value
    i = np.broadcast_to(r[:, None], u.shape)
    for red in ("add", "mean"):
        with pytest.raises(IndexError, match=rf"scatter_elements: indices\[{where}, 0\] = {value} "):
            so.scatter_elements(d, i, u, 0, reduction=red)
        with pytest.raises(IndexError, match=rf"scatter_nd: indices\[{where}, 0\] = {value} "):
            so.scatter_nd(d, r[:, None], u, reduction=red)
    assert d.tobytes() == before.tobytes()

"""_core.at, the C entry of scatterops.at: the forms it runs (it returns None) give
ufunc.at's bits for every dtype with a C loop, with broadcast b, negative and repeated
indices; an index out of range raises NumPy's IndexError and writes nothing; every
other call (another layout, a b that changes the loop dtype, an error mode that acts,
a read-only a) returns NotImplemented before anything is written, and scatterops.at
still gives NumPy's result.
"""
import numpy as np
import pytest

import scatterops
from scatterops import _core

DTYPES = sorted(set(_core.TYPED_DTYPES["add"]) - set("?"))


def _values(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(0, 5, shape).astype(dt)
    if dt.kind == "c":
        return (rng.random(shape) + 1j * rng.random(shape)).astype(dt)
    return rng.random(shape).astype(dt)


def _forms(rng):
    """(name, shape of a, index, shape of a[index]) of each form the C entry runs."""
    idx = np.array([3, -1, 0, 3, 3, -10, 9])            # duplicates, negatives
    return [
        ("1-d array into 1-d a", (10,), idx, (7,)),
        ("int32 array", (10,), idx.astype(np.int32), (7,)),
        ("list of ints", (10,), idx.tolist(), (7,)),
        ("n-d array into 1-d a", (10,), idx[:6].reshape(2, 3), (2, 3)),
        ("array along axis 0", (10, 3), idx, (7, 3)),
        ("(rows, cols)", (4, 10), (np.array([0, 3, -1, 0, 0]), np.array([9, -10, 2, 9, 9])), (5,)),
        ("(rows, cols) 2-d", (4, 10), (np.array([[0, 3], [0, 0]]), np.array([[9, 1], [9, 9]])), (2, 2)),
        ("(:, idx)", (4, 10), (slice(None), idx), (4, 7)),
        ("(:, :, idx)", (2, 3, 10), (slice(None), slice(None), idx), (2, 3, 7)),
    ]


def _check(ufunc, a, index, b, in_c=True, numpy_b=None):
    """_core.at runs the call (in_c) or declines it, and scatterops.at gives ufunc.at's
    bytes (given numpy_b for b: a 1-d a and an n-d index, where NumPy reads past b)."""
    mine, theirs = a.copy(order="K"), a.copy(order="K")
    if in_c:
        assert _core.at(ufunc, mine, index, b) is None
    else:
        before = mine.copy()
        assert _core.at(ufunc, mine, index, b) is NotImplemented
        assert mine.tobytes() == before.tobytes()
        scatterops.at(ufunc, mine, index, b)
    ufunc.at(theirs, index, b if numpy_b is None else numpy_b)
    assert mine.dtype == theirs.dtype
    assert mine.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", range(9))
def test_each_form_and_dtype_runs_in_c_as_numpy(form, dtype):
    rng = np.random.default_rng(form)
    name, shape, index, rshape = _forms(rng)[form]
    a = _values(dtype, shape, rng)
    for ufunc in (np.add, np.multiply, np.maximum, np.minimum, np.subtract):
        _check(ufunc, a, index, _values(dtype, rshape, rng))


@pytest.mark.parametrize("form", range(9))
def test_b_broadcasts_as_numpy_broadcasts_it(form):
    rng = np.random.default_rng(form)
    name, shape, index, rshape = _forms(rng)[form]
    a = rng.random(shape)
    for bshape in {(), (1,), rshape[-1:], (1,) * len(rshape), (rshape[0],) + (1,) * (len(rshape) - 1)}:
        b = rng.random(bshape)
        _check(np.add, a, index, b, numpy_b=np.broadcast_to(b, rshape))
    _check(np.add, a, index, 2.5)
    _check(np.add, a, index, 3)
    _check(np.add, a, index, np.float64(0.5))


def test_large_calls_write_b_out_or_not_alike():
    rng = np.random.default_rng(5)
    a = rng.random(100)
    for n in (4096, 4097, 10_000):
        _check(np.add, a, rng.integers(-100, 100, n), 0.25)
        _check(np.add, a.reshape(10, 10), (slice(None), rng.integers(0, 10, n // 10)), rng.random(n // 10))


def test_large_element_tuples_go_to_python():
    rng = np.random.default_rng(6)
    a = rng.random((100, 100))
    _check(np.add, a, (rng.integers(0, 100, 4096), rng.integers(0, 100, 4096)), np.ones(4096))
    _check(np.add, a, (rng.integers(0, 100, 4097), rng.integers(0, 100, 4097)), np.ones(4097),
           in_c=False)
    # one float64 b: the scalar loop, at any size (tests/test_at_wide.py)
    _check(np.add, a, (rng.integers(0, 100, 4097), rng.integers(0, 100, 4097)), 1.0)


@pytest.mark.parametrize("form", range(9))
def test_index_out_of_range_raises_numpys_error_and_writes_nothing(form):
    rng = np.random.default_rng(form)
    name, shape, index, rshape = _forms(rng)[form]
    bad = 10
    if isinstance(index, tuple):
        index = index[:-1] + (np.where(np.arange(index[-1].size).reshape(index[-1].shape) == 1,
                                       bad, index[-1]),)
    elif isinstance(index, list):
        index = index[:1] + [bad] + index[2:]
    else:
        index = index.copy()
        index.flat[1] = -bad - 1
    a = rng.random(shape)
    before = a.copy()
    with pytest.raises(IndexError) as mine:
        _core.at(np.add, a, index, 1.0)
    assert a.tobytes() == before.tobytes()
    with pytest.raises(IndexError) as theirs:
        np.add.at(a.copy(), index, 1.0)
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(IndexError):
        scatterops.at(np.add, a, index, 1.0)
    assert a.tobytes() == before.tobytes()


@pytest.mark.parametrize("make", [
    lambda: np.zeros((10, 6))[:, ::2],            # strided
    lambda: np.zeros((6, 10)).T[::-1],            # negative step
    lambda: np.zeros(10, dtype=">f8"),            # byte-swapped
    lambda: np.zeros(10, dtype=np.longdouble),    # no C loop
])
def test_other_layouts_and_dtypes_go_to_python(make):
    index = np.array([0, 2, 2, -1])
    mine, theirs = make(), make()
    b = np.arange(4.0).reshape((4,) + (1,) * (mine.ndim - 1)).astype(mine.dtype)
    assert _core.at(np.add, mine, index, b) is NotImplemented
    assert not mine.any()
    scatterops.at(np.add, mine, index, b)
    np.add.at(theirs, index, b)
    assert mine.tobytes() == theirs.tobytes()


def test_fortran_order_a_runs_in_c():
    a = np.asfortranarray(np.random.default_rng(0).random((5, 4)))
    _check(np.add, a, (np.array([0, 4, 4]), np.array([3, -1, 3])), np.array([1.0, 2.0, 3.0]))
    _check(np.add, a, (slice(None), np.array([0, 0, 2])), 1.5)


@pytest.mark.parametrize("dtype, b", [
    (np.float32, np.array(1.0)),       # ufunc.at computes in float64 and rounds per update
    (np.float16, np.array([0.1])),     # (a float64 scalar runs in C: tests/test_at_wide.py)
    (np.float32, np.float16(1.0)),     # float32 with float16: float32, rounded once
    (np.float16, np.float32(0.1)),
    (np.int8, 300),                    # int64, cast back
    (np.uint64, 1),                    # uint64 with int64: float64
    (np.int16, np.int32(3)),
    (np.float64, True),
    (np.float64, [1.0]),
])
def test_b_that_changes_the_loop_dtype_goes_to_python(dtype, b):
    a = np.arange(5).astype(dtype)
    _check(np.add, a, np.array([0, 0, 4]), b, in_c=False)


def test_python_ints_in_range_of_an_integer_a_run_in_c():
    for dtype in (np.int8, np.uint8, np.int32, np.uint32, np.int64):
        a = np.arange(5).astype(dtype)
        _check(np.add, a, np.array([0, 0, 4]), 100)
        _check(np.maximum, a, np.array([0, 0, 4]), 3)
    _check(np.add, np.arange(5).astype(np.uint8), np.array([0]), -1, in_c=False)


def test_other_index_forms_go_to_python():
    a = np.zeros((4, 5))
    for index in [np.array([], dtype=np.intp), [], [0, True], [0, 1.0], 2, (1, np.array([0, 0])),
                  (np.array([0, 1]), np.array([[0], [1]])), (slice(1, None), np.array([0])),
                  np.array([True, False, True, False]),
                  np.array([0, 1], dtype=np.uint64), (np.array([0]), Ellipsis), [2 ** 70]]:
        assert _core.at(np.add, a.copy(), index, 1.0) is NotImplemented, index


def test_error_modes_that_act_go_to_python():
    a = np.ones(3)
    with np.errstate(over="raise"):
        assert _core.at(np.multiply, a, np.array([0, 0]), 1e308) is NotImplemented
        with pytest.raises(FloatingPointError):
            scatterops.at(np.multiply, a, np.array([0, 0]), 1e308)
    with np.errstate(all="ignore"):
        assert _core.at(np.multiply, a, np.array([1]), 1e308) is None
    with np.errstate(over="warn"):
        assert _core.at(np.add, a, np.array([2]), 1.0) is None
    with np.errstate(invalid="call"):
        assert _core.at(np.add, a, np.array([2]), 1.0) is NotImplemented
    assert _core.at(np.add, np.ones(3, np.int64), np.array([0]), 1) is None


def test_read_only_a_and_subclasses_go_to_python():
    a = np.zeros(5)
    a.flags.writeable = False
    assert _core.at(np.add, a, np.array([0]), 1.0) is NotImplemented
    with pytest.raises(ValueError):
        scatterops.at(np.add, a, np.array([0]), 1.0)
    m = np.ma.zeros(5)
    assert _core.at(np.add, m, np.array([0]), 1.0) is NotImplemented


def test_other_ufuncs_and_b_go_to_python():
    a = np.zeros(5)
    assert _core.at(np.divide, a, np.array([0]), 1.0) is NotImplemented
    assert _core.at(np.negative, a, np.array([0]), None) is NotImplemented
    assert _core.at([], a, np.array([0]), 1.0) is NotImplemented
    assert _core.at(np.add, a, np.array([0]), None) is NotImplemented
    assert _core.at(np.add, a, np.array([0, 1]), np.ones(3)) is NotImplemented   # NumPy's error
    assert _core.at(np.add, a, np.array([0, 1]), np.ones((1, 2))) is NotImplemented
    assert not a.any()


@pytest.mark.parametrize("index", [np.array([1, 2, 3, 1]), [1, 2, 3, 1]])
def test_b_sharing_memory_with_a_is_read_before_the_call(index):
    mine, theirs = np.arange(6.0), np.arange(6.0)
    assert _core.at(np.add, mine, index, mine[:4]) is None
    np.add.at(theirs, index, theirs[:4])
    assert mine.tobytes() == theirs.tobytes()
    mine, theirs = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
    assert _core.at(np.add, mine, (slice(None), np.array([0, 1, 1])), mine[:, 1:]) is None
    np.add.at(theirs, (slice(None), np.array([0, 1, 1])), theirs[:, 1:])
    assert mine.tobytes() == theirs.tobytes()

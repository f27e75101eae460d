"""scatterops.at against NumPy's own ufunc.at: the same bits in a, the same exception
classes, and a untouched after an error.

One hypothesis property per index form (tests/strategies.py: AT_INDEX_FORMS), each over
the arithmetic dtypes (native, byte-swapped, longdouble), layouts of a (C, Fortran,
transposed, strided with negative steps, unaligned), duplicate and negative indices, b
as a scalar, a full or broadcast array, of a's dtype or another, and ufuncs scatterops
runs in C beside some it hands to NumPy.  ``HYPOTHESIS_PROFILE=deep`` runs each with
1000 examples.
"""
import numpy as np
import pytest
from hypothesis import given

import scatterops
from scatterops import _at

import strategies as S


def _call(fn, case, a):
    args = (a, case.index) if case.b is None else (a, case.index, case.b)
    try:
        with np.errstate(all="ignore"):
            fn(*args)
    except Exception as exc:      # compared by class below
        return exc
    return None


def check_at(case: S.AtCase):
    """scatterops.at against NumPy's ufunc.at given b broadcast explicitly (NumPy 2.4 reads
    past some b it broadcasts itself: see test_result_does_not_depend_on_the_index_spelling)."""
    mine, theirs = case.a.make(), case.a.make()
    before = S.snapshot(mine)
    explicit = S.AtCase(case.ufunc, case.a, case.index,
                        S.at_b_as_numpy_reads_it(case.a.shape, case.index, case.b))
    err_theirs = _call(case.ufunc.at, explicit, theirs)
    err_mine = _call(lambda *args: scatterops.at(case.ufunc, *args), case, mine)
    if err_theirs is not None:
        assert type(err_mine) is type(err_theirs), f"{err_mine!r} raised where NumPy raised {err_theirs!r}"
        S.assert_identical(mine, before, objects="eq", where="a after the error")
        return
    assert err_mine is None, f"{err_mine!r} raised where NumPy did not"
    S.assert_identical(mine, theirs, objects="eq", nans="any", where="a")


@given(case=S.at_cases("int_array"))
def test_int_array_index(case):
    check_at(case)


@given(case=S.at_cases("array_tuple"))
def test_tuple_of_int_arrays(case):
    check_at(case)


@given(case=S.at_cases("mixed"))
def test_slices_ints_none_ellipsis_and_arrays(case):
    check_at(case)


@given(case=S.at_cases("basic"))
def test_basic_index(case):
    check_at(case)


@given(case=S.at_cases("bool"))
def test_boolean_index(case):
    check_at(case)


@given(case=S.at_spelling_cases())
def test_result_does_not_depend_on_the_index_spelling(case):
    """Every spelling of one index array (an N-d array, in a tuple, as a list, beside an
    Ellipsis; a few values or more than a thousand) gives what NumPy's ufunc.at gives with
    b broadcast explicitly to the index's shape, under an error mode that lets the C core
    run and under one that hands the call to NumPy.  NumPy 2.4's own ufunc.at reads past a
    1-d b that an N-d index array broadcasts into a 1-d a."""
    expected = case.a.copy()
    with np.errstate(all="ignore"):
        case.ufunc.at(expected, case.x, np.broadcast_to(np.asarray(case.b), case.x.shape))
    for errors in ("ignore", "raise"):
        mine = case.a.copy()
        with np.errstate(all=errors):
            scatterops.at(case.ufunc, mine, S.AT_SPELLINGS[case.spelling](case.x), case.b)
        S.assert_identical(mine, expected, where=f"a (errstate {errors})")


def test_an_nd_index_array_broadcasting_b_into_a_1d_a():
    """The call NumPy 2.4's ufunc.at gets wrong, as the spellings that it gets right give it."""
    index = np.array([[4, 4], [3, 1]])
    for spelling in (index, (index,), index.tolist(), (index, Ellipsis)):
        for ufunc in (np.add, np.fmax):
            a = np.zeros(5)
            scatterops.at(ufunc, a, spelling, np.array([-5.0, -9.0]))
            expected = [0, -9, 0, -5, -14] if ufunc is np.add else [0, 0, 0, 0, 0]
            S.assert_identical(a, np.array(expected, float), where=f"{ufunc.__name__} at {spelling!r}")


# ---- the C path is the one taken ---------------------------------------------------------

FAST_DTYPES = ["?", "i1", "u1", "i4", "u8", "i8", "f2", "f4", "f8", "c8", "c16"]
FAST_FORMS = [
    ("int array", (4, 5), lambda: np.array([3, 0, 3, -1])),
    ("int array, 2-d", (4, 5), lambda: np.array([[3, 0], [3, -4]])),
    ("list", (6,), lambda: [1, 1, 5, -6]),
    ("tuple of arrays", (4, 5), lambda: (np.array([0, 3, 3]), np.array([4, -1, 4]))),
    ("tuple of broadcast arrays", (4, 5, 3), lambda: (np.array([[0], [3]]), np.array([4, 4, 1]), 2)),
    ("slice and array", (4, 5), lambda: (slice(None), np.array([4, 0, 4]))),
    ("separated arrays", (4, 5, 3), lambda: (np.array([1, 1]), slice(None, None, -1), np.array([0, 2]))),
    ("slice, two arrays", (3, 4, 5), lambda: (slice(1, None), [0, 3, 3], [4, -5, 4])),
    ("basic", (4, 5), lambda: (slice(None, None, 2), 1)),
    ("int", (4, 5), lambda: 2),
    ("Ellipsis, None", (4, 5), lambda: (Ellipsis, None, np.array([1, 1]))),
    ("boolean", (4, 5), lambda: np.array([True, False, True, True])),
    ("boolean 2-d", (4, 5), lambda: np.arange(20).reshape(4, 5) % 3 == 0),
]


@pytest.mark.parametrize("ufunc", S.AT_FAST_UFUNCS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", FAST_DTYPES)
@pytest.mark.parametrize("name,shape,index", FAST_FORMS, ids=[f[0] for f in FAST_FORMS])
def test_fast_forms_run_in_c(monkeypatch, ufunc, dtype, name, shape, index):
    """These forms never reach NumPy's ufunc.at, and agree with it."""
    if ufunc is np.subtract and dtype == "?":
        pytest.skip("NumPy has no boolean subtract")
    dt = np.dtype(dtype)
    a = (np.arange(np.prod(shape)) % 7).astype(dt).reshape(shape)
    b = np.ones((), dt)
    expected = a.copy()
    ufunc.at(expected, index(), b)

    def refuse(*args):
        raise AssertionError("NumPy's ufunc.at was called")
    monkeypatch.setattr(_at, "_numpy_at", refuse)
    scatterops.at(ufunc, a, index(), b)
    S.assert_identical(a, expected, where="a")


@pytest.mark.parametrize("ufunc,a,b", [
    (np.add, np.zeros(4, np.int8), 1),           # an int64 loop: computed by wrap-around in C
    (np.multiply, np.ones(4, np.float32), np.float32(2)),
    (np.maximum, np.zeros(4), np.float32(2.5)),  # float32 b, float64 loop
])
def test_scalar_b_runs_in_c(monkeypatch, ufunc, a, b):
    expected = a.copy()
    ufunc.at(expected, [0, 0, 2], b)
    monkeypatch.setattr(_at, "_numpy_at", lambda *args: pytest.fail("NumPy's ufunc.at was called"))
    scatterops.at(ufunc, a, [0, 0, 2], b)
    S.assert_identical(a, expected, where="a")


# ---- NumPy's own rules, case by case -----------------------------------------------------

def _both(ufunc, a, index, b=None):
    mine, theirs = a.copy(), a.copy()
    args = () if b is None else (b,)
    ufunc.at(theirs, index, *args)
    assert scatterops.at(ufunc, mine, index, *args) is None
    S.assert_identical(mine, theirs, where="a")
    return mine


def test_wider_loop_falls_back_bit_for_bit():
    # float32 a, float64 b: NumPy adds in float64 and rounds back once per update, which
    # the float32 kernel would not
    a = np.full(3, np.float32(0.1))
    b = np.array([0.2, 1e-8, 1 / 3])
    _both(np.add, a, [0, 0, 0], b)
    _both(np.maximum, np.zeros(3, np.int8), [0, 1], np.array([300, -1]))   # max in int64, cast back


def test_python_scalars_are_not_weak():
    # ufunc.at makes an int64 / float64 array of a Python scalar: 300 into uint8 wraps
    _both(np.add, np.zeros(3, np.uint8), [0, 0], 300)
    _both(np.multiply, np.full(3, np.float16(0.1)), [1, 1], 0.1)


def test_separated_advanced_indices_put_their_dimensions_first():
    a = np.zeros((2, 3, 4))
    b = np.arange(6.0).reshape(2, 3)      # (broadcast, axis 1): only NumPy's order fits
    _both(np.add, a, (np.array([0, 1]), slice(None), np.array([3, 3])), b)
    _both(np.add, a, (slice(None), np.array([0, 2]), np.array([3, 1])), np.arange(4.0).reshape(2, 2))
    _both(np.add, a, (slice(None), 1, Ellipsis, np.array([3, 1])), np.arange(4.0).reshape(2, 2))
    _both(np.add, a, (0, slice(None), np.array([3, 1, 1])), np.arange(9.0).reshape(3, 3))


def test_tuple_of_arrays_on_reversed_and_strided_axes():
    # the flat offsets count from the lowest element of the view
    rng = np.random.default_rng(3)
    rows, cols = rng.integers(-4, 4, 30), rng.integers(-3, 3, 30)
    for a in (np.zeros((4, 6))[::-1, ::-2], np.zeros((8, 8)).T[::2, ::-2].T, np.zeros((4, 3), "c8")):
        _both(np.add, a, (rows, cols), rng.random(30))
        _both(np.maximum, a, (rows[:, None], cols[None, :5]), 0.5)


INDEX_DTYPES = ["i1", "u1", "i2", "u2", ">i4", "u4", "i8", ">u8"]


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
def test_tuple_of_arrays_read_in_their_own_dtype(monkeypatch, dtype):
    # the offsets are made from each index array as it is (any integer dtype, byte order
    # or stride), in chunks: more values than one chunk, negative ones where signed
    rng = np.random.default_rng(4)
    a = rng.random((7, 9, 5))[::-1, :, ::2]
    signed = np.dtype(dtype).kind == "i"
    idx = tuple(rng.integers(-n if signed else 0, n, 2600).astype(dtype)[::2] for n in a.shape)
    monkeypatch.setattr(_at, "_numpy_at", lambda *args: pytest.fail("NumPy's ufunc.at was called"))
    _both(np.add, a, idx, rng.random(1300))
    _both(np.minimum, a, (idx[0][:, None], idx[1][None, :40], idx[2][None, :40]), 0.25)


@pytest.mark.parametrize("make,index,b", [
    # the updates that come first zero row indices that come later (past the first chunk)
    (lambda: np.stack([np.arange(3000) % 3, np.arange(3000)[::-1], np.zeros(3000, int)]),
     lambda a: (a[0], a[1]), lambda a: 0),
    (lambda: np.arange(4000.0).reshape(40, 100), lambda a: (np.arange(3000) % 7, np.arange(3000) % 3),
     lambda a: a.reshape(-1)[5:3005]),
], ids=["indices", "b"])
def test_tuple_of_arrays_that_are_views_of_a(make, index, b):
    # the second pass reads the index arrays and b again while it writes a: as NumPy, it
    # reads them as they were before the call
    mine, theirs = make(), make()
    np.minimum.at(theirs, index(theirs), b(theirs))
    scatterops.at(np.minimum, mine, index(mine), b(mine))
    S.assert_identical(mine, theirs, where="a")


def test_unary_ufuncs():
    _both(np.negative, np.arange(6.0).reshape(2, 3), (slice(None), [0, 0, 2]))
    _both(np.invert, np.arange(6, dtype=np.uint8), [1, 1, 5])


def test_leaving_b_out_differs_from_none():
    """As in ufunc.at: b left out is no operand, None is one (NumPy makes it an object
    array), with NumPy's exception classes for each."""
    import inspect
    assert repr(inspect.signature(scatterops.at).parameters["b"].default) == "<no b>"
    for ufunc, args, exc in [(np.add, (), ValueError), (np.add, (None,), TypeError),
                             (np.negative, (None,), ValueError), (np.negative, (1.0,), ValueError)]:
        with pytest.raises(exc) as theirs:
            ufunc.at(np.zeros(3), [0], *args)
        with pytest.raises(exc) as mine:
            scatterops.at(ufunc, np.zeros(3), [0], *args)
        assert str(mine.value) == str(theirs.value)
    theirs, mine = np.ones(3, bool), np.ones(3, bool)      # an object loop that takes None
    np.logical_and.at(theirs, [0, 2], None)
    scatterops.at(np.logical_and, mine, [0, 2], None)
    S.assert_identical(mine, theirs, where="a")


def test_b_overlapping_a_is_read_as_before_the_call():
    a = np.arange(6.0)
    _both(np.add, a, [1, 2, 3], a[0:3])
    _both(np.multiply, a, (slice(None, None, -1),), a)


def test_a_whose_elements_share_memory():
    # a[i, j] is base[i + j]: base[1] is a[1, 0] and a[0, 1].  NumPy walks the index
    # array's positions outermost, so base[1] gets 2**53 and then -2**53 (1 is lost in
    # the first rounding); the other order would leave 1
    def overlapped(base):
        return np.lib.stride_tricks.as_strided(base, shape=(2, 4), strides=(8, 8))
    b = np.array([[0.0, -2.0 ** 53], [2.0 ** 53, 0.0]])
    expected = np.ones(5)
    np.add.at(overlapped(expected), (slice(None), np.array([0, 1])), b)
    base = np.ones(5)
    scatterops.at(np.add, overlapped(base), (slice(None), np.array([0, 1])), b)
    S.assert_identical(base, expected, where="a's memory")


def test_uint64_index_values_past_intp_wrap_as_numpy_indexes():
    idx = np.array([2 ** 64 - 1, 0], dtype=np.uint64)      # NumPy reads it as [-1, 0]
    _both(np.add, np.zeros(4), idx, 1.0)
    _both(np.add, np.zeros((4, 3)), (idx, np.array([1, 1], np.uint64)), 1.0)


def test_subclasses():
    m = np.ma.masked_array(np.zeros(4), mask=[0, 1, 0, 0])
    expected = m.copy()
    np.add.at(expected, [1, 1, 2], 2.0)
    scatterops.at(np.add, m, [1, 1, 2], 2.0)
    S.assert_identical(m.data, expected.data, where="data")


@pytest.mark.parametrize("threads", [1, 2])
def test_large_calls_on_threads(threads):
    rng = np.random.default_rng(5)
    before = scatterops.get_num_threads()
    scatterops.set_num_threads(threads)
    try:
        _both(np.add, np.zeros(1000), rng.integers(-1000, 1000, 50_000), rng.random(50_000))
        _both(np.minimum, rng.random((300, 200)).T,
              (rng.integers(0, 200, 40_000), rng.integers(0, 300, 40_000)), rng.random(40_000))
        _both(np.multiply, 1 + rng.random((8, 500)) / 1e3, (slice(None), rng.integers(0, 500, 5000)),
              1 + rng.random((8, 5000)) / 1e3)
    finally:
        scatterops.set_num_threads(before)


# ---- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("index", [
    np.array([0, 7]), (np.array([0, 1]), np.array([2, -9])), (slice(None), [5]), (0, 0, 0),
    np.array([0.5]), (np.array([0, 1]), np.array([0, 1, 2])), np.array([True, False]),
    ([0], Ellipsis, Ellipsis), 9,
], ids=repr)
def test_bad_index_leaves_a_untouched(index):
    a = np.arange(12.0).reshape(3, 4)
    theirs = a.copy()
    with pytest.raises(IndexError) as np_err:
        np.add.at(theirs, index, 1.0)
    with pytest.raises(type(np_err.value)):
        scatterops.at(np.add, a, index, 1.0)
    S.assert_identical(a, np.arange(12.0).reshape(3, 4), where="a")


def _runs(monkeypatch):
    """A counter of the runs of a call: NumPy's ufunc.at (through _at._numpy_at) and each
    C-core function _at calls."""
    runs = []

    def spy(name, fn):
        def counted(*args, **kwargs):
            runs.append(name)
            return fn(*args, **kwargs)
        return counted
    monkeypatch.setattr(_at, "_numpy_at", spy("numpy", _at._numpy_at))
    for name in ("scatter_elements", "scatter_update", "scatter_nd"):
        monkeypatch.setattr(_at, name, spy(name, getattr(_at, name)))
    monkeypatch.setattr(_at._core, "at_apply", spy("at_apply", _at._core.at_apply))
    return runs


@pytest.mark.parametrize("shape,index,b", [
    ((3, 4), np.array([0, 3], np.uint64), np.ones(4)),                 # the C entry leaves uint64
    ((3, 4), (1, np.array([0, 4])), 1.0),                               # an int among arrays
    ((3, 4), (Ellipsis, np.array([0, -5])), 1.0),
    ((3, 4), (np.array([0, 3]), slice(None), None), np.ones((2, 4, 1))),
    ((100, 100), (np.arange(5000) % 100, np.r_[np.arange(4999) % 100, 100]), np.ones(5000)),
], ids=["uint64", "int and array", "ellipsis", "array, slice, None", "large element tuples"])
def test_an_index_error_is_final(monkeypatch, shape, index, b):
    """the C core's IndexError is raised, with nothing written, and the call is not run
    again by NumPy's ufunc.at (one run in all)"""
    a = np.arange(float(np.prod(shape))).reshape(shape)
    with pytest.raises(IndexError):
        np.add.at(a.copy(), index, b)
    runs = _runs(monkeypatch)
    with pytest.raises(IndexError) as err:
        scatterops.at(np.add, a, index, b)
    assert runs in (["scatter_elements"], ["scatter_update"], ["at_apply"]), runs
    assert "at: an index in indices is out of bounds" in str(err.value)
    S.assert_identical(a, np.arange(float(np.prod(shape))).reshape(shape), where="a")


def test_uint64_values_past_intp_are_read_once_as_numpy_reads_them(monkeypatch):
    """2**64 - 1 is -1 to NumPy's indexing: the C core runs it, NumPy is not asked"""
    idx = np.array([2 ** 64 - 1, 0, 2 ** 64 - 4], dtype=np.uint64)
    runs = _runs(monkeypatch)
    for a, index, b in [(np.zeros(4), idx, np.arange(3.0)),
                        (np.zeros((4, 3)), (idx, np.array([1, 1, 2], np.uint64)), 1.0),
                        (np.zeros((4, 3)), (slice(None), idx[:2]), np.ones((4, 2)))]:
        runs.clear()
        _both(np.add, a, index, b)
        assert len(runs) == 1, runs


@pytest.mark.parametrize("call", [
    lambda a: (np.add, a, [0], np.ones(2)),          # b does not broadcast
    lambda a: (np.add, a, [0]),                       # no b for a binary ufunc
    lambda a: (np.negative, a, [0], 1.0),             # b for a unary one
    lambda a: (np.add, a, [0], None),                 # None is a b (an object array): TypeError
    lambda a: (np.negative, a, [0], None),            # None is a b, given to a unary ufunc
    lambda a: (np.maximum, a.astype(np.int8), [0, 1], None),
    lambda a: (np.add, a, [0], "x"),                  # no loop
    lambda a: (np.add, a.tolist(), [0], 1.0),         # not an array
    lambda a: (np.subtract, a > 0, [0], True),        # boolean subtract
    lambda a: (np.divmod, a, [0], 1.0),               # two outputs
    lambda a: (np.add, a, [0, 1], [[1.0], [2.0, 3.0]]),  # a ragged b
])
def test_other_errors_are_numpys(call):
    a = np.arange(3.0)
    args = call(a)
    ufunc, rest = args[0], args[1:]
    with pytest.raises(Exception) as np_err:
        ufunc.at(*(x.copy() if isinstance(x, np.ndarray) else x for x in rest))
    with pytest.raises(type(np_err.value)):
        scatterops.at(ufunc, *rest)
    S.assert_identical(a, np.arange(3.0), where="a")


@pytest.mark.parametrize("shape,index", [
    ((5,), np.array([0, 0, -1])),                          # NumPy writes: one element an update
    ((3, 4), (np.array([0, 2, 2]), np.array([1, 1, -4]))),
    ((3, 4), (1, -1)),
    ((3, 4), (np.array([0, 1]), 3)),
    ((3, 1), (np.array([0, 1, 1]), slice(None))),          # the slice is one element long
    ((5,), np.array([False, True, True, False, True])),
    ((3, 4), (slice(None), np.array([0, 0]))),             # NumPy refuses: a slice an update
    ((3, 4), 1),
    ((5,), slice(1, 3)),
    ((3, 4, 2), (np.array([0]), np.array([1]))),
    ((3, 4), (slice(None), np.array([9]))),                # refused before the index is read
], ids=repr)
def test_read_only_a_is_refused(shape, index):
    """every read-only a raises ValueError and is left as it was, where NumPy's ufunc.at raises
    the same class and where it writes through the flag (checked here, so the test says which)"""
    def read_only():
        a = np.arange(np.prod(shape), dtype=float).reshape(shape)
        a.flags.writeable = False
        return a
    theirs, mine = read_only(), read_only()
    try:
        np.add.at(theirs, index, 1.5)
    except ValueError:
        pass
    with pytest.raises(ValueError, match="a is read-only"):
        scatterops.at(np.add, mine, index, 1.5)
    S.assert_identical(mine, read_only(), where="a after the error")


def test_a_read_only_memory_map_is_refused(tmp_path):
    """NumPy's ufunc.at writes into this one and the process dies (SIGSEGV): not here"""
    path = tmp_path / "a.bin"
    np.arange(16, dtype=np.float64).tofile(path)
    a = np.memmap(path, dtype=np.float64, mode="r")
    with pytest.raises(ValueError, match="a is read-only"):
        scatterops.at(np.add, a, np.array([0, 1, 1]), 1.0)
    assert np.array_equal(np.fromfile(path, dtype=np.float64), np.arange(16.0))


def test_unsafe_cast_back_as_numpy():
    _both(np.add, np.arange(3), [0, 0], 1.5)              # float64 loop, cast back into int64
    _both(np.multiply, np.arange(3, dtype=np.uint8), [1], -1.5)


def test_floating_point_warnings_are_not_emitted_where_the_c_core_runs(monkeypatch):
    """the at docstring's Notes: under NumPy's default error mode the C path gives inf
    without NumPy's RuntimeWarning (NumPy's ufunc.at is not asked)"""
    import warnings
    monkeypatch.setattr(_at, "_numpy_at", lambda *args: pytest.fail("NumPy's ufunc.at was called"))
    a = np.array([1e308, 0.0] * 600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="warn"):
            scatterops.at(np.add, a, np.zeros(1200, np.intp), 1e308)
    assert a[0] == np.inf


def test_floating_point_errors_follow_errstate_raise():
    a = np.array([1e308, 0.0])
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            np.add.at(a.copy(), [0], 1e308)
        with pytest.raises(FloatingPointError):
            scatterops.at(np.add, a.copy(), [0], 1e308)


# ---- the quick reading of the commonest forms ---------------------------------------------

def _outcome(fn):
    """(a's bytes, None) after fn(a), or (None, (exception class, message))."""
    try:
        a = fn()
    except Exception as exc:      # compared by class and message
        return None, (type(exc), str(exc))
    return a.tobytes(), None


QUICK_FORMS = [
    # (shape, dtype, index, b, the quick reading makes the call (True) or hands it to NumPy)
    ((6,), "f8", lambda: [1, 1, -6], 1.5, True),
    ((6,), "f8", lambda: [1, 6], 1.5, True),                        # out of range: NumPy's error
    ((6,), "f8", lambda: [[0, 1], [2]], 1.5, False),                # ragged: the general reading
    ((6,), "f8", lambda: [0.5], 1.5, False),                        # not integers: the same
    ((6,), "f8", lambda: [], 1.5, False),
    ((6,), "f8", lambda: [True, False, True, True, False, True], 1.5, True),   # a mask, as a list
    ((4, 5), "f8", lambda: np.array([[3, 0], [3, -4]]), 1.5, True),
    ((4, 5), "f8", lambda: np.array([1, 1]), np.ones((2, 4)), True),     # b does not broadcast
    ((4, 5), "f8", lambda: np.array([], np.int64), 1.5, True),
    ((4, 0), "f8", lambda: np.array([1, 2]), 1.5, True),               # a[indices] is empty
    ((0, 3), "f8", lambda: [0], 1.5, True),                            # out of range on an empty axis
    ((4, 3), "f8", lambda: np.array([2 ** 64 - 1, 0], np.uint64), 1.5, True),  # wraps to -1
    ((3, 4, 2), "i1", lambda: np.array([2, 0, 2], np.int32), lambda s: np.arange(24).reshape(s), True),
    ((3, 4), "u1", lambda: [0, 0, 2], 300, True),                      # an int64 loop, wrap-around
    ((3, 4), "f4", lambda: [0, 0, 2], 0.1, True),                      # a float64 loop: NumPy
    ((3, 4, 5), "f8", lambda: (slice(None), [0, 3, 3]), lambda s: np.arange(45.0).reshape(3, 3, 5), True),
    ((3, 4, 5), "f8", lambda: (slice(None), slice(None), np.array([4, -5, 4])), lambda s: np.arange(36.0).reshape(3, 4, 3), True),
    ((3, 4), "f8", lambda: (np.array([2, 2]), slice(None)), lambda s: np.arange(8.0).reshape(2, 4), True),
    ((3, 4), "f8", lambda: (slice(None), np.array([4])), 1.5, True),
    ((5, 5, 5), "f8", lambda: (slice(None), np.array([4, 0, 4])), lambda s: np.arange(75.0).reshape(5, 3, 5), True),
    ((4, 0), "f8", lambda: [7], 1.5, True),                           # out of range, a[indices] empty
    ((0, 4), "f8", lambda: (slice(None), [1]), 1.5, True),
    ((3, 4), "f8", lambda: (slice(1, None), [0]), 1.5, False),         # a partial slice: general
    ((6,), "f8", lambda: 3, 1.5, True),
    ((6,), "f8", lambda: -6, 1.5, True),
    ((6,), "f8", lambda: 6, 1.5, True),
    ((6,), "f8", lambda: True, 1.5, False),
    ((6,), "f8", lambda: np.int64(2), 1.5, False),
    ((3, 4), "f8", lambda: (1, -1), 1.5, True),
    ((3, 4), "f8", lambda: (1, slice(None)), lambda s: np.arange(4.0), True),
    ((3, 4), "f8", lambda: (slice(None), -5), 1.5, True),
    ((3, 4), "f8", lambda: (slice(None), 2), np.ones(4), True),        # b does not broadcast
    ((3, 0), "f8", lambda: (1,), 1.5, True),
    ((3, 4), "f8", lambda: (0, 0, 0), 1.5, False),
    ((3, 4), "f8", lambda: (1, [0, 2]), 1.5, False),                   # an int among arrays
    ((3, 4), "f8", lambda: (np.array(1), [0, 2]), 1.5, False),         # a 0-d array
    ((4, 5), "f8", lambda: (np.array([0, 3, 3]), [4, -1, 4]), lambda s: np.arange(3.0), True),
    ((4, 5, 3), "f8", lambda: (np.array([[0], [3]]), np.array([4, 4, 1]), [2]), 1.5, True),
    ((4, 5), "f8", lambda: (np.array([0, 1]), np.array([0, 1, 2])), 1.5, True),   # no broadcast
    ((4, 5), "f8", lambda: (np.array([0, 4]), np.array([0, 1])), 1.5, True),
    ((4, 5), "f8", lambda: (np.array([0, 1]), np.array([0, -6])), 1.5, True),
    ((4, 5), "f8", lambda: (np.array([], int), np.array([], int)), 1.5, True),
    ((4, 5), "f8", lambda: (np.array([3, 3]), np.array([0, -1])), np.float32(2.5), True),   # b cast
    ((4, 5), "i2", lambda: (np.array([3, 3]), np.array([0, -1])), 40000, True),             # wraps
    ((4, 5), "f8", lambda: ([0, 1], [0, 1]), np.ones(3), True),        # b does not broadcast
    ((3, 4), "f8", lambda: np.arange(12).reshape(3, 4) % 5 == 0, lambda s: np.arange(3.0), True),
    ((3, 4), "f8", lambda: np.zeros((3, 4), bool), 1.5, True),
    ((3, 4), "f8", lambda: np.ones((3, 5), bool), 1.5, False),        # the wrong shape: general
    ((3, 4), "f8", lambda: np.array([True, False, True]), 1.5, False),   # a mask of the first axis
    ((3, 4), "f8", lambda: [[True, False, True, True]] * 3, 1.5, True),
    ((2000,), "f8", lambda: np.arange(2000) % 3 == 0, 1.5, True),
    ((2000,), "c8", lambda: np.arange(3000) % 1999, 1.5 - 1j, True),
]


def _quick_a(shape, dtype):
    return (np.arange(np.prod(shape)) % 7).astype(dtype).reshape(shape)


@pytest.mark.parametrize("shape,dtype,index,b,quick", QUICK_FORMS, ids=[f"{f[0]}-{f[2]()!r:.50}" for f in QUICK_FORMS])
def test_quick_reading_agrees_with_numpy_and_the_general_reading(monkeypatch, shape, dtype, index, b, quick):
    """The same bytes in a, or the same exception with the same message, from NumPy's
    ufunc.at, from the quick reading of the commonest forms and from the general reading;
    where the quick reading has the form, the general reading is not asked."""
    bval = b(shape) if callable(b) else b

    def run(fn):
        def go():
            a = _quick_a(shape, dtype)
            fn(a, index(), bval)
            return a
        return _outcome(go)

    theirs = run(np.add.at)
    with monkeypatch.context() as m:
        if quick:
            m.setattr(_at, "_read_index", lambda *args: pytest.fail("the general reading was asked"))
        quick_result = run(lambda *args: scatterops.at(np.add, *args))
        quick_call = _at._plan(np.add, _quick_a(shape, dtype), index(), bval)
    with monkeypatch.context() as m:
        m.setattr(_at, "_simple_call", lambda *args: _at._NOT_SIMPLE)
        general_result = run(lambda *args: scatterops.at(np.add, *args))
        general_call = _at._plan(np.add, _quick_a(shape, dtype), index(), bval)
    assert quick_result == theirs
    assert general_result == theirs
    # and the same call (or none: NumPy's ufunc.at), not one that fails over to NumPy
    _assert_same_call(quick_call, general_call)


def _assert_same_call(mine, expected, where="the call"):
    """The same function, and arguments alike: arrays of one dtype, shape and strides
    over the same memory (a's views made afresh: the values are not compared)."""
    if isinstance(expected, np.ndarray):
        assert isinstance(mine, np.ndarray), where
        assert (mine.dtype, mine.shape, mine.strides) == (expected.dtype, expected.shape, expected.strides), where
        if mine.base is None and expected.base is None:   # made by the reading: compare values
            assert mine.tobytes() == expected.tobytes(), where
    elif isinstance(expected, (tuple, list)):
        assert type(mine) is type(expected) and len(mine) == len(expected), where
        for i, (x, y) in enumerate(zip(mine, expected)):
            _assert_same_call(x, y, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert mine.keys() == expected.keys(), where
        for k in expected:
            _assert_same_call(mine[k], expected[k], f"{where}[{k!r}]")
    else:
        assert mine == expected, where


@pytest.mark.parametrize("make", [
    lambda: np.zeros((4, 6)), lambda: np.zeros((6, 4)).T, lambda: np.zeros((4, 6))[::-1],
    lambda: np.zeros((4, 12))[:, ::-2], lambda: np.zeros((4, 1, 6))[:, ::-1, :],
    lambda: np.zeros((6, 1, 4)).T,
], ids=["C", "F", "rows reversed", "strided", "size-1 axis reversed", "F, size-1 axis"])
def test_every_axis_on_layouts_of_one_shape(make):
    # the flat view of a is worked out once per shape and strides: each layout its own
    # (a made afresh, as a.copy() would be C-ordered)
    rng = np.random.default_rng(6)
    mine, theirs = make(), make()
    idx = tuple(rng.integers(-n, n, 9) for n in mine.shape)
    for _ in range(2):
        b = rng.random(9)
        np.add.at(theirs, idx, b)
        scatterops.at(np.add, mine, idx, b)
        np.maximum.at(theirs, idx, 0.5)
        scatterops.at(np.maximum, mine, idx, 0.5)
        S.assert_identical(mine, theirs, where="a")


def test_floating_point_modes_read_again_when_they_change(monkeypatch):
    # the verdict on the error modes is kept per errstate: one that raises after calls that
    # ran in C still raises, and the C path comes back when it ends
    a = np.array([1e308, 0.0, 0.0])
    calls = []
    monkeypatch.setattr(_at, "_numpy_at", lambda u, *args: calls.append(args) or u.at(*args))
    for _ in range(3):
        scatterops.at(np.add, a.copy(), [1, 1], 1.0)
        with np.errstate(over="raise"):
            with pytest.raises(FloatingPointError):
                scatterops.at(np.add, a.copy(), [0, 0], 1e308)
        old = np.seterr(invalid="call")
        try:
            scatterops.at(np.add, a.copy(), [1], 1.0)
        finally:
            np.seterr(**old)
    assert len(calls) == 6       # the errstate and the seterr calls: NumPy's; the others: C

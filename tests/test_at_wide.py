"""scatterops.at with a float64 scalar b on a narrower float a: ufunc.at makes a Python
float (or a numpy.float64, or a Python int on float16 and float32) a float64 array, and
the ufunc's loop is then the float64 one: each update widens a's element exactly,
computes in float64 and rounds once back to a's dtype.  _core.at runs such calls in C
(kernels/at_wide.c) and gives ufunc.at's bits: float32 and float16 round once from
float64; ml_dtypes' bfloat16 rounds as ml_dtypes casts float64 to it, through float32
(two roundings), a rule tested here against ml_dtypes itself.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import scatterops
from scatterops import _core

UFUNCS = [np.add, np.subtract, np.multiply, np.maximum, np.minimum]
NARROW = [np.float32, np.float16]

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _same(got, expected):
    """The same bits, but where both are NaN (docs/contract.md: NaN where NaN)."""
    g, e = got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}")
    nan = np.isnan(got.astype(np.float64)) & np.isnan(expected.astype(np.float64))
    assert np.array_equal(g[~nan], e[~nan]), (got, expected)
    assert np.array_equal(np.isnan(got.astype(np.float64)), np.isnan(expected.astype(np.float64)))


def _check(ufunc, a, index, b):
    """_core.at runs the call in C and gives ufunc.at's bits."""
    mine, theirs = a.copy(), a.copy()
    with np.errstate(all="ignore"):
        assert _core.at(ufunc, mine, index, b) is None
        ufunc.at(theirs, index, b)
    _same(mine, theirs)


#: float64 values whose sum with a float32 or float16 element rounds differently when
#: the operation is done in the narrow type (b rounded first): the float64 loop is what
#: ufunc.at runs
_TELLING = [1e-8, 2.0 ** -24 + 2.0 ** -50, 1 / 3, -(2.0 ** -11) - 2.0 ** -30, 1 + 2.0 ** -8 + 2.0 ** -30,
            65519.99, 3.4e38, 1e-300, -0.0, 0.0, float("inf"), float("nan")]


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("b", _TELLING, ids=repr)
def test_python_float_b_computes_in_float64(ufunc, dtype, b):
    a = np.array([1.0, 0.1, -0.0, 0.0, 2.0 ** -14, 6e4, -1.5, np.inf, np.nan]).astype(dtype)
    _check(ufunc, a, np.array([0, 0, 1, 1, 1, 2, 3, 4, 5, 5, 6, 7, 8, -1]), b)


def test_the_float64_loop_is_not_the_narrow_one():
    """the float64 loop and the float32 one give different bits here: the test can fail"""
    a = np.ones(2, np.float32)
    b = 2.0 ** -24 + 2.0 ** -50        # 2**-24 in float32: 1 + it ties, and rounds to 1
    wide, narrow = a.copy(), a.copy()
    scatterops.at(np.add, wide, [0, 0], b)
    np.add.at(narrow, [0, 0], np.float32(b))
    assert wide.tobytes() != narrow.tobytes()
    _check(np.add, a, [0, 0], b)


_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                    st.floats(-2.0, 2.0), st.sampled_from(_TELLING))


@settings(max_examples=150, deadline=None)
@given(ufunc=st.sampled_from(UFUNCS), dtype=st.sampled_from(NARROW), b=_values,
       start=st.lists(st.floats(width=32), min_size=1, max_size=6),
       picks=st.lists(st.integers(-6, 5), min_size=1, max_size=20))
def test_equals_ufunc_at(ufunc, dtype, b, start, picks):
    a = np.array(start, np.float64).astype(dtype)
    idx = np.array([p % len(start) for p in picks])
    _check(ufunc, a, idx, b)


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("b", [0.1, 3, np.float64(0.1), -7, 2 ** 53 + 1], ids=repr)
@pytest.mark.parametrize("shape,index", [
    ((10,), [3, 3, -1]),
    ((10,), np.array([[1, 2], [1, 1]])),
    ((4, 5), np.array([0, 0, 3])),
    ((4, 5), (slice(None), np.array([4, -5, 4]))),
    ((2, 3, 5), (slice(None), slice(None), np.array([1, 1]))),
    ((4, 5), (np.array([0, 3, 0]), np.array([1, 4, 1]))),
    ((4, 5), (np.array([[0, 3], [0, 0]]), np.array([[1, 4], [1, 1]]))),
], ids=repr)
def test_every_form_and_b(dtype, b, shape, index):
    rng = np.random.default_rng(1)
    _check(np.add, rng.standard_normal(shape).astype(dtype), index, b)
    _check(np.maximum, np.asfortranarray(rng.standard_normal(shape).astype(dtype)), index, b)


def test_large_calls_poll_and_agree():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(1000).astype(np.float32)
    _check(np.add, a, rng.integers(-1000, 1000, 600_000), 0.1)
    a = rng.standard_normal((3, 200_000)).astype(np.float16)
    _check(np.multiply, a, (slice(None), rng.integers(0, 200_000, 100)), 1.0001)


@pytest.mark.parametrize("index", [np.array([0, 10]), (slice(None), np.array([0, -11])),
                                   (np.array([0, 1]), np.array([0, 10]))], ids=repr)
def test_bad_index_raises_numpys_error_and_writes_nothing(index):
    a = np.ones((2, 10), np.float32) if type(index) is tuple else np.ones(10, np.float32)
    with pytest.raises(IndexError) as theirs:
        np.add.at(a.copy(), index, 0.5)
    with pytest.raises(IndexError) as mine:
        _core.at(np.add, a, index, 0.5)
    assert str(mine.value) == str(theirs.value)
    assert np.all(a == 1)


def test_other_calls_are_declined():
    a = np.ones(4, np.float32)
    assert _core.at(np.add, a, [0], 2 ** 70) is NotImplemented       # not an int64: uint64 or object
    assert _core.at(np.add, a, [0], np.float32(0.5)) is not NotImplemented   # a's own dtype
    assert _core.at(np.add, a[::2], [0], 0.5) is NotImplemented      # not contiguous
    assert _core.at(np.add, np.ones(4, ">f4"), [0], 0.5) is NotImplemented
    with np.errstate(over="raise"):
        assert _core.at(np.add, a, [0], 0.5) is NotImplemented       # an error mode that acts
    assert np.all(a == [1.5, 1, 1, 1])


# ---- float16: the loop's own conversions, held to NumPy's bit for bit ----------------------

_EVERY_HALF = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _bits_equal(ufunc, a, index, b):
    """_core.at gives ufunc.at's bytes, NaN payloads and signs included."""
    mine, theirs = a.copy(), a.copy()
    with np.errstate(all="ignore"):
        assert _core.at(ufunc, mine, index, b) is None
        ufunc.at(theirs, index, b)
    bad = np.flatnonzero(mine.view(np.uint16) != theirs.view(np.uint16))
    assert bad.size == 0, [(hex(a.view(np.uint16)[i]), b, hex(mine.view(np.uint16)[i]),
                            hex(theirs.view(np.uint16)[i])) for i in bad[:5]]


@pytest.mark.parametrize("ufunc,b", [(np.maximum, -np.inf), (np.multiply, 1.0), (np.add, 0.0),
                                     (np.add, -0.0), (np.subtract, 0.0)], ids=repr)
def test_every_float16_widens_and_narrows_as_numpy(ufunc, b):
    """each of the 65536 float16 values (signalling and quiet NaNs, subnormals, zeros)
    widened, combined with b and narrowed back: maximum with -inf returns the element
    itself, so a conversion that changed a bit shows"""
    _bits_equal(ufunc, _EVERY_HALF, np.arange(1 << 16), b)


def _turning_points():
    """doubles where float16 rounding turns: each float16's neighbours halfway, just
    below and just above halfway, the overflow threshold, the subnormal edges"""
    h = np.arange(0x7c00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mid = (h[:-1] + h[1:]) / 2                  # exact in float64
    pts = np.concatenate([mid, np.nextafter(mid, 0), np.nextafter(mid, np.inf), h,
                          [65504.0, 65519.99999999999, 65520.0, 65536.0, 1e300, 2.0 ** -25,
                           np.nextafter(2.0 ** -25, 1), np.nextafter(2.0 ** -25, 0),
                           3 * 2.0 ** -26, 2.0 ** -26, 2.0 ** -24 * 1.5, 5e-324, 2.0 ** -1022,
                           np.inf]])
    return np.concatenate([pts, -pts])


def test_float16_narrows_the_turning_points_as_numpy():
    """b added to 0.0 narrowed: float16(b), at every point where rounding turns (b goes
    into the loop one at a time, so a chunk of them per element of a, each element
    taking one b)"""
    pts = _turning_points()
    for b in pts[::97].tolist() + [float("nan"), -float("nan")]:
        _bits_equal(np.add, np.zeros(1, np.float16), np.array([0]), b)
    # many at once: every float16 element plus one small b crosses a rounding point
    for b in [2.0 ** -25, 2.0 ** -26, 3 * 2.0 ** -26, 2.0 ** -12, 2.0 ** -11, 0.25, 16.0,
              2.0 ** -25 + 2.0 ** -60, -(2.0 ** -25), 1e-8, 1 / 3, 32.0, 8.0 + 2.0 ** -40]:
        _bits_equal(np.add, _EVERY_HALF, np.arange(1 << 16), b)


def test_float16_nan_payloads_as_numpy():
    """a NaN keeps its sign and the top 10 bits of its payload; a NaN whose top bits are
    all 0 stays a NaN"""
    payloads = [1, 2 ** 41, 2 ** 42, 2 ** 51, 2 ** 51 + 1, 2 ** 52 - 1, 0x5555555555555]
    for sign in (0, 1):
        for m in payloads:
            b = np.array([(sign << 63) | (0x7ff << 52) | m], np.uint64).view(np.float64)[0]
            _bits_equal(np.maximum, np.full(1, -np.inf, np.float16), np.array([0]), float(b))


# ---- ml_dtypes' bfloat16 -------------------------------------------------------------------

def _bf16():
    from extras import need
    return np.dtype(need("ml_dtypes").bfloat16)


def test_bfloat16_casts_float64_through_float32():
    """the rule the bfloat16 loop relies on: ml_dtypes' float64 -> bfloat16 cast is the
    float32 cast and then float32 -> bfloat16, each to nearest even (1 + 2**-8 + 2**-30
    rounds up in one step and to 1 in two)"""
    bf = _bf16()
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(100_000) * 10.0 ** rng.integers(-40, 40, 100_000),
                        [1 + 2.0 ** -8 + 2.0 ** -30, 1 + 2.0 ** -8, 3.4e38, 3.5e38, 1e-45, -0.0]])
    assert np.array(1 + 2.0 ** -8 + 2.0 ** -30).astype(bf) == 1
    direct = x.astype(bf).view(np.uint16)
    via = x.astype(np.float32).astype(bf).view(np.uint16)
    assert np.array_equal(direct, via)


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("b", _TELLING, ids=repr)
def test_bfloat16_python_float_b(ufunc, b):
    bf = _bf16()
    a = np.array([1.0, 0.1, -0.0, 0.0, 1e-38, 3e38, -1.5, np.inf, np.nan]).astype(bf)
    _check(ufunc, a, np.array([0, 0, 1, 1, 1, 2, 3, 4, 5, 5, 6, 7, 8, -1]), b)
    _check(ufunc, a.reshape(3, 3), (slice(None), np.array([2, 2, 0])), np.float64(b))


@settings(max_examples=100, deadline=None)
@given(ufunc=st.sampled_from(UFUNCS), b=_values,
       start=st.lists(st.floats(width=32), min_size=1, max_size=6),
       picks=st.lists(st.integers(-6, 5), min_size=1, max_size=20))
def test_bfloat16_equals_ufunc_at(ufunc, b, start, picks):
    a = np.array(start, np.float32).astype(_bf16())
    _check(ufunc, a, np.array([p % len(start) for p in picks]), b)


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
def test_bfloat16_b_of_its_dtype_runs_in_c(ufunc):
    bf = _bf16()
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 6)).astype(bf)
    _check(ufunc, a, np.array([0, 3, 3, -1]), rng.standard_normal((4, 6)).astype(bf))
    _check(ufunc, a, (slice(None), np.array([5, 5, 0])), rng.standard_normal((4, 3)).astype(bf))
    _check(ufunc, a, (np.array([0, 0, 2]), np.array([5, 5, 1])), bf.type(1.5))


def test_bfloat16_python_int_b_stays_numpys():
    """bfloat16 does not promote with int64: NumPy decides what a Python int means"""
    a = np.ones(3, _bf16())
    assert _core.at(np.add, a, [0], 3) is NotImplemented
    mine, theirs = a.copy(), a.copy()
    scatterops.at(np.add, mine, [0, 0], 3)
    np.add.at(theirs, [0, 0], 3)
    assert mine.tobytes() == theirs.tobytes()

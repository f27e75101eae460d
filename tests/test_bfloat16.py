"""ml_dtypes' bfloat16 has typed C loops (kernels/ops.h, bf16_*): add, sub, mul, max
and min equal NumPy's ``ufunc.at`` on bfloat16 arrays (ml_dtypes' own loops, called
update by update) bit for bit, and run in C, not through the NumPy fallback.

The C loops rely on these rules of ml_dtypes, each tested here against ml_dtypes itself:

* bfloat16 -> float32 is exact: the bfloat16's bits are the float32's high 16 bits;
* float32 -> bfloat16 rounds to nearest, ties to even, with no flush of subnormals
  and overflow to inf; every NaN becomes the quiet NaN 0x7fc0 with the NaN's sign;
* add, sub and mul compute in float32 (one float32 rounding) and round that result
  to bfloat16: two roundings, not one;
* maximum and minimum compare in float32 and return an operand's bits unchanged: x
  if x is NaN or x > y (x < y), else y, so maximum(+0, -0) is -0.

Where both operands are NaN, which NaN's sign survives is not promised
(docs/contract.md: NaN where NaN); every other bit is.  "mean" stays refused, as
the reference refuses it: bfloat16 is of kind "V", which has no division rule.

Skipped without ml_dtypes.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import scatterops as so
from scatterops import _core, reference
from extras import need

ml_dtypes = need("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
          "min": np.minimum}
ALL_BITS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
#: bit patterns worth drawing often: zeros, ones, the largest finite, inf, NaNs of both
#: signs and payloads, the smallest and largest subnormals, values whose sums tie
SPECIAL = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0,
           0x7F81, 0xFFA1, 0x0001, 0x8001, 0x007F, 0x807F, 0x0080, 0x4380, 0x3B80, 0x3C00]


def _bf(bits) -> np.ndarray:
    return np.asarray(bits, np.uint16).view(BF16)


def _bits(a) -> np.ndarray:
    return np.asarray(a).view(np.uint16)


def _f32_bits(bits) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


def _is_nan(bits) -> np.ndarray:
    bits = np.asarray(bits, np.uint16)
    return (bits & 0x7FFF) > 0x7F80


def _model_from_f32(f: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits by the rule the C loops use."""
    b = f.view(np.uint32).astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((b >> 16) & 0x8000).astype(np.uint16) | 0x7FC0, rounded).astype(np.uint16)


# ---- the rules of ml_dtypes the C loops rely on -------------------------------------

def test_widening_to_float32_is_the_high_bits():
    x = _bf(ALL_BITS)
    widened = x.astype(np.float32).view(np.uint32)
    expected = ALL_BITS.astype(np.uint32) << 16
    ok = ~_is_nan(ALL_BITS)
    assert np.array_equal(widened[ok], expected[ok])
    assert np.isnan(x.astype(np.float32)[~ok]).all()


def test_narrowing_from_float32_rounds_to_nearest_even():
    rng = np.random.default_rng(5)
    high = rng.integers(0, 1 << 16, 4000, dtype=np.uint32) << 16
    # the low halves around the tie, the tie itself, and random ones
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    bits = np.concatenate([(high[:, None] | lows).ravel(),
                           rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)])
    f = _f32_bits(bits)
    assert np.array_equal(_bits(f.astype(BF16)), _model_from_f32(f))
    # a tie goes to even, the largest finite float32 overflows to inf, a subnormal stays
    assert _bits(_f32_bits([0x3F808000, 0x3F818000]).astype(BF16)).tolist() == [0x3F80, 0x3F82]
    assert _bits(_f32_bits([0x7F7FFFFF, 0x00018000]).astype(BF16)).tolist() == [0x7F80, 0x0002]
    assert _bits(_f32_bits([0x7F800001, 0xFFC12345]).astype(BF16)).tolist() == [0x7FC0, 0xFFC0]


@pytest.mark.parametrize("name", ["add", "sub", "mul"])
def test_arithmetic_is_float32_then_rounded(name):
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.integers(0, 1 << 16, 50000), np.repeat(SPECIAL, len(SPECIAL))])
    y = np.concatenate([rng.integers(0, 1 << 16, 50000), np.tile(SPECIAL, len(SPECIAL))])
    x, y = x.astype(np.uint16), y.astype(np.uint16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _bits(UFUNCS[name](_bf(x), _bf(y)))
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[name](
            _bf(x).astype(np.float32), _bf(y).astype(np.float32))
    expected = _model_from_f32(f)
    both_nan = _is_nan(x) & _is_nan(y)
    assert np.array_equal(got[~both_nan], expected[~both_nan])
    assert _is_nan(got[both_nan]).all()
    # two roundings, not one: 1 + 2**-8 + 2**-24 is 1 + 2**-8 in float32, a tie that
    # goes to 1 in bfloat16 (the exact sum would round up to 1 + 2**-7)
    one_and_half_ulp = _f32_bits([0x3F808000]).astype(BF16)          # 1 + 2**-8: rounds to 1
    assert _bits(one_and_half_ulp).tolist() == [0x3F80]


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_return_an_operand(name):
    x = np.repeat(ALL_BITS[::7], 1)
    rng = np.random.default_rng(7)
    y = rng.integers(0, 1 << 16, x.size).astype(np.uint16)
    x = np.concatenate([x, np.repeat(SPECIAL, len(SPECIAL))]).astype(np.uint16)
    y = np.concatenate([y, np.tile(SPECIAL, len(SPECIAL))]).astype(np.uint16)
    got = _bits(UFUNCS[name](_bf(x), _bf(y)))
    fx, fy = _bf(x).astype(np.float32), _bf(y).astype(np.float32)
    take_x = np.isnan(fx) | ((fx > fy) if name == "max" else (fx < fy))
    assert np.array_equal(got, np.where(take_x, x, y))
    assert _bits(UFUNCS[name](_bf([0x0000]), _bf([0x8000]))).tolist() == [0x8000]


# ---- scatterops against ufunc.at ----------------------------------------------------

def _values(n):
    return st.lists(st.one_of(st.sampled_from(SPECIAL), st.integers(0, 0xFFFF)),
                    min_size=n, max_size=n)


@st.composite
def _calls(draw):
    size = draw(st.integers(1, 12))
    m = draw(st.integers(0, 60))
    data = draw(_values(size))
    upd = draw(_values(m))
    idx = draw(st.lists(st.integers(-size, size - 1), min_size=m, max_size=m))  # duplicates
    return np.array(data, np.uint16), np.array(idx, np.int64), np.array(upd, np.uint16)


def _assert_same(got, expected):
    got, expected = _bits(got), _bits(expected)
    nan = _is_nan(expected)
    assert np.array_equal(got[~nan], expected[~nan]), (got, expected)
    assert _is_nan(got[nan]).all(), (got, expected)


@settings(deadline=None)
@given(call=_calls(), name=st.sampled_from(sorted(UFUNCS)), form=st.sampled_from(
    ["elements", "nd", "in-place", "strided", "int32"]))
def test_scatter_equals_ufunc_at(call, name, form):
    data, idx, upd = call
    expected = _bf(data.copy())
    UFUNCS[name].at(expected, idx, _bf(upd))
    before = _core.generic_calls()
    if form == "elements":
        got = so.scatter_elements(_bf(data), idx, _bf(upd), reduction=name)
    elif form == "int32":
        got = so.scatter_elements(_bf(data), idx.astype(np.int32), _bf(upd), reduction=name)
    elif form == "nd":
        got = so.scatter_nd(_bf(data), idx[:, None], _bf(upd), reduction=name)
    elif form == "in-place":
        got = _bf(data.copy())
        so.scatter_elements(got, idx, _bf(upd), reduction=name, out=got)
    else:
        u2 = np.repeat(upd, 2)[::2]
        got = so.scatter_elements(_bf(data), np.repeat(idx, 2)[::2], _bf(u2), reduction=name)
    assert _core.generic_calls() == before, "bfloat16 left C for the NumPy fallback"
    _assert_same(got, expected)


def test_one_nan_operand_gives_the_quiet_nan_of_its_sign():
    for a, b, expected in [(0x7FA1, 0x3F80, 0x7FC0), (0x3F80, 0xFFA1, 0xFFC0),
                           (0xFF81, 0x4000, 0xFFC0)]:
        for name in ("add", "sub", "mul"):
            got = so.scatter_elements(_bf([a]), np.array([0]), _bf([b]), reduction=name)
            assert _bits(got).tolist() == [expected], (name, hex(a), hex(b))


def test_rows_and_big_calls_equal_ufunc_at():
    """The walk's other kernels (rows, strided blocks, threads' owned lists)."""
    rng = np.random.default_rng(8)
    data = rng.integers(0, 1 << 16, (300, 5)).astype(np.uint16)
    idx = rng.integers(0, 300, 20000)
    upd = rng.integers(0, 1 << 16, (20000, 5)).astype(np.uint16)
    for name, ufunc in UFUNCS.items():
        expected = _bf(data.copy())
        ufunc.at(expected, idx, _bf(upd))
        for threads in (1, 2):
            with so.threads(threads):
                got = so.scatter_nd(_bf(data), idx[:, None], _bf(upd), reduction=name)
            _assert_same(got, expected)


def test_reference_agrees():
    rng = np.random.default_rng(9)
    data = _bf(rng.integers(0, 1 << 16, 50).astype(np.uint16))
    idx = rng.integers(0, 50, 400)
    upd = _bf(rng.integers(0, 1 << 16, 400).astype(np.uint16))
    for name in ("none", *UFUNCS):
        _assert_same(so.scatter_elements(data, idx, upd, reduction=name),
                     reference.scatter_elements(data, idx, upd, reduction=name))


def test_mean_stays_refused():
    data = _bf([0, 0])
    for f in (so.scatter_elements, reference.scatter_elements):
        with pytest.raises(TypeError, match="bfloat16"):
            f(data, np.array([0]), data[:1], reduction="mean")

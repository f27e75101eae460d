"""ml_dtypes' user dtypes: bfloat16, every float8 / float6 / float4, complex32 /
bcomplex32 and the sub-byte integers the installed ml_dtypes defines.

* ``reduction="none"`` works on each, for the three functions, bit for bit: against NumPy
  fancy assignment on every bit pattern of the dtype (non-canonical NaNs included), and
  against ``scatterops.reference`` on whole drawn calls (layouts, casts, out modes).
* every reduction where ml_dtypes registers a NumPy ufunc loop (dtype, dtype) -> dtype
  (probed with ``ufunc.at`` itself) equals ``scatterops.reference``; where it registers
  none (max / min on the sub-byte integers, which resolve to int8; mean on the dtypes that
  are not of kind "f"), scatterops and the reference both refuse with a TypeError naming
  the dtype.

Skipped without ml_dtypes.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, note, settings, strategies as st

import scatterops
from scatterops import reference

import strategies as S
from extras import need
from strategies import assert_identical
from test_properties import _flat_destinations, _numpy_scatter

ml_dtypes = need("ml_dtypes")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = [pytest.param(dt, id=name) for name, dt in S.ML_DTYPES.items()]
FUNCS = S.FUNCS
#: per-dtype hypothesis tests: a quarter of the profile's examples (there are 20 dtypes)
FEW = settings(max_examples=max(10, settings.default.max_examples // 4))
UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _ufunc_at_works(ufunc, dtype) -> bool:
    """ml_dtypes gives ufunc a (dtype, dtype) -> dtype loop that ufunc.at can use."""
    try:
        if ufunc.resolve_dtypes((dtype, dtype, None)) != (dtype, dtype, dtype):
            return False
        a = np.zeros(3, dtype)
        ufunc.at(a, [0, 0, 2], np.ones(3, dtype))
    except (TypeError, ValueError):
        return False
    return True


def test_every_ml_dtype_is_known():
    """A new ml_dtypes dtype should join S.ML_*_NAMES (and so these tests)."""
    known = set(S.ML_DTYPES)
    for name in dir(ml_dtypes):
        obj = getattr(ml_dtypes, name)
        if isinstance(obj, type) and issubclass(obj, np.generic):
            assert name in known, f"ml_dtypes.{name} is not tested"


# --------------------------------------------------------------------------------------
# reduction="none": every bit pattern, against NumPy fancy assignment
# --------------------------------------------------------------------------------------

def _raw(draw, dtype, shape):
    """Values of dtype from random bytes: every bit pattern, NaN payloads included.  For
    the sub-byte types only the bits that hold the value (NumPy keeps the rest as it is,
    ml_dtypes' casts do not)."""
    n = math.prod(shape)
    raw = np.array(draw(st.lists(st.integers(0, 255), min_size=n * dtype.itemsize,
                                 max_size=n * dtype.itemsize)), dtype=np.uint8)
    if dtype.itemsize == 1:
        bits = _value_bits(dtype)
        raw &= np.uint8((1 << bits) - 1)
    return raw.view(dtype).reshape(shape)


def _value_bits(dtype) -> int:
    """How many low bits of a one-byte ml_dtypes dtype hold its value."""
    name = next(n for n, d in S.ML_DTYPES.items() if d.type is dtype.type)
    for prefix, bits in (("float8", 8), ("float6", 6), ("float4", 4), ("int4", 4), ("uint4", 4),
                         ("int2", 2), ("uint2", 2), ("int1", 1), ("uint1", 1)):
        if name.startswith(prefix):
            return bits
    return 8


@st.composite
def fancy_calls(draw, dtype):
    """(func, data, indices, updates, axis, flat destinations) with duplicate and
    negative indices likely."""
    func = draw(st.sampled_from(FUNCS))
    shape = draw(S.shapes(min_dims=1, max_dims=3, allow_zero=False))
    r = len(shape)
    axis = draw(st.integers(-r, r - 1))
    a = axis % r
    lin = np.arange(math.prod(shape)).reshape(shape)
    if func == "scatter_update":
        ishape = draw(S.shapes(min_dims=0, max_dims=2, max_size=6, allow_zero=False))
        idx = np.array(draw(st.lists(st.integers(-shape[a], shape[a] - 1), min_size=math.prod(ishape),
                                     max_size=math.prod(ishape)))).reshape(ishape)
        dest = np.take(lin, idx, axis=a)
    elif func == "scatter_nd":
        k = draw(st.integers(1, r))
        m = draw(st.integers(1, 6))
        cols = [draw(st.lists(st.integers(-shape[j], shape[j] - 1), min_size=m, max_size=m)) for j in range(k)]
        idx = np.array(cols, dtype=np.int64).T.reshape(m, k)
        dest = lin[tuple(idx[:, j] for j in range(k))]
        axis = None
    else:
        ishape = tuple(draw(st.integers(1, shape[d])) if d != a else draw(st.integers(1, 5)) for d in range(r))
        idx = np.array(draw(st.lists(st.integers(-shape[a], shape[a] - 1), min_size=math.prod(ishape),
                                     max_size=math.prod(ishape)))).reshape(ishape)
        sub = lin[tuple(slice(None) if d == a else slice(0, ishape[d]) for d in range(r))]
        dest = np.take_along_axis(sub, idx, axis=a)
    data = _raw(draw, dtype, shape)
    updates = _raw(draw, dtype, dest.shape)
    return func, data, idx, updates, axis, dest


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_none_equals_numpy_fancy_assignment_on_every_bit_pattern(dtype, data):
    func, d, idx, upd, axis, dest = data.draw(fancy_calls(dtype))
    note(f"{func} data={d.reshape(-1).view(np.uint8).tolist()} idx={idx.tolist()} upd={upd.reshape(-1).view(np.uint8).tolist()} "
         f"axis={axis}")
    expected = d.copy()
    flat = expected.reshape(-1)
    flat[dest.reshape(-1)] = upd.reshape(-1)       # NumPy: the last of duplicates wins
    args = (d, idx, upd) if func == "scatter_nd" else (d, idx, upd, axis)
    result = getattr(scatterops, func)(*args)
    assert_identical(result, expected, where=f"{func} on {dtype}")


# --------------------------------------------------------------------------------------
# whole calls against the reference
# --------------------------------------------------------------------------------------

def _check(case: S.Case):
    note(repr(case))
    p_ref, p_c = case.prepare(), case.prepare()
    expected = p_ref.call(reference)
    actual = p_c.call(scatterops)
    assert_identical(actual, expected, nans=case.nans)


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_none_equals_reference(dtype, data):
    _check(data.draw(S.cases(dtypes=[dtype], reductions=("none",))))


REDUCTIONS = ("add", "sub", "mul", "max", "min", "mean")


def _defined(dtype):
    return [r for r in REDUCTIONS if S.reduction_is_defined(r, dtype)]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduction_is_defined_where_ml_dtypes_has_a_ufunc_loop(dtype, reduction):
    """docs/contract.md: a reduction is defined exactly where the ufunc has a (dtype, dtype) -> dtype
    loop (mean: the add loop and a division, kind "f" only among these)."""
    has_loop = _ufunc_at_works(UFUNCS.get(reduction, np.add), dtype)
    if reduction == "mean":
        assert S.reduction_is_defined(reduction, dtype) == (has_loop and dtype.kind == "f")
    else:
        assert S.reduction_is_defined(reduction, dtype) == has_loop


@pytest.mark.parametrize("dtype", [pytest.param(dt, id=name) for name, dt in S.ML_DTYPES.items()])
@FEW
@given(data=st.data())
def test_reductions_equal_reference(dtype, data):
    _check(data.draw(S.cases(dtypes=[dtype], reductions=tuple(_defined(dtype)))))


@pytest.mark.parametrize("dtype", [pytest.param(dt, id=name) for name, dt in S.ML_DTYPES.items()
                                   if len(_defined(dt)) < len(REDUCTIONS)])
@FEW
@given(data=st.data())
def test_reductions_without_a_loop_are_refused(dtype, data):
    undefined = [r for r in REDUCTIONS if r not in _defined(dtype)]
    case = data.draw(S.cases(dtypes=[dtype], reductions=tuple(undefined)))
    for module in (reference, scatterops):
        p = case.prepare()
        before = p.data.copy()
        with pytest.raises(TypeError) as info:
            p.call(module)
        assert dtype.name in str(info.value) and case.reduction in str(info.value), str(info.value)
        assert_identical(p.data, before, where="data after the error")


@pytest.mark.parametrize("dtype", [pytest.param(dt, id=name) for name, dt in S.ML_DTYPES.items()])
@pytest.mark.parametrize("func", FUNCS)
def test_large_calls_equal_numpy(dtype, func):
    """2**17 updates (past the small-call paths: several threads, bucketed plans), every
    reduction ml_dtypes has a loop for, both include_self, against NumPy directly
    (assignment, ufunc.at on flat destinations)."""
    rng = np.random.default_rng(7)
    kind = S.ml_kind(dtype)
    shape = (64, 33)
    n = 1 << 17

    def values(size):
        if kind == "int":
            info = ml_dtypes.iinfo(dtype)
            return rng.integers(int(info.min), int(info.max) + 1, size).astype(dtype)
        return (rng.standard_normal(size) * 4).astype(np.float32).astype(dtype)
    data = values(math.prod(shape)).reshape(shape)
    if func == "scatter_update":
        idx, axis = rng.integers(-64, 64, n // 33), 0
    elif func == "scatter_nd":
        idx, axis = np.stack([rng.integers(0, 64, n), rng.integers(-33, 33, n)], axis=1), None
    else:
        idx, axis = rng.integers(-33, 33, (64, n // 64)), 1
    dest = _flat_destinations(func, shape, idx, 0 if axis is None else axis)
    upd = values(dest.size).reshape(dest.shape)
    args = (data, idx, upd) if axis is None else (data, idx, upd, axis)
    flat = data.reshape(-1)
    for red in ("none", "add", "sub", "mul", "max", "min", "mean"):
        if not S.reduction_is_defined(red, dtype):
            continue
        for inc in ((True,) if red == "none" else (True, False)):
            expected = _numpy_scatter(flat, dest.reshape(-1), upd.reshape(-1), red, inc).reshape(shape)
            actual = getattr(scatterops, func)(*args, reduction=red, include_self=inc)
            assert_identical(actual, expected, where=f"{func} {red} include_self={inc}",
                             nans="bits" if red == "none" else "any")


@pytest.mark.parametrize("name", ["float8_e4m3b11fnuz", "int1"])
def test_user_dtype_reusing_a_builtin_type_char_is_reduced(name):
    """float8_e4m3b11fnuz has NumPy's uint64 letter 'L' and int1 float16's 'e'; scatterops
    once sent them to its typed C kernels by that letter and raised TypeError."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    if dtype.char not in "?bBhHiIlLqQefdFD":
        pytest.skip(f"this ml_dtypes gives {name} the letter {dtype.char!r}")
    data = np.zeros(4, dtype)
    upd = np.ones(3, dtype) if name != "int1" else np.array([-1, 0, -1], dtype)
    got = scatterops.scatter_elements(data, np.array([0, 2, 2]), upd, reduction="add")
    want = data.copy()
    np.add.at(want, np.array([0, 2, 2]), upd)
    assert_identical(got, want, where="add result")

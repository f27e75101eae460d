"""group_reduce and segment_reduce on the dtypes the real loops do not read, held to
scatterops.reference bit for bit: complex values (NaN and ±inf in either part), strings, void
and structured values, object values (Fractions, Decimals, ints: exact), a complex dtype= for
sum, prod and mean, a string or object dtype= for first and last, and a float16 computing dtype
for mean, var, std and logsumexp -- with empty groups, fill values, mode="drop", out= and N-d
values along any axis; an object operator that raises, and the references the object loops
hold."""
from __future__ import annotations

import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops
from scatterops import reference
from extras import need
from tests import strategies as S
from tests.test_groups import bits as real_bits, outcome

COMPLEX_FUNCS = ("sum", "prod", "mean", "first", "last", "any", "all", "count",
                 "max", "var", "nansum", "argmax", "logsumexp")
EDGE_FUNCS = ("first", "last", "count", "sum", "max")
OBJECT_FUNCS = ("sum", "prod", "max", "min", "first", "last", "any", "all", "count", "mean")
HALF_FUNCS = ("mean", "var", "std", "logsumexp", "nanmean", "nanvar", "nanstd")


def bits(a: np.ndarray) -> bytes:
    """The bytes that say a's values (a long double's padding left out, in each part), every
    NaN as one NaN: where two NaNs meet the contract promises no sign or payload."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(np.dtype(f"f{a.dtype.itemsize // 2}"))
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
    return real_bits(a)


def assert_same(mine, theirs):
    """The same exception class, or the same dtype, shape and bits."""
    if isinstance(theirs, Exception) or isinstance(mine, Exception):
        assert type(mine) is type(theirs), (mine, theirs)
        return
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    if mine.dtype == object:        # the same objects' values and types, NaN as NaN
        for a, b in zip(mine.ravel(), theirs.ravel()):
            assert type(a) is type(b) and (a == b or (a != a and b != b)), (mine, theirs)
        return
    assert bits(mine) == bits(theirs), (mine, theirs)


def same_call(name, *args, **kw):
    mine = outcome(getattr(scatterops, name), *args, **kw)
    assert_same(mine, outcome(getattr(reference, name), *args, **kw))
    return mine


@st.composite
def group_kw(draw, values, axis, fills):
    """groups and the keywords of a call on values: size, mode, fill_value."""
    drop = draw(st.booleans())
    groups, size = draw(S.group_ids(values.shape[axis], drop))
    kw = {"axis": axis, "size": draw(st.sampled_from((size, None))),
          "mode": "drop" if drop else "raise"}
    if draw(st.booleans()):
        kw["fill_value"] = draw(st.sampled_from(fills))
    return groups, kw


@st.composite
def complex_values(draw):
    """(values, axis): complex64 / complex128 / clongdouble with NaN, ±inf, ±0 in either part."""
    re, axis = draw(S.group_values(dtypes=("float64",)))
    sign = draw(st.sampled_from((1.0, -1.0, 0.0)))
    dtype = draw(st.sampled_from((np.complex64, np.complex128, np.clongdouble)))
    with np.errstate(all="ignore"):
        im = np.roll(re.ravel(), 1).reshape(re.shape) * sign
        values = (re + 1j * im).astype(dtype)
    return S.group_layout(values, draw(st.sampled_from(S.GROUP_LAYOUTS))), axis


def same_and_out(values, groups, func, kw):
    """C against the reference; then the same into an out= filled with something else."""
    got = same_call("group_reduce", values, groups, func, **kw)
    if isinstance(got, Exception):
        return
    out = np.zeros_like(got)
    assert scatterops.group_reduce(values, groups, func, out=out, **kw) is out
    assert_same(out, got)


@given(complex_values(), st.sampled_from(COMPLEX_FUNCS), st.data())
def test_complex_values_match_reference(va, func, data):
    values, axis = va
    groups, kw = data.draw(group_kw(values, axis, (0, 2.5, np.nan, 1 + 2j, complex(np.inf, 1))))
    if data.draw(st.integers(0, 3)) == 0:
        kw["dtype"] = data.draw(st.sampled_from((np.complex64, np.complex128, np.float64)))
    same_and_out(values, groups, func, kw)


@given(S.group_values(dtypes=("float64", "float32", "int16", "bool")),
       st.sampled_from(("sum", "prod", "mean", "first", "last", "max", "min", "nanfirst",
                        "nanlast", "nanmax")),
       st.sampled_from((np.complex64, np.complex128)), st.data())
def test_a_complex_dtype_computes_real_values_in_complex_or_casts_their_result(va, func, dtype,
                                                                              data):
    values, axis = va
    groups, kw = data.draw(group_kw(values, axis, (0, 1 + 1j)))
    same_and_out(values, groups, func, dict(kw, dtype=dtype))


@given(S.group_values(dtypes=("int64",)), st.sampled_from(("S3", "U3", ">U3", "V8", "rec")),
       st.sampled_from(EDGE_FUNCS), st.data())
def test_strings_void_and_records_match_reference(va, kind, func, data):
    values, axis = va
    if kind == "rec":
        values = values.astype([("a", ">i4"), ("b", "f8")])
    elif kind == "V8":
        values = np.ascontiguousarray(values.astype("<i8")).view("V8")
    else:
        values = values.astype(kind)
    groups, kw = data.draw(group_kw(values, axis, ("-", b"xy", 0)))
    if kind in ("S3", "U3") and func in ("first", "last") and data.draw(st.booleans()):
        kw["dtype"] = data.draw(st.sampled_from(("U5", "S5", object)))
    same_and_out(values, groups, func, kw)


@given(S.group_values(dtypes=("int64",)), st.sampled_from((Fraction, Decimal, int)),
       st.sampled_from(OBJECT_FUNCS), st.data())
def test_object_values_match_reference_exactly(va, kind, func, data):
    values, axis = va
    objects = np.empty(values.shape, object)
    for i in np.ndindex(values.shape):
        v = int(values[i])
        objects[i] = Fraction(v, 3) if kind is Fraction else Decimal(v) / 7 if kind is Decimal else v
    groups, kw = data.draw(group_kw(objects, axis, (0, "fill", None)))
    if "fill_value" in kw and kw["fill_value"] is None:
        del kw["fill_value"]
    same_and_out(objects, groups, func, kw)


@given(S.group_values(dtypes=("float64", "float32", "float16", "int16")),
       st.sampled_from(HALF_FUNCS), st.data())
def test_a_float16_computing_dtype_matches_reference(va, func, data):
    values, axis = va
    groups, kw = data.draw(group_kw(values, axis, (0, np.nan, 70000.0)))
    if data.draw(st.booleans()):
        kw["ddof"] = data.draw(st.integers(-1, 2))
    same_and_out(values, groups, func, dict(kw, dtype=np.float16))


@given(S.group_values(dtypes=("float64", "float16", "int8", "bool")),
       st.sampled_from(("max", "min", "first", "last", "nanmax", "nanfirst", "nanlast")),
       st.sampled_from(("U12", "S12", object)), st.data())
def test_a_string_or_object_dtype_casts_the_result_of_real_values(va, func, dtype, data):
    values, axis = va
    groups, kw = data.draw(group_kw(values, axis, ("-", 0, np.nan)))
    same_and_out(values, groups, func, dict(kw, dtype=dtype))


@pytest.mark.parametrize("func", ["max", "min", "first", "last"])
def test_a_datetime_result_cast_to_object_or_string(func):
    values = np.array(["2020-01-02", "NaT", "2019-05-06", "2021-01-01"], "M8[D]")
    for dtype in (object, "U30"):
        same_call("group_reduce", values, [0, 0, 2, 2], func, size=4, dtype=dtype)


def test_a_float16_logsumexp_warns_no_more_than_the_other_dtypes():
    values = np.array([0.0, -100.0, -np.inf, 2.0])
    with np.errstate(all="raise"):
        got = scatterops.group_reduce(values, [0, 0, 0, 1], "logsumexp", dtype=np.float16)
    with np.errstate(all="ignore"):
        expected = reference.group_reduce(values, [0, 0, 0, 1], "logsumexp", dtype=np.float16)
    assert_same(got, expected)


@given(complex_values(), st.sampled_from(("sum", "prod", "mean", "first", "any", "count")),
       st.data())
def test_segments_of_complex_values_match_reference(va, func, data):
    values, axis = va
    n = values.shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    same_call("segment_reduce", values, cuts or [0], func, axis=axis)
    same_call("segment_reduce", values.astype("U40"), cuts or [0], "last", axis=axis)


def test_a_large_complex_call_matches_reference():
    rng = np.random.default_rng(5)
    values = (rng.standard_normal(70_000) + 1j * rng.standard_normal(70_000)).astype(np.complex64)
    groups = rng.integers(0, 50, 70_000)
    for func in ("sum", "prod", "mean"):
        same_call("group_reduce", values, groups, func)


class Raises:
    """An object whose + and comparisons raise."""

    def __add__(self, other):
        raise ArithmeticError("no add")

    def __ge__(self, other):
        raise ArithmeticError("no compare")

    def __bool__(self):
        raise ArithmeticError("no truth")


@pytest.mark.parametrize("func", ["sum", "max", "any"])
def test_an_object_operator_that_raises_propagates_and_writes_nothing(func):
    values = np.array([1, Raises(), Raises(), 2], object)
    out = np.array(["untouched"] * 2, object) if func != "any" else np.array([True, True])
    before = out.copy()
    for fn in (scatterops.group_reduce, reference.group_reduce):
        with pytest.raises(ArithmeticError):
            fn(values[[1, 2, 0, 3]], [0, 0, 1, 1], func, out=out)
        assert out.tolist() == before.tolist()


@pytest.mark.parametrize("func", ["sum", "prod", "max", "min", "first", "last", "any", "all",
                                  "count"])
def test_the_object_loops_hold_no_reference_after_the_call(func):
    members = [Fraction(k, 7) for k in range(6)] + [10 ** 40]
    fill = Fraction(1, 9)
    values = np.array(members * 3, object).reshape(3, 7).T
    groups = [0, 1, 0, 3, 1, 0, 3]
    before = [sys.getrefcount(m) for m in members] + [sys.getrefcount(fill)]
    for _ in range(50):
        scatterops.group_reduce(values, groups, func, size=5, fill_value=fill)
        scatterops.group_reduce(values, groups, func, size=5, fill_value=fill,
                                out=np.empty((5, 3), object if func not in ("any", "all", "count")
                                             else bool if func != "count" else np.intp))
    after = [sys.getrefcount(m) for m in members] + [sys.getrefcount(fill)]
    assert after == before


def test_an_object_operator_that_raises_leaks_nothing():
    members = [Fraction(1, 3), Raises()]
    before = [sys.getrefcount(m) for m in members]
    for _ in range(20):
        with pytest.raises(ArithmeticError):
            scatterops.group_reduce(np.array(members * 2, object), [0, 1, 1, 0])
    assert [sys.getrefcount(m) for m in members] == before


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_numpy_groupies_complex_same_bits(backend):
    """numpy_groupies sums complex parts in member order (bincount, or numba's loop) and its
    numpy backend divides the mean as NumPy's complex division: the same bits (its numba
    backend's mean divides otherwise)."""
    need("numpy_groupies", extra="groups")
    if backend == "numba":
        need("numba", extra="groups")
        from numpy_groupies import aggregate_numba as peer
    else:
        from numpy_groupies import aggregate_numpy as peer
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 50, 5000)
    values = rng.standard_normal(5000) + 1j * rng.standard_normal(5000)
    funcs = ["sum", "prod", "first", "last", "any", "all", "len"]
    for func in funcs + (["mean"] if backend == "numpy" else []):
        theirs = peer.aggregate(groups, values, func, size=50)
        ours = scatterops.aggregate(groups, values, func, size=50)
        assert ours.dtype == theirs.dtype and bits(ours) == bits(theirs), func


def test_ctrl_c_stops_the_object_loops_with_nothing_written():
    """A signal that arrives while the object loop runs (SIGALRM, set off by the one Python
    operator among int members) is handled by the loop itself: its exception stops the call
    and out keeps its contents."""
    import signal

    class Alarm:
        def __add__(self, other):
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            return 1

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    values = np.array([Alarm(), 1] + [1] * 3_000_000, object)
    out = np.array([7], object)
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            scatterops.group_reduce(values, np.zeros(len(values), np.intp), out=out)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert out[0] == 7

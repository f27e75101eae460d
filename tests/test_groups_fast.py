"""The loops of the common group reductions (contiguous values or rows; int64 or int32 ids
read as they are; the ids' check made a piece at a time while the loop runs; only the counts a
function needs) held to scatterops.reference bit for bit, at sizes that span several pieces
and both thread counts: the values at the cells' start (the type's least and greatest values,
±inf, NaN), empty groups with and without a fill, and a bad id in a late piece."""
from __future__ import annotations

import numpy as np
import pytest

import scatterops
from scatterops import reference

FUNCS = ["sum", "mean", "var", "max", "min", "argmax", "argmin", "first", "last", "count",
         "logsumexp"]


#: the funcs whose results are arithmetic on the members: where two NaNs meet there, the sign
#: and payload of the NaN are not promised (docs/contract.md), and a compiler may order the
#: operands of an addition either way, so these compare every NaN as one NaN
ARITHMETIC = ("sum", "prod", "mean", "var", "std", "logsumexp")


def bits(a, func=None):
    a = np.array(a, order="C")
    if func in ARITHMETIC and a.dtype.kind == "f":
        a[np.isnan(a)] = np.nan
    return a.tobytes()


def check(values, groups, func, **kw):
    with np.errstate(all="ignore"):
        want = reference.group_reduce(values, groups, func, **kw)
        for threads in (1, 2):
            with scatterops.threads(threads):
                got = scatterops.group_reduce(values, groups, func, **kw)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert bits(got, func) == bits(want, func), (func, threads)


def edge_values(n, dtype, rng):
    """n values of dtype with the type's extremes, ±inf, NaN and ±0 among them."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = rng.standard_normal(n).astype(dtype)
        specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], dtype)
    else:
        info = np.iinfo(dtype)
        v = rng.integers(-1000 if dtype.kind == "i" else 0, 1000, n).astype(dtype)
        specials = np.array([info.min, info.max, 0], dtype)
    pick = rng.random(n) < 0.01
    v[pick] = rng.choice(specials, int(pick.sum()))
    return v


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint64"])
@pytest.mark.parametrize("id_dtype", ["int64", "int32"])
def test_large_calls_match_the_reference(func, dtype, id_dtype):
    if func == "logsumexp" and dtype[0] != "f":
        pytest.skip("logsumexp computes in float64: the float cases cover it")
    rng = np.random.default_rng(11)
    n, size = 150_000, 10_000
    values = edge_values(n, dtype, rng)
    groups = rng.integers(0, size, n).astype(id_dtype)
    groups[groups == 7] = 8        # group 7 empty
    check(values, groups, func, size=size)
    check(values, groups, func, size=size, fill_value=3)
    dropped = groups.copy()
    dropped[rng.random(n) < 0.1] = -1
    check(values, dropped, func, size=size, mode="drop")


@pytest.mark.parametrize("func", ["max", "min", "argmax", "argmin", "first", "last"])
@pytest.mark.parametrize("value", [-np.inf, np.inf, np.nan, -0.0])
def test_groups_of_only_the_start_value(func, value):
    """A group whose members all equal the value its cell starts at is not empty."""
    values = np.full(100_000, value)
    groups = np.arange(100_000) % 3
    check(values, groups, func, size=4)
    check(values.astype(np.float32), groups.astype(np.int32), func, size=4, fill_value=9)


@pytest.mark.parametrize("func", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_integer_extremes_as_the_only_members(func, dtype):
    info = np.iinfo(dtype)
    for value in (info.min, info.max):
        values = np.full(70_000, value, dtype)
        check(values, np.arange(70_000) % 5, func, size=6)


@pytest.mark.parametrize("func", ["sum", "mean", "max", "argmax", "first", "last", "count"])
@pytest.mark.parametrize("features", [1, 3, 64])
def test_rows_and_strided_values(func, features):
    rng = np.random.default_rng(3)
    base = rng.standard_normal((60_000, features * 2)).astype(np.float32)
    groups = rng.integers(0, 500, 60_000)
    check(base[:, :features], groups, func, size=501)          # rows inside wider rows
    check(base[:, ::2], groups, func, size=501)                # strided rows: the other loops
    check(np.ascontiguousarray(base[:, :features].T), groups, func, size=501, axis=1)


@pytest.mark.parametrize("func", ["sum", "max", "min", "argmax", "first", "last", "count"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_segments_match_the_group_form(func, dtype):
    rng = np.random.default_rng(4)
    n = 600_000
    values = edge_values(n, dtype, rng)
    indptr = np.concatenate(([0], np.sort(rng.integers(0, n, 999)), [n]))
    groups = np.repeat(np.arange(1000), np.diff(indptr))
    want = reference.segment_reduce(values, indptr, func)
    for threads in (1, 2):
        with scatterops.threads(threads):
            got = scatterops.segment_reduce(values, indptr, func)
            assert bits(got, func) == bits(want, func)
            if func not in ("argmax", "argmin"):
                assert bits(got, func) == bits(scatterops.group_reduce(values, groups, func, size=1000),
                                             func)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint64"])
@pytest.mark.parametrize("mean_length", [3, 40, 2000])
def test_segment_sums_of_any_lengths_with_empty_ones(dtype, mean_length):
    # short segments go four at a time, long ones through lanes that each take the next
    # segment when theirs ends: both hold the bits of one segment after another
    rng = np.random.default_rng(5)
    size = 97
    lengths = rng.integers(0, 2 * mean_length, size) * (rng.random(size) > 0.2)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    base = (rng.standard_normal(2 * int(indptr[-1])) * 1e3).astype(dtype)
    for values in (base[: indptr[-1]], base[::2]):
        want = reference.segment_reduce(values, indptr, "sum")
        for threads in (1, 2):
            with scatterops.threads(threads):
                got = scatterops.segment_reduce(values, indptr, "sum")
            assert got.dtype == want.dtype and bits(got, "sum") == bits(want, "sum")


@pytest.mark.parametrize("func", ["sum", "max", "argmax", "count", "var", "nanmax", "prod"])
@pytest.mark.parametrize("id_dtype", ["int64", "int32"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bad_id_late_in_a_large_call_is_the_first_reported(func, id_dtype, threads):
    """The ids are checked a piece at a time as the loops go: the first bad one is named, in
    whichever thread's share it lies, and out keeps its contents."""
    n = 1_000_000
    groups = (np.arange(n) % 1000).astype(id_dtype)
    groups[900_001] = 1000
    groups[700_003] = -5
    out = np.full(1000, 7, scatterops.group_reduce(np.ones(4), [0, 1, 2, 999], func).dtype)
    with scatterops.threads(threads):
        with pytest.raises(IndexError, match=r"groups\[700003\] = -5"):
            scatterops.group_reduce(np.ones(n), groups, func, size=1000, out=out)
    assert (out == 7).all()

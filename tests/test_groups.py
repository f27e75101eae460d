"""group_reduce, segment_reduce, group_softmax and segment_softmax held to
scatterops.reference bit for bit: every func, the dtypes of the contract's table, N-d values
with any axis, every layout, NaN / ±inf / ±0 / ties, empty groups, ddof, fill_value, dtype=,
out=, mode="drop", the errors (class, the argument named, nothing written to out), the
segment form against the group form, and the thread count."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import scatterops
from scatterops import reference
from scatterops._reference_groups import FUNCS
from tests import strategies as S


def bits(a: np.ndarray) -> bytes:
    """The bytes that say a's values (a longdouble's padding left out)."""
    a = np.ascontiguousarray(a)
    if a.dtype == np.longdouble and a.dtype.itemsize == 16:
        return a.view(np.uint8).reshape(a.shape + (16,))[..., :10].tobytes()
    return a.tobytes()


def outcome(fn, *args, **kw):
    """fn's result, or the class and message of what it raised."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kw)
    except (ValueError, TypeError, IndexError) as exc:
        return exc


def assert_same(mine, theirs):
    """The same exception class, or the same dtype, shape and bits."""
    if isinstance(theirs, Exception) or isinstance(mine, Exception):
        assert type(mine) is type(theirs), (mine, theirs)
        return
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    assert bits(mine) == bits(theirs), (mine, theirs)


def same_call(name, *args, **kw):
    mine = outcome(getattr(scatterops, name), *args, **kw)
    theirs = outcome(getattr(reference, name), *args, **kw)
    assert_same(mine, theirs)
    return mine


@st.composite
def group_calls(draw, drop=None):
    values, axis = draw(S.group_values())
    drop = draw(st.booleans()) if drop is None else drop
    groups, size = draw(S.group_ids(values.shape[axis], drop))
    kw = {"axis": axis, "size": draw(st.sampled_from((size, None))),
          "mode": "drop" if drop else "raise"}
    if draw(st.booleans()):
        kw["fill_value"] = draw(st.sampled_from((0, -1, 7, 2.5, np.nan, True)))
    if draw(st.booleans()):
        kw["ddof"] = draw(st.integers(-1, 3))
    if draw(st.integers(0, 4)) == 0:
        kw["dtype"] = draw(st.sampled_from(("float64", "float32", "int64", "uint8", "bool")))
    return values, groups, draw(st.sampled_from(FUNCS)), kw


@given(group_calls())
def test_group_reduce_matches_reference(call):
    values, groups, func, kw = call
    same_call("group_reduce", values, groups, func, **kw)


@given(group_calls(drop=False))
def test_segment_reduce_matches_reference_and_group_form(call):
    values, groups, func, kw = call
    kw.pop("mode")
    size = kw.pop("size")
    n = values.shape[kw["axis"]]
    ids = np.sort(groups.astype(np.intp))
    size = int(ids.max()) + 1 if n else 0
    indptr = np.searchsorted(ids, np.arange(size + 1))
    indptr[-1] = n
    order = np.argsort(groups, kind="stable")
    ordered = np.take(values, order, axis=kw["axis"])
    segment = same_call("segment_reduce", ordered, indptr, func, **kw)
    group = outcome(scatterops.group_reduce, ordered, ids, func, size=size, **kw)
    if func.endswith(("argmax", "argmin")) or isinstance(segment, Exception):
        return
    assert_same(segment, group)


@given(S.group_values(dtypes=("float64", "float32", "float16", "int16")), st.booleans(),
       st.data())
def test_softmax_matches_reference(va, log, data):
    values, axis = va
    n = values.shape[axis]
    groups, size = data.draw(S.group_ids(n))
    same_call("group_softmax", values, groups, axis=axis, log=log)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    same_call("segment_softmax", values, [0] + cuts + [n], axis=axis, log=log)


@given(group_calls(drop=True))
def test_out_is_overwritten_entirely(call):
    values, groups, func, kw = call
    expected = outcome(reference.group_reduce, values, groups, func, **kw)
    if isinstance(expected, Exception):
        return
    out = np.full(expected.shape, 1, expected.dtype)
    got = scatterops.group_reduce(values, groups, func, out=out, **kw)
    assert got is out
    assert bits(out) == bits(expected)


@pytest.mark.parametrize("func", ["sum", "argmax", "var", "logsumexp", "nanmean"])
def test_bad_id_raises_index_error_and_leaves_out(func):
    values = np.arange(6.0)
    out = np.full(3, 7, scatterops.group_reduce(values, [0, 1, 2, 0, 1, 2], func).dtype)
    before = out.copy()
    with pytest.raises(IndexError, match=r"groups\[4\] = 3"):
        scatterops.group_reduce(values, [0, 1, 2, 0, 3, -1], func, size=3, out=out)
    assert bits(out) == bits(before)
    with pytest.raises(IndexError, match=r"groups\[1\] = -1"):
        scatterops.group_softmax(values, [0, -1, 2, 0, 1, 2])


@pytest.mark.parametrize("indptr, pos", [([1, 0], 1), ([-1, 2], 0), ([0, 7], 1), ([0, 3, 2, 6], 2)])
def test_bad_indptr_names_the_offset_and_leaves_out(indptr, pos):
    out = np.full(len(indptr) - 1, 7.0)
    with pytest.raises(ValueError, match=rf"indptr\[{pos}\]"):
        scatterops.segment_reduce(np.arange(6.0), indptr, out=out)
    assert (out == 7).all()
    with pytest.raises(ValueError, match="indptr"):
        scatterops.segment_softmax(np.arange(6.0), [0, 3])
    with pytest.raises(ValueError, match="indptr"):
        scatterops.segment_reduce(np.arange(6.0), [])


MODULES = [pytest.param(scatterops, id="c"), pytest.param(reference, id="reference")]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("top", [2 ** 63 - 1, 2 ** 64 - 2, 2 ** 62, 2 ** 57])
def test_a_group_table_past_the_limit_is_a_value_error_naming_size(module, top):
    # the largest id + 1 (the default size) past intp, or a table too large to count in bytes
    dt = np.uint64 if top >= 2 ** 63 else np.int64
    groups = np.array([top, 0], dt)
    for call in (lambda: module.group_reduce(np.ones(2), groups, "sum"),
                 lambda: module.group_reduce(np.ones((2, 3)), groups, "max"),
                 lambda: module.group_softmax(np.ones(2), groups),
                 lambda: module.group_reduce(np.ones((2, 2 ** 20)), [0, 1], size=2 ** 40)):
        with pytest.raises(ValueError, match="size="):
            call()


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("func", ["sum", "max", "var", "argmax", "first", "logsumexp", "count"])
@pytest.mark.parametrize("shape, axis", [((0, 2), 1), ((0, 2, 3), 1), ((2, 0), 0)])
def test_ids_are_checked_when_the_values_have_no_cells(module, func, shape, axis):
    values = np.zeros(shape, np.float32)
    with pytest.raises(IndexError, match=r"groups\[1\] = -2"):
        module.group_reduce(values, [1, -2], func, size=3, axis=axis)
    got = module.group_reduce(values, [1, -2], func, size=3, axis=axis, mode="drop")
    assert got.shape == shape[:axis] + (3,) + shape[axis + 1:]
    if axis == 1:
        with pytest.raises(IndexError, match=r"groups\[1\] = -2"):
            module.group_softmax(values, [1, -2], size=3, axis=axis)


@pytest.mark.parametrize("module", MODULES)
def test_the_func_and_dtype_are_checked_before_the_ids_length_and_the_offsets(module):
    # the order of the checks is the reference's: a call with two faults names the first
    strings = np.array(["a", "b", "c"])
    with pytest.raises(TypeError, match="func"):
        module.group_reduce(strings, [0, 1], "sum")
    with pytest.raises(TypeError, match="func"):
        module.segment_reduce(strings, [0, 2, 1], "mean")
    with pytest.raises(ValueError, match="fill_value"):
        module.group_reduce(np.ones(3, np.int64), [0, 1, 1], "sum", fill_value=np.nan,
                            out=np.zeros(2, np.float32))


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("fill, want", [(2 ** 70, ValueError), (-2 ** 70, ValueError),
                                        ("x", ValueError), (np.inf, "NaT"), (1e300, "NaT"),
                                        (-2 ** 63, "NaT"), (np.nan, "NaT"), (5, 5)])
def test_a_datetime_fill_is_cast_and_a_refused_one_is_a_value_error(module, fill, want):
    # the cast's own rule (np.array(fill).astype): NaT for what it cannot place; its
    # OverflowError for an int past int64 and its ValueError for a bad string name fill_value
    values = np.zeros(2, "M8[s]")
    if want is ValueError:
        with pytest.raises(ValueError, match="fill_value"):
            module.group_reduce(values, [0, 2], "last", fill_value=fill)
    else:
        got = module.group_reduce(values, [0, 2], "last", fill_value=fill)[1]
        assert got.view(np.int64) == np.datetime64(want, "s").view(np.int64) if want == "NaT" \
            else got == np.datetime64(want, "s")


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("func", ["softmax", "log_softmax"])
def test_group_reduce_takes_no_softmax(module, func):
    with pytest.raises(ValueError, match="func"):
        module.group_reduce(np.ones(2), [0, 1], func)
    with pytest.raises(ValueError, match="func"):
        module.segment_reduce(np.ones(2), [0, 2], func)


@pytest.mark.parametrize("module", MODULES)
def test_a_bad_uint64_id_is_named_with_its_value(module):
    with pytest.raises(IndexError, match=r"groups\[0\] = 18446744073709551614 "):
        module.group_reduce(np.ones(2), np.array([2 ** 64 - 2, 0], np.uint64), size=3)


@pytest.mark.parametrize("kw, cls, word", [
    ({"func": "median"}, ValueError, "func"),
    ({"func": 3}, TypeError, "func"),
    ({"mode": "clip"}, ValueError, "mode"),
    ({"mode": 1}, TypeError, "mode"),
    ({"size": -1}, ValueError, "size"),
    ({"size": 2.0}, TypeError, "size"),
    ({"ddof": 0.5}, TypeError, "ddof"),
    ({"axis": 2}, np.exceptions.AxisError, "axis"),
    ({"groups": [0.0, 1.0, 0.0]}, TypeError, "groups"),
    ({"groups": [[0, 1, 0]]}, ValueError, "groups"),
    ({"groups": [0, 1]}, ValueError, "groups"),
    ({"func": "argmax", "dtype": "float64"}, TypeError, "dtype"),
    ({"func": "mean", "dtype": "int64"}, TypeError, "dtype"),
    ({"func": "sum", "fill_value": np.nan}, ValueError, "fill_value"),
    ({"func": "nansum", "values": np.ones(3, bool)}, TypeError, "nansum"),
    ({"func": "sum", "values": np.array(["a", "b", "c"])}, TypeError, "sum"),
    ({"out": np.zeros(3)}, ValueError, "out"),
    ({"out": np.zeros(2, np.float32)}, TypeError, "out"),
    ({"out": [0.0, 0.0]}, TypeError, "out"),
])
def test_bad_argument_names_it(kw, cls, word):
    kw = dict(kw)
    values = kw.pop("values", np.array([1, 2, 3]))
    groups = kw.pop("groups", [0, 1, 0])
    if values.dtype.kind == "i" and "out" in kw and isinstance(kw["out"], np.ndarray):
        values = values.astype(float)
    func = kw.pop("func", "sum")
    with pytest.raises(cls, match=word):
        scatterops.group_reduce(values, groups, func, **kw)
    with pytest.raises(cls):
        reference.group_reduce(values, groups, func, **kw)


def test_float16_sum_rounds_per_member():
    ones = np.ones(10_000, np.float16)
    assert scatterops.group_reduce(ones, np.zeros(10_000, int))[0] == 2048
    assert scatterops.group_reduce(ones, np.zeros(10_000, int), dtype=np.float32)[0] == 10_000


def test_numpy_callables_name_the_func():
    v, g = np.array([3.0, np.nan, 1.0]), [0, 0, 1]
    for f, name in [(np.sum, "sum"), (np.nanmax, "nanmax"), (np.amin, "min"), (np.argmax, "argmax")]:
        assert bits(scatterops.group_reduce(v, g, f)) == bits(scatterops.group_reduce(v, g, name))


@pytest.mark.parametrize("func", ["sum", "mean", "var", "max", "argmin", "logsumexp", "first",
                                  "last", "nanargmax", "count", "any"])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_thread_counts_give_the_same_bits(func, dtype):
    """Segments split over threads by segment, groups by members into partials joined in
    member order: 1 and 2 threads give the same bits."""
    rng = np.random.default_rng(5)
    n = 1 << 19
    values = (rng.normal(size=(n, 3)) * 100).astype(dtype)
    if dtype == "float32":
        values[rng.random(values.shape) < 0.001] = np.nan
    elif func.startswith("nan"):
        func = func[3:]
    indptr = np.concatenate(([0], np.sort(rng.integers(0, n, 999)), [n]))
    groups = rng.integers(-1, 1000, n)
    results = []
    for threads in (1, 2):
        with scatterops.threads(threads):
            results.append((scatterops.segment_reduce(values, indptr, func),
                            scatterops.group_reduce(values, groups, func, size=1000, mode="drop")))
    for a, b in zip(*results):
        assert bits(a) == bits(b)


@pytest.mark.parametrize("func", ["max", "min", "argmax", "argmin", "first", "last", "count"])
@pytest.mark.parametrize("unit", ["M8[s]", "m8[ms]"])
def test_datetimes_match_reference_nat_as_nan(func, unit):
    rng = np.random.default_rng(2)
    values = rng.integers(-50, 50, (40, 2)).astype(unit)
    values[rng.random(values.shape) < 0.2] = np.array("NaT", unit)
    groups = rng.integers(0, 6, 40)
    same_call("group_reduce", values, groups, func, size=8)
    same_call("group_reduce", values, groups, func, size=8, axis=0, fill_value=np.array(3, unit))


@pytest.mark.parametrize("dtype", ["complex128", "U3", "S2", "V4", "O"])
def test_other_dtypes_refuse_arithmetic_with_a_type_error(dtype):
    values = np.zeros(3, dtype)
    with pytest.raises(TypeError, match="var"):
        scatterops.group_reduce(values, [0, 1, 0], "var")


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble])
@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("func", ["max", "min", "nanmax", "nanmin"])
def test_float16_max_keeps_the_earlier_of_a_signed_zero_tie(func, nthreads, dtype):
    # np.maximum / np.minimum on float16 and longdouble keep the earlier of +0.0 and -0.0
    # (float32 and float64 keep the later); large enough that two threads each take a share
    values = np.zeros(200_000, dtype)
    values[1::2] = -0.0
    values[::3] = np.nan if func.startswith("nan") else 0.0
    groups = np.repeat(np.arange(4), 50_000)
    with scatterops.threads(nthreads):
        got = scatterops.group_reduce(values, groups, func)
    want = reference.group_reduce(values, groups, func)
    assert bits(got) == bits(want)


@pytest.mark.parametrize("func", ["mean", "var", "logsumexp"])
def test_byteswapped_float16_computes_in_float64_in_both(func):
    # '>f2' is not == np.float16 as a dtype: both sides must still take it for float16
    values = np.array([0.0, 1.0, 3.0], ">f2")
    want = reference.group_reduce(values.astype("<f2"), [0, 0, 0], func)
    assert reference.group_reduce(values, [0, 0, 0], func).tobytes() == want.tobytes()
    assert scatterops.group_reduce(values, [0, 0, 0], func).tobytes() == want.tobytes()
    soft = reference.group_softmax(values.astype("<f2"), [0, 0, 0])
    assert reference.group_softmax(values, [0, 0, 0]).tobytes() == soft.tobytes()
    assert scatterops.group_softmax(values, [0, 0, 0]).tobytes() == soft.tobytes()


@pytest.mark.parametrize("mod", [scatterops, reference])
def test_the_softmax_index_error_offers_no_mode(mod):
    # the softmax forms take no mode=, so their IndexError does not suggest one
    with pytest.raises(IndexError) as e:
        mod.group_softmax([1.0, 2.0], [0, 5], size=2)
    assert "mode" not in str(e.value)
    with pytest.raises(IndexError, match="mode='drop'"):
        mod.group_reduce([1.0, 2.0], [0, 5], size=2)


def _starts(dtype):
    """Values equal to the starts the fast loops give their cells: the least and greatest
    value (max, min) and the bits that first and last start at (a NaN with a payload for
    the floats), beside ordinary ones."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        payload = {4: np.uint32(0x7FD5A5A5), 8: np.uint64(0x7FFA5A5A5A5A5A5A)}[dt.itemsize]
        return np.array([-np.inf, np.inf, 0.0, -0.0, 1.5, np.nan], dt).tolist() + [
            np.array(payload).view(dt)[()]]
    info = np.iinfo(dt)
    other = info.min + 0x5A5A5A5A if dt.kind == "i" else info.max - 0x5A5A5A5A
    return [info.min, info.max, 0, 1, other]


@pytest.mark.parametrize("func", ["max", "min", "first", "last", "argmax", "nanmax"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint64"])
@pytest.mark.parametrize("features", [None, 3])
@pytest.mark.parametrize("threads", [1, 2])
def test_members_equal_to_a_cells_start_count_as_members(func, dtype, features, threads):
    """A group whose members all hold the value its cells start at is not empty: it keeps
    that value where an empty group gets fill_value, on one thread and on two."""
    rng = np.random.default_rng(11)
    n, size = 1 << 19, 600
    starts = np.array(_starts(dtype), dtype)
    shape = (n,) if features is None else (n, features)
    values = starts[rng.integers(0, len(starts), shape)]
    groups = rng.integers(0, size, n)
    groups[groups >= 500] = rng.integers(0, 500, np.count_nonzero(groups >= 500))  # 500-599 empty
    # groups 0 .. len(starts) - 1 hold one start each, nothing else
    for k, s in enumerate(starts):
        values[groups == k] = s
    with scatterops.threads(threads):
        mine = outcome(scatterops.group_reduce, values, groups, func, size=size, fill_value=7)
    assert_same(mine, outcome(reference.group_reduce, values, groups, func, size=size,
                              fill_value=7))


@pytest.mark.parametrize("func", ["first", "last", "max", "sum"])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_first_bad_id_is_named_in_a_long_call(func, threads):
    """The fast loops check the ids as they read them (first's from the last member): the
    message still names the first bad one, and out keeps what it held."""
    n = 3 << 18
    values = np.arange(n, dtype=np.float64)
    groups = np.arange(n) % 5
    groups[[700000, 300001, 600000]] = [9, -2, 11]
    out = np.full(5, 4.0)
    with scatterops.threads(threads):
        with pytest.raises(IndexError, match=r"groups\[300001\] = -2"):
            scatterops.group_reduce(values, groups, func, size=5, out=out)
    assert bits(out) == bits(np.full(5, 4.0))

"""scatterops.reference's group reductions, held to the contract's rules one by one with
answers computed by hand: the oracle the C functions are tested against must itself be right."""
import math

import numpy as np
import pytest

from scatterops import reference as R
from scatterops._reference_groups import FUNCS

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError  # type: ignore[attr-defined,no-redef]

nan, inf = np.nan, np.inf
INTP = np.dtype(np.intp)


def bits(a):
    """The bytes of an array and its dtype and shape: equality with no tolerance, signed zeros
    included; every NaN as one NaN (the contract leaves its sign and payload open)."""
    a = np.asarray(a)
    if a.dtype.kind in "fc":
        a = np.where(np.isnan(a), np.array(nan, a.dtype), a)
    return a.dtype.str, a.shape, a.tobytes()


def same(got, expected, dtype=None):
    expected = np.asarray(expected, dtype=dtype if dtype is not None else got.dtype)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert bits(got) == bits(expected), (got, expected)


# ---- each function on one group, one empty group --------------------------------------------

V = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
G = np.array([0, 0, 2, 2, 2])            # group 1 is empty


@pytest.mark.parametrize("func, expected", [
    ("sum", [4.0, 0.0, 10.0]),
    ("prod", [3.0, 1.0, 20.0]),
    ("max", [3.0, nan, 5.0]),
    ("min", [1.0, nan, 1.0]),
    ("mean", [2.0, nan, 10.0 / 3.0]),
    ("var", [1.0, nan, ((4 - 10 / 3) ** 2 + (1 - 10 / 3) ** 2 + (5 - 10 / 3) ** 2) / 3]),
    ("first", [3.0, nan, 4.0]),
    ("last", [1.0, nan, 5.0]),
])
def test_each_float_func_and_the_default_fill_of_an_empty_group(func, expected):
    same(R.group_reduce(V, G, func), expected)


@pytest.mark.parametrize("func, expected, dtype", [
    ("argmax", [0, -1, 4], INTP),
    ("argmin", [1, -1, 3], INTP),
    ("count", [2, 0, 3], INTP),
    ("nancount", [2, 0, 3], INTP),
    ("any", [True, False, True], bool),
    ("all", [True, False, True], bool),
])
def test_functions_with_a_fixed_result_dtype_and_their_fill(func, expected, dtype):
    same(R.group_reduce(V, G, func), expected, dtype)


def test_logsumexp_is_max_plus_log_of_the_ordered_sum_and_empty_is_minus_inf():
    got = R.group_reduce(V, G, "logsumexp")
    m = 5.0
    s = np.zeros((), np.float64)
    for x in (4.0, 1.0, 5.0):
        s = s + np.exp(np.array([x - m]))[0]
    expected = [3.0 + np.log(np.array([1.0 + np.exp(np.array([-2.0]))[0]]))[0], -inf,
                m + np.log(np.array([s]))[0]]
    same(got, expected)


def test_std_is_the_square_root_of_var():
    same(R.group_reduce(V, G, "std"), np.sqrt(R.group_reduce(V, G, "var")))


def test_every_func_takes_its_numpy_callable():
    for fn, name in [(np.sum, "sum"), (np.max, "max"), (np.amax, "max"), (np.nanmean, "nanmean"),
                     (np.argmin, "argmin"), (np.any, "any")]:
        same(R.group_reduce(V, G, fn), R.group_reduce(V, G, name))


@pytest.mark.parametrize("func, fill", [("sum", 0), ("count", 0), ("prod", 1), ("any", False),
                                        ("all", False), ("argmax", -1), ("argmin", -1),
                                        ("logsumexp", -inf), ("max", nan), ("mean", nan),
                                        ("var", nan), ("first", nan), ("nanlast", nan)])
def test_an_all_empty_result_is_the_default_fill(func, fill):
    got = R.group_reduce(np.zeros(0), np.zeros(0, int), func, size=2)
    assert got.shape == (2,)
    assert all((g == fill) or (math.isnan(fill) and math.isnan(g)) for g in got.tolist())


def test_integer_and_bool_results_fill_with_zero_and_false():
    v = np.array([7, 9], np.int16)
    same(R.group_reduce(v, [0, 2], "max"), [7, 0, 9], np.int16)
    same(R.group_reduce(v, [0, 2], "first"), [7, 0, 9], np.int16)
    same(R.group_reduce(v, [0, 2], "sum", fill_value=-5), [7, -5, 9], INTP)
    same(R.group_reduce(np.array([True]), [1], "max"), [False, True], bool)


def test_datetime_empty_is_nat_and_strings_empty_is_the_empty_string():
    d = np.array(["2020-01-02", "2020-01-01"], "M8[D]")
    got = R.group_reduce(d, [0, 0], "max", size=2)
    assert got.dtype == d.dtype and got[0] == d[0] and np.isnat(got[1])
    assert R.group_reduce(d, [0, 0], "argmin").tolist() == [1]
    s = np.array(["ab", "c"])
    assert R.group_reduce(s, [2, 2], "last").tolist() == ["", "", "c"]
    assert R.group_reduce(s, [2, 2], "first", fill_value="-").tolist() == ["-", "-", "ab"]


def test_a_fill_value_applies_to_every_empty_group_and_count_too():
    same(R.group_reduce(V, G, "count", fill_value=-1), [2, -1, 3], INTP)
    same(R.group_reduce(V, G, "max", fill_value=0), [3.0, 0.0, 5.0])
    same(R.group_reduce(V, G, "argmax", fill_value=99), [0, 99, 4], INTP)


@pytest.mark.parametrize("fill", [nan, inf, -inf, 2 ** 63, -1])
def test_a_fill_an_integer_result_cannot_hold_is_a_value_error(fill):
    with pytest.raises(ValueError, match="fill_value"):
        R.group_reduce(np.array([1], np.uint8), [1], "max", fill_value=fill)


@pytest.mark.parametrize("values, func, fill", [
    (np.array([1]), "sum", 2 ** 70), (np.array([1]), "sum", -2 ** 70),
    (np.array([1], np.uint64), "sum", 2 ** 64), (np.array([1]), "count", 2 ** 70),
    (np.array([1.0]), "argmax", 2 ** 70), (np.array([True]), "any", 2 ** 70)])
def test_a_python_int_no_integer_dtype_holds_is_a_value_error_too(values, func, fill):
    # np.asarray(2 ** 70) is an object array: the range check must see the int in it
    with pytest.raises(ValueError, match="fill_value"):
        R.group_reduce(values, [1], func, fill_value=fill)


# ---- ddof, NaN, infinities, signed zeros, ties ---------------------------------------------

def test_ddof_divides_by_count_minus_ddof_and_gives_nan_where_that_is_not_positive():
    v = np.array([1.0, 2.0, 3.0, 4.0, 7.0])
    g = [0, 0, 0, 0, 1]
    same(R.group_reduce(v, g, "var"), [1.25, 0.0])
    same(R.group_reduce(v, g, "var", ddof=1), [5.0 / 3.0, nan])
    same(R.group_reduce(v, g, "var", ddof=4), [nan, nan])
    same(R.group_reduce(v, g, "var", ddof=3), [5.0, nan])
    # an empty group is the fill, not NaN
    same(R.group_reduce(v, g, "var", ddof=1, size=3, fill_value=-1.0), [5.0 / 3.0, nan, -1.0])


def test_var_is_two_passes_in_order():
    v = np.array([1e8 + 1.0, 1e8 + 2.0, 1e8 + 3.0], np.float32)
    mean = (np.float32(0) + v[0] + v[1] + v[2]) / np.float32(3)
    ss = np.float32(0)
    for x in v:
        ss = ss + (x - mean) * (x - mean)
    same(R.group_reduce(v, [0, 0, 0], "var"), [ss / np.float32(3)])


def test_nan_propagates_in_max_and_is_absent_in_nanmax():
    v = np.array([1.0, nan, 3.0, nan, nan])
    g = [0, 0, 0, 1, 2]
    same(R.group_reduce(v, g, "max"), [nan, nan, nan])
    same(R.group_reduce(v, g, "nanmax"), [3.0, nan, nan])
    same(R.group_reduce(v, g, "nanmax", fill_value=-1.0), [3.0, -1.0, -1.0])
    same(R.group_reduce(v, g, "nansum"), [4.0, 0.0, 0.0])
    same(R.group_reduce(v, g, "nanmean"), [2.0, nan, nan])
    same(R.group_reduce(v, g, "nancount"), [2, 0, 0], INTP)
    same(R.group_reduce(v, g, "nanfirst"), [1.0, nan, nan])


def test_argmax_of_nan_is_the_first_nan_and_nanargmax_skips_it():
    v = np.array([1.0, nan, 3.0, nan])
    same(R.group_reduce(v, [0, 0, 0, 0], "argmax"), [1], INTP)
    same(R.group_reduce(v, [0, 0, 0, 0], "argmin"), [1], INTP)
    same(R.group_reduce(v, [0, 0, 0, 0], "nanargmax"), [2], INTP)
    same(R.group_reduce(v, [0, 0, 0, 0], "nanargmin"), [0], INTP)
    same(R.group_reduce(v[[1, 3]], [0, 0], "nanargmax"), [-1], INTP)


def test_ties_go_to_the_first_member():
    v = np.array([2.0, 5.0, 5.0, 1.0, 1.0])
    same(R.group_reduce(v, [0] * 5, "argmax"), [1], INTP)
    same(R.group_reduce(v, [0] * 5, "argmin"), [3], INTP)
    # a signed-zero tie is equal for argmax (the first) ...
    z = np.array([0.0, -0.0])
    same(R.group_reduce(z, [0, 0], "argmax"), [0], INTP)
    # ... and max is np.maximum.at's answer: the later of the two
    same(R.group_reduce(z, [0, 0], "max"), [-0.0])
    same(R.group_reduce(z[::-1], [0, 0], "max"), [0.0])
    same(R.group_reduce(z, [0, 0], "min"), [-0.0])


def test_signed_zeros_and_infinities_in_sums():
    same(R.group_reduce(np.array([-0.0]), [0], "sum"), [0.0])        # 0 + -0 = +0
    same(R.group_reduce(np.array([-0.0]), [0], "first"), [-0.0])
    same(R.group_reduce(np.array([-0.0]), [0], "prod"), [-0.0])      # 1 * -0 = -0
    same(R.group_reduce(np.array([inf, -inf]), [0, 0], "sum"), [nan])
    same(R.group_reduce(np.array([inf, 1.0]), [0, 0], "mean"), [inf])


@pytest.mark.parametrize("v, expected", [([-inf, -inf], -inf), ([-inf, 1.0], 1.0),
                                         ([inf, 1.0], inf), ([1.0, inf, -inf], inf),
                                         ([nan, 1.0], nan), ([inf, nan], nan)])
def test_logsumexp_of_an_infinite_or_nan_max(v, expected):
    same(R.group_reduce(np.array(v), [0] * len(v), "logsumexp"), [expected])


def test_a_float16_sum_rounds_per_member_unless_dtype_widens_it():
    ones = np.ones(10_000, np.float16)
    same(R.group_reduce(ones, np.zeros(10_000, int)), [2048.0], np.float16)
    same(R.group_reduce(ones, np.zeros(10_000, int), dtype=np.float32), [10_000.0], np.float32)
    # mean computes in float64 and rounds once
    same(R.group_reduce(ones, np.zeros(10_000, int), "mean"), [1.0], np.float16)


def test_sum_is_np_add_at_into_zeros_of_the_result_dtype():
    rng = np.random.default_rng(1)
    v = rng.standard_normal(200).astype(np.float32)
    g = rng.integers(0, 7, 200)
    expected = np.zeros(7, np.float32)
    np.add.at(expected, g, v)
    same(R.group_reduce(v, g), expected)
    expected = np.ones(7, np.float32)
    np.multiply.at(expected, g, v)
    same(R.group_reduce(v, g, "prod"), expected)


def test_integer_mean_is_true_division_not_floor():
    same(R.group_reduce(np.array([1, 2], np.int8), [0, 0], "mean"), [1.5])


def test_object_sum_uses_pythons_operators_from_the_first_member():
    v = np.array(["a", "b", "c"], dtype=object)
    assert R.group_reduce(v, [0, 1, 0]).tolist() == ["ac", "b"]
    assert R.group_reduce(v, [0, 1, 0], size=3).tolist() == ["ac", "b", 0]


# ---- dtypes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("values, func, dtype", [
    (np.int8, "sum", INTP), (np.uint16, "sum", np.uintp), (bool, "sum", INTP),
    (np.int64, "prod", np.int64), (np.uint64, "sum", np.uint64), (np.float16, "sum", np.float16),
    (np.float32, "sum", np.float32), (np.complex64, "sum", np.complex64),
    (np.int8, "max", np.int8), (np.float32, "first", np.float32), (bool, "last", bool),
    (np.int32, "mean", np.float64), (bool, "mean", np.float64), (np.float16, "mean", np.float16),
    (np.float32, "mean", np.float32), (np.complex64, "mean", np.complex64),
    (np.int16, "var", np.float64), (np.float32, "std", np.float32),
    (np.int8, "logsumexp", np.float64), (np.float16, "logsumexp", np.float16),
    (np.float32, "argmax", INTP), (np.uint8, "nanargmin", INTP), (np.float32, "count", INTP),
    (np.float32, "any", bool), (np.int8, "all", bool), (np.int32, "nansum", INTP),
    (">f8", "max", "<f8"), (">i4", "sum", INTP),
])
def test_the_result_dtype_of_each_func(values, func, dtype):
    got = R.group_reduce(np.ones(3, values), [0, 1, 1], func)
    assert got.dtype == np.dtype(dtype)


def test_dtype_sets_the_computing_and_result_dtype_or_casts_the_result():
    v = np.array([1, 2], np.int32)
    assert R.group_reduce(v, [0, 0], dtype=np.int8).dtype == np.int8
    same(R.group_reduce(v, [0, 0], "mean", dtype=np.float32), [1.5], np.float32)
    same(R.group_reduce(v, [0, 0], "max", dtype=np.float32), [2.0], np.float32)
    with pytest.raises(TypeError, match="dtype"):
        R.group_reduce(v, [0, 0], "argmax", dtype=np.int64)
    with pytest.raises(TypeError, match="dtype"):
        R.group_reduce(np.array([1.5]), [0], "sum", dtype=np.int64)
    with pytest.raises(TypeError, match="dtype"):
        R.group_reduce(v, [0, 0], "var", dtype=np.int64)


@pytest.mark.parametrize("values, func", [
    (np.complex128, "var"), (np.complex64, "max"), (np.complex128, "logsumexp"),
    ("U3", "sum"), ("S3", "max"), ("M8[s]", "sum"), ("m8[s]", "mean"), (object, "mean"),
    (object, "argmax"), (bool, "nansum"), (bool, "nancount"), (np.complex128, "nanmean"),
    ("V4", "max"),
])
def test_a_func_the_table_refuses_for_the_dtype_is_a_type_error(values, func):
    with pytest.raises(TypeError, match=f"func='{func}'.*dtype"):
        R.group_reduce(np.zeros(2, values), [0, 0], func)


def test_softmax_refuses_what_is_not_bool_integer_or_real_float():
    with pytest.raises(TypeError, match="softmax"):
        R.group_softmax(np.zeros(2, complex), [0, 0])


# ---- shapes, axis, out ----------------------------------------------------------------------

def test_every_feature_position_is_reduced_on_its_own_along_any_axis():
    x = np.arange(24.0).reshape(2, 3, 4)
    got = R.group_reduce(x, [1, 0, 1], "sum", axis=1)
    assert got.shape == (2, 2, 4) and got.flags.c_contiguous
    same(got, np.stack([x[:, 1], x[:, 0] + x[:, 2]], axis=1))
    same(R.group_reduce(x, [0, 0, 1, 1], "max", axis=-1), np.stack(
        [x[..., :2].max(-1), x[..., 2:].max(-1)], axis=-1))


def test_size_defaults_to_the_largest_id_plus_one_and_zero_without_ids():
    assert R.group_reduce(V, G).shape == (3,)
    assert R.group_reduce(V, G, size=5).shape == (5,)
    assert R.group_reduce(np.zeros((0, 2)), []).shape == (0, 2)


def test_out_is_overwritten_entirely_and_returned():
    out = np.full(4, 7.0)
    got = R.group_reduce(V, G, "sum", size=4, out=out)
    assert got is out
    same(out, [4.0, 0.0, 10.0, 0.0])


def test_a_bad_call_leaves_out_untouched():
    out = np.full(3, 7.0)
    with pytest.raises(IndexError):
        R.group_reduce(V, [0, 0, 5, 1, 1], size=3, out=out)
    same(out, [7.0, 7.0, 7.0])


@pytest.mark.parametrize("out, exc", [(np.zeros(3, np.float32), TypeError), (np.zeros(4), ValueError),
                                      (np.zeros(3)[::-1].copy().__array__()[:2], ValueError),
                                      ([0.0, 0.0, 0.0], TypeError)])
def test_a_bad_out_is_refused(out, exc):
    with pytest.raises(exc, match="out"):
        R.group_reduce(V, G, out=out)


def test_a_read_only_out_is_a_value_error():
    out = np.zeros(3)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        R.group_reduce(V, G, out=out)


# ---- groups and mode ------------------------------------------------------------------------

def test_mode_drop_leaves_out_the_slices_with_ids_outside_the_range():
    g = [0, -1, 1, 3, 1]
    same(R.group_reduce(V, g, mode="drop"), [3.0, 9.0, 0.0, 1.0])
    same(R.group_reduce(V, g, mode="drop", size=2), [3.0, 9.0])
    same(R.group_reduce(V, g, "argmax", mode="drop", size=2), [0, 4], INTP)


def test_an_id_outside_the_range_is_an_index_error_naming_its_position():
    with pytest.raises(IndexError, match=r"groups\[1\] = -1"):
        R.group_reduce(V, [0, -1, 1, 3, 1])
    with pytest.raises(IndexError, match=r"groups\[3\] = 3"):
        R.group_reduce(V, [0, 1, 1, 3, 1], size=3)
    with pytest.raises(IndexError, match=r"groups\[0\]"):
        R.group_softmax(V, [-1, 0, 0, 0, 0])


@pytest.mark.parametrize("groups, exc", [([0.0, 1, 1, 1, 1], TypeError), ([True] * 5, TypeError),
                                         ([0, 1], ValueError), ([[0] * 5], ValueError)])
def test_bad_groups_are_refused_naming_groups(groups, exc):
    with pytest.raises(exc, match="groups"):
        R.group_reduce(V, groups)


@pytest.mark.parametrize("kw, exc, word", [
    (dict(mode="wrap"), ValueError, "mode"), (dict(mode="clip"), ValueError, "mode"),
    (dict(func="median"), ValueError, "func"), (dict(func=len), TypeError, "func"),
    (dict(size=-1), ValueError, "size"), (dict(size=2.0), TypeError, "size"),
    (dict(axis=1), AxisError, "axis"), (dict(ddof=0.5), TypeError, "ddof"),
    (dict(fill_value=[1, 2]), ValueError, "fill_value"),
])
def test_bad_arguments_are_refused_naming_them(kw, exc, word):
    func = kw.pop("func", "sum")
    with pytest.raises(exc, match=word):
        R.group_reduce(V, G, func, **kw)


def test_unknown_func_lists_the_supported_names():
    with pytest.raises(ValueError) as info:
        R.group_reduce(V, G, "cumsum")
    assert all(name in str(info.value) for name in FUNCS)


def test_ids_of_any_integer_dtype_and_an_empty_list():
    for dt in (np.int8, np.uint8, ">i2", np.uint64):
        same(R.group_reduce(V, np.array(G, dt)), R.group_reduce(V, G))
    same(R.group_reduce(np.zeros(0), [], size=2), [0.0, 0.0])


# ---- segments -------------------------------------------------------------------------------

@pytest.mark.parametrize("func", FUNCS)
def test_segment_form_equals_group_form_on_sorted_ids(func):
    rng = np.random.default_rng(3)
    v = rng.standard_normal((20, 3))
    v[[2, 9]] = nan
    v[5] = -0.0
    indptr = np.array([0, 0, 4, 4, 11, 20])
    g = np.repeat(np.arange(5), np.diff(indptr))
    same(R.segment_reduce(v, indptr, func), R.group_reduce(v, g, func, size=5))


def test_segments_outside_the_offsets_take_no_part_and_argmax_is_a_position_in_values():
    v = np.array([9.0, 1.0, 3.0, 2.0, 9.0])
    same(R.segment_reduce(v, [1, 3, 4]), [4.0, 2.0])
    same(R.segment_reduce(v, [1, 3, 4], "argmax"), [2, 3], INTP)
    same(R.segment_reduce(v, [1, 3, 4], "argmax"),
         R.group_reduce(v, [-1, 0, 0, 1, -1], "argmax", mode="drop"))


@pytest.mark.parametrize("indptr, where", [([0, 3, 2], r"indptr\[2\] = 2"), ([-1, 2], r"indptr\[0\]"),
                                           ([0, 6], r"indptr\[1\] = 6"), ([], "at least one")])
def test_a_bad_indptr_is_a_value_error_naming_the_offset(indptr, where):
    with pytest.raises(ValueError, match=where):
        R.segment_reduce(V, indptr)


def test_indptr_follows_the_index_dtype_rules():
    with pytest.raises(TypeError, match="indptr"):
        R.segment_reduce(V, [0.0, 5.0])
    same(R.segment_reduce(V, np.array([0, 5], np.uint8)), [14.0])
    same(R.segment_reduce(V, [3]), np.zeros(0))


def test_segment_softmax_needs_offsets_that_cover_every_slice():
    with pytest.raises(ValueError, match="cover"):
        R.segment_softmax(V, [1, 5])
    with pytest.raises(ValueError, match="cover"):
        R.segment_softmax(V, [0, 4])
    same(R.segment_softmax(V, [0, 2, 5]), R.group_softmax(V, [0, 0, 1, 1, 1]))


# ---- softmax --------------------------------------------------------------------------------

def test_softmax_is_exp_of_x_minus_max_over_the_ordered_sum():
    v = np.array([1.0, 2.0, 3.0, 0.5])
    g = [0, 0, 1, 0]
    m = np.array([2.0, 2.0, 3.0, 2.0])
    e = np.exp(v - m)
    s0 = np.float64(0) + e[0] + e[1] + e[3]
    s = np.array([s0, s0, e[2], s0])
    same(R.group_softmax(v, g), e / s)
    same(R.group_softmax(v, g, log=True), (v - m) - np.log(s))


def test_softmax_of_a_group_whose_max_is_infinite_is_nan():
    got = R.group_softmax(np.array([inf, 1.0, -inf, -inf]), [0, 0, 1, 1])
    assert np.isnan(got).all()


def test_softmax_result_dtype_and_shape():
    got = R.group_softmax(np.arange(6, dtype=np.int8).reshape(2, 3), [0, 1, 0], axis=1)
    assert got.dtype == np.float64 and got.shape == (2, 3)
    assert R.group_softmax(np.ones(3, np.float16), [0, 0, 0]).dtype == np.float16
    with pytest.raises(TypeError, match="log"):
        R.group_softmax(V, G, log=1)


# ---- complex, strings, void, object and a float16 computing dtype ---------------------------

#: the contract's table: the funcs each kind of values takes (no nan-variant but for i, u, f)
TAKES = {
    "c": {"sum", "prod", "mean", "first", "last", "count", "any", "all"},
    "S": {"first", "last", "count"}, "U": {"first", "last", "count"},
    "V": {"first", "last", "count"},
    "O": {"sum", "prod", "max", "min", "first", "last", "count", "any", "all"},
}
KIND_VALUES = {
    "c": np.array([1 + 2j, 3 - 1j]), "S": np.array([b"a", b"bc"]), "U": np.array(["a", "bc"]),
    "V": np.array([b"ab", b"cd"]).view("V2"), "O": np.array([1, 2], object),
}


@pytest.mark.parametrize("kind", sorted(TAKES))
@pytest.mark.parametrize("func", FUNCS)
def test_each_kind_takes_exactly_the_funcs_of_the_table(kind, func):
    v = KIND_VALUES[kind]
    if func in TAKES[kind]:
        assert R.group_reduce(v, [0, 0], func).shape == (1,)
    else:
        with pytest.raises(TypeError, match=f"func='{func}'.*dtype {v.dtype}"):
            R.group_reduce(v, [0, 0], func)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sum_prod_and_any_all_are_the_ufuncs_at(dtype):
    v = np.array([1 + 2j, 0j, 3 - 1j, complex(nan, 0), 2j, -1j], dtype)
    g = np.array([0, 0, 2, 3, 0, 3])
    expected = np.zeros(4, dtype)
    np.add.at(expected, g, v)
    same(R.group_reduce(v, g), expected)
    expected = np.ones(4, dtype)
    np.multiply.at(expected, g, v)
    same(R.group_reduce(v, g, "prod"), expected)
    same(R.group_reduce(v, g, "any"), [True, False, True, True])
    same(R.group_reduce(v, g, "all"), [False, False, True, True])   # NaN is true
    same(R.group_reduce(v, g, "count"), [3, 0, 1, 2], INTP)
    same(R.group_reduce(v, g, "first"), [1 + 2j, nan, 3 - 1j, complex(nan, 0)], dtype)
    same(R.group_reduce(v, g, "last"), [2j, nan, 3 - 1j, -1j], dtype)


def test_complex_mean_divides_by_the_count_as_a_complex_number():
    # NumPy's complex division by (k + 0j) computes (re + im * 0) / k: an infinite imaginary
    # part makes the real part NaN
    v = np.array([1 + 2j, 2 + 4j, complex(1, inf)])
    got = R.group_reduce(v, [0, 0, 1], "mean")
    same(got[:1], [1.5 + 3j])
    assert np.isnan(got[1].real) and got[1].imag == inf
    same(R.group_reduce(np.array([1, 2], np.int8), [0, 0], "mean", dtype=np.complex64),
         [1.5 + 0j], np.complex64)
    same(R.group_reduce(np.array([1.0, 2.0]), [0, 0], dtype=np.complex128), [3 + 0j])


@pytest.mark.parametrize("values", [
    np.array([b"ab", b"", b"cde", b"f"]), np.array(["ab", "", "cde", "f"]),
    np.array(["ab", "", "cde", "f"], ">U3"), np.array([b"ab", b"xy", b"cd", b"ef"]).view("V2"),
    np.array([(1, 2.0), (3, 4.0), (5, 6.0), (7, 8.0)], [("a", ">i4"), ("b", "f8")]),
])
def test_strings_and_void_take_first_last_count_and_fill_with_zero_bytes(values):
    g = [0, 2, 0, 2]
    rd = values.dtype.newbyteorder("=")
    first = R.group_reduce(values, g, "first")
    last = R.group_reduce(values, g, "last")
    assert first.dtype == rd and last.dtype == rd
    native, zero = values.astype(rd), np.zeros(1, rd)
    assert first.tobytes() == np.concatenate([native[:1], zero, native[1:2]]).tobytes()
    assert last.tobytes() == np.concatenate([native[2:3], zero, native[3:]]).tobytes()
    same(R.group_reduce(values, g, "count"), [2, 0, 2], INTP)


def test_a_string_fill_value_and_dtype_cast_the_result():
    v = np.array(["ab", "c"])
    assert R.group_reduce(v, [0, 0], "last", size=2, fill_value="-").tolist() == ["c", "-"]
    assert R.group_reduce(np.array([b"ab"]), [0], "first", dtype="U2").tolist() == ["ab"]


def test_object_sums_are_pythons_operators_in_order_from_the_first_member():
    from fractions import Fraction
    v = np.array([Fraction(1, 3), 2, Fraction(1, 6), 10 ** 30], object)
    g = [0, 1, 0, 1]
    assert R.group_reduce(v, g).tolist() == [Fraction(1, 2), 10 ** 30 + 2]
    assert R.group_reduce(v, g, "prod").tolist() == [Fraction(1, 18), 2 * 10 ** 30]
    assert R.group_reduce(v, g, size=3)[2] == 0             # sum's fill
    assert math.isnan(R.group_reduce(v, g, "max", size=3)[2])
    one = R.group_reduce(np.array([[1]], object), [0])      # one member: that object
    assert type(one[0, 0]) is int


def test_object_max_and_min_are_np_maximum_on_object():
    # np.maximum keeps the running value where it is >= the member (<= for min), so of a tie
    # the first member stays, and a NaN member wins only over a running value
    v = np.array([1, 1.0, nan, 3], object)
    got = R.group_reduce(v, [0, 0, 1, 1], "max")
    assert type(got[0]) is int and got[1] == 3
    got = R.group_reduce(v[[2, 3, 3, 2]], [0, 0, 1, 1], "max")
    assert got[0] == 3 and math.isnan(got[1])
    assert type(R.group_reduce(v, [0, 0, 1, 1], "min")[0]) is int


def test_object_any_all_take_the_truth_of_each_member():
    v = np.array([0, "", [1], None], object)
    same(R.group_reduce(v, [0, 0, 1, 1], "any"), [False, True])
    same(R.group_reduce(v, [0, 1, 1, 1], "all"), [False, False])


def test_an_object_operator_that_raises_propagates_and_leaves_out_untouched():
    class Bad:
        def __add__(self, other):
            raise ArithmeticError("no add")
    out = np.array([7], object)
    with pytest.raises(ArithmeticError, match="no add"):
        R.group_reduce(np.array([Bad(), Bad()], object), [0, 0], out=out)
    assert out[0] == 7


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("values", [np.float64, np.float16, np.int16])
def test_a_float16_computing_dtype_rounds_every_operation_to_float16(values):
    v = np.array([1, 2, 3, 4, 1000, 7], values)
    g = np.array([0, 0, 0, 0, 0, 1])
    h = v.astype(np.float16)
    s = np.zeros(2, np.float16)
    np.add.at(s, g, h)
    mean = s / np.array([5, 1], np.float16)
    same(R.group_reduce(v, g, "mean", dtype=np.float16), mean, np.float16)
    d = h - mean[g]
    ss = np.zeros(2, np.float16)     # 1000 - mean overflows float16 when squared
    np.add.at(ss, g, d * d)
    var = ss / np.array([5, 1], np.float16)
    same(R.group_reduce(v, g, "var", dtype=np.float16), var, np.float16)
    same(R.group_reduce(v, g, "std", dtype=np.float16), np.sqrt(var), np.float16)
    m = np.array([h[:5].max(), h[5]])
    e = np.zeros(2, np.float16)
    np.add.at(e, g, np.exp(h - m[g]))
    same(R.group_reduce(v, g, "logsumexp", dtype=np.float16), m + np.log(e), np.float16)

"""docs/contract.md's error table, row by row, for the C-backed functions and the reference.

Every test checks three things: the exception class, that the message names the
argument at fault (and the values / dtypes / shapes involved), and that ``data``
and ``out`` hold exactly what they held before the call.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import scatterops
from scatterops import reference

from strategies import assert_identical, snapshot

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError

MODULES = [pytest.param(scatterops, id="c"), pytest.param(reference, id="reference")]


@pytest.fixture(params=MODULES)
def mod(request):
    return request.param


def refused(mod, func, args, kwargs, exc_type, *words):
    """Call mod.func(*args, **kwargs); it must raise exactly exc_type (an AxisError is
    not accepted where a plain ValueError / IndexError is expected), name every word,
    and leave every ndarray argument (data, out, ...) unchanged.  Returns the message."""
    arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)]
    before = [snapshot(a) for a in arrays]
    with pytest.raises(exc_type) as info:
        getattr(mod, func)(*args, **kwargs)
    if exc_type is not AxisError:
        assert not isinstance(info.value, AxisError), repr(info.value)
    msg = str(info.value)
    for word in words:
        assert str(word) in msg, f"{word!r} not in message {msg!r}"
    for a, b in zip(arrays, before):
        assert_identical(a, b, where="an argument after the error")
    return msg


def call_args(func, data, indices, updates, axis=0):
    return (data, indices, updates) if func == "scatter_nd" else (data, indices, updates, axis)


# A small valid call of each function, to break one argument of at a time:
# data (3, 4) float64; scatter_update along axis 1; scatter_nd with 1-tuples;
# scatter_elements along axis 1.
def valid(func):
    data = np.arange(12, dtype=np.float64).reshape(3, 4)
    if func == "scatter_update":
        return data, np.array([0, 2]), np.ones((3, 2)), 1
    if func == "scatter_nd":
        return data, np.array([[0], [2]]), np.ones((2, 4)), None
    return data, np.array([[0, 3], [1, 1], [2, 0]]), np.ones((3, 2)), 1


FUNCS = ["scatter_update", "scatter_nd", "scatter_elements"]
AXIS_FUNCS = ["scatter_update", "scatter_elements"]


def test_the_valid_calls_used_below_are_valid(mod):
    for func in FUNCS:
        data, idx, upd, axis = valid(func)
        res = getattr(mod, func)(*call_args(func, data, idx, upd, axis))
        assert res.shape == data.shape and res.dtype == data.dtype
        assert not np.array_equal(res, data)


# --------------------------------------------------------------------------------------
# axis out of range: numpy.exceptions.AxisError
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", AXIS_FUNCS)
@pytest.mark.parametrize("axis", [2, -3, 100, -100, np.int64(2), np.array(-3), np.array([2], np.uint8)])
def test_axis_out_of_range_is_an_axis_error(mod, func, axis):
    data, idx, upd, _ = valid(func)
    out = np.full_like(data, -7.0)
    value = int(np.asarray(axis).reshape(()))
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": out}, AxisError,
            "axis", value, "dimension 2")


@pytest.mark.parametrize("func", AXIS_FUNCS)
@pytest.mark.parametrize("axis", [1.0, True, "1", None, np.array([0, 1]), np.array(1.0), np.array([[1]])])
def test_axis_of_a_wrong_type_is_a_type_error(mod, func, axis):
    data, idx, upd, _ = valid(func)
    refused(mod, func, call_args(func, data, idx, upd, axis), {}, TypeError, "axis")


# --------------------------------------------------------------------------------------
# shape or rank mismatch, unknown reduction, 0-d data, bad out shape: ValueError
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("func,updates,required", [
    ("scatter_update", np.ones((3, 3)), "(3, 2)"),
    ("scatter_update", np.ones((2, 3)), "(3, 2)"),
    ("scatter_update", np.ones((3, 2, 1)), "(3, 2)"),
    ("scatter_nd", np.ones((2, 5)), "(2, 4)"),
    ("scatter_nd", np.ones((4, 2)), "(2, 4)"),
    ("scatter_nd", np.ones(3), "(2, 4)"),
    ("scatter_elements", np.ones((2, 3)), "(3, 2)"),
    ("scatter_elements", np.ones((3, 3)), "(3, 2)"),
    ("scatter_elements", np.ones((1, 3, 2)), "(3, 2)"),
])
def test_updates_of_a_shape_that_does_not_broadcast_is_a_value_error(mod, func, updates, required):
    data, idx, _, axis = valid(func)
    out = np.zeros_like(data)
    refused(mod, func, call_args(func, data, idx, updates, axis), {"out": out}, ValueError,
            "updates", str(updates.shape), required)


def test_scatter_elements_indices_of_another_rank_is_a_value_error(mod):
    data = np.zeros((3, 4))
    refused(mod, "scatter_elements", (data, np.array([0, 1]), np.ones(2), 1), {}, ValueError,
            "indices", "rank", "(3, 4)")
    refused(mod, "scatter_elements", (data, np.zeros((1, 1, 1), int), np.ones((1, 1, 1)), 0), {},
            ValueError, "indices", "rank")


@pytest.mark.parametrize("axis,ishape,dim", [(1, (4, 2), 0), (0, (2, 5), 1), (-1, (3, 2), 0)])
def test_scatter_elements_indices_larger_than_data_off_axis_is_a_value_error(mod, axis, ishape, dim):
    data = np.zeros((2, 4))
    idx = np.zeros(ishape, dtype=np.int64)
    refused(mod, "scatter_elements", (data, idx, np.ones(ishape), axis), {}, ValueError,
            "indices", f"indices.shape[{dim}]", str(data.shape[dim]))


def test_scatter_elements_indices_longer_than_data_along_axis_is_fine(mod):
    data = np.zeros((2, 3))
    idx = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 1]])   # 5 > 2 along axis 0
    upd = np.arange(15.0).reshape(5, 3)
    res = mod.scatter_elements(data, idx, upd, 0)
    assert_identical(res, np.array([[9.0, 13.0, 11.0], [12.0, 7.0, 14.0]]))


@pytest.mark.parametrize("ishape", [(1, 3), (2, 4), (5,)])
def test_scatter_nd_tuples_longer_than_data_rank_is_a_value_error(mod, ishape):
    data = np.zeros((2, 3))
    idx = np.zeros(ishape, dtype=np.int64)
    refused(mod, "scatter_nd", (data, idx, 1.0), {}, ValueError,
            "indices", f"indices.shape[-1] = {ishape[-1]}", "(2, 3)")


def test_scatter_nd_0d_indices_is_a_value_error(mod):
    refused(mod, "scatter_nd", (np.zeros(3), np.array(1), 1.0), {}, ValueError, "indices")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("data", [np.array(1.0), np.float64(2.0), 3, np.array(4, dtype=object)])
def test_0d_data_is_a_value_error(mod, func, data):
    refused(mod, func, call_args(func, data, np.array([0]), 1.0), {}, ValueError, "data", "0-d")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("reduction", ["average", "", "ADD", "Sum", "maximum", "none ", "product"])
def test_unknown_reduction_is_a_value_error(mod, func, reduction):
    data, idx, upd, axis = valid(func)
    out = np.zeros_like(data)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"reduction": reduction, "out": out},
            ValueError, "reduction", repr(reduction))


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("reduction", [None, 1, np.add, b"add"])
def test_reduction_that_is_not_a_str_is_a_type_error(mod, func, reduction):
    data, idx, upd, axis = valid(func)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"reduction": reduction},
            TypeError, "reduction")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("include_self", [1, 0, None, "yes", np.array([True])])
def test_include_self_that_is_not_a_bool_is_a_type_error(mod, func, include_self):
    data, idx, upd, axis = valid(func)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"include_self": include_self},
            TypeError, "include_self")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (12,), (3, 4, 1), (1, 3, 4)])
def test_out_of_another_shape_is_a_value_error(mod, func, shape):
    data, idx, upd, axis = valid(func)
    out = np.full(shape, -1.0)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": out}, ValueError,
            "out", str(shape), "(3, 4)")


@pytest.mark.parametrize("func", FUNCS)
def test_ragged_data_indices_or_updates_is_a_value_error(mod, func):
    data, idx, upd, axis = valid(func)
    refused(mod, func, call_args(func, [[1.0, 2.0], [3.0]], idx, upd, axis), {}, ValueError, "data")
    refused(mod, func, call_args(func, data, [[0, 1], [2]], upd, axis), {}, ValueError, "indices")
    refused(mod, func, call_args(func, data, idx, [[1.0], [2.0, 3.0]], axis), {}, ValueError, "updates")


# --------------------------------------------------------------------------------------
# non-integer indices, refused cast, reduction undefined for the dtype, out dtype: TypeError
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.bool_, object, np.complex128, "U2",
                                   "S2", "m8[s]", "M8[s]", [("a", "i8")], np.float16])
def test_non_integer_indices_is_a_type_error(mod, func, dtype):
    data, idx, upd, axis = valid(func)
    if np.dtype(dtype).kind in "mMV":        # same bits, another dtype
        bad = idx.astype(np.int64).view(np.dtype(dtype))
    else:
        bad = idx.astype(dtype)
    out = np.zeros_like(data)
    refused(mod, func, call_args(func, data, bad, upd, axis), {"out": out}, TypeError,
            "indices", str(np.dtype(dtype)))


@pytest.mark.parametrize("func", FUNCS)
def test_indices_given_as_float_or_bool_lists_is_a_type_error(mod, func):
    data, idx, upd, axis = valid(func)
    refused(mod, func, call_args(func, data, idx.astype(float).tolist(), upd, axis), {}, TypeError,
            "indices", "float64")
    refused(mod, func, call_args(func, data, (idx > 0).tolist(), upd, axis), {}, TypeError,
            "indices", "bool")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("data_dtype,updates_dtype", [
    (np.int64, np.float64), (np.int8, np.float16), (np.uint8, np.int64), (np.int32, np.complex64),
    (np.float32, np.complex128), (np.bool_, np.int8), ("S4", "U3"), ("U3", object),
    ("m8[s]", "M8[s]"), (np.int64, "m8[s]"), (np.float64, "U3"), (np.int64, object),
])
def test_refused_cast_is_a_type_error_naming_both_dtypes(mod, func, data_dtype, updates_dtype):
    base, idx, upd, axis = valid(func)
    data = np.zeros(base.shape, dtype=data_dtype)
    updates = np.zeros(upd.shape, dtype=updates_dtype)
    out = np.zeros_like(data)
    refused(mod, func, call_args(func, data, idx, updates, axis), {"out": out}, TypeError,
            "updates", str(np.dtype(updates_dtype)), str(np.dtype(data_dtype)))


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("reduction,dtype", [
    ("sub", np.bool_), ("mean", np.bool_), ("add", "U3"), ("sum", "S4"), ("max", "U3"),
    ("mul", "m8[s]"), ("prod", "m8[s]"), ("add", "M8[s]"), ("sub", "M8[s]"), ("mean", "M8[s]"),
    ("mul", "M8[s]"), ("min", [("a", "i4")]), ("add", [("a", "i4"), ("b", "f8")]), ("mean", "S4"),
    ("mul", ">m8[s]"), ("sub", "S4"),
])
def test_reduction_undefined_for_the_dtype_is_a_type_error(mod, func, reduction, dtype):
    base, idx, upd, axis = valid(func)
    data = np.zeros(base.shape, dtype=dtype)
    updates = np.zeros(upd.shape, dtype=dtype)
    out = np.zeros_like(data)
    msg = refused(mod, func, call_args(func, data, idx, updates, axis),
                  {"reduction": reduction, "out": out}, TypeError, "reduction", str(np.dtype(dtype)))
    assert reduction in msg or {"sum": "add", "prod": "mul"}.get(reduction, "?") in msg, msg


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("out_dtype", [np.float32, ">f8", np.int64, object, np.longdouble])
def test_out_of_another_dtype_is_a_type_error(mod, func, out_dtype):
    data, idx, upd, axis = valid(func)
    out = np.full(data.shape, 5, dtype=out_dtype)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": out}, TypeError,
            "out", str(np.dtype(out_dtype)), "float64")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("out", [[[0.0] * 4] * 3, (1, 2), np.float64(1.0), "out"])
def test_out_that_is_not_an_ndarray_is_a_type_error(mod, func, out):
    data, idx, upd, axis = valid(func)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": out}, TypeError, "out")


@pytest.mark.parametrize("func", FUNCS)
def test_read_only_out_is_a_value_error(mod, func):
    data, idx, upd, axis = valid(func)
    out = np.full(data.shape, 9.0)
    out.flags.writeable = False
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": out}, ValueError, "out", "read-only")
    # read-only data itself as out (the in-place form on a read-only array)
    data.flags.writeable = False
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": data}, ValueError, "out", "read-only")
    # a broadcast view is read-only too
    view = np.broadcast_to(np.float64(1.0), data.shape)
    refused(mod, func, call_args(func, data, idx, upd, axis), {"out": view}, ValueError, "out")


# --------------------------------------------------------------------------------------
# index out of range: IndexError naming value, axis, size and position
# --------------------------------------------------------------------------------------

def index_error(mod, func, data, idx, upd, axis, pos, value, ax, size, out="separate"):
    out_arr = data if out == "inplace" else np.full(data.shape, -3, dtype=data.dtype)
    msg = refused(mod, func, call_args(func, data, idx, upd, axis), {"out": out_arr}, IndexError,
                  "indices", f"axis {ax}", f"size {size}")
    if pos:                                     # (0-d indices have one position only)
        where = r"\[" + r",\s*".join(str(p) for p in pos) + r"\]"
        assert re.search(where, msg), f"position {tuple(int(p) for p in pos)} not in {msg!r}"
    assert re.search(rf"(?<![\d.]){re.escape(str(value))}(?!\d)", msg), f"value {value} not in {msg!r}"
    return msg


POSITIONS = ["first", "middle", "last"]


def valid_as(idx, dtype, size):
    """The valid indices idx in dtype (an unsigned dtype gets the positive twins)."""
    dtype = np.dtype(dtype)
    return (idx if dtype.kind == "i" else idx % size).astype(dtype)


def _flat(where, n):
    return {"first": 0, "middle": n // 2, "last": n - 1}[where]


@pytest.mark.parametrize("out", ["separate", "inplace"])
@pytest.mark.parametrize("where", POSITIONS)
@pytest.mark.parametrize("value,dtype", [(5, np.int64), (-6, np.int64), (127, np.int8), (-128, np.int8),
                                         (2 ** 31 - 1, ">i4"), (5, np.uint16), (2 ** 63, np.uint64),
                                         (2 ** 64 - 1, np.uint64), (-2 ** 63, np.int64),
                                         (2 ** 63 - 1, ">i8"), (65535, ">u2")])
def test_scatter_update_index_out_of_range(mod, where, value, dtype, out):
    data = np.arange(15, dtype=np.float32).reshape(3, 5)        # axis 1 has size 5
    idx = valid_as(np.array([[0, 4, -5], [2, -1, 3]]), dtype, 5)
    flat = _flat(where, idx.size)
    idx.reshape(-1)[flat] = value
    pos = np.unravel_index(flat, idx.shape)
    index_error(mod, "scatter_update", data, idx, np.ones((3, 2, 3), np.float32), 1, pos, value, 1, 5, out)


@pytest.mark.parametrize("out", ["separate", "inplace"])
@pytest.mark.parametrize("where", POSITIONS)
@pytest.mark.parametrize("value,dtype", [(4, np.int64), (-5, np.int32), (2 ** 63, np.uint64),
                                         (-2 ** 63, np.int64), (255, np.uint8), (-100, ">i2")])
def test_scatter_elements_index_out_of_range(mod, where, value, dtype, out):
    data = np.zeros((3, 4), dtype=np.int16)                     # axis 1 has size 4
    idx = np.array([[0, 3, -4], [1, 2, -1], [3, 3, 0]], dtype=np.int64)
    flat = _flat(where, idx.size)
    idx = valid_as(idx, dtype, 4)
    idx.reshape(-1)[flat] = value
    pos = np.unravel_index(flat, idx.shape)
    index_error(mod, "scatter_elements", data, idx, np.ones((3, 3), np.int16), 1, pos, value, 1, 4, out)


@pytest.mark.parametrize("out", ["separate", "inplace"])
@pytest.mark.parametrize("where", POSITIONS)
@pytest.mark.parametrize("column,value,dtype", [(0, 3, np.int64), (1, 5, np.int64), (0, -4, np.int8),
                                                (1, -6, ">i8"), (1, 2 ** 64 - 1, np.uint64),
                                                (0, -2 ** 63, np.int64), (1, 2 ** 63, np.uint64)])
def test_scatter_nd_index_out_of_range(mod, where, column, value, dtype, out):
    data = np.zeros((3, 5, 2), dtype=np.complex64)              # tuples index axes 0 (3) and 1 (5)
    idx = np.array([[[0, 4], [2, -5]], [[-3, 1], [1, 1]], [[2, 0], [0, 3]]], dtype=np.int64)
    n_tuples = idx.size // 2
    t = _flat(where, n_tuples)
    idx = valid_as(idx, dtype, np.array([3, 5]))
    idx.reshape(-1, 2)[t, column] = value
    pos = np.unravel_index(t * 2 + column, idx.shape)
    size = data.shape[column]
    index_error(mod, "scatter_nd", data, idx, np.ones((3, 2, 2), np.complex64), None, pos, value,
                column, size, out)


@pytest.mark.parametrize("func", FUNCS)
def test_index_error_for_0d_and_1d_indices(mod, func):
    data = np.arange(4.0)
    if func == "scatter_update":
        index_error(mod, func, data, np.array(4), 1.0, 0, (), 4, 0, 4)
        index_error(mod, func, data, np.array(2 ** 63, np.uint64), 1.0, 0, (), 2 ** 63, 0, 4)
    elif func == "scatter_nd":
        index_error(mod, func, data, np.array([-5]), 1.0, None, (0,), -5, 0, 4)
    else:
        index_error(mod, func, data, np.array([1, 2, 9]), 1.0, 0, (2,), 9, 0, 4)


@pytest.mark.parametrize("func", FUNCS)
def test_several_bad_indices_report_one_of_them_with_its_value(mod, func):
    data = np.arange(10.0)
    idx = np.array([1, 12, 3, -30, 2, 10])
    bad_at = {1: 12, 3: -30, 5: 10}
    if func == "scatter_nd":
        idx = idx[:, None]
    msg = refused(mod, func, call_args(func, data, idx, 0.0, 0), {"out": data}, IndexError,
                  "indices", "size 10")
    found = [(p, v) for p, v in bad_at.items()
             if re.search(rf"\[{p}(,\s*0)?\]", msg) and re.search(rf"(?<!\d){v}(?!\d)", msg)]
    assert found, f"{msg!r} names none of the bad positions {bad_at} with its value"


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("reduction", ["none", "add", "mean", "max"])
def test_index_error_after_many_valid_indices_writes_nothing(mod, func, reduction):
    # the bad index is the very last of many valid ones: nothing may be written first
    rng = np.random.default_rng(0)
    data = rng.standard_normal(50)
    idx = rng.integers(-50, 50, 2000)
    idx[-1] = 50
    if func == "scatter_nd":
        idx = idx[:, None]
    refused(mod, func, call_args(func, data, idx, rng.standard_normal(2000), 0),
            {"out": data, "reduction": reduction}, IndexError, "indices", "50")


def test_index_into_an_empty_axis_is_an_index_error(mod):
    data = np.zeros((3, 0))
    refused(mod, "scatter_update", (data, np.array([0]), np.zeros((3, 1)), 1), {}, IndexError,
            "indices", "size 0")
    refused(mod, "scatter_elements", (data, np.zeros((1, 1), int), np.zeros((1, 1)), 1), {},
            IndexError, "indices", "size 0")


# --------------------------------------------------------------------------------------
# output too large to allocate: MemoryError
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", FUNCS)
def test_output_too_large_to_allocate_is_a_memory_error(mod, func):
    # data is a broadcast view of one float: 2**50 elements, 8 PiB -- beyond any address
    # space, so the allocation of the result fails at once instead of thrashing
    data = np.broadcast_to(np.float64(1.5), (2 ** 25, 2 ** 25))
    idx = {"scatter_update": np.array([0]), "scatter_nd": np.array([[0, 0]]),
           "scatter_elements": np.array([[0]])}[func]
    with pytest.raises(MemoryError):
        getattr(mod, func)(*call_args(func, data, idx, 2.0, 0))
    assert data[0, 0] == 1.5 and data[-1, -1] == 1.5


# --------------------------------------------------------------------------------------
# set_num_threads
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,exc_type", [(0, ValueError), (-1, ValueError), (True, TypeError),
                                        (1.5, TypeError), ("2", TypeError), (None, TypeError)])
def test_set_num_threads_refuses_what_is_not_a_positive_int(n, exc_type):
    before = scatterops.get_num_threads()
    with pytest.raises(exc_type) as info:
        scatterops.set_num_threads(n)
    assert "set_num_threads" in str(info.value) and "n " in str(info.value)
    assert scatterops.get_num_threads() == before


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "c16", ">f8", "g"])
@pytest.mark.parametrize("mode", ["raise", "warn"])
def test_floating_point_errors_are_not_raised_whatever_errstate_says(dtype, mode):
    """docs/contract.md, Errors: no FloatingPointError, no RuntimeWarning, on any dtype; an
    overflow gives inf and inf - inf NaN, the values NumPy computes."""
    import warnings
    dt = np.dtype(dtype)
    big = np.array([np.finfo(dt).max] * 2, dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all=mode):
            over = scatterops.scatter_elements(big, [0, 0], big, reduction="add")
            invalid = scatterops.scatter_nd(np.array([np.inf], dt), [[0]], np.array([-np.inf], dt),
                                            reduction="add")
    assert np.isinf(over[0]) and np.isnan(invalid[0])

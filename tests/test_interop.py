"""Interoperability: what scatterops accepts besides ndarrays, and what it gives back.

docs/contract.md: ``data``, ``indices`` and ``updates`` may be any array-like (``numpy.asarray`` is
applied) and the result is always an ``numpy.ndarray``.  These tests pass the other things
NumPy users hand to array functions -- Python scalars, nested lists and tuples, objects with
``__array__`` / ``__array_interface__``, buffers, PyTorch tensors, DLPack producers -- and hold
the result to the same call made with ndarrays.  All-list calls of every reduction are the
property ``test_lists_give_same_result_as_arrays`` in test_properties.py; they are not repeated.

PyTorch is optional: its tests skip without it.  Where a PyTorch operator and scatterops
define the same result (integer dtypes, so no summation order is involved), the two are held
to each other.
"""
from __future__ import annotations

import array

import numpy as np
import pytest

import scatterops
from scatterops import scatter_elements, scatter_nd, scatter_update

from extras import need
from strategies import assert_identical, snapshot

# --------------------------------------------------------------------------------------------
# One small call of each function (from the seed documents), as ndarrays.  ``args(f)`` builds
# the positional arguments with each of data / indices / updates passed through ``f``.
# --------------------------------------------------------------------------------------------

CALLS = {
    # OpenVINO ScatterUpdate-3, example 2
    "scatter_update": (
        np.array([[-1.0, 1.0, -1.0, 3.0, 4.0],
                  [-1.0, 6.0, -1.0, 8.0, 9.0],
                  [-1.0, 11.0, 1.0, 13.0, 14.0]], np.float32),
        np.array([0, 2]),
        np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 2.0]], np.float32),
        {"axis": 1}),
    # OpenVINO ScatterNDUpdate-3, example 1
    "scatter_nd": (
        np.array([1, 2, 3, 4, 5, 6, 7, 8]),
        np.array([[4], [3], [1], [7]]),
        np.array([9, 10, 11, 12]),
        {}),
    # ONNX ScatterElements, example 1
    "scatter_elements": (
        np.zeros((3, 3), np.float32),
        np.array([[1, 0, 2], [0, 2, 1]]),
        np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], np.float32),
        {"axis": 0}),
}
FUNCS = tuple(CALLS)


def run(func, data, indices, updates, **kwargs):
    return getattr(scatterops, func)(data, indices, updates, **{**CALLS[func][3], **kwargs})


def expected(func, **kwargs):
    data, indices, updates, _ = CALLS[func]
    return run(func, data, indices, updates, **kwargs)


class WithArray:
    """Only ``__array__`` (the NumPy >= 2 signature; NumPy 1.x passes ``dtype`` alone)."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


class WithArrayInterface:
    """Only ``__array_interface__``, borrowed from an ndarray kept alive by the object."""

    def __init__(self, a):
        self._a = np.ascontiguousarray(a)
        self.__array_interface__ = self._a.__array_interface__


class DLPackOnly:
    """A DLPack producer and nothing else (no ``__array__``, no buffer, not a sequence)."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


# --------------------------------------------------------------------------------------------
# Python scalars, lists and tuples
# --------------------------------------------------------------------------------------------

# (data dtype, Python update): each update's default NumPy dtype casts to the data's dtype
# under "same_kind", so docs/contract.md promises they work
SCALAR_UPDATES = [
    (np.float64, 2.5), (np.float32, 0.1), (np.float16, 1e-3), (np.float64, 3), (np.float32, True),
    (np.int64, -3), (np.int32, 7), (np.int8, -1), (np.complex128, 1 - 2j), (np.complex64, 0.5),
    (np.bool_, True),
]


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype,value", SCALAR_UPDATES)
@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_python_scalar_update_equals_the_same_value_as_an_array(func, dtype, value, reduction):
    data, indices, _, _ = CALLS[func]
    data = data.astype(dtype)
    want = run(func, data, indices, np.asarray(value).astype(dtype), reduction=reduction)
    got = run(func, data, indices, value, reduction=reduction)
    assert_identical(got, want, where=f"updates={value!r} into {np.dtype(dtype)}")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_python_int_update_into_unsigned_data(dtype):
    data = np.zeros(4, dtype)
    result = scatter_update(data, [1, 3], 1)
    want = data.copy()
    want[[1, 3]] = 1
    assert_identical(result, want)


@pytest.mark.parametrize("dtype,value", [(np.uint8, 256), (np.uint8, -1), (np.int8, 300),
                                         (np.int64, 2**63), (np.uint64, -1)])
def test_python_int_update_out_of_range_is_a_refused_cast(dtype, value):
    # a Python int takes data's dtype only where it fits (NumPy 2 raises OverflowError
    # there; docs/contract.md's class for a refused cast is TypeError), on every NumPy version
    data = np.zeros(4, dtype)
    with pytest.raises(TypeError, match="updates"):
        scatter_update(data, [1, 3], value)
    assert not data.any()


@pytest.mark.parametrize("index", [2, -1, np.int8(2), np.uint64(2), np.array(2)])
def test_scalar_index_of_scatter_update_is_a_0d_index(index):
    # docs/contract.md: scatter_update's indices may be 0-d; updates then has data's shape minus the axis
    data = np.arange(12.0).reshape(3, 4)
    result = scatter_update(data, index, [9.0, 8.0, 7.0], axis=1)
    want = data.copy()
    want[:, int(index)] = [9.0, 8.0, 7.0]
    assert_identical(result, want)


@pytest.mark.parametrize("func", FUNCS)
def test_nested_tuples_and_mixed_lists_give_same_result_as_arrays(func):
    data, indices, updates, _ = CALLS[func]

    def tuples(a):
        return tuple(tuples(x) for x in a) if isinstance(a, list) else a

    def mixed(a):   # outer list of tuples of Python scalars
        return [tuple(x) if isinstance(x, list) else x for x in a.tolist()]

    # Python floats make float64 arrays: compare with the same values as default-dtype arrays
    want = run(func, *(np.asarray(a.tolist()) for a in (data, indices, updates)))
    for convert in (lambda a: tuples(a.tolist()), mixed):
        idx = convert(indices)
        if func == "scatter_nd" and isinstance(idx, tuple):
            # a tuple of sequences is np.add.at's (rows, cols) spelling: refused, not misread
            # (tests/test_surface.py); the same tuples in a list are index tuples
            with pytest.raises(TypeError, match=r"np\.stack"):
                run(func, convert(data), idx, convert(updates))
            idx = list(idx)
        got = run(func, convert(data), idx, convert(updates))
        assert_identical(got, want)


@pytest.mark.parametrize("func", FUNCS)
def test_list_data_gives_a_new_array_of_numpy_default_dtype(func):
    data, indices, updates, _ = CALLS[func]
    as_list = data.tolist()
    result = run(func, as_list, indices, updates)
    assert type(result) is np.ndarray and result.flags.c_contiguous
    assert_identical(result, run(func, np.asarray(as_list), indices, updates))
    assert result.dtype == np.asarray(as_list).dtype         # float64 / int64, not data's float32


# --------------------------------------------------------------------------------------------
# __array__, __array_interface__, the buffer protocol
# --------------------------------------------------------------------------------------------

WRAPPERS = {"__array__": WithArray, "__array_interface__": WithArrayInterface}


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("which", ["data", "indices", "updates", "all"])
def test_array_protocol_objects_give_same_result_as_arrays(func, wrapper, which):
    data, indices, updates, _ = CALLS[func]
    before = snapshot(data)
    w = WRAPPERS[wrapper]
    args = {"data": data, "indices": indices, "updates": updates}
    for name in args:
        if which in (name, "all"):
            args[name] = w(args[name])
    for reduction in ("none", "add", "min"):
        got = run(func, *args.values(), reduction=reduction)
        assert_identical(got, expected(func, reduction=reduction), where=f"reduction={reduction}")
    # the array behind the object is read, never written
    assert_identical(data, before, where="data behind the wrapper")


def test_array_protocol_object_handing_back_a_strided_view():
    # __array__ hands back a transposed view; the result equals the one for a copy of it
    base = np.arange(20.0).reshape(4, 5)
    view = base.T
    result = scatter_update(WithArray(view), [3, 0], [[1.0, 2.0]] * 5, axis=1)
    want = np.ascontiguousarray(view)
    want[:, [3, 0]] = [[1.0, 2.0]] * 5
    assert_identical(result, want)
    assert_identical(base, np.arange(20.0).reshape(4, 5))


def test_buffer_protocol_data_gives_a_new_array_and_leaves_the_buffer_alone():
    buf = array.array("d", [1.0, 2.0, 3.0, 4.0])
    result = scatter_nd(buf, [[0], [3], [0]], [10.0, 40.0, 5.0], reduction="add")
    assert_identical(result, np.array([16.0, 2.0, 3.0, 44.0]))
    assert buf.tolist() == [1.0, 2.0, 3.0, 4.0]
    # memoryview of int32 indices
    idx = memoryview(array.array("i", [2, 0]))
    assert_identical(scatter_update(np.zeros(3), idx, [1.0, 2.0]), np.array([2.0, 0.0, 1.0]))


def test_in_place_on_an_ndarray_that_views_a_buffer_writes_into_the_buffer():
    buf = bytearray(4)
    view = np.frombuffer(buf, dtype=np.uint8)
    out = scatter_update(view, [1, 3], np.array([7, 9], np.uint8), out=view)
    assert out is view
    assert bytes(buf) == b"\x00\x07\x00\x09"


@pytest.mark.parametrize("func", FUNCS)
def test_an_array_like_out_is_a_type_error_and_writes_nothing(func):
    data, indices, updates, _ = CALLS[func]
    target = np.full(data.shape, 5, data.dtype)
    with pytest.raises(TypeError, match="out"):
        run(func, data, indices, updates, out=WithArray(target))
    assert_identical(target, np.full(data.shape, 5, data.dtype))


# --------------------------------------------------------------------------------------------
# DLPack
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", FUNCS)
def test_dlpack_producer_goes_in_through_np_from_dlpack(func):
    data, indices, updates, _ = CALLS[func]
    got = run(func, np.from_dlpack(DLPackOnly(data)), np.from_dlpack(DLPackOnly(indices)),
              np.from_dlpack(DLPackOnly(updates)))
    assert_identical(got, expected(func))


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("which", ["data", "indices", "updates"])
def test_an_object_with_only_dlpack_is_not_an_array_like_and_is_refused(func, which):
    # docs/contract.md: inputs go through numpy.asarray, which does not read __dlpack__: such an object
    # becomes a 0-d object array.  That is refused (0-d data, object indices, object updates
    # into a numeric dtype) before anything is written -- never taken as a value.
    data, indices, updates, _ = CALLS[func]
    args = {"data": data, "indices": indices, "updates": updates}
    args[which] = DLPackOnly(args[which])
    before = snapshot(data)
    with pytest.raises(ValueError if which == "data" else TypeError, match=which):
        run(func, *args.values())
    assert_identical(data, before)


# --------------------------------------------------------------------------------------------
# PyTorch tensors (skip without torch)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return need("torch")


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("via", ["tensor", "from_dlpack"])
def test_torch_tensors_in_give_an_ndarray_out(torch, func, via):
    data, indices, updates, _ = CALLS[func]
    t_data, t_idx, t_upd = (torch.from_numpy(a.copy()) for a in (data, indices, updates))
    before = t_data.clone()
    conv = (lambda t: t) if via == "tensor" else np.from_dlpack
    for reduction in ("none", "add", "max"):
        got = run(func, conv(t_data), conv(t_idx), conv(t_upd), reduction=reduction)
        assert type(got) is np.ndarray
        assert_identical(got, expected(func, reduction=reduction), where=f"reduction={reduction}")
    assert torch.equal(t_data, before)


def test_torch_int32_indices_and_a_transposed_tensor(torch):
    data = torch.arange(12, dtype=torch.int64).reshape(3, 4).t()        # (4, 3), not contiguous
    assert not data.is_contiguous()
    idx = torch.tensor([[3], [0], [3]], dtype=torch.int32)
    got = scatter_nd(data, idx, torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))
    want = data.numpy().copy()
    want[[3, 0]] = [[7, 8, 9], [4, 5, 6]]                                 # the last [3] wins
    assert_identical(got, want)


def test_in_place_into_a_tensor_memory_through_its_numpy_view(torch):
    t = torch.zeros(2, 5)
    view = t.numpy()                                      # shares the tensor's memory
    out = scatter_update(view, torch.tensor([4, 0, 4]), torch.ones(2, 3), axis=1,
                         reduction="add", out=view)
    assert out is view
    assert torch.equal(t, torch.tensor([[1.0, 0, 0, 0, 2], [1, 0, 0, 0, 2]]))


def test_a_tensor_as_out_is_a_type_error(torch):
    data, indices, updates, _ = CALLS["scatter_nd"]
    t = torch.zeros(8, dtype=torch.int64)
    with pytest.raises(TypeError, match="out"):
        scatter_nd(data, indices, updates, out=t)
    assert not t.any()


# scatterops against the PyTorch operators it covers (docs/contract.md's table), on integers so that
# the result is exact whatever order PyTorch sums in
TORCH_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin", "mean": "mean"}


@pytest.mark.parametrize("reduction", list(TORCH_REDUCE))
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_elements_equals_torch_scatter_reduce(torch, reduction, include_self):
    rng = np.random.default_rng(5)
    data = rng.integers(-9, 10, size=(4, 6))
    index = rng.integers(0, 6, size=(3, 10))            # many duplicates along axis 1
    src = rng.integers(-9, 10, size=(3, 10))
    got = scatter_elements(data, index, src, axis=1, reduction=reduction,
                           include_self=include_self)
    want = torch.from_numpy(data).scatter_reduce(
        1, torch.from_numpy(index), torch.from_numpy(src), TORCH_REDUCE[reduction],
        include_self=include_self).numpy()
    assert_identical(got, want)


def test_scatter_elements_none_equals_torch_scatter_without_duplicates(torch):
    data = np.arange(12).reshape(3, 4)
    index = np.array([[3, 1, 0], [2, 0, 1]])           # no duplicate within a row
    src = -np.arange(6).reshape(2, 3)
    want = torch.from_numpy(data).scatter(1, torch.from_numpy(index),
                                          torch.from_numpy(src)).numpy()
    assert_identical(scatter_elements(data, index, src, axis=1), want)


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min", "mean"])
def test_scatter_update_equals_torch_index_copy_add_reduce(torch, reduction):
    data = np.arange(15).reshape(5, 3) - 7
    index = np.array([4, 0, 4, 2])
    src = np.arange(12).reshape(4, 3) * 3 - 10
    t, i, s = torch.from_numpy(data), torch.from_numpy(index), torch.from_numpy(src)
    if reduction == "none":
        i, s = i[1:], s[1:]                              # index_copy_ wants distinct indices
        want = t.index_copy(0, i, s)
        got = scatter_update(data, index[1:], src[1:])
    else:
        want = (t.index_add(0, i, s) if reduction == "add" else
                t.index_reduce(0, i, s, {"mul": "prod", "max": "amax", "min": "amin",
                                         "mean": "mean"}[reduction]))
        got = scatter_update(data, index, src, reduction=reduction)
    assert_identical(got, want.numpy())


def test_scatter_nd_equals_torch_index_put_accumulate(torch):
    data = np.zeros((3, 4), np.int64)
    idx = np.array([[0, 1], [2, 3], [0, 1], [1, 0]])
    vals = np.array([5, 6, 7, 8])
    want = torch.from_numpy(data).index_put(
        (torch.from_numpy(idx[:, 0]), torch.from_numpy(idx[:, 1])), torch.from_numpy(vals),
        accumulate=True).numpy()
    assert_identical(scatter_nd(data, idx, vals, reduction="add"), want)

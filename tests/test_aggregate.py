"""scatterops.aggregate: numpy_groupies' signature and names over group_reduce.  Each alias is
the func it names, axis=None takes a 1-D or scalar a, a 2-D group_idx groups by
np.ravel_multi_index, and names outside the table are a ValueError that lists the supported
ones.  (Against numpy_groupies itself: tests/test_groups_peers.py.)"""
import builtins

import numpy as np
import pytest

import scatterops
from scatterops import aggregate, group_reduce
from scatterops._aggregate import _NAMES

V = np.array([3.0, 1.0, np.nan, 4.0, 1.0, 5.0])
G = np.array([0, 0, 2, 2, 3, 3])


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("name", sorted(_NAMES))
def test_every_name_and_alias_is_its_group_reduce_func(name):
    same(aggregate(G, V, name), group_reduce(V, G, _NAMES[name]))


@pytest.mark.parametrize("fn, func", [(builtins.sum, "sum"), (builtins.max, "max"), (builtins.len, "count"),
                                      (builtins.any, "any"), (np.add, "sum"), (np.maximum, "max"),
                                      (np.nanmean, "nanmean"), (np.argmin, "argmin")])
def test_python_and_numpy_functions_name_their_func(fn, func):
    same(aggregate(G, V, fn), group_reduce(V, G, func))


@pytest.mark.parametrize("name", ["median", "nanmedian", "cumsum", "sort", "array", "nunique",
                                  "allnan", "quantile", "nanany"])
def test_names_outside_the_table_are_a_value_error_listing_the_supported(name):
    with pytest.raises(ValueError) as info:
        aggregate(G, V, name)
    assert name in str(info.value) and "plus" in str(info.value) and "nanlen" in str(info.value)


def test_a_callable_outside_the_table_is_a_value_error_and_a_non_callable_a_type_error():
    with pytest.raises(ValueError, match="supported"):
        aggregate(G, V, np.median)
    with pytest.raises(ValueError, match="supported"):
        aggregate(G, V, lambda x: x.sum())
    with pytest.raises(TypeError, match="func"):
        aggregate(G, V, 3)


def test_size_fill_value_dtype_and_ddof_are_group_reduces():
    same(aggregate(G, V, "sum", size=6, fill_value=-1.0),
         group_reduce(V, G, "sum", size=6, fill_value=-1.0))
    same(aggregate(G, V, "var", ddof=1), group_reduce(V, G, "var", ddof=1))
    same(aggregate(G, V, "sum", dtype=np.float32), group_reduce(V, G, dtype=np.float32))
    with pytest.raises(TypeError, match="unexpected"):
        aggregate(G, V, "var", q=0.5)


def test_axis_none_takes_a_1d_or_scalar_a():
    same(aggregate(G, 2.0, "sum"), group_reduce(np.full(6, 2.0), G))
    with pytest.raises(ValueError, match="axis"):
        aggregate(G, np.ones((6, 2)), "sum")


def test_an_axis_groups_along_that_axis():
    a = np.arange(12.0).reshape(2, 6)
    same(aggregate(G, a, "max", axis=1), group_reduce(a, G, "max", axis=1))


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_2d_group_idx_groups_by_the_raveled_multi_index(order):
    idx = np.array([[0, 1, 0, 1, 1, 0], [2, 0, 2, 1, 0, 0]])
    got = aggregate(idx, V, "nansum", size=(2, 3), order=order)
    flat = np.ravel_multi_index(tuple(idx), (2, 3), order=order)
    want = group_reduce(V, flat, "nansum", size=6).reshape((2, 3), order=order)
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got, want)
    assert aggregate(idx, V, "len").shape == (2, 3)
    with pytest.raises(ValueError, match="tuple"):
        aggregate(idx, V, "sum", size=6)
    with pytest.raises(ValueError, match="axis"):
        aggregate(idx, V, "sum", size=(2, 3), axis=0)


def test_out_is_written_and_returned():
    out = np.zeros(4)
    assert aggregate(G, V, "nansum", out=out) is out
    same(out, group_reduce(V, G, "nansum"))
    out = np.zeros((2, 3), np.intp)
    idx = np.array([[0, 1, 1], [2, 0, 0]])
    assert aggregate(idx, [1.0, 2.0, 3.0], "len", size=(2, 3), out=out) is out
    assert out.tolist() == [[0, 0, 1], [2, 0, 0]]


def test_bad_order_is_a_value_error():
    with pytest.raises(ValueError, match="order"):
        aggregate(G, V, order="K")


def test_is_public():
    assert scatterops.aggregate is aggregate and "aggregate" in scatterops.__all__

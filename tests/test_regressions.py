"""Regression tests for bugs found by fuzzing and static analysis (the fuzz target in fuzz/ and the C linters in tools/).

Each test names the bug it pins.  Some of them only fail visibly under the
sanitizers (``bash tools/sanitize.sh``): the bug was a memory error that a plain
build survives by luck.
"""
import numpy as np
import pytest

import scatterops as so
import scatterops.reference as ref


def _outcome(module, func, *args, **kw):
    try:
        return None, getattr(module, func)(*args, **kw)
    except Exception as exc:  # noqa: BLE001 -- compared below
        return type(exc), None


# py/fast.c: scatter_nd filled the required updates shape, q - 1 + r - k dims, into a
# SO_MAXDIMS (64) array before checking that it fits: indices and data of high rank
# wrote up to 62 values past the end of a stack array (ASan: stack-buffer-overflow,
# UBSan: index 64 out of bounds for type 'npy_intp[64]').
# NumPy 1.x arrays have at most 32 dims: there the required rank stays under 64
NEEDS_64_DIMS = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                                   reason="NumPy 1.x arrays have at most 32 dimensions")


@NEEDS_64_DIMS
@pytest.mark.parametrize("q", [33, 40, 64])
@pytest.mark.parametrize("updates_rank", [1, 64])
def test_scatter_nd_whose_required_updates_rank_exceeds_64_is_a_value_error(q, updates_rank):
    updates = np.zeros((1,) * updates_rank)
    data = np.zeros((2,) + (1,) * 63)
    indices = np.zeros((1,) * (q - 1) + (1,), dtype=np.intp)   # k = 1: rank q - 1 + 63
    for module in (so, ref):
        with pytest.raises(ValueError, match="required shape"):
            module.scatter_nd(data, indices, updates)
    before = data.copy()
    with pytest.raises(ValueError):
        so.scatter_nd(data, indices, updates, out=data)
    assert (data == before).all()


@NEEDS_64_DIMS
def test_scatter_nd_of_rank_64_with_rank_64_updates_still_works():
    data = np.zeros((2,) + (1,) * 63)
    indices = np.array([[1]], dtype=np.intp)                  # q = 2, k = 1: rank 64
    updates = np.ones((1,) + (1,) * 63)
    exp = ref.scatter_nd(data, indices, updates, reduction="add")
    res = so.scatter_nd(data, indices, updates, reduction="add")
    np.testing.assert_array_equal(res, exp, strict=True)


@pytest.mark.parametrize("func", ["scatter_update", "scatter_nd", "scatter_elements"])
def test_bytes_that_are_not_ascii_into_str_data_name_updates(func):
    # found by the atheris target: the cast raised a bare UnicodeDecodeError
    data = np.array(["a", "b"])
    before = data.copy()
    idx = [[0]] if func == "scatter_nd" else [0]
    with pytest.raises(TypeError, match="updates"):
        getattr(so, func)(data, idx, np.array([b"\xff"]), out=data)
    assert (data == before).all()


# The reference's reductions passed an object update to ufunc.at as it was, so an update
# that is a tuple was read as a sequence of values (ValueError) where np.add.at on the
# whole array, and scatterops, take it as one value: found by the fuzz target.
@pytest.mark.parametrize("reduction", ["add", "max"])
@pytest.mark.parametrize("include_self", [True, False])
def test_reference_takes_a_tuple_object_update_as_one_value(reduction, include_self):
    data = np.empty(2, dtype=object)
    data[0], data[1] = (1,), (2,)
    upd = np.empty(1, dtype=object)
    upd[0] = (3,)
    want = so.scatter_elements(data, [0], upd, reduction=reduction, include_self=include_self)
    got = ref.scatter_elements(data, [0], upd, reduction=reduction, include_self=include_self)
    assert list(got) == list(want)
    expected = {("add", True): (1, 3), ("add", False): (3,), ("max", True): (3,),
                ("max", False): (3,)}[reduction, include_self]
    assert got[0] == expected and got[1] == (2,)


# A reduction name was compared as a C string, up to its first NUL: "mean\x00" was taken
# as "mean" where the reference refuses it: found by the fuzz target.
@pytest.mark.parametrize("name", ["mean\x00", "add\x00x", "none\x00"])
def test_a_reduction_name_with_a_nul_is_refused(name):
    for module in (so, ref):
        with pytest.raises(ValueError, match="reduction"):
            module.scatter_update(np.zeros(3), [0], [1.0], reduction=name)

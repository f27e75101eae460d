"""The input surface: spellings of a call that used to be misread or refused.

* ``scatter_nd(a, (rows, cols), v)``, the ``np.add.at`` habit: a Python tuple whose items are
  arrays or sequences is a TypeError showing the ``np.stack`` spelling (read as an array it
  was ``len(tuple)`` index tuples: a silent wrong answer whenever that fitted ``data``); a
  tuple of scalars stays one index tuple, as a list is.
* An empty update index space (docs/contract.md, "Empty update spaces") gives a copy of
  ``data`` for every spelling of empty indices, whatever their shape or dtype; ``scatter_nd``
  with k = 0 is not empty.
* Subclasses: the result is a plain ndarray (or ``out`` itself) on every path; a
  ``numpy.ma.MaskedArray`` is refused, since a scatter cannot honour its mask.

Each is held on both the C functions and ``scatterops.reference``, and every refusal leaves
``data`` and ``out`` as they were.
"""
from __future__ import annotations

import numpy as np
import pytest

import scatterops
from scatterops import reference

from strategies import assert_identical, snapshot

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

MODULES = [pytest.param(scatterops, id="c"), pytest.param(reference, id="reference")]
FORMS = ("new", "out", "inplace")


def call(module, func, data, indices, updates, form="new", **kw):
    """func of module in one of the three forms; (result, the array it must be or None)."""
    out = {"new": None, "out": np.full_like(data, 7), "inplace": data}[form]
    if out is not None:
        kw["out"] = out
    return getattr(module, func)(data, indices, updates, **kw), out


# ---------------------------------------------------------------------------------------
# 1. scatter_nd and a tuple of index arrays
# ---------------------------------------------------------------------------------------

ROWS, COLS = np.array([0, 1]), np.array([2, 2])

# np.add.at(a, (rows, cols), v) with a 3 x 3 a: read as an array the tuple is the index tuples
# (0, 1) and (2, 2) -- a valid call, so the old reading gave a wrong answer without a word
TUPLES_OF_SEQUENCES = {
    "arrays": (ROWS, COLS),
    "lists": ([0, 1], [2, 2]),
    "tuples": ((0, 1), (2, 2)),
    "one-array": (np.array([0, 2]),),
    "scalar-and-list": (0, [1, 2]),
    "empty-lists": ([], []),
    "2d-arrays": (np.zeros((2, 2), np.int64), np.ones((2, 2), np.int64)),
    "array-likes": (memoryview(np.array([0, 1])), memoryview(np.array([2, 2]))),
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", TUPLES_OF_SEQUENCES)
def test_scatter_nd_refuses_a_tuple_of_index_arrays(module, form, name):
    data = np.arange(9.0).reshape(3, 3)
    before = snapshot(data)
    out = {"new": None, "out": np.full_like(data, 7), "inplace": data}[form]
    out_before = None if out is None else snapshot(out)
    with pytest.raises(TypeError, match=r"indices is a tuple of .*np\.stack\(\(rows, cols\), axis=-1\)"):
        module.scatter_nd(data, TUPLES_OF_SEQUENCES[name], 1.0, reduction="add", out=out)
    assert_identical(data, before)
    if out is not None:
        assert_identical(out, out_before)


@pytest.mark.parametrize("module", MODULES)
def test_the_np_stack_spelling_gives_np_add_at(module):
    data = np.arange(9.0).reshape(3, 3)
    want = data.copy()
    np.add.at(want, (ROWS, COLS), [10.0, 20.0])
    got = module.scatter_nd(data, np.stack((ROWS, COLS), axis=-1), [10.0, 20.0], reduction="add")
    assert_identical(got, want)


SCALAR_TUPLES = {
    "ints": (1, 2),
    "numpy-ints": (np.int8(1), np.int64(2)),
    "0d-arrays": (np.array(1), np.array(2)),
    "mixed": (1, np.int32(2)),
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("name", SCALAR_TUPLES)
def test_scatter_nd_takes_a_tuple_of_scalars_as_one_index(module, name):
    data = np.arange(9.0).reshape(3, 3)
    want = module.scatter_nd(data, [1, 2], 5.0)
    assert want[1, 2] == 5.0
    assert_identical(module.scatter_nd(data, SCALAR_TUPLES[name], 5.0), want)


@pytest.mark.parametrize("module", MODULES)
def test_scatter_nd_empty_tuple_is_the_empty_list(module):
    # () and [] are both one empty index tuple (k = 0): the whole array
    data = np.zeros(3)
    assert_identical(module.scatter_nd(data, (), 7.0), module.scatter_nd(data, [], 7.0))
    assert_identical(module.scatter_nd(data, (), 7.0), np.full(3, 7.0))


@pytest.mark.parametrize("module", MODULES)
def test_a_tuple_of_arrays_stays_valid_for_scatter_update_and_scatter_elements(module):
    # there indices of any shape are fine: the tuple is a (2, n) array, as np.asarray says
    data = np.zeros((3, 3))
    got = module.scatter_update(data, (np.array([0]), np.array([2])), 1.0)
    assert_identical(got, module.scatter_update(data, [[0], [2]], 1.0))
    got = module.scatter_elements(data, ([0, 1, 2], [2, 1, 0]), [[1.0] * 3, [2.0] * 3])
    assert_identical(got, module.scatter_elements(data, [[0, 1, 2], [2, 1, 0]], [[1.0] * 3, [2.0] * 3]))


# ---------------------------------------------------------------------------------------
# 2. empty update index spaces
# ---------------------------------------------------------------------------------------

# indices of size 0 for scatter_update / scatter_elements on a (2, 2) data: every shape, dtype
# and spelling (scatter_elements' rank and shape rules do not apply: nothing is addressed)
EMPTY_INDICES = {
    "list": [],
    "nested-list": [[]],
    "tuple": (),
    "float-empty": np.empty(0),
    "empty-0x3-float": np.empty((0, 3)),
    "empty-0x3-int": np.empty((0, 3), np.int64),
    "empty-2x0-uint8": np.empty((2, 0), np.uint8),
    "empty-3d": np.empty((1, 0, 5), np.int32),
    "object": np.empty(0, object),
    "bool": np.empty((0, 2), bool),
    "str": np.empty(0, "U1"),
    "structured": np.empty(0, [("a", "i8")]),
    "big-endian": np.empty((0, 2), ">i4"),
}
# updates for an empty update index space: an empty array of any shape has nothing to write;
# a scalar and anything else broadcast to the (empty) required shape as usual
EMPTY_UPDATES = {
    "list": [],
    "0x5": np.empty((0, 5)),
    "scalar": 3.0,
    "int-list": np.zeros(0, np.int64),
    "object-empty": np.empty(0, object),
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("func", ["scatter_update", "scatter_elements"])
@pytest.mark.parametrize("upd", EMPTY_UPDATES)
@pytest.mark.parametrize("idx", EMPTY_INDICES)
def test_empty_indices_give_a_copy_of_data(module, form, func, upd, idx):
    data = np.arange(4.0).reshape(2, 2)
    want = data.copy()
    got, out = call(module, func, data, EMPTY_INDICES[idx], EMPTY_UPDATES[upd], form,
                    reduction="max", axis=1)
    assert got is out if out is not None else type(got) is np.ndarray and got is not data
    assert_identical(got, want)


# the empty path on the NumPy fallback's dtypes and reductions too (object add, longdouble
# mean, datetime max, a structured dtype holding objects)
EMPTY_DTYPES = [(object, "add"), (np.longdouble, "mean"), ("M8[s]", "max"),
                ([("o", "O"), ("i", "i2")], "none")]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("func", ["scatter_update", "scatter_nd", "scatter_elements"])
@pytest.mark.parametrize("dtype,reduction", EMPTY_DTYPES)
def test_empty_calls_on_every_path_give_a_copy_of_data(module, form, func, dtype, reduction):
    data = np.ones((2, 2)).astype(dtype) if np.dtype(dtype).kind != "V" else np.zeros((2, 2), dtype)
    want = data.copy()
    got, out = call(module, func, data, np.empty((0, 1)), [], form, reduction=reduction)
    assert got is out if out is not None else type(got) is np.ndarray and got is not data
    assert_identical(got, want)


# scatter_nd: indices.shape[:-1] of size 0 (k > r too: nothing is addressed)
ND_EMPTY = {
    "0x1": np.empty((0, 1), np.int64),
    "0x2": np.empty((0, 2), np.int16),
    "0x0": np.empty((0, 0), np.int64),
    "0x5-k-above-rank": np.empty((0, 5), np.int64),
    "0x100-k-above-most-dims": np.empty((0, 100), np.int64),
    "2x0x1": np.empty((2, 0, 1)),
    "float-0x1": np.empty((0, 1)),
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("upd", EMPTY_UPDATES)
@pytest.mark.parametrize("idx", ND_EMPTY)
def test_scatter_nd_with_no_index_tuples_gives_a_copy_of_data(module, form, upd, idx):
    data = np.arange(4.0).reshape(2, 2)
    got, out = call(module, "scatter_nd", data, ND_EMPTY[idx], EMPTY_UPDATES[upd], form,
                    reduction="add")
    assert got is out if out is not None else type(got) is np.ndarray
    assert_identical(got, np.arange(4.0).reshape(2, 2))


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("mode", ["raise", "drop", "wrap", "clip"])
@pytest.mark.parametrize("k", [3, 64, 65, 1000])
def test_scatter_nd_with_no_index_tuples_of_more_components_than_data_has_axes(module, mode, k):
    data = np.arange(4.0).reshape(2, 2)
    got = module.scatter_nd(data, np.empty((0, k), np.int64), np.empty(0), mode=mode,
                            reduction="max")
    assert_identical(got, data)


@pytest.mark.parametrize("module", MODULES)
def test_scatter_nd_with_k_0_is_not_empty(module):
    # [] is one empty tuple, [[]] one too, np.zeros((2, 0)) two: each addresses the whole array
    data = np.ones(3)
    assert_identical(module.scatter_nd(data, [], 7.0), np.full(3, 7.0))
    assert_identical(module.scatter_nd(data, [[]], [[1.0, 2.0, 3.0]]), np.array([1.0, 2.0, 3.0]))
    assert_identical(module.scatter_nd(data, np.zeros((2, 0), int), 2.0, reduction="add"),
                     np.full(3, 5.0))
    # not empty, so updates must have the required shape (3,): [] does not broadcast to it
    with pytest.raises(ValueError, match=r"updates has shape \(0,\).*\(3,\)"):
        module.scatter_nd(data, [], [])


NOT_BROADCASTING = [
    ("scatter_update", [], [1.0, 2.0, 3.0], {"axis": 0}),            # (3,) against (0, 2)
    ("scatter_elements", np.empty((0, 3)), [[1.0, 2.0]], {"axis": 0}),  # (1, 2) against (0, 3)
    ("scatter_nd", np.empty((0, 1), int), [1.0, 2.0, 3.0], {}),       # (3,) against (0, 2)
    ("scatter_nd", np.empty((0, 5), int), [1.0, 2.0], {}),            # (2,) against (0,)
]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("func,idx,upd,kw", NOT_BROADCASTING)
def test_empty_index_space_still_needs_a_non_empty_updates_to_broadcast(module, form, func, idx, upd,
                                                                      kw):
    data = np.arange(4.0).reshape(2, 2)
    before = snapshot(data)
    out = {"new": None, "out": np.full_like(data, 7), "inplace": data}[form]
    out_before = None if out is None else snapshot(out)
    with pytest.raises(ValueError, match="updates has shape .* does not broadcast"):
        getattr(module, func)(data, idx, upd, out=out, **kw)
    assert_identical(data, before)
    if out is not None:
        assert_identical(out, out_before)


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("func", ["scatter_update", "scatter_nd", "scatter_elements"])
def test_empty_index_space_still_checks_the_rest(module, func):
    idx = np.empty((0, 1), int)
    with pytest.raises(TypeError, match="reduction='sub'.*bool"):
        getattr(module, func)(np.zeros((2, 2), bool), idx, [], reduction="sub")
    with pytest.raises(TypeError, match="updates of dtype complex128"):
        getattr(module, func)(np.zeros((2, 2)), idx, 1j)
    with pytest.raises(ValueError, match="out has shape"):
        getattr(module, func)(np.zeros((2, 2)), idx, [], out=np.zeros(3))
    with pytest.raises(TypeError, match="indices must have an integer dtype"):
        getattr(module, func)(np.zeros((2, 2)), np.ones((1, 1)), [])


# ---------------------------------------------------------------------------------------
# 3. subclasses
# ---------------------------------------------------------------------------------------

class Tagged(np.ndarray):
    """An ndarray subclass whose methods are not NumPy's (np.matrix's reshape and indexing
    keep two dimensions): any of them called means the subclass leaked past the checks."""

    def reshape(self, *shape, **kw):
        raise AssertionError("Tagged.reshape called: the subclass leaked past the checks")

    def __getitem__(self, key):
        raise AssertionError("Tagged.__getitem__ called: the subclass leaked past the checks")


def tagged(a):
    return np.asarray(a).view(Tagged)


# (func, data, indices, updates, kwargs): a small call, a large one (the copy of data fused
# with the walk), one on the NumPy fallback (longdouble add), and an empty one
SUBCLASS_CALLS = {
    "small": ("scatter_elements", np.zeros((2, 3)), np.array([[1, 0, 1]]),
              np.array([[1.0, 2.0, 3.0]]), {"reduction": "add"}),
    "large": ("scatter_update", np.zeros((512, 512)), np.array([3, 1]), np.ones((2, 512)), {}),
    "fallback": ("scatter_elements", np.zeros((2, 3), np.longdouble), np.array([[1, 0, 1]]),
                 np.array([[1.0, 2.0, 3.0]], np.longdouble), {"reduction": "add"}),
    "empty": ("scatter_update", np.zeros((2, 3)), np.empty((0, 2)), [], {}),
}
WRAPPERS = {"matrix": np.asmatrix, "tagged": tagged}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("which", ["data", "indices", "updates", "all"])
@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("case", SUBCLASS_CALLS)
def test_subclass_inputs_give_a_plain_ndarray_or_out_itself(module, form, which, wrap, case):
    func, data, idx, upd, kw = SUBCLASS_CALLS[case]
    want = getattr(reference, func)(data, idx, upd, **kw)
    w = WRAPPERS[wrap]
    args = {"data": data.copy(), "indices": idx, "updates": upd}
    for name in args:
        if which in (name, "all") and np.ndim(args[name]) == 2:
            args[name] = w(args[name])
    if form == "out":
        kw = dict(kw, out=w(np.full_like(data, 7)))
    elif form == "inplace":
        kw = dict(kw, out=args["data"])
    got = getattr(module, func)(*args.values(), **kw)
    if form == "new":
        assert type(got) is np.ndarray
        assert got.flags.c_contiguous and got.flags.owndata
    else:
        assert got is kw["out"]
    assert_identical(np.asarray(got), want)


def _masked(a):
    return np.ma.array(a, mask=np.zeros(np.shape(a), bool))


MASKED_CALLS = {
    "scatter_update": (np.zeros((2, 3)), np.array([1]), np.ones((1, 3))),
    "scatter_nd": (np.zeros((2, 3)), np.array([[1, 2]]), np.ones(1)),
    "scatter_elements": (np.zeros((2, 3)), np.array([[1, 0, 1]]), np.ones((1, 3))),
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("func", MASKED_CALLS)
@pytest.mark.parametrize("which", ["data", "indices", "updates", "out", "out=data"])
def test_a_masked_array_is_refused_and_nothing_is_written(module, func, which):
    data, idx, upd = (a.copy() for a in MASKED_CALLS[func])
    args = {"data": data, "indices": idx, "updates": upd}
    out = np.full_like(data, 7)
    if which in args:
        args[which] = _masked(args[which])
    elif which == "out":
        out = _masked(out)
    else:
        args["data"] = out = _masked(data)
    before = {name: snapshot(np.asarray(a)) for name, a in dict(args, out=out).items()}
    name = "data" if which == "out=data" else which
    with pytest.raises(TypeError, match=rf"{name} is a numpy\.ma\.MaskedArray, whose mask a scatter "
                                        r"cannot honour"):
        getattr(module, func)(*args.values(), out=out)
    for key, a in dict(args, out=out).items():
        assert_identical(np.asarray(a), before[key], where=key)


@pytest.mark.parametrize("module", MODULES)
def test_the_masked_constant_is_a_masked_array_too(module):
    with pytest.raises(TypeError, match="updates is a numpy.ma.MaskedArray"):
        module.scatter_update(np.zeros(3), [1], np.ma.masked)

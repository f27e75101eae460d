"""Properties: the C-backed functions equal ``scatterops.reference`` bit for bit.

Each property draws whole calls (``strategies.cases``) over every dtype, layout,
index dtype, axis, reduction spelling, include_self and out mode, runs the
C-backed function and the reference on identically laid out fresh arrays, and
compares dtype, shape and bits (object elements: the same objects, or equal
values of the same type where the reduction makes new ones).  NaN where NaN,
NaN payloads and signed zeros follow from the bit comparison.

``run`` also checks, on every call, what holds for any successful call: the
result has data's shape and dtype, is ``out`` when one is given and a new
C-contiguous array otherwise, the inputs are left alone, and a strided out's
buffer is untouched between its elements.
"""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pytest
from hypothesis import assume, given, note, settings, strategies as st

import scatterops
from scatterops import reference

import strategies as S
from extras import skip_reason
from strategies import assert_identical, snapshot

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError

# NumPy's ufunc.at warns about inf - inf, overflow in casts of the drawn values, ...
# the results are what is compared here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

MODULES = [pytest.param(scatterops, id="c"), pytest.param(reference, id="reference")]
FUNCS = S.FUNCS


# --------------------------------------------------------------------------------------
# running a case
# --------------------------------------------------------------------------------------

def _gap_mask(case: S.Case, buffer: np.ndarray) -> np.ndarray:
    """True on the elements of a strided out's buffer that are not out's."""
    mask = np.ones(buffer.shape, dtype=bool)
    case.out.view_into(mask)[...] = False
    return mask


def run(case: S.Case, module):
    """Call module.<func> on fresh arrays of case, check the invariants of any successful
    call, return the result."""
    p = case.prepare()
    before = {name: snapshot(getattr(p, name)) for name in ("data", "indices", "updates")}
    strided_out = case.out_mode == "strided" and case.out.layout.kind == "strided"
    buffer_before = snapshot(p.out_buffer) if strided_out else None

    result = p.call(module)

    assert isinstance(result, np.ndarray), type(result)
    assert result.shape == case.data.shape, (result.shape, case.data.shape)
    assert result.dtype == case.data.dtype and result.dtype.str == case.data.dtype.str, \
        (result.dtype, case.data.dtype)
    if p.out is not None:
        assert result is p.out, "with out=, the result must be out itself"
    else:
        assert result.flags.c_contiguous, "the result must be C-contiguous"
        assert result.flags.writeable
        for name in ("data", "indices", "updates"):
            assert not np.shares_memory(result, getattr(p, name)), f"result shares memory with {name}"
    assert_identical(p.indices, before["indices"], where="indices after the call")
    assert_identical(p.updates, before["updates"], where="updates after the call")
    if case.out_mode != "inplace":
        assert_identical(p.data, before["data"], where="data after the call")
    if strided_out:
        gaps = _gap_mask(case, p.out_buffer)
        assert_identical(p.out_buffer[gaps], buffer_before[gaps],
                         where="out's buffer between out's elements")
    return result


def assert_refused(case: S.Case, module, exc_type, words=()):
    """The call raises exc_type, the message holds every word, data and out unchanged."""
    p = case.prepare()
    data_before = snapshot(p.data)
    buffer_before = snapshot(p.out_buffer)
    with pytest.raises(exc_type) as info:
        p.call(module)
    msg = str(info.value)
    for word in words:
        assert word in msg, f"{word!r} not in {msg!r}"
    assert_identical(p.data, data_before, where="data after the error")
    if p.out_buffer is not None:
        assert_identical(p.out_buffer, buffer_before, where="out after the error")
    return info.value


def check_against_reference(case: S.Case):
    if not S.reduction_is_defined(case.reduction, case.data.dtype):
        # NumPy has no (dtype, dtype) -> dtype loop: both refuse, before writing anything
        dt = str(case.data.dtype)
        e_ref = assert_refused(case, reference, TypeError, [dt])
        e_c = assert_refused(case, scatterops, TypeError, [dt])
        for e in (e_ref, e_c):
            assert case.reduction in str(e) or case.canonical in str(e), str(e)
        return
    expected = run(case, reference)
    actual = run(case, scatterops)
    assert_identical(actual, expected, case.object_compare, nans=case.nans)


# --------------------------------------------------------------------------------------
# equal to the reference
# --------------------------------------------------------------------------------------

@given(case=S.cases(dtypes=S.ALL_DTYPES, reductions=("none",)))
def test_matches_reference_reduction_none_any_dtype(case):
    check_against_reference(case)


@given(case=S.cases(dtypes=S.REDUCTION_DTYPES, reductions=S.REDUCTION_NAMES))
def test_matches_reference_reductions(case):
    note(f"defined: {S.reduction_is_defined(case.reduction, case.data.dtype)}")
    check_against_reference(case)


@given(case=S.cases(dtypes=S.INEXACT_DTYPES, reductions=S.REDUCTION_NAMES, updates_casts=False))
def test_matches_reference_float_reductions_nan_inf_signed_zero_subnormal(case):
    check_against_reference(case)


@pytest.mark.skipif(not S.USER_DTYPES, reason=skip_reason("ml_dtypes"))
@given(data=st.data())
def test_matches_reference_user_dtypes(data):
    case = data.draw(S.cases(dtypes=S.USER_DTYPES, reductions=S.REDUCTION_NAMES))
    check_against_reference(case)


@given(case=st.one_of(
    S.cases(dtypes=S.REDUCTION_DTYPES, reductions=S.REDUCTION_NAMES, index_mode="duplicates",
            defined_only=True),
    S.cases(dtypes=S.REDUCTION_DTYPES, reductions=S.REDUCTION_NAMES, index_mode="negative",
            defined_only=True)))
def test_matches_reference_with_duplicate_and_negative_indices(case):
    check_against_reference(case)


@given(case=S.cases(dtypes=S.ALL_DTYPES + S.REDUCTION_DTYPES, reductions=S.REDUCTION_NAMES,
                    out_modes=("inplace",), defined_only=True))
def test_in_place_equals_out_of_place(case):
    p = case.prepare()
    result = p.call(scatterops)
    assert result is p.data, "out=data must return data itself"
    out_of_place = run(dataclasses.replace(case, out_mode="none", out=None), scatterops)
    assert_identical(result, out_of_place, case.object_compare, nans=case.nans)
    assert_identical(result, run(case, reference), case.object_compare, nans=case.nans)


@given(case=S.cases(dtypes=S.ALL_DTYPES + S.REDUCTION_DTYPES, reductions=S.REDUCTION_NAMES,
                    out_modes=("separate", "strided"), defined_only=True))
def test_out_is_filled_and_returned(case):
    result = run(case, scatterops)   # checks result is out and the strided buffer's gaps
    expected = run(dataclasses.replace(case, out_mode="none", out=None), reference)
    assert_identical(result, expected, case.object_compare, nans=case.nans)


# --------------------------------------------------------------------------------------
# errors: nothing written
# --------------------------------------------------------------------------------------

def _position(pos) -> str:
    return "[" + ", ".join(str(p) for p in pos) + "]"


@pytest.mark.parametrize("module", MODULES)
@given(bad=S.out_of_range_cases(dtypes=S.ALL_DTYPES + S.REDUCTION_DTYPES,
                                reductions=S.REDUCTION_NAMES, defined_only=True))
def test_error_leaves_out_untouched(module, bad):
    case, pos, value, axis, size = bad
    err = assert_refused(case, module, IndexError,
                         ["indices", _position(pos), str(value), f"axis {axis}", f"size {size}"])
    assert not isinstance(err, AxisError), "an index out of range is an IndexError, not an AxisError"


@pytest.mark.parametrize("module", MODULES)
@given(bad=S.bad_calls(dtypes=S.ALL_DTYPES, reductions=S.REDUCTION_NAMES,
                       out_modes=("separate", "strided", "inplace")))
def test_refused_call_leaves_data_and_out_untouched(module, bad):
    # every kind of invalid call scatterops.strategies.bad_calls draws (BAD_KINDS)
    note(f"kind: {bad.kind}")
    err = assert_refused(bad.call, module, bad.raises, bad.words)
    if bad.raises is not AxisError:
        assert not isinstance(err, AxisError)


# --------------------------------------------------------------------------------------
# out overlapping updates or indices
# --------------------------------------------------------------------------------------

def _call(module, case, data, indices, updates, out=None):
    fn = getattr(module, case.func)
    pos = (data, indices, updates) if case.func == "scatter_nd" else (data, indices, updates, case.axis)
    return fn(*pos, out=out, **case.options())


def in_child(fn):
    """Run fn() in a forked child and return its result: a call that corrupts memory
    fails this test with the signal instead of killing the whole test run."""
    import os
    import pickle
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child
        try:
            os.close(r)
            try:
                payload = pickle.dumps(("ok", fn()))
            except BaseException as exc:            # noqa: BLE001 - reported to the parent
                payload = pickle.dumps(("raised", f"{type(exc).__name__}: {exc}"))
            with os.fdopen(w, "wb") as f:
                f.write(payload)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        payload = f.read()
    _, status = os.waitpid(pid, 0)
    assert not os.WIFSIGNALED(status), f"the call killed the process with signal {os.WTERMSIG(status)}"
    kind, value = pickle.loads(payload)
    assert kind == "ok", f"the call raised {value}"
    return value


def _distinct_values(dtype, n):
    """n different values of dtype (so that reading a value after it was overwritten shows)."""
    vals = np.arange(1, n + 1)
    if dtype.kind == "O":
        out = np.empty(n, dtype=object)
        out[:] = [int(v) * 1000003 for v in vals]
        return out
    if dtype.kind == "U":
        return np.array([str(v) for v in vals], dtype=dtype)
    return vals.astype(dtype)


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("dtype", [np.float64, np.int16, object, np.longdouble, ">f4", "U3"])
@pytest.mark.parametrize("func", FUNCS)
def test_in_place_with_updates_a_view_of_data_gives_same_result_as_a_copy(module, dtype, func):
    data = _distinct_values(np.dtype(dtype), 6)
    idx = {"scatter_update": np.arange(6), "scatter_nd": np.arange(6)[:, None],
           "scatter_elements": np.arange(6)}[func]
    for updates_view in (slice(None, None, -1), slice(None)):
        d = data.copy()
        expected = getattr(reference, func)(data.copy(), idx, data[updates_view].copy())
        result = getattr(module, func)(d, idx, d[updates_view], out=d)
        assert result is d
        assert_identical(result, expected, "eq")


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("func", FUNCS)
def test_in_place_with_indices_a_view_of_data_gives_same_result_as_a_copy(module, func):
    # data (intp) holds the indices; the first update writes a huge value where a later
    # index is read from -- read after the write, it would point far outside data
    def call():
        d = np.array([1, 0, 2, 3], dtype=np.intp)
        idx = d[:, None] if func == "scatter_nd" else d
        upd = np.array([10 ** 9, 7, 8, 9], dtype=np.intp)
        args = (d, idx, upd) if func == "scatter_nd" else (d, idx, upd, 0)
        res = getattr(module, func)(*args, out=d)
        return res is d, res
    same, result = in_child(call)
    assert same
    assert_identical(result, np.array([7, 10 ** 9, 8, 9], dtype=np.intp))


@pytest.mark.parametrize("module", MODULES)
@given(case=S.cases(dtypes=[np.dtype("f8"), np.dtype("i2"), np.dtype(">f4"), np.dtype("O"),
                            np.dtype("U3"), np.dtype("c8")],
                    reductions=S.REDUCTION_NAMES, defined_only=True, out_modes=("none",),
                    broadcast=False, updates_casts=False, nonempty_indices=True),
       in_place=st.booleans(), data=st.data())
def test_out_sharing_memory_with_updates_gives_same_result_as_a_copy(module, case, in_place, data):
    dtype = case.data.dtype
    n_out = math.prod(case.data.shape)
    n_upd = math.prod(case.updates.shape)
    if data.draw(st.booleans()):
        buf = _distinct_values(dtype, n_out + n_upd)
    else:
        buf = data.draw(S.array_values(dtype, (n_out + n_upd,), "ints" if case.canonical != "none" else "mixed"))
    start = data.draw(st.integers(0, n_out - 1))
    out = buf[:n_out].reshape(case.data.shape)
    updates = buf[start:start + n_upd].reshape(case.updates.shape)
    indices = case.indices.make()
    d = out if in_place else case.data.make()
    expected = _call(reference, case, snapshot(d), indices.copy(), snapshot(updates))
    result = _call(module, case, d, indices, updates, out=out)
    assert result is out
    assert_identical(result, expected, "eq", nans=case.nans)


@pytest.mark.parametrize("module", MODULES)
@given(case=S.cases(dtypes=[np.dtype(np.intp)], reductions=("none", "add", "max"), out_modes=("none",),
                    nonempty_indices=True, updates_casts=False),
       in_place=st.booleans(), data=st.data())
def test_out_sharing_memory_with_indices_gives_same_result_as_a_copy(module, case, in_place, data):
    n_out = math.prod(case.data.shape)
    idx_values = case.indices.values.astype(np.intp)
    n_idx = idx_values.size
    assume(n_idx <= n_out)
    start = data.draw(st.integers(0, n_out - n_idx))
    out = case.data.values.astype(np.intp).reshape(-1)
    out[start:start + n_idx] = idx_values.reshape(-1)
    out = out.reshape(case.data.shape)
    indices = out.reshape(-1)[start:start + n_idx].reshape(idx_values.shape)
    d = out if in_place else case.data.make()
    updates = case.updates.make()
    expected = _call(reference, case, snapshot(d), indices.copy(), updates)

    def call():
        res = _call(module, case, d, indices, updates, out=out)
        return res is out, res
    same, result = in_child(call)               # a wild write must not take the run down
    assert same
    assert_identical(result, expected)


# --------------------------------------------------------------------------------------
# inputs in other forms give the same result
# --------------------------------------------------------------------------------------

def _wrapped(values: np.ndarray, case: S.Case) -> np.ndarray:
    """The same indices with every negative value written as its positive twin."""
    v = values.astype(np.int64)
    S_ = case.data.shape
    if case.func == "scatter_nd":
        k = v.shape[-1]
        bounds = np.array(S_[:k], dtype=np.int64)
        return np.where(v < 0, v + bounds, v) if k else v
    size = S_[case.axis_value % len(S_)]
    return np.where(v < 0, v + size, v)


@given(case=S.cases(dtypes=[np.dtype("f4"), np.dtype("i8"), np.dtype("O"), np.dtype("S4")],
                    reductions=S.REDUCTION_NAMES, defined_only=True, out_modes=("none",)),
       idt=S.index_dtypes(), data=st.data())
def test_index_dtype_layout_and_sign_do_not_change_result(case, idt, data):
    positive = _wrapped(case.indices.values, case)
    lay = data.draw(S.layouts(positive.ndim, idt))
    other = S.Recipe(positive.astype(idt.newbyteorder("=")).astype(idt), lay)
    expected = run(case, scatterops)
    actual = run(dataclasses.replace(case, indices=other), scatterops)
    assert_identical(actual, expected, case.object_compare, nans=case.nans)


@given(case=S.cases(funcs=("scatter_update",), dtypes=[np.dtype("f8"), np.dtype("O")],
                    reductions=("none", "add"), out_modes=("none",)))
def test_axis_as_int_numpy_integer_or_one_element_array_gives_same_result(case):
    a = case.axis_value
    r = len(case.data.shape)
    forms = [a, a % r, a - r if a >= 0 else a, np.int8(a), np.uint8(a % r), np.array(a),
             np.array([a % r], dtype=">u2"), np.array([a], dtype=np.int64)]
    results = [run(dataclasses.replace(case, axis=f), scatterops) for f in forms]
    for form, res in zip(forms, results):
        assert_identical(res, results[0], case.object_compare, where=f"axis={form!r}")


@given(case=S.cases(dtypes=[np.dtype("f8"), np.dtype("i8"), np.dtype("?"), np.dtype("c16")],
                    reductions=S.REDUCTION_NAMES, defined_only=True, out_modes=("none",),
                    updates_casts=False, layout_kinds=("C",)))
def test_lists_give_same_result_as_arrays(case):
    assume(case.updates.values.size and case.data.values.size and case.indices.values.size)
    expected = run(case, scatterops)
    d, i, u = case.data.values, case.indices.values, case.updates.values
    lists = (d.tolist(), i.tolist(), u.tolist())
    if case.func == "scatter_nd":
        res = scatterops.scatter_nd(*lists, **case.options())
    else:
        res = getattr(scatterops, case.func)(*lists, case.axis, **case.options())
    assert_identical(res, expected)


# --------------------------------------------------------------------------------------
# empty update spaces, zero-size arrays
# --------------------------------------------------------------------------------------

EMPTY_INDICES = {
    "scatter_update": [[], np.empty(0, np.float64), np.empty((2, 0), np.int8), np.empty((0, 3), bool),
                       np.empty((0,), object)],
    "scatter_nd": [np.empty((0, 1), np.int64), np.empty((0, 2), np.float32), np.empty((3, 0, 2), np.uint8),
                   np.empty((0, 0), bool)],
    "scatter_elements": [np.empty((0, 4), np.int64), np.empty((3, 0), np.float64), np.empty((0, 0), bool)],
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("func,indices", [(f, i) for f, ilist in EMPTY_INDICES.items() for i in ilist])
def test_empty_update_space_gives_a_copy_of_data(module, func, indices):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = data.copy()
    fn = getattr(module, func)
    args = (data, indices, 5.0) if func == "scatter_nd" else (data, indices, 5.0, 1)
    for reduction in ("none", "add", "mean", "min"):
        result = fn(*args, reduction=reduction)
        assert_identical(result, before)
        assert not np.shares_memory(result, data)
        assert_identical(data, before)


@pytest.mark.parametrize("module", MODULES)
def test_scatter_nd_k0_addresses_the_whole_array(module):
    # indices of shape (..., 0): each empty index tuple addresses all of data (docs/contract.md: k == 0)
    data = np.arange(6.0).reshape(2, 3)
    one = module.scatter_nd(data, np.empty((0,), np.int64), np.array([[7.0, 8, 9], [1, 2, 3]]))
    assert_identical(one, np.array([[7.0, 8, 9], [1, 2, 3]]))
    two = module.scatter_nd(data, np.empty((2, 0), np.int64), np.array([[[1.0]], [[2.0]]]), reduction="add")
    assert_identical(two, data + 3.0)


# --------------------------------------------------------------------------------------
# object reference counts
# --------------------------------------------------------------------------------------

class Token:
    """A unique object whose reference count nothing else touches."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return f"T{self.n}"


def _tokenize(recipe: S.Recipe, counter) -> S.Recipe:
    vals = np.empty(recipe.values.shape, dtype=object)
    for idx in np.ndindex(vals.shape):
        vals[idx] = Token(next(counter))
    return S.Recipe(vals, recipe.layout)


def _slots(a) -> dict:
    counts = {}
    if a is not None:
        for x in a.reshape(-1) if a.flags.c_contiguous else a.ravel(order="K"):
            counts[id(x)] = counts.get(id(x), 0) + 1
    return counts


@pytest.mark.parametrize("module", MODULES)
@given(case=S.cases(dtypes=[np.dtype(object)], reductions=("none",), updates_casts=False))
def test_object_reference_counts_are_kept(module, case):
    import itertools
    counter = itertools.count()
    case = dataclasses.replace(
        case, data=_tokenize(case.data, counter), updates=_tokenize(case.updates, counter),
        out=_tokenize(case.out, counter) if case.out is not None else None)
    p = case.prepare()
    pool = [x for a in (p.data, p.updates, p.out) if a is not None for x in a.ravel()]
    pool = list({id(x): x for x in pool}.values())
    out_before = _slots(p.out)
    before = [sys.getrefcount(x) for x in pool]
    result = p.call(module)
    after = [sys.getrefcount(x) for x in pool]
    in_result = _slots(result)
    for x, b, a in zip(pool, before, after):
        expected = in_result.get(id(x), 0) - out_before.get(id(x), 0)
        assert a - b == expected, f"{x!r}: reference count changed by {a - b}, expected {expected}"
    del result


@pytest.mark.parametrize("module", MODULES)
def test_object_reference_counts_unchanged_by_a_refused_call(module):
    data = np.array([Token(i) for i in range(4)], dtype=object)
    updates = np.array([Token(10), Token(11)], dtype=object)
    pool = list(data) + list(updates)
    before = [sys.getrefcount(x) for x in pool]
    for _ in range(3):
        with pytest.raises(IndexError):
            module.scatter_update(data, [0, 4], updates, out=data)
    after = [sys.getrefcount(x) for x in pool]
    assert after == before


# --------------------------------------------------------------------------------------
# large calls (the multi-threaded paths): against NumPy's ufunc.at directly
# --------------------------------------------------------------------------------------

def _numpy_scatter(data, dest, upd, reduction, include_self):
    """docs/contract.md's rule on flat destinations, in NumPy: assignment (last wins) or ufunc.at
    in update order, the first update assigned when not include_self, mean divided as
    docs/contract.md says."""
    out = data.copy()
    if reduction == "none":
        _, first_rev = np.unique(dest[::-1], return_index=True)
        last = dest.size - 1 - first_rev
        out[dest[last]] = upd[last]
        return out
    rest = np.ones(dest.size, dtype=bool)
    if not include_self:
        _, first = np.unique(dest, return_index=True)
        out[dest[first]] = upd[first]
        rest[first] = False
    S.UFUNC[reduction].at(out, dest[rest], upd[rest])
    if reduction == "mean":
        counts = np.bincount(dest, minlength=out.size) + (1 if include_self else 0)
        hit = np.bincount(dest, minlength=out.size) > 0
        kind = out.dtype.kind
        if kind == "i":
            res = out[hit].astype(np.int64) // counts[hit].astype(np.int64)
        elif kind == "u":
            res = out[hit].astype(np.uint64) // counts[hit].astype(np.uint64)
        elif kind == "f":
            res = out[hit].astype(np.float64) / counts[hit].astype(np.float64)
        else:
            res = out[hit].astype(np.complex128) / counts[hit].astype(np.float64)
        out[hit] = res.astype(out.dtype)
    return out


LARGE_DTYPES = ["f4", "f8", "f2", "i4", "u1", "i8", "c8", "?"]
LARGE = [(dt, red, inc) for dt in LARGE_DTYPES
         for red in ("none", "add", "sub", "mul", "max", "min", "mean")
         for inc in (True, False)
         if S.reduction_is_defined(red, dt) and not (red == "none" and not inc)]


def _large_values(rng, dtype, n):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = rng.uniform(0.5, 2.0, n)
        v[rng.integers(0, n, n // 1000)] = np.nan
        v[rng.integers(0, n, n // 1000)] = -0.0
        v[rng.integers(0, n, n // 1000)] = np.inf
        return v.astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(0.5, 2, n) + 1j * rng.uniform(-1, 1, n)).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)


@pytest.mark.parametrize("dtype,reduction,include_self", LARGE)
def test_large_scatter_elements_matches_numpy_ufunc_at(dtype, reduction, include_self):
    rng = np.random.default_rng(1234)
    n_data, n_upd = 1 << 14, 1 << 18
    data = _large_values(rng, dtype, n_data)
    idx = rng.integers(-n_data, n_data, n_upd)
    upd = _large_values(rng, dtype, n_upd)
    expected = _numpy_scatter(data, idx % n_data, upd, reduction, include_self)
    result = scatterops.scatter_elements(data, idx, upd, reduction=reduction, include_self=include_self)
    assert_identical(result, expected)


@pytest.mark.parametrize("reduction", ["none", "add", "max", "mean"])
@pytest.mark.parametrize("dtype", ["f4", "f2", "i2"])
def test_large_scatter_update_and_scatter_nd_match_numpy_ufunc_at(dtype, reduction):
    rng = np.random.default_rng(99)
    data = _large_values(rng, dtype, 256 * 64).reshape(256, 64)
    idx = rng.integers(-256, 256, (64, 64))
    upd = _large_values(rng, dtype, 64 * 64 * 64).reshape(64, 64, 64)
    dest = ((idx % 256)[:, :, None] * 64 + np.arange(64)).reshape(-1)
    expected = _numpy_scatter(data.reshape(-1), dest, upd.reshape(-1), reduction, True).reshape(256, 64)
    assert_identical(scatterops.scatter_update(data, idx, upd, 0, reduction=reduction), expected)

    data3 = data.reshape(32, 8, 64)
    idx3 = np.stack([rng.integers(-32, 32, 4096), rng.integers(0, 8, 4096)], axis=-1)
    upd3 = _large_values(rng, dtype, 4096 * 64).reshape(4096, 64)
    dest3 = (((idx3[:, 0] % 32) * 8 + idx3[:, 1])[:, None] * 64 + np.arange(64)).reshape(-1)
    expected3 = _numpy_scatter(data3.reshape(-1), dest3, upd3.reshape(-1), reduction, True)
    assert_identical(scatterops.scatter_nd(data3, idx3, upd3, reduction=reduction),
                     expected3.reshape(32, 8, 64))


@pytest.mark.parametrize("reduction", ["none", "add", "mean", "max"])
def test_thread_count_does_not_change_results(reduction):
    rng = np.random.default_rng(7)
    data = rng.standard_normal(1 << 16).astype(np.float32)
    idx = rng.integers(0, 1 << 16, 1 << 20)
    upd = rng.standard_normal(1 << 20).astype(np.float32)
    saved = scatterops.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            scatterops.set_num_threads(n)
            assert scatterops.get_num_threads() == n
            results.append(scatterops.scatter_elements(data, idx, upd, reduction=reduction))
    finally:
        scatterops.set_num_threads(saved)
    for res in results[1:]:
        assert_identical(res, results[0])
    assert_identical(results[0], _numpy_scatter(data, idx, upd, reduction, True))


@pytest.mark.parametrize("index_dtype", ["i1", "u1", ">i2", "u2", "i4", ">u4", "u8", ">i8"])
@pytest.mark.parametrize("reduction", ["none", "add", "min"])
def test_large_calls_with_any_index_dtype_and_strided_arrays(index_dtype, reduction):
    rng = np.random.default_rng(5)
    idt = np.dtype(index_dtype)
    n = min(100, np.iinfo(idt).max)                     # axis size the dtype can address
    base = rng.standard_normal((n, 2, 301)).astype(np.float32)
    data = base[::-1, 1, ::3]                            # (n, 101), negative and gapped strides
    signed = idt.kind == "i"
    idx = rng.integers(-n if signed else 0, n, (3000, 101)).astype(idt)
    upd_base = rng.standard_normal((101, 3000)).astype(np.float32)
    upd = upd_base.T                                     # transposed
    dest = ((idx.astype(np.int64) % n) * 101 + np.arange(101)).reshape(-1)
    expected = _numpy_scatter(np.ascontiguousarray(data).reshape(-1), dest, np.ascontiguousarray(upd).reshape(-1),
                              reduction, True).reshape(n, 101)
    assert_identical(scatterops.scatter_elements(data, idx, upd, 0, reduction=reduction), expected)
    out_base = np.zeros((2 * n, 203), np.float32)
    out = out_base[::2, 1::2]
    res = scatterops.scatter_elements(data, idx, upd, 0, reduction=reduction, out=out)
    assert res is out
    assert_identical(out, expected)
    assert not out_base[1::2].any() and not out_base[:, ::2].any()
    # in place on the strided view itself
    res = scatterops.scatter_elements(data, idx, upd, 0, reduction=reduction, out=data)
    assert res is data
    assert_identical(data, expected)
    assert_identical(base[::-1, 1, ::3], expected)


# --------------------------------------------------------------------------------------
# medium-sized random calls (threaded, bucketed paths) against NumPy directly
# --------------------------------------------------------------------------------------

TYPED_DTYPES = ["?", "i1", "u2", "i4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]


def _flat_destinations(func, shape, idx, axis):
    """Where each update element lands, as C-order flat offsets into data (NumPy only)."""
    lin = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    idx = idx.astype(np.int64)
    if func == "scatter_update":
        return np.take(lin, idx % shape[axis], axis=axis)
    if func == "scatter_nd":
        k = idx.shape[-1]
        return lin[tuple(idx[..., j] % shape[j] for j in range(k))]
    sub = lin[tuple(slice(None) if d == axis else slice(0, idx.shape[d]) for d in range(len(shape)))]
    return np.take_along_axis(sub, idx % shape[axis], axis=axis)


@st.composite
def medium_calls(draw):
    func = draw(st.sampled_from(FUNCS))
    dtype = np.dtype(draw(st.sampled_from(TYPED_DTYPES)))
    reduction = draw(st.sampled_from([r for r in S.REDUCTION_NAMES if S.reduction_is_defined(r, dtype)]))
    include_self = draw(st.booleans())
    n_upd = draw(st.sampled_from([1 << 14, 1 << 16, 1 << 17]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    r = draw(st.integers(1, 3))
    shape = []
    for _ in range(r):
        shape.append(draw(st.integers(1, max(1, 4096 // max(1, math.prod(shape)) if shape else 64))))
    shape = tuple(shape)
    axis = draw(st.integers(-r, r - 1))
    a = axis % r
    idt = np.dtype(draw(st.sampled_from(["i8", "i4", ">i8", "u4", "i2"])))
    if func == "scatter_update":
        rest = math.prod(shape) // shape[a]
        m = max(1, n_upd // rest)
        ishape = draw(st.sampled_from([(m,), (max(1, m // 4), 4), ()]))
        bounds = shape[a]
    elif func == "scatter_nd":
        k = draw(st.integers(1, r))
        m = max(1, n_upd // math.prod(shape[k:]))
        ishape = (m, k)
        bounds = np.array(shape[:k])
    else:
        ishape = tuple(shape[d] if d != a else max(1, n_upd * shape[a] // math.prod(shape))
                       for d in range(r))
        bounds = shape[a]
    lo = -bounds if idt.kind == "i" else 0 * bounds
    idx = rng.integers(lo, bounds, size=ishape).astype(idt)
    dest = _flat_destinations(func, shape, idx, a)
    data = _large_values(rng, dtype, math.prod(shape)).reshape(shape)
    updates = _large_values(rng, dtype, dest.size).reshape(dest.shape)
    layout = draw(st.sampled_from(["C", "reversed", "strided"]))
    if layout == "reversed":                 # negative strides on every axis
        data = np.ascontiguousarray(data[(slice(None, None, -1),) * r])[(slice(None, None, -1),) * r]
    elif layout == "strided":                # gaps between elements
        big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
        big[..., ::2] = data
        data = big[..., ::2]
    out_mode = draw(st.sampled_from(["none", "inplace", "separate"]))
    return func, data, idx, updates, axis, reduction, include_self, out_mode, dest


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(call=medium_calls())
def test_medium_random_calls_match_numpy_ufunc_at(call):
    func, data, idx, updates, axis, reduction, include_self, out_mode, dest = call
    note(f"{func} {data.dtype} shape={data.shape} idx={idx.shape}/{idx.dtype} axis={axis} "
         f"{reduction} include_self={include_self} out={out_mode}")
    expected = _numpy_scatter(np.ascontiguousarray(data).reshape(-1), dest.reshape(-1),
                              updates.reshape(-1), S.CANONICAL[reduction], include_self).reshape(data.shape)
    out = {"none": None, "inplace": data, "separate": np.empty_like(data)}[out_mode]
    args = (data, idx, updates) if func == "scatter_nd" else (data, idx, updates, axis)
    saved = scatterops.get_num_threads()
    scatterops.set_num_threads(2)
    try:
        result = getattr(scatterops, func)(*args, reduction=reduction, include_self=include_self, out=out)
    finally:
        scatterops.set_num_threads(saved)
    if out is not None:
        assert result is out
    # NaN sign and payload are promised for assignment only (README), as in the other properties
    assert_identical(result, expected, nans="bits" if S.CANONICAL[reduction] == "none" else "any")

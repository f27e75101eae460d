"""What scatterops._core exports so that Python reads the core's rules instead of writing
them again: KINDS, MODES, UFUNC_REDUCTIONS and TYPED_DTYPES agree with what the calls do,
and check_call applies every rule of a call but the range of its index values -- the same
exceptions with the same messages as the call, and the shape updates is broadcast to as
the reference reads it -- without running anything."""
import numpy as np
import pytest
from hypothesis import given

import scatterops
from scatterops import _core
from scatterops import _reference_checks as oracle

import strategies as S


def test_kinds_name_the_public_functions():
    assert sorted(_core.KINDS.values()) == [0, 1, 2]
    for name in _core.KINDS:
        assert getattr(scatterops, name).__name__ == name


def test_modes_are_the_names_the_calls_take():
    assert sorted(_core.MODES.values()) == list(range(len(_core.MODES)))
    for mode in _core.MODES:
        scatterops.scatter_elements(np.zeros(3), [5], [1.0], mode=mode) if mode != "raise" else None
    with pytest.raises(ValueError, match="mode must be one of"):
        scatterops.scatter_elements(np.zeros(3), [0], [1.0], mode="nearest")


def test_ufunc_reductions_are_the_ones_at_runs_in_c():
    assert set(_core.UFUNC_REDUCTIONS.values()) == {"add", "sub", "mul", "max", "min"}
    for ufunc, name in _core.UFUNC_REDUCTIONS.items():
        assert _core.REDUCTIONS[name] == name
        expected = np.zeros(4)
        ufunc.at(expected, [1, 1], 2.5)
        S.assert_identical(scatterops.scatter_elements(np.zeros(4), [1, 1], [2.5, 2.5],
                                                       reduction=name), expected)


BUILTIN = "?bBhHiIlLqQefdgFDGOmM"


@pytest.mark.parametrize("reduction", sorted(set(_core.REDUCTIONS.values())))
def test_typed_dtypes_are_the_ones_that_run_in_c(reduction):
    """a dtype of TYPED_DTYPES[reduction] runs in C, any other where the reduction is
    defined runs NumPy's ufunc.at (the core's count of those calls says which)"""
    typed = _core.TYPED_DTYPES[reduction]
    for char in BUILTIN:
        dt = np.dtype(char if char not in "mM" else char + "8[s]")
        data = np.zeros(3, dt) if dt.kind != "O" else np.array([0, 0, 0], object)
        before = _core.generic_calls()
        try:
            scatterops.scatter_elements(data, [1, 1], data[:2], reduction=reduction)
        except TypeError:       # not defined for the dtype
            assert char not in typed, f"{reduction} is typed for {dt} but refused"
            continue
        ran_in_numpy = _core.generic_calls() != before
        assert ran_in_numpy == (char not in typed), f"{reduction}, {dt}: typed {char in typed}"


def _as_called(case):
    args, kwargs = case.arguments()
    axis = args[3] if len(args) > 3 else 0
    return args[:3], axis, kwargs


def _check_call(case, args, axis, kwargs):
    return _core.check_call(_core.KINDS[case.func], *args, axis, kwargs["reduction"],
                            kwargs["include_self"], kwargs.get("mode", "raise"))


@given(case=S.cases(reductions=S.REDUCTION_NAMES, include_self=None, defined_only=False))
def test_check_call_gives_the_geometry_of_a_valid_call(case):
    args, axis, kwargs = _as_called(case)
    try:
        checked = oracle.check(case.func, *args, axis if case.func != "scatter_nd" else None,
                               kwargs["reduction"], kwargs["include_self"], None)
    except Exception as exc:      # the pair is not defined: the same error from both
        with pytest.raises(type(exc)) as got:
            _check_call(case, args, axis, kwargs)
        assert str(got.value) == str(exc)
        return
    assert _check_call(case, args, axis, kwargs) == (checked.updates.shape, checked.axis)


@given(bad=S.bad_calls())
def test_check_call_raises_what_the_call_raises(bad):
    """every defect but an index value out of range: the call's exception and message;
    an index value out of range is not check_call's (it checks no value)"""
    case = bad.call
    args, axis, kwargs = _as_called(case)
    kwargs.pop("out", None)
    with pytest.raises(Exception) as want:
        case.run()
    if bad.kind == "index_value":
        _check_call(case, args, axis, kwargs)
        return
    if bad.kind.startswith("out"):
        return                      # out= is the call's, not the geometry's
    with pytest.raises(type(want.value)) as got:
        _check_call(case, args, axis, kwargs)
    assert str(got.value) == str(want.value)


def test_check_call_runs_nothing():
    data = np.zeros(4)
    upd = np.ones(3)
    assert _core.check_call(_core.KINDS["scatter_elements"], data, [0, 9, -9], upd, 0,
                            "add", True, "raise") == ((3,), 0)
    assert not data.any()
    with pytest.raises(ValueError, match="kind must be a value of KINDS"):
        _core.check_call(7, data, [0], upd, 0, "add", True, "raise")

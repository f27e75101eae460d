"""Fuzzing: arbitrary arrays and arguments thrown at the three functions, and a
short smoke run of the coverage-guided target in fuzz/.

Every call either equals the reference bit for bit, or both raise the same
documented exception class, and an exception leaves data and out unchanged.
The inputs are drawn loosely on purpose -- wrong ranks, wrong dtypes, indices
anywhere in their dtype's range, odd axis and reduction values -- so most draws
are errors and some are valid calls.

The smoke run feeds fuzz/fuzz_scatter.py a fixed set of pseudo-random inputs for
each surface it drives (the three functions with mode=, scatterops.at, the Dask
routing, scatterops.dask, the group reductions), without atheris: it checks that the target still
decodes and checks every surface, not what a long run would find.
"""
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import scatterops as so
import scatterops.reference as ref
from numpy.exceptions import AxisError

import strategies as S
from extras import need

DOCUMENTED = (ValueError, TypeError, IndexError, AxisError, MemoryError)

DATA_DTYPES = [np.dtype(c) for c in ("?", "i1", "u2", "i8", "u8", "f2", "f4", "f8", "c8", "g",
                                     "m8[s]", "M8[s]", "O", "S3", "U2")] + [np.dtype(">f4"),
                                                                              np.dtype(">i4")]
INDEX_DTYPES = [np.dtype(c) for c in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", ">i8",
                                      ">u4", "?", "f8", "O")]
AXES = st.one_of(st.integers(-6, 6), st.just(None), st.just(1.0), st.just("0"),
                 st.just(np.int16(1)), st.just(np.array([0])), st.just(np.array([0, 1])),
                 st.just(True))
REDUCTIONS = st.sampled_from(["none", "add", "sum", "sub", "mul", "prod", "multiply", "max",
                              "amax", "min", "amin", "mean", "avg", "", "ADD", None, 3])


def _arrays(dtypes, max_dims=4):
    def build(dtype):
        if dtype.kind == "O":
            return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0,
                                                      max_side=3),
                              elements=st.integers(-5, 5))
        if dtype.kind in "mM":
            return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0,
                                                      max_side=3),
                              elements=st.integers(-10, 10).map(lambda v: np.array(v, dtype)))
        return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0,
                                                  max_side=3))
    return st.sampled_from(dtypes).flatmap(build)


def _outcome(module, func, data, indices, updates, axis, reduction, include_self, out_mode):
    data = data.copy()
    before = data.copy()
    kw = dict(reduction=reduction, include_self=include_self)
    out = None
    if out_mode == "inplace":
        out = data
    elif out_mode == "separate":
        out = np.zeros_like(data)
    elif out_mode == "readonly":
        out = np.zeros_like(data)
        out.flags.writeable = False
    elif out_mode == "wrongshape":
        out = np.zeros((2,) + data.shape, data.dtype)
    out_before = None if out is None else out.copy()
    args = (data, indices, updates) if func == "scatter_nd" else (data, indices, updates, axis)
    try:
        result = getattr(module, func)(*args, **kw, out=out)
    except DOCUMENTED as exc:
        if out_mode != "inplace":
            S.assert_identical(data, before, where="data after an error")
        if out is not None:
            S.assert_identical(out, out_before, where="out after an error")
        return type(exc), None
    return None, result


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(func=st.sampled_from(S.FUNCS), data=_arrays(DATA_DTYPES),
       indices=st.one_of(_arrays(INDEX_DTYPES), st.lists(st.integers(-4, 4), max_size=4),
                         st.integers(-3, 3), st.just([[0, 1], [2]])),
       updates=st.one_of(_arrays(DATA_DTYPES), st.floats(allow_nan=True), st.integers(-3, 3),
                         st.just([])),
       axis=AXES, reduction=REDUCTIONS, include_self=st.sampled_from([True, False, 1, None]),
       out_mode=st.sampled_from(["none", "inplace", "separate", "readonly", "wrongshape"]))
def test_arbitrary_calls_equal_the_reference_or_raise_a_documented_error(
        func, data, indices, updates, axis, reduction, include_self, out_mode):
    if isinstance(indices, np.ndarray) and indices.dtype.kind in "iu" and indices.size:
        # keep most index values near the axis sizes, so that some calls are valid
        indices = (indices % 7 - 3).astype(indices.dtype) if indices.dtype.kind == "i" \
            else (indices % 4).astype(indices.dtype)
    exc_c, res_c = _outcome(so, func, data, indices, updates, axis, reduction, include_self,
                            out_mode)
    exc_r, res_r = _outcome(ref, func, data, indices, updates, axis, reduction, include_self,
                            out_mode)
    assert exc_c == exc_r, (exc_c, exc_r)
    event("valid call" if exc_c is None else f"raised {exc_c.__name__}")
    if exc_c is None:
        # the very objects only where updates already held them: a Python float or a
        # float array cast to object makes new float objects on each conversion
        held = isinstance(updates, np.ndarray) and updates.dtype == object
        S.assert_identical(res_c, res_r, "is" if held else "eq")


@pytest.mark.parametrize("func", S.FUNCS)
def test_huge_and_extreme_index_values_are_index_errors(func):
    data = np.zeros((3, 3))
    for dt, v in ((np.int64, np.iinfo(np.int64).min), (np.int64, np.iinfo(np.int64).max),
                  (np.uint64, 2**63), (np.uint64, 2**64 - 1), (np.int8, -128)):
        if func == "scatter_nd":
            idx, upd = np.array([[0, 0], [v, 0]], dt), np.ones(2)
            args = (data, idx, upd)
        elif func == "scatter_update":
            args = (data, np.array([0, v], dt), np.ones((2, 3)))
        else:
            args = (data, np.array([[0, v, 0]], dt), np.ones((1, 3)))
        before = data.copy()
        with pytest.raises(IndexError, match=str(v)):
            getattr(so, func)(*args, out=data)
        assert (data == before).all()


FUZZ_DIR = Path(__file__).resolve().parent.parent / "fuzz"
SMOKE_INPUTS = 60        # per surface: a few seconds in all

#: Bugs the fuzz target finds in the current package, by the signature of the finding:
#: the smoke run warns about these and fails on any other.  Delete an entry with its fix.
OPEN_FINDINGS = {
}


def _fuzz_target():
    sys.path.insert(0, str(FUZZ_DIR))
    try:
        import fuzz_scatter
    finally:
        sys.path.remove(str(FUZZ_DIR))
    return fuzz_scatter


@pytest.mark.parametrize("surface", ["scatter_update", "scatter_nd", "scatter_elements", "at",
                                     "route", "dask", "groups"])
def test_the_fuzz_target_checks_every_surface(surface):
    if surface == "dask":
        need("dask")
    target = _fuzz_target()
    # the target reads its surface from the input's last byte
    last = bytes([target.SURFACES.index(surface)])
    rng = random.Random(f"smoke {surface}")
    target.STATS.clear()
    open_seen = set()
    for _ in range(SMOKE_INPUTS):
        try:
            target.TestOneInput(rng.randbytes(rng.choice((16, 64, 256, 1024))) + last)
        except target.Finding as finding:
            known = [name for name, match in OPEN_FINDINGS.items() if match(finding.sig)]
            if not known:
                raise
            open_seen.update(known)
    for name in sorted(open_seen):
        warnings.warn(f"the fuzz target meets an open bug: {name}", stacklevel=1)
    outcomes = {k[1]: n for k, n in target.STATS.items() if k[0] == surface}
    assert sum(outcomes.values()) == SMOKE_INPUTS, outcomes
    assert outcomes.get("valid", 0) >= SMOKE_INPUTS // 5, outcomes


# (bytes, [(call, arguments, what atheris 3.0.0's FuzzedDataProvider returns)])
ATHERIS_READS = [
    (bytes(range(1, 20)), [("int", (0, 99), 19), ("int", (0, 99), 18), ("int", (0, 99), 17),
                           ("bytes", 3, b"\x01\x02\x03"), ("int", (-5, 5), 0),
                           ("int", (0, 1000), 851), ("int", (0, 2 ** 31), 218893066)]),
    (bytes(range(1, 10)), [("int", (0, 2 ** 40), 34477573371), ("bytes", 5, b"\x01\x02\x03")]),
    (b"\x05\x07\x09\xff\x10\x20", [("int", (0, 99), 32), ("int", (0, 99), 16),
                                      ("int", (0, 99), 55), ("bytes", 3, b"\x05\x07\x09"),
                                      ("int", (-5, 5), -5), ("int", (0, 1000), 0)]),
    (b"\x01", [("int", (0, 1000), 1), ("int", (3, 10), 3), ("bytes", 5, b"")]),
]


def test_the_fuzz_target_decodes_as_atheris_does():
    """Without atheris the target reads the bytes as atheris' FuzzedDataProvider does
    (integers from the end, bytes from the front), so a finding replays the same call
    either way."""
    target = _fuzz_target()
    for buf, reads in ATHERIS_READS:
        src = target._BytesProvider(buf)
        for call, args, expected in reads:
            got = src.ConsumeIntInRange(*args) if call == "int" else src.ConsumeBytes(args)
            assert got == expected, (buf, call, args)

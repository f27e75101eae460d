"""tests/fast_reference.py, the whole-array form of the reference that the large-call tests
compare against, gives the reference's bits: on every call the properties draw (every
function, dtype, layout, reduction, include_self, out mode: the calls it leaves to the
reference too), and on larger calls with many repeated and negative indices."""
import numpy as np
import pytest
from hypothesis import given

import fast_reference
import strategies as S
from scatterops import reference
from scatterops.strategies import assert_identical


def _outcome(case, module):
    p = case.prepare()
    try:
        return p.call(module), None
    except Exception as exc:                      # noqa: BLE001 - compared below
        return None, exc


#: the dtypes this module computes whole-array (native bool, int, float and complex, no
#: longdouble); the other dtypes go to the reference, drawn in the property after this one
WHOLE_ARRAY_DTYPES = [d for d in S.BOOL_DTYPES + S.INT_DTYPES + S.FLOAT_DTYPES + S.COMPLEX_DTYPES
                      if d.isnative and d.itemsize <= (16 if d.kind == "c" else 8)]


@given(S.cases(dtypes=WHOLE_ARRAY_DTYPES, include_self=True, out_modes=("none",),
               reductions=("none", "add", "sub", "mul", "max", "min", "mean"), defined_only=True))
def test_the_calls_it_computes_give_the_reference_result(case):
    _same_outcome(case)


@given(S.cases(reductions=S.REDUCTION_NAMES, include_self=None))
def test_every_drawn_call_gives_the_reference_result_or_error(case):
    _same_outcome(case)


def _same_outcome(case):
    want, want_exc = _outcome(case, reference)
    got, got_exc = _outcome(case, fast_reference)
    if want_exc is not None:
        assert type(got_exc) is type(want_exc) and str(got_exc) == str(want_exc), (got_exc, want_exc)
        return
    assert got_exc is None, got_exc
    assert_identical(got, want, case.object_compare, nans=case.nans)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint64", "int64", "complex64",
                                   "bool"])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min", "mean"])
def test_larger_calls_with_repeats_give_the_reference_result(dtype, reduction):
    if not S.reduction_is_defined(reduction, np.dtype(dtype)):
        pytest.skip("NumPy has no loop for this reduction and dtype (tested above)")
    rng = np.random.default_rng(7)
    d3 = (rng.standard_normal((6, 5, 4)) * 50).astype(dtype)
    upd = (rng.standard_normal((300, 5, 4)) * 50).astype(dtype)
    calls = [
        ("scatter_elements", (d3.reshape(-1), rng.integers(-120, 120, 2000),
                              (rng.standard_normal(2000) * 50).astype(dtype)), {}),
        ("scatter_elements", (d3, rng.integers(-5, 5, (6, 9, 4)),
                              (rng.standard_normal((6, 9, 4)) * 50).astype(dtype)), {"axis": 1}),
        ("scatter_update", (d3, rng.integers(-6, 6, (30, 10)),
                            (rng.standard_normal((30, 10, 5, 4)) * 50).astype(dtype)), {}),
        ("scatter_update", (d3, rng.integers(-4, 4, 40),
                            (rng.standard_normal((6, 5, 40)) * 50).astype(dtype)), {"axis": 2}),
        ("scatter_nd", (d3, np.stack([rng.integers(-6, 6, 300), rng.integers(-5, 5, 300)], 1),
                        (rng.standard_normal((300, 4)) * 50).astype(dtype)), {}),
        ("scatter_nd", (d3, rng.integers(-6, 6, (300, 1)), upd), {}),
    ]
    for func, args, kw in calls:
        want = getattr(reference, func)(*args, reduction=reduction, **kw)
        got = getattr(fast_reference, func)(*args, reduction=reduction, **kw)
        assert_identical(got, want, where=f"{func} {kw}")

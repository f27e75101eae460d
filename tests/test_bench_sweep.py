"""benchmarks/sweep.py: every performance-v2 case builds and runs at tiny sizes, scatterops'
result matching NumPy's, and -k selects the cases by their keys (the benchmark's own code)."""
import os
import sys

import numpy as np
import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

from benchmarks import core, run, sweep, targets  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_every_v2_case_runs_at_tiny_sizes_and_matches_numpy():
    cases = sweep.sweep_cases(quick=True, shrink=10**4)
    assert len({c.key for c in cases}) == len(cases)
    for case in cases:
        x = case.make()
        impls = [im for im in case.impls if im.peer in ("numpy", "scatterops")]
        got = {}
        for im in impls:
            xx = dict(x, data=x["data"].copy()) if case.inplace else x
            got[im.label] = np.array(im.build(xx)(), copy=True)
        ref = got[next(im.label for im in impls if im.peer == "scatterops")]
        assert ref.shape == x["data"].shape and ref.dtype == x["data"].dtype, case.key
        for im in impls:
            status, note = core.check_result(im, got[im.label], ref, x["data"], None)
            assert status in ("ok", "~"), (case.key, im.label, note)


def test_v2_keys_select_their_cases():
    cases = sweep.sweep_cases(quick=True, shrink=10**4)

    def keys(pattern):
        return {c.key for c in cases if run.selected(c, pattern)}
    assert keys("sweep") == {c.key for c in cases if c.key.startswith("sweep-")} and keys("sweep")
    assert keys("hist") == {"hist-1e2", "hist-1e3"}
    assert keys("pyg") == {"pyg-dense", "pyg-bcast"}
    assert keys("v2") == {c.key for c in cases}


def test_targets_judge_the_numba_loop_apart_in_cache_at_one_thread():
    case = sweep.case_1d("t", "t: x", 1000, 10)

    def row_of(threads, so_t, numba_t, other_t, out_size=1000):
        case.out_size = out_size
        row = run.Row(case, threads=threads)
        for peer, t in (("scatterops", so_t), ("numba", numba_t), ("torch", other_t)):
            im = next(i for i in case.impls if i.peer == peer)
            row.results.append(run.Result(im, "ok", time=t))
        return row
    cols = ["numba", "torch", "scatterops"]
    assert targets.v2_target(row_of(1, 1.1, 1.0, 2.0), {}, cols)[1] is True      # within 1.2x
    assert targets.v2_target(row_of(1, 1.3, 1.0, 2.0), {}, cols)[1] is False     # not within
    assert targets.v2_target(row_of(2, 1.1, 1.0, 2.0), {}, cols)[1] is False     # 2t: beat it
    big = 10**7
    assert targets.v2_target(row_of(2, 1.0, 1.4, 9.0, big), {}, cols)[1] is False  # 1.5x needed
    assert targets.v2_target(row_of(2, 1.0, 1.5, 9.0, big), {}, cols)[1] is True


def test_int32_is_judged_against_its_int64_twin_from_the_same_rounds():
    cases = {c.key: c for c in sweep.sweep_cases(quick=True, shrink=10**4)}
    case = cases["idx-int32-1e2"]
    twin = next(im for im in case.impls if im.peer == targets.TWIN)
    x = case.make()
    own = next(im for im in case.impls if im.peer == "scatterops")
    assert np.array_equal(twin.build(x)(), own.build(x)())          # the same call, int64 indices
    assert not any(im.peer == targets.TWIN for c in cases.values() if c.key != case.key
                   for im in c.impls if "int32" not in c.key)

    def row_of(so_t, twin_t, other_row_t):
        row = run.Row(case, threads=2)
        row.results.append(run.Result(own, "ok", time=so_t))
        if twin_t is not None:
            row.results.append(run.Result(twin, "ok", time=twin_t))
        other = run.Row(cases["idx-int64-1e2"], threads=2)
        other.results.append(run.Result(own, "ok", time=other_row_t))
        return row, {("idx-int64-1e2", 2): other}
    cols = ["scatterops"]
    # the twin decides, whatever the int64 row (timed at another moment) says
    assert targets.v2_target(*row_of(1.0, 1.1, 0.5), cols)[1] is True
    assert targets.v2_target(*row_of(1.1, 1.0, 2.0), cols)[1] is False
    # without a twin (an older run's rows), the int64 row decides
    assert targets.v2_target(*row_of(1.0, None, 0.5), cols)[1] is False
    assert targets.v2_target(*row_of(1.0, None, 2.0), cols)[1] is True

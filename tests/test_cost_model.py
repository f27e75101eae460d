"""The cost model (call/cost.h, walk/split.c, base/threads.c): a call that threads cannot
speed up runs on the calling thread, and whatever the model decides -- threads, one thread, a
split handed back by a busy pool -- the result has the bits of the reference."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)


@pytest.fixture
def cost_model():
    before = so.get_num_threads()
    was = _core.set_cost_model(True)
    yield
    _core.set_cost_model(was)
    so.set_num_threads(before)


def _small_out_call(inplace):
    # 1e5 updates into 1e3 float32 (4 KB: in any L1): split by index value, every thread
    # would read all 1e5 indices to apply its half of them
    rng = np.random.default_rng(5)
    d = rng.random(1000, dtype=np.float32)
    i = rng.integers(0, 1000, 100000)
    u = rng.random(100000, dtype=np.float32)
    if inplace:
        return lambda: so.scatter_elements(d, i, u, 0, reduction="add", out=d)
    return lambda: so.scatter_elements(d, i, u, 0, reduction="add")


@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "in-place"])
def test_a_call_into_a_small_out_runs_on_one_thread(inplace, cost_model):
    call = _small_out_call(inplace)
    so.set_num_threads(2)
    _core.set_cost_model(False)         # the control: without the model, split over two
    _core.threads_asked()
    call()
    assert _core.threads_asked() == 2
    _core.set_cost_model(True)
    call()
    assert _core.threads_asked() <= 1


def _owned_calls():
    """Calls the model splits by index value (out beyond any L2, and beyond the 12 MiB from
    which single elements split with AVX2's compaction too: 2**22 float32, 16 MiB), out of
    place (the owners check the indices) and the mean (the owners count hits)."""
    rng = np.random.default_rng(6)
    n = 1 << 22
    d = rng.standard_normal(n).astype(np.float32)
    i = rng.integers(-n, n, 150000)
    u = rng.standard_normal(150000).astype(np.float32)
    return [(d, i, u, red) for red in ("add", "max", "none", "mean")]


def test_many_callers_with_the_model_give_the_reference(cost_model):
    # four Python threads share one pool: a call that finds it busy runs alone in one piece
    # (one owner of everything, checking or counting), and the pool backs off kinds of calls
    # whose workers come late; every way gives the reference's bits
    so.set_num_threads(2)
    calls = _owned_calls()
    want = [reference.scatter_elements(d, i, u, 0, reduction=r).tobytes() for d, i, u, r in calls]
    bad = calls[0][1].copy()
    bad[-1] = len(calls[0][0])

    def run(k):
        failures = []
        for _ in range(2):
            for j, (d, i, u, r) in enumerate(calls):
                if so.scatter_elements(d, i, u, 0, reduction=r).tobytes() != want[j]:
                    failures.append((k, j))
            with pytest.raises(IndexError):
                so.scatter_elements(calls[0][0], bad, calls[0][2], 0, reduction="add")
        return failures

    with ThreadPoolExecutor(4) as pool:
        assert [f for fs in pool.map(run, range(4)) for f in fs] == []


# large calls through the loops the rest of the suite runs under the sanitizers: there, 14 s
# for a decision of the model, not a path of its own; the plain suite runs them
@pytest.mark.slow
@pytest.mark.parametrize("idx_dtype", [np.int8, np.int32, np.uint64, np.int64])
@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "in-place"])
def test_one_thread_calls_of_the_model_on_two_threads_give_the_reference(idx_dtype, inplace,
                                                                         cost_model):
    # 1e5 updates into 100 float32: the model keeps it on one thread, and a 1-D call with
    # narrow indices (or in place) then takes the direct form, on two threads as on one
    rng = np.random.default_rng(8)
    d = rng.standard_normal(100).astype(np.float32)
    lo = -100 if np.issubdtype(idx_dtype, np.signedinteger) else 0
    i = rng.integers(lo, 100, 100000).astype(idx_dtype)
    u = rng.standard_normal(100000).astype(np.float32)
    so.set_num_threads(2)
    for red in ("add", "max", "mul"):
        want = reference.scatter_elements(d, i, u, 0, reduction=red)
        out = d.copy() if inplace else None
        _core.threads_asked()
        got = so.scatter_elements(d, i, u, 0, reduction=red, out=out)
        assert _core.threads_asked() <= 1
        assert got.tobytes() == want.tobytes()
        bad = i.copy()
        bad[-1] = 100
        keep = None if out is None else out.copy()
        with pytest.raises(IndexError, match=r"indices\[99999\] = 100 "):
            so.scatter_elements(d, bad, u, 0, reduction=red, out=out)
        if out is not None:
            assert out.tobytes() == keep.tobytes()


@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "in-place"])
def test_a_1d_call_into_an_out_in_l2_runs_the_direct_form_on_two_threads(idx_dtype, inplace,
                                                                        cost_model):
    # 2**19 updates into 40960 float32 (160 KiB: past a core's L1, inside its L2 on any CPU
    # this runs on): split by index value, each of two threads would read every index to
    # apply its half of them, slower than the direct form on one (call/cost.c,
    # so_direct_form_pays), out of place with intp indices as with any
    rng = np.random.default_rng(9)
    n, m = 40960, (1 << 19) + 3
    d = rng.standard_normal(n).astype(np.float32)
    i = rng.integers(-n, n, m).astype(idx_dtype)
    u = rng.standard_normal(m).astype(np.float32)
    want = d.copy()
    np.add.at(want, i, u)               # the reference's bits for "add", sooner
    so.set_num_threads(2)
    out = d.copy() if inplace else None
    _core.set_cost_model(False)         # the control: without the model, split over two
    _core.threads_asked()
    so.scatter_elements(d, i, u, 0, reduction="add", out=None if out is None else d.copy())
    assert _core.threads_asked() == 2
    _core.set_cost_model(True)
    _core.threads_asked()
    got = so.scatter_elements(d, i, u, 0, reduction="add", out=out)
    assert _core.threads_asked() <= 1
    assert got.tobytes() == want.tobytes()


_FAR_CHILD = """
import numpy as np
import scatterops as so
from scatterops import _core
avx512, avx2 = _core.cpu_features()[1:]
assert not avx512
so.set_num_threads(2)
l2, half_l3 = _core.cache_bytes(2), _core.cache_bytes(3) // 2
far = min(half_l3, 12 << 20)
rng = np.random.default_rng(10)
m = (1 << 17) + 5
asked = []
for n in (far // 4, far // 4 + (1 << 20)):      # float32: out of `far` bytes, then 4 MiB more
    if n * 4 <= l2:
        asked.append(None)
        continue
    d = rng.standard_normal(n).astype(np.float32)
    i = rng.integers(-n, n, m)
    u = rng.standard_normal(m).astype(np.float32)
    want = d.copy()
    np.add.at(want, i, u)
    for inplace in (False, True):
        out = d.copy() if inplace else None
        _core.set_cost_model(True)          # forgets what the back-off learnt
        _core.threads_asked()
        direct = _core.direct_calls() + _core.direct_one_pass()
        got = so.scatter_elements(d, i, u, 0, reduction="add", out=out)
        # the direct form, or the most tasks of a job (the copy of data too, out of place)
        direct = _core.direct_calls() + _core.direct_one_pass() > direct
        asked.append("direct" if direct else _core.threads_asked())
        assert got.tobytes() == want.tobytes()
print(avx2, asked)
"""


@pytest.mark.slow       # a child process and 32 MiB of arrays: the plain suite's
def test_with_avx2s_compaction_single_elements_split_by_value_only_beyond_12_mib():
    # without AVX-512 (turned off in a child), 1-D adds into an out beyond L2 but of at most
    # min(12 MiB, half of L3) run the one-thread direct form on two threads: an owner's
    # compaction of every index costs more there than half of the updates saves; beyond it,
    # the split by index value.  Every way gives the reference's bits
    env = dict(os.environ, SCATTEROPS_NO_AVX512="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(so.__file__)),
                                         env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", _FAR_CHILD], env=env, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    avx2, asked = res.stdout.split(" ", 1)
    asked = eval(asked)
    if avx2 != "True":
        pytest.skip("this CPU (or build) has no AVX2: the compaction is scalar, its own rule")
    near, far = asked[:-2], asked[-2:]
    assert all(a in (None, "direct") for a in near), asked
    assert far == [2, 2], asked


@pytest.mark.skipif(not _core.cpu_features()[1], reason="this CPU (or build) has no AVX-512")
def test_with_avx512s_compaction_single_elements_split_by_value_beyond_l2(cost_model):
    # with AVX-512's compaction the split by index value pays into any out beyond L2: 2**20
    # float32 (4 MiB, beyond every L2 in use) on two threads
    rng = np.random.default_rng(11)
    n, m = 1 << 20, (1 << 17) + 5
    d = rng.standard_normal(n).astype(np.float32)
    i = rng.integers(-n, n, m)
    u = rng.standard_normal(m).astype(np.float32)
    want = d.copy()
    np.add.at(want, i, u)
    so.set_num_threads(2)
    _core.set_cost_model(True)
    _core.threads_asked()
    direct = _core.direct_calls() + _core.direct_one_pass()
    got = so.scatter_elements(d, i, u, 0, reduction="add")
    assert _core.direct_calls() + _core.direct_one_pass() == direct
    assert _core.threads_asked() == 2
    assert got.tobytes() == want.tobytes()


def _four_callers_fail(call, d, want, inplace):
    """Four Python threads make six calls each at once (they share one pool: calls find it busy
    and their kind is marked late); ``call(out)`` with out None (a fresh result) or a copy of
    ``d`` (in place).  -> how many results differ from the bytes ``want``."""
    def run(k):
        failures = 0
        for _ in range(6):
            if inplace:
                out = d.copy()
                call(out)
            else:
                out = call(None)
            failures += out.tobytes() != want
        return failures

    with ThreadPoolExecutor(4) as pool:
        return sum(pool.map(run, range(4)))


@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "in-place"])
def test_a_backed_off_owned_split_takes_the_direct_form(cost_model, inplace):
    # into an out beyond L2 the model splits by index value on two threads; four callers
    # share one pool, so calls find it busy and the kind is marked late: its next calls run
    # the one-thread direct form (faster alone than the split's tasks one after another),
    # counted by _core.direct_calls(); every way gives the reference's bits
    so.set_num_threads(2)
    (d, i, u, _), = _owned_calls()[:1]
    want = reference.scatter_elements(d, i, u, 0, reduction="add").tobytes()
    before = _core.direct_calls()

    assert _four_callers_fail(lambda out: so.scatter_elements(d, i, u, 0, reduction="add",
                                                             out=out), d, want, inplace) == 0
    assert _core.direct_calls() > before


@pytest.mark.parametrize("inplace", [False, True], ids=["fresh", "in-place"])
def test_a_backed_off_rows_split_takes_the_row_loop(cost_model, inplace):
    # rows of 64 float32 (wider than two cache lines) into an out beyond L2: on two threads the
    # model splits them; four callers share one pool, calls find it busy and the kind is
    # marked late, and its next calls run the one-thread row loop (counted by
    # _core.rows_direct_calls()), not the plain walk; every way gives the reference's bits
    so.set_num_threads(2)
    rng = np.random.default_rng(7)
    d = rng.standard_normal((1 << 15, 64)).astype(np.float32)        # 8 MiB
    i = rng.integers(-(1 << 15), 1 << 15, 2048)
    u = rng.standard_normal((2048, 64)).astype(np.float32)
    want = reference.scatter_update(d, i, u, reduction="add").tobytes()
    before = _core.rows_direct_calls()

    assert _four_callers_fail(lambda out: so.scatter_update(d, i, u, reduction="add", out=out),
                              d, want, inplace) == 0
    assert _core.rows_direct_calls() > before


def _pool_totals():
    t = _core.job_tally()
    return [sum(v[f] for v in t.values()) for f in range(6)]


def test_the_job_tally_counts_every_threaded_call(cost_model):
    # _core.job_tally: per kind of job, (run, late: caller ran all / waited / off its CPU,
    # declined, handed back).  Every call the model splits is run on the pool or declined by
    # it; a call on one thread never reaches the pool; a late verdict is one of a job run.
    d, i, u, _ = _owned_calls()[0]
    so.set_num_threads(1)
    before = _pool_totals()
    so.scatter_elements(d, i, u, 0, reduction="add", out=d.copy())
    assert _pool_totals() == before
    so.set_num_threads(2)
    for k in range(1, 6):
        so.scatter_elements(d, i, u, 0, reduction="add", out=d.copy())
        now = _pool_totals()
        assert now[0] + now[4] + now[5] - (before[0] + before[4] + before[5]) >= k
    for kind, v in _core.job_tally().items():
        assert 0 <= kind < 1024 and sum(v[1:4]) <= v[0], (kind, v)

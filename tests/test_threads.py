"""Threads: results are bit-identical for every thread count, the thread count is
set as docs/contract.md says, and the module works in a child made by os.fork()."""
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import scatterops as so
from conftest import TEST_THREAD_CAP
from extras import need


@pytest.fixture
def restore_threads():
    before = so.get_num_threads()
    yield
    so.set_num_threads(before)


def _large_calls():
    """Calls big enough to be split, one for each way the C core splits work."""
    rng = np.random.default_rng(42)
    calls = []
    # a group dim that addresses out (scatter_update's leading dims)
    data = rng.standard_normal((64, 50, 40)).astype(np.float32)
    idx = rng.integers(-50, 50, (30,))
    upd = rng.standard_normal((64, 30, 40)).astype(np.float32)
    for red in ("none", "add", "max", "mean"):
        calls.append(("update-" + red, so.scatter_update, (data, idx, upd),
                      dict(axis=1, reduction=red)))
    # slices owned by destination (expanded row index, as in message passing)
    rows = rng.integers(-2000, 2000, 40000)
    x = rng.standard_normal((2000, 16)).astype(np.float32)
    msg = rng.standard_normal((40000, 16)).astype(np.float32)
    ei = np.broadcast_to(rows[:, None], msg.shape)
    for red in ("none", "add", "max", "mean", "mul"):
        calls.append(("rows-" + red, so.scatter_elements, (x, ei, msg), dict(axis=0, reduction=red)))
    calls.append(("rows-add-noself", so.scatter_elements, (x, ei, msg),
                  dict(axis=0, reduction="add", include_self=False)))
    # element-wise scatter_nd (partitioned), many duplicates
    d1 = np.zeros(5000, np.float32)
    i1 = rng.integers(-5000, 5000, (400000, 1))
    u1 = rng.standard_normal(400000).astype(np.float32)
    for red in ("none", "add", "min", "sub"):
        calls.append(("elem-" + red, so.scatter_nd, (d1, i1, u1), dict(reduction=red)))
    d16 = np.zeros(3000, np.float16)
    calls.append(("elem-f16-add", so.scatter_nd, (d16, i1 % 3000, u1.astype(np.float16)),
                  dict(reduction="add")))
    # no dim addresses out and out is larger than the cache: the threads split the
    # values of the first index component (walk/split.c, SO_SPLIT_OWNED; 4 MiB or more)
    big = rng.standard_normal(1 << 20).astype(np.float32)
    ib = rng.integers(-(1 << 20), 1 << 20, (300000, 1))
    ub = rng.standard_normal(300000).astype(np.float32)
    for red in ("none", "add", "max", "mean"):
        calls.append(("owned-elem-" + red, so.scatter_nd, (big, ib, ub), dict(reduction=red)))
    calls.append(("owned-elem-mul-noself", so.scatter_nd, (big, ib, ub),
                  dict(reduction="mul", include_self=False)))
    calls.append(("owned-elem-f16-add", so.scatter_elements,
                  (np.zeros(1 << 21, np.float16), ib[:, 0] * 2, ub.astype(np.float16)),
                  dict(reduction="add")))
    big2 = rng.standard_normal((1100, 1000)).astype(np.float32)
    i2k = np.stack([rng.integers(-1100, 1100, 200000), rng.integers(-1000, 1000, 200000)], -1)
    calls.append(("owned-k2-add", so.scatter_nd, (big2, i2k, ub[:200000]), dict(reduction="add")))
    calls.append(("owned-k2-none", so.scatter_nd, (big2, i2k, ub[:200000]), dict(reduction="none")))
    orows = rng.integers(-70000, 70000, 60000)
    ox = rng.standard_normal((70000, 16)).astype(np.float32)
    omsg = rng.standard_normal((60000, 16)).astype(np.float32)
    oei = np.broadcast_to(orows[:, None], omsg.shape)
    for red in ("add", "max", "mean"):
        calls.append(("owned-rows-" + red, so.scatter_elements, (ox, oei, omsg),
                      dict(axis=0, reduction=red)))
    calls.append(("owned-rows-min-noself", so.scatter_elements, (ox, oei, omsg),
                  dict(axis=0, reduction="min", include_self=False)))
    calls.append(("owned-update-rows-add", so.scatter_update, (ox, orows, omsg),
                  dict(axis=0, reduction="add")))
    # a block dim split (scatter_nd slices, k < r)
    d2 = rng.standard_normal((40, 3000)).astype(np.float64)
    i2 = rng.integers(0, 40, (100, 1))
    u2 = rng.standard_normal((100, 3000))
    calls.append(("slices-add", so.scatter_nd, (d2, i2, u2), dict(reduction="add")))
    calls.append(("slices-none", so.scatter_nd, (d2, i2, u2), dict(reduction="none")))
    return calls


@pytest.mark.parametrize("name,func,args,kwargs", _large_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_results_bit_identical_for_1_2_3_threads(name, func, args, kwargs, restore_threads):
    results = []
    for n in (1, 2, 3):
        so.set_num_threads(n)
        results.append(func(*args, **kwargs))
        # in place as well
        out = np.array(args[0], copy=True)
        func(*args, **kwargs, out=out)
        assert out.tobytes() == results[-1].tobytes()
    assert results[0].tobytes() == results[1].tobytes() == results[2].tobytes()


def test_threaded_add_equals_ufunc_at(restore_threads):
    rng = np.random.default_rng(7)
    d = rng.standard_normal(10000).astype(np.float32)
    i = rng.integers(0, 10000, 500000)
    u = rng.standard_normal(500000).astype(np.float32)
    expected = d.copy()
    np.add.at(expected, i, u)
    for n in (1, 2, 3):
        so.set_num_threads(n)
        assert so.scatter_nd(d, i[:, None], u, reduction="add").tobytes() == expected.tobytes()


@pytest.mark.parametrize("red", ["add", "max", "min", "none", "mean"])
def test_owned_split_equals_the_reference(red, restore_threads):
    # the split by index value against the plain NumPy reference, at 2 and 3 threads
    import fast_reference as reference     # the reference's bits, whole-array
    rng = np.random.default_rng(11)
    d = rng.standard_normal(1 << 20).astype(np.float32)
    i = rng.integers(-(1 << 20), 1 << 20, (200000, 1))
    u = rng.standard_normal(200000).astype(np.float32)
    expected = reference.scatter_nd(d, i, u, reduction=red)
    for n in (2, 3):
        so.set_num_threads(n)
        assert so.scatter_nd(d, i, u, reduction=red).tobytes() == expected.tobytes()
        rows = i[:4000, 0] % 70000
        x = np.resize(d, (70000, 16))
        msg = u[:4000 * 16].reshape(4000, 16)
        ei = np.broadcast_to(rows[:, None], msg.shape)
        expected_rows = reference.scatter_elements(x, ei, msg, axis=0, reduction=red)
        assert so.scatter_elements(x, ei, msg, axis=0, reduction=red).tobytes() == \
            expected_rows.tobytes()


def test_set_get_num_threads(restore_threads):
    so.set_num_threads(3)
    assert so.get_num_threads() == 3
    so.set_num_threads(np.int64(1))
    assert so.get_num_threads() == 1
    for bad, exc in ((0, ValueError), (-2, ValueError), (True, TypeError), (1.5, TypeError),
                     ("2", TypeError)):
        with pytest.raises(exc, match="set_num_threads"):
            so.set_num_threads(bad)
    assert so.get_num_threads() == 1


def _child_threads(env_value):
    env = dict(os.environ)
    env["SCATTEROPS_NUM_THREADS"] = env_value
    code = "import scatterops; print(scatterops.get_num_threads())"
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return int(res.stdout.strip()), res.stderr


def test_environment_variable_sets_threads():
    # (tests/test_settings.py checks its strict reading and the cap)
    assert _child_threads("1") == (1, "")
    n, err = _child_threads("lots")
    assert n >= 1 and "SCATTEROPS_NUM_THREADS" in err


def test_default_is_the_cpus_this_process_may_use():
    # the affinity mask capped by a cgroup CPU quota (tests/test_settings.py: the quota)
    env = {k: v for k, v in os.environ.items() if k != "SCATTEROPS_NUM_THREADS"}
    code = ("import os, scatterops, scatterops._threads as t; "
            "print(scatterops.get_num_threads(), t._usable_cpus(), len(os.sched_getaffinity(0)))")
    got, usable, affinity = map(int, subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True,
        check=True).stdout.split())
    assert got == usable and 1 <= usable <= affinity


# ---- the cap: no call uses more threads than the CPUs this process may use ---------------


@pytest.fixture
def real_cap(restore_threads):
    """The cap of a process outside the suite (tests/conftest.py raises it), and the
    warning not shown yet; the suite's back after the test."""
    from scatterops import _core, _threads
    cap = _core.set_thread_cap(_threads._usable_cpus())
    _threads._warned_over_cap = False
    yield cap
    _threads._warned_over_cap = False
    _core.set_thread_cap(TEST_THREAD_CAP)


def test_more_threads_than_cpus_warns_once_and_uses_the_cap(real_cap):
    with pytest.warns(RuntimeWarning, match=rf"set_num_threads\({real_cap + 5}\) asks for "
                                             rf"{real_cap + 5} threads, .* calls use {real_cap}"):
        so.set_num_threads(real_cap + 5)
    assert so.get_num_threads() == real_cap
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # once: no second warning
        so.set_num_threads(10 ** 30)                   # no ValueError, however large
        assert so.get_num_threads() == real_cap
        with so.threads(real_cap + 1):
            assert so.get_num_threads() == real_cap
        so.set_num_threads(1)
        assert so.get_num_threads() == 1


def test_threads_block_over_the_cap_warns(real_cap):
    with pytest.warns(RuntimeWarning, match=rf"threads\({real_cap + 1}\) asks for"):
        with so.threads(real_cap + 1) as block:
            assert so.get_num_threads() == real_cap and block.n == real_cap + 1


# ---- threads(n): the count of the calls the current thread makes inside a block ----------


def test_threads_block_sets_and_restores(restore_threads):
    so.set_num_threads(3)
    with so.threads(1):
        assert so.get_num_threads() == 1
        with so.threads(2):
            assert so.get_num_threads() == 2
            so.set_num_threads(4)                      # the process-wide count, under the block's
            assert so.get_num_threads() == 2
        assert so.get_num_threads() == 1
    assert so.get_num_threads() == 4
    with pytest.raises(KeyError):
        with so.threads(2):
            with so.threads(1):
                raise KeyError("x")
    assert so.get_num_threads() == 4
    block = so.threads(2)                              # one block object, entered twice
    with block:
        with block:
            assert so.get_num_threads() == 2
        assert so.get_num_threads() == 2
    assert so.get_num_threads() == 4


def test_one_threads_object_entered_by_two_threads_restores_each_ones_count(restore_threads):
    """Each thread gets back its own count when it leaves the block, whatever the other
    thread did with the same object in between (the counts saved per thread, not on the
    shared object)."""
    so.set_num_threads(3)
    shared = so.threads(2)
    step = threading.Barrier(2)
    seen, failed = {}, []

    def run(name, body):
        try:
            body()
        except BaseException as exc:   # let the other thread out of the barrier, then fail
            failed.append((name, exc))
            step.abort()

    def first():                       # enters with a count of its own (1), leaves first
        with so.threads(1):
            with shared:
                step.wait()            # 1: first is in
                step.wait()            # 2: second is in
            seen["first after"] = so.get_num_threads()
            step.wait()                # 3: first is out

    def second():                      # enters with the process-wide count (3), leaves last
        step.wait()
        with shared:
            seen["second inside"] = so.get_num_threads()
            step.wait()
            step.wait()
        seen["second after"] = so.get_num_threads()

    ts = [threading.Thread(target=run, args=("first", first)),
          threading.Thread(target=run, args=("second", second))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not failed, failed
    assert seen == {"second inside": 2, "first after": 1, "second after": 3}


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1, ValueError), (True, TypeError),
                                      (2.0, TypeError), (None, TypeError)])
def test_threads_block_refuses_what_is_not_a_positive_int(bad, exc):
    with pytest.raises(exc, match="threads: n must be an int >= 1"):
        so.threads(bad)


def test_threads_block_leaves_other_threads_alone(restore_threads):
    so.set_num_threads(3)
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def in_block():
        with so.threads(1):
            seen["in"] = so.get_num_threads()
            inside.set()
            outside.wait(10)
            seen["in after"] = so.get_num_threads()

    def beside():
        inside.wait(10)
        seen["beside"] = so.get_num_threads()
        with so.threads(2):
            seen["beside block"] = so.get_num_threads()
        outside.set()

    ts = [threading.Thread(target=in_block), threading.Thread(target=beside)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen == {"in": 1, "beside": 3, "beside block": 2, "in after": 1}
    assert so.get_num_threads() == 3


def test_threads_block_is_the_count_the_calls_use():
    # in a child: the pool's workers start at the first call that uses them, so a call inside
    # threads(1) starts none; a call from another thread at the same time does
    code = r"""
import os, threading, numpy as np, scatterops as so, scatterops._core as c
c.set_thread_cap(4)                           # whatever this machine's CPUs
so.set_num_threads(4)
big = np.zeros(1 << 22, np.float32)              # 16 MiB: split by index value on any CPU
i = np.arange(1 << 19)[:, None] * 8
u = np.ones(1 << 19, np.float32)
call = lambda: so.scatter_nd(big, i, u, reduction="add")
tasks = lambda: len(os.listdir("/proc/self/task"))
before = tasks()
started = []
def beside():
    call()
    started.append(tasks() - before - 1)      # - 1: this thread
with so.threads(1):
    call()
    started.append(tasks() - before)
    t = threading.Thread(target=beside)
    t.start(); t.join()
print(*started)
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    alone, beside = map(int, res.stdout.split())
    assert alone == 0 and beside >= 1, res.stdout


def _threadpoolctl():
    return need("threadpoolctl", minversion="3.2")


def test_threadpoolctl_limits_scatterops(restore_threads):
    threadpoolctl = _threadpoolctl()
    from scatterops import _core
    so.set_num_threads(3)
    mine = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "scatterops"]
    assert len(mine) == 1 and os.path.samefile(mine[0]["filepath"], _core.__file__)
    assert mine[0]["num_threads"] == 3 and mine[0]["version"] == so.__version__
    with threadpoolctl.threadpool_limits(1):
        assert so.get_num_threads() == 1
        with so.threads(2):                            # this thread's block comes first
            assert so.get_num_threads() == 2
    assert so.get_num_threads() == 3
    with threadpoolctl.threadpool_limits(limits=2, user_api="scatterops"):
        assert so.get_num_threads() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # a limit above the cap: the cap, silently
        with threadpoolctl.threadpool_limits(10 ** 6, user_api="scatterops"):
            assert so.get_num_threads() == TEST_THREAD_CAP
    assert so.get_num_threads() == 3


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_works_in_a_child_after_fork(restore_threads):
    so.set_num_threads(2)
    name, func, args, kwargs = _large_calls()[5]          # rows-add: threaded
    expected = func(*args, **kwargs)
    pid = os.fork()
    if pid == 0:                                          # the child
        code = 1
        try:
            got = func(*args, **kwargs)
            code = 0 if got.tobytes() == expected.tobytes() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_calls_from_many_python_threads_match_sequential_calls(restore_threads):
    so.set_num_threads(2)
    calls = _large_calls()[:8]
    expected = [func(*args, **kwargs).tobytes() for _, func, args, kwargs in calls]
    failures = []

    def run(k):
        for _ in range(3):
            for j, (_, func, args, kwargs) in enumerate(calls):
                if func(*args, **kwargs).tobytes() != expected[j]:
                    failures.append((k, j))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.fixture(scope="module")
def compaction_case(tmp_path_factory):
    """The inputs of the compaction test and the reference's results for them, computed once
    (the pure-NumPy reference took most of the test's time when each child computed them) and
    saved for the children, which run the C core only."""
    import fast_reference as reference     # the reference's bits, whole-array
    rng = np.random.default_rng(12)
    n = 1 << 20
    d = rng.standard_normal(n).astype(np.float32)
    i = rng.integers(-n, n, (100001, 1))
    u = rng.standard_normal(100001).astype(np.float32)
    it = rng.integers(-8, 8, (100001, 1))
    r = rng.integers(-256, 256, (2, 5000)).astype(np.int32)
    small, js = d[:5000], i % 5000
    want = {f"big_{red}": reference.scatter_nd(d, i, u, reduction=red)
            for red in ("add", "none", "max")}
    want.update({f"small_{red}": reference.scatter_nd(small, js, u, reduction=red)
                 for red in ("add", "max")})
    want.update({f"tiny_{red}": reference.scatter_nd(d[:8], it, u, reduction=red)
                 for red in ("none", "add")})
    want["reversed_add"] = reference.scatter_nd(d[::-1], i[:-1], u[:-1], reduction="add")
    want["mean"] = reference.scatter_elements(d, i[:, 0], u, reduction="mean")
    at = d[:1 << 16].reshape(256, 256).copy()
    np.add.at(at, (r[0], r[1]), np.float32(0.5))
    want["at"] = at
    path = tmp_path_factory.mktemp("compaction") / "case.npz"
    np.savez(path, d=d, i=i, u=u, it=it, r=r, **{"want_" + k: v for k, v in want.items()})
    return str(path)


@pytest.mark.parametrize("env_off", [(), ("SCATTEROPS_NO_AVX512",),
                                     ("SCATTEROPS_NO_AVX512", "SCATTEROPS_NO_AVX2")],
                         ids=["best", "no-avx512", "scalar"])
def test_owned_split_vector_compactions_equal_the_scalar_one(compaction_case, env_off):
    # The split by index value compacts a thread's share with AVX-512 where the CPU has
    # it, else with AVX2 (walk/owned.c); SCATTEROPS_NO_AVX512=1 / SCATTEROPS_NO_AVX2=1 turn
    # them off, down to the scalar loop.  Every way must give the reference's bytes, bad
    # indices included.  (On a CPU without one of them two ids run the same code.)  The
    # switches are read at import, so each runs in a child, on 2 threads and on 3.
    code = r"""
import sys, numpy as np, scatterops as so
so._core.set_cost_model(False)      # every split that can be made, into any out
case = np.load(sys.argv[1])
d, u, it, r = case["d"], case["u"], case["it"], case["r"]
want = {k[5:]: case[k].tobytes() for k in case.files if k.startswith("want_")}
n = d.size
for threads in (2, 3):
    so.set_num_threads(threads)
    i = case["i"]
    for red in ("add", "none", "max"):
        assert so.scatter_nd(d, i, u, reduction=red).tobytes() == want["big_" + red], red
        o = d.copy()
        so.scatter_nd(o, i, u, reduction=red, out=o)
        assert o.tobytes() == want["big_" + red], red
    # into an out that stays in cache: split by value with the vector compaction, else the
    # index check on a second thread beside a walk on one (py/checked.c)
    small = d[:5000]
    js = i % 5000
    for red in ("add", "max"):
        assert so.scatter_nd(small, js, u, reduction=red).tobytes() == want["small_" + red], red
    # an out of 8 elements: consecutive indices hit the same element, so the compaction
    # must keep the order of the updates it moves to the front
    for red in ("none", "add"):
        assert so.scatter_nd(d[:8], it, u, reduction=red).tobytes() == want["tiny_" + red], red
    # out with a negative stride (AVX2 multiplies offsets as unsigned: the scalar loop then)
    o = d.copy()
    so.scatter_nd(o[::-1], i[:-1], u[:-1], reduction="add", out=o[::-1])
    assert o[::-1].tobytes() == want["reversed_add"]
    # mean counts its hits in the compaction
    assert so.scatter_elements(d, i[:, 0], u, reduction="mean").tobytes() == want["mean"]
    # scatterops.at with a tuple of index arrays makes its offsets with AVX2 loops, else scalar
    mine = d[:1 << 16].reshape(256, 256).copy()
    so.at(np.add, mine, (r[0], r[1]), np.float32(0.5))
    assert mine.tobytes() == want["at"]
    i = i.copy()
    i[12347, 0] = n
    js[12347, 0] = 5000
    for big_or_small, ii in ((d, i), (small, js)):
        try:
            so.scatter_nd(big_or_small, ii, u, reduction="add")
            raise SystemExit("no IndexError")
        except IndexError as e:
            assert "indices[12347, 0] = %d" % ii[12347, 0] in str(e), e
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k not in ("SCATTEROPS_NO_AVX512", "SCATTEROPS_NO_AVX2")}
    env.update({k: "1" for k in env_off})
    res = subprocess.run([sys.executable, "-c", code, compaction_case], env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stdout + res.stderr

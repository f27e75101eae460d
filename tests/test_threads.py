"""Threads: results are bit-identical for every thread count, the thread count is
set as docs/contract.md says, and the module works in a child made by os.fork()."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import scatterops as so


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
    from scatterops import reference
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
    assert _child_threads("3")[0] == 3
    n, err = _child_threads("lots")
    assert n >= 1 and "SCATTEROPS_NUM_THREADS" in err


def test_default_is_the_cpus_this_process_may_use():
    env = {k: v for k, v in os.environ.items() if k != "SCATTEROPS_NUM_THREADS"}
    code = "import os, scatterops; print(scatterops.get_num_threads(), len(os.sched_getaffinity(0)))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == out[1]


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


@pytest.mark.parametrize("env_off", [(), ("SCATTEROPS_NO_AVX512",),
                                     ("SCATTEROPS_NO_AVX512", "SCATTEROPS_NO_AVX2")],
                         ids=["best", "no-avx512", "scalar"])
def test_owned_split_vector_compactions_equal_the_scalar_one(tmp_path, env_off):
    # The split by index value compacts a thread's share with AVX-512 where the CPU has
    # it, else with AVX2 (walk/owned.c); SCATTEROPS_NO_AVX512=1 / SCATTEROPS_NO_AVX2=1 turn
    # them off, down to the scalar loop.  Every way must give the reference's bytes, bad
    # indices included.  (On a CPU without one of them two ids run the same code.)
    code = r"""
import sys, numpy as np, scatterops as so
from scatterops import reference
so.set_num_threads(int(sys.argv[1]))
rng = np.random.default_rng(12)
n = 1 << 20
d = rng.standard_normal(n).astype(np.float32)
i = rng.integers(-n, n, (100001, 1))
u = rng.standard_normal(100001).astype(np.float32)
for red in ("add", "none", "max"):
    want = reference.scatter_nd(d, i, u, reduction=red).tobytes()
    assert so.scatter_nd(d, i, u, reduction=red).tobytes() == want, red
    o = d.copy()
    so.scatter_nd(o, i, u, reduction=red, out=o)
    assert o.tobytes() == want, red
# into an out that stays in cache: split by value with the vector compaction, else the
# index check on a second thread beside a walk on one (py/checked.c)
small = d[:5000]
js = i % 5000
for red in ("add", "max"):
    assert so.scatter_nd(small, js, u, reduction=red).tobytes() == \
        reference.scatter_nd(small, js, u, reduction=red).tobytes(), red
# an out of 8 elements: consecutive indices hit the same element, so the compaction
# must keep the order of the updates it moves to the front
it = rng.integers(-8, 8, (100001, 1))
for red in ("none", "add"):
    assert so.scatter_nd(d[:8], it, u, reduction=red).tobytes() == \
        reference.scatter_nd(d[:8], it, u, reduction=red).tobytes(), red
# out with a negative stride (AVX2 multiplies offsets as unsigned: the scalar loop then)
o = d.copy()
so.scatter_nd(o[::-1], i[:-1], u[:-1], reduction="add", out=o[::-1])
assert o[::-1].tobytes() == reference.scatter_nd(d[::-1], i[:-1], u[:-1], reduction="add").tobytes()
# mean counts its hits in the compaction
assert so.scatter_elements(d, i[:, 0], u, reduction="mean").tobytes() == \
    reference.scatter_elements(d, i[:, 0], u, reduction="mean").tobytes()
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
    for threads in ("2", "3"):
        res = subprocess.run([sys.executable, "-c", code, threads], env=env,
                             capture_output=True, text=True)
        assert res.returncode == 0 and res.stdout.strip() == "ok", res.stdout + res.stderr

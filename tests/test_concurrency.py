"""Concurrency: many Python threads calling scatterops at once.

* 8 threads call all three functions -- fast path, checked path, every reduction,
  object dtype, error paths, in place into thread-private arrays -- on shared
  read-only inputs, and get bit for bit what sequential calls give, with 1 and with
  2 internal threads per call;
* one thread scatters in place (out=data) into an array that other threads read
  as data or updates at the same time: the readers' results are unspecified, but
  nothing crashes or raises, and since the readers never write, the writer's
  array ends exactly as the same writes made alone leave it;
* threads change set_num_threads while others run large calls: results stay
  bit-identical (docs/contract.md: for every thread count) and get_num_threads always
  reports one of the values set.

test_threads.py has one 4-thread check of large calls; this file adds the mix,
the writer-and-readers case and the concurrent thread-count changes.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import scatterops as so

N_THREADS = 8


@pytest.fixture
def restore_threads():
    before = so.get_num_threads()
    yield
    so.set_num_threads(before)


def _frozen(a):
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


def _mixed_calls():
    """(name, fn) pairs; each fn returns bytes (or the error's class and text) and
    writes nothing shared."""
    rng = np.random.default_rng(11)
    calls = []
    # small calls: the C fast path and the checked path
    d = _frozen(rng.standard_normal((6, 7)))
    iu = _frozen(rng.integers(-7, 7, (3, 2)))
    uu = _frozen(rng.standard_normal((6, 3, 2)))
    nd_i = _frozen(np.stack([rng.integers(-6, 6, 9), rng.integers(-7, 7, 9)], -1))
    nd_u = _frozen(rng.standard_normal(9))
    el_i = _frozen(rng.integers(-7, 7, (6, 4)))
    el_u = _frozen(rng.standard_normal((6, 4)))
    for red in ("none", "add", "sub", "mul", "max", "min", "mean"):
        for incl in (True, False):
            calls.append((f"update-{red}-{incl}",
                          lambda red=red, incl=incl: so.scatter_update(
                              d, iu, uu, 1, reduction=red, include_self=incl)))
            calls.append((f"nd-{red}-{incl}",
                          lambda red=red, incl=incl: so.scatter_nd(
                              d, nd_i, nd_u, reduction=red, include_self=incl)))
            calls.append((f"elements-{red}-{incl}",
                          lambda red=red, incl=incl: so.scatter_elements(
                              d, el_i, el_u, 1, reduction=red, include_self=incl)))
    # in place, into an array private to the call
    calls.append(("update-inplace", lambda: (lambda o: so.scatter_update(o, iu, uu, 1, out=o))(d.copy())))
    calls.append(("nd-add-inplace-int8-idx",
                  lambda: (lambda o: so.scatter_nd(o, nd_i.astype(np.int8), nd_u, reduction="add",
                                                   out=o))(d.copy())))
    # other dtypes: float16, int, big-endian, object, strings
    h = _frozen(rng.standard_normal(50).astype(np.float16))
    hi = _frozen(rng.integers(0, 50, (400, 1)))
    hu = _frozen(rng.standard_normal(400).astype(np.float16))
    calls.append(("f16-add", lambda: so.scatter_nd(h, hi, hu, reduction="add")))
    be = _frozen(rng.integers(0, 100, 30).astype(">i8"))
    calls.append(("big-endian-mean", lambda: so.scatter_elements(be, hi[:40, 0] % 30, np.int64(5),
                                                                reduction="mean")))
    obj = _frozen(np.array([1, 2.5, 3], dtype=object))
    calls.append(("object-add", lambda: so.scatter_elements(obj, [0, 0, 2], [1, 2, 3], reduction="add")))
    strs = _frozen(np.array(["a", "bb", "ccc"]))
    calls.append(("strings", lambda: so.scatter_update(strs, [2, 0], ["x", "y"])))
    # large calls: the GIL released, split over the internal threads
    x = _frozen(rng.standard_normal((3000, 16)).astype(np.float32))
    rows = rng.integers(-3000, 3000, 30000)
    msg = _frozen(rng.standard_normal((30000, 16)).astype(np.float32))
    ei = np.broadcast_to(rows[:, None], msg.shape)
    for red in ("none", "add", "max", "mean"):
        calls.append((f"rows-{red}", lambda red=red: so.scatter_elements(x, ei, msg, reduction=red)))
    big = _frozen(np.zeros(20000, np.float64))
    bi = _frozen(rng.integers(-20000, 20000, (100000, 1)))
    bu = _frozen(rng.standard_normal(100000))
    calls.append(("elem-add", lambda: so.scatter_nd(big, bi, bu, reduction="add")))
    calls.append(("elem-none", lambda: so.scatter_nd(big, bi, bu)))
    # error paths
    bad = _frozen(np.array([[0, 99]]))
    calls.append(("index-error", lambda: so.scatter_nd(d, bad, 1.0)))
    calls.append(("type-error", lambda: so.scatter_update(d, [0.5], 1.0)))
    calls.append(("value-error", lambda: so.scatter_elements(d, [0], 1.0)))
    calls.append(("axis-error", lambda: so.scatter_update(d, [0], 1.0, 9)))

    def wrap(fn):
        def run():
            try:
                r = fn()
            except Exception as exc:    # noqa: BLE001 -- the error is part of the result
                return (type(exc), str(exc))
            return (r.dtype.str, r.shape, r.tobytes() if r.dtype != object else repr(r.tolist()))
        return run
    return [(name, wrap(fn)) for name, fn in calls]


def _in_threads(target, n=N_THREADS):
    errors = []
    barrier = threading.Barrier(n)

    def run(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as exc:    # noqa: BLE001 -- reported below
            errors.append((k, repr(exc)))
    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [], errors


@pytest.mark.parametrize("internal", [1, 2])
def test_threads_match_sequential_calls_bit_for_bit(internal, restore_threads):
    so.set_num_threads(internal)
    calls = _mixed_calls()
    expected = [fn() for _, fn in calls]
    errors = [e for e in expected if isinstance(e[0], type)]
    assert len(errors) == 4                  # the four error calls raise, the rest do not
    mismatches = []

    def work(k):
        order = list(range(len(calls)))
        np.random.default_rng(k).shuffle(order)         # each thread its own order
        for _ in range(2):
            for j in order:
                got = calls[j][1]()
                if got != expected[j]:
                    mismatches.append((k, calls[j][0]))
    _in_threads(work)
    assert mismatches == []


def test_writer_in_place_while_readers_read(restore_threads):
    so.set_num_threads(2)
    rng = np.random.default_rng(5)
    n = 50000
    shared = rng.standard_normal(n)
    initial = shared.copy()
    w_idx = rng.integers(-n, n, (60000, 1))
    w_upd = rng.standard_normal(60000)
    rounds = 200
    r_idx = rng.integers(-n, n, 40000)
    r_rows = rng.integers(0, 40000, n)
    done = threading.Event()
    reader_calls = [0]

    def writer():
        for k in range(rounds):
            red = ("add", "max", "none", "mul")[k % 4]
            so.scatter_nd(shared, w_idx, w_upd, reduction=red, out=shared)
        done.set()

    def reader(k):
        other = np.zeros(n)
        while not done.is_set():
            # shared as data (out of place) ...
            r = so.scatter_update(shared, r_idx, 1.0, reduction="add")
            assert r.shape == shared.shape
            # ... and as updates, in place into a private array
            so.scatter_elements(other, r_rows % n, shared, reduction=("none", "min")[k % 2], out=other)
            so.scatter_nd(other, r_idx[:, None], shared[:40000], reduction="mean", out=other)
            reader_calls[0] += 1

    def work(k):
        if k == 0:
            writer()
        else:
            reader(k)
    _in_threads(work, n=6)
    assert reader_calls[0] > 0
    # the readers never write shared: it holds what the writes alone give
    alone = initial.copy()
    for k in range(rounds):
        red = ("add", "max", "none", "mul")[k % 4]
        so.scatter_nd(alone, w_idx, w_upd, reduction=red, out=alone)
    assert alone.tobytes() == shared.tobytes()
    # and the same writes on one thread give it as well
    so.set_num_threads(1)
    one = initial.copy()
    for k in range(rounds):
        red = ("add", "max", "none", "mul")[k % 4]
        so.scatter_nd(one, w_idx, w_upd, reduction=red, out=one)
    assert one.tobytes() == shared.tobytes()


def test_concurrent_set_num_threads(restore_threads):
    calls = [c for c in _mixed_calls() if c[0].startswith(("rows-", "elem-"))]
    so.set_num_threads(1)
    expected = [fn() for _, fn in calls]
    values = (1, 2, 3, 4)
    stop = threading.Event()
    seen = set()
    mismatches = []

    def work(k):
        if k < 3:                           # three threads change the count all the time
            rng = np.random.default_rng(k)
            while not stop.is_set():
                so.set_num_threads(int(rng.choice(values)))
                seen.add(so.get_num_threads())
            return
        try:
            for _ in range(3):
                for j, (name, fn) in enumerate(calls):
                    if fn() != expected[j]:
                        mismatches.append((k, name))
        finally:
            if k == 3:
                stop.set()
    _in_threads(work, n=6)
    assert mismatches == []
    assert seen and seen <= set(values)
    assert so.get_num_threads() in values

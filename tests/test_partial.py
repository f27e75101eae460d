"""Private partial outputs (call/partial_outputs.c): on several threads, a 1-D integer add, sub, mul, max
or min in the direct form splits its updates into one share a thread; each share after the first
is reduced into a partial output of its own, and the partials are merged at the end.  Integers
wrap, so the bits are those of ``ufunc.at`` in C order whatever the split.

Held here: every integer dtype and order-free reduction against ``ufunc.at``, on 2 to 4
threads, with wrap-around, negative indices, every index dtype and every ``out`` form; a bad
index in any share raises the IndexError naming the first bad one in C order with ``out`` and
``data`` unchanged; which calls take the partials (``_core.partial_calls()``): not floats, not
``none``, not ``include_self=False``, not a mean; and, with the cost model on, the sizes it
chooses them for.  The suite runs with the cost model off (conftest.py), where every split that
can be made is made: every integer call of this form on several threads takes them.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import scatterops as so
from scatterops import _core

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
         "min": np.minimum}


def _expected(data, idx, upd, red):
    ref = data.copy()
    UFUNC[red].at(ref, idx.astype(np.intp), upd)
    return ref


def _ints(rng, dtype, n):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@settings(deadline=None)
@given(dtype=st.sampled_from(INT_DTYPES), red=st.sampled_from(sorted(UFUNC)),
       idx_dtype=st.sampled_from(INDEX_DTYPES), nthreads=st.integers(2, 4),
       size=st.integers(1, 120), n=st.integers(0, 3000), seed=st.integers(0, 2**32 - 1),
       where=st.sampled_from(["fresh", "in place", "other out", "strided out"]))
def test_partials_give_ufunc_at_bits(dtype, red, idx_dtype, nthreads, size, n, seed, where):
    rng = np.random.default_rng(seed)
    size = min(size, np.iinfo(idx_dtype).max)
    lo = -size if np.dtype(idx_dtype).kind == "i" else 0
    idx = rng.integers(max(lo, np.iinfo(idx_dtype).min), size, n).astype(idx_dtype)
    data, upd = _ints(rng, dtype, size), _ints(rng, dtype, n)
    want = _expected(data, idx, upd, red)
    before = _core.partial_calls()
    with so.threads(nthreads):
        if where == "fresh":
            got = so.scatter_elements(data, idx, upd, 0, reduction=red)
        elif where == "in place":
            got = data.copy()
            assert so.scatter_elements(got, idx, upd, 0, reduction=red, out=got) is got
        elif where == "other out":
            got = np.zeros_like(data)
            assert so.scatter_elements(data, idx, upd, 0, reduction=red, out=got) is got
        else:
            base = np.full(2 * size, 7, dtype)
            got = base[::2]
            assert so.scatter_elements(data, idx, upd, 0, reduction=red, out=got) is got
            assert (base[1::2] == 7).all()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if n >= 2 * nthreads:
        assert _core.partial_calls() > before      # the cost model is off: always taken


@pytest.mark.parametrize("red", sorted(UFUNC))
@pytest.mark.parametrize("nthreads", [2, 3])
def test_large_calls_wrap_as_ufunc_at(red, nthreads):
    # the GIL released, shares of several pieces each, sums that overflow many times over
    rng = np.random.default_rng(7)
    size, n = 257, 600_000
    data = _ints(rng, np.int32, size)
    idx = rng.integers(-size, size, n)
    upd = _ints(rng, np.int32, n)
    want = _expected(data, idx, upd, red)
    before = _core.partial_calls()
    with so.threads(nthreads):
        got = so.scatter_update(data, idx, upd, 0, reduction=red)
    np.testing.assert_array_equal(got, want)
    assert _core.partial_calls() == before + 1


@pytest.mark.parametrize("where", ["first share", "last share", "every share", "last update"])
@pytest.mark.parametrize("inplace", [True, False])
def test_a_bad_index_in_any_share_writes_nothing(where, inplace):
    rng = np.random.default_rng(3)
    size, n = 50, 40_000
    data = rng.integers(0, 100, size).astype(np.int64)
    idx = rng.integers(-size, size, n)
    upd = rng.integers(-5, 5, n).astype(np.int64)
    bad = {"first share": [1000], "last share": [n - 1000], "every share": [n - 5, 9000, 30000],
           "last update": [n - 1]}[where]
    for p in bad:
        idx[p] = size + p
    first = min(bad)
    saved = data.copy()
    with so.threads(2), pytest.raises(IndexError) as err:
        so.scatter_elements(data, idx, upd, 0, reduction="add", out=data if inplace else None)
    assert str(size + first) in str(err.value)
    np.testing.assert_array_equal(data, saved)


@pytest.mark.parametrize("call", [
    ("float32 add", np.float32, "add", True),
    ("int64 none", np.int64, "none", True),
    ("int64 add without self", np.int64, "add", False),
    ("int64 mean", np.int64, "mean", True),
])
def test_only_order_free_integer_reductions_take_partials(call):
    _, dtype, red, include_self = call
    rng = np.random.default_rng(5)
    data = rng.integers(0, 100, 64).astype(dtype)
    idx = rng.integers(0, 64, 50_000)
    upd = rng.integers(0, 100, 50_000).astype(dtype)
    before = _core.partial_calls()
    with so.threads(2):
        so.scatter_elements(data, idx, upd, 0, reduction=red, include_self=include_self)
    assert _core.partial_calls() == before


@pytest.fixture
def cost_model():
    was = _core.set_cost_model(True)
    yield
    _core.set_cost_model(was)


def test_the_cost_model_keeps_small_and_wide_calls_on_one_thread(cost_model):
    rng = np.random.default_rng(9)
    cases = [
        (10**3, 10**4),          # too few updates for a share of each thread
        (10**5, 2 * 10**5),      # too few updates for out's size: the merge would cost
        (10**6, 2 * 10**6),      # out beyond one core's L2: the partials would not stay there
    ]
    for size, n in cases:
        data = rng.integers(0, 9, size)
        idx = rng.integers(0, size, n)
        upd = rng.integers(0, 9, n)
        before = _core.partial_calls()
        with so.threads(2):
            got = so.scatter_elements(data, idx, upd, 0, reduction="add")
        np.testing.assert_array_equal(got, _expected(data, idx, upd, "add"))
        assert _core.partial_calls() == before, (size, n)


CHILD = r'''
import json, os, signal, sys, threading, time
import numpy as np
import scatterops as so
# a Ctrl-C raises KeyboardInterrupt here however the suite was started (a shell's
# background job starts with SIGINT ignored, and a child inherits that)
signal.signal(signal.SIGINT, signal.default_int_handler)
from scatterops import _core

_core.set_cost_model(False)             # the split every time: the test is about its stop
rng = np.random.default_rng(0)
n = 10**8
data = rng.integers(-100, 100, 100).astype(np.int8)
idx = rng.integers(-100, 100, n).astype(np.int8)
upd = rng.integers(-100, 100, n).astype(np.int8)
want = data.copy()
with so.threads(2):
    t = time.perf_counter()
    full = so.scatter_elements(data, idx, upd, 0, reduction="add")
    took = time.perf_counter() - t
saved = data.copy()
before = _core.partial_calls()
timer = threading.Timer(took / 4, lambda: os.kill(os.getpid(), signal.SIGINT))
raised = False
with so.threads(2):
    timer.start()
    try:
        so.scatter_elements(data, idx, upd, 0, reduction="add", out=data)
    except KeyboardInterrupt:
        raised = True
    timer.join()
print(json.dumps({"took": took, "raised": raised, "partials": _core.partial_calls() - before,
                  "unchanged": bool(np.array_equal(data, saved)),
                  "whole": bool(np.array_equal(data, full))}))
'''


@pytest.mark.slow
def test_ctrl_c_during_the_split_leaves_out_whole_or_untouched():
    # 1e8 int8 updates into 100 int8 on two threads, in place (tens of ms): SIGINT a quarter
    # of the way in.  The shares go into the scratch copy and the partials, so out is
    # untouched; had the call ended before the signal was seen, out holds the whole result
    # -- never a part of it.  (The long interrupt cases are in test_interrupt.py.)
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, "-c", CHILD], cwd=root, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(root)), timeout=300)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["raised"], got
    assert got["partials"] == 1, got
    assert got["unchanged"] or got["whole"], got

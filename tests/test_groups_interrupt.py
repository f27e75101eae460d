"""Ctrl-C during a long group call (docs/contract.md, "Interrupts"): group_reduce,
segment_reduce and group_softmax, each into ``out=``.

As in test_interrupt.py, each case runs in a child process that times a small call, sizes
the same call to last some seconds on this machine, sends itself SIGINT part of the way in
and reports when KeyboardInterrupt arrived and what the arrays held.  A group call computes
into an array of its own and copies it into ``out`` only at its end, so an interrupt leaves
``out`` as it was, with no note on the exception, and the inputs untouched.  The process
stays healthy: afterwards the calibration call, made again on the same threads, gives the
bits it gave before.

The reductions read ``values`` broadcast from one row (no memory for the many rows a long
call needs); the softmax writes a result as large as its values, so its call is sized to
three seconds and at most 2**27 values.  The children calibrate one after the other, then their calls run side by
side: the file takes about fifteen seconds.  Under tools/sanitize.sh these cases are skipped
(marker ``slow``), as test_interrupt.py's are.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.interrupt_child import run_children

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(r'''
    import json, signal, sys
    import numpy as np
    import scatterops as so
    from tests.interrupt_child import calibrate, interrupt_part_way
    # a Ctrl-C raises KeyboardInterrupt here however the suite was started (a shell's
    # background job starts with SIGINT ignored, and a child inherits that)
    signal.signal(signal.SIGINT, signal.default_int_handler)

    case, nthreads, seconds, at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    so.set_num_threads(nthreads)
    B = 1024                                 # the width of a row of the reductions' values
    SIZE = 16                                # groups / segments

    def make(n):
        """(call, arrays to keep an eye on) for a call of about n values."""
        if case == "softmax":
            rng = np.random.default_rng(0)
            values = rng.standard_normal(n, dtype=np.float32)
            groups = rng.integers(0, 1000, n)
            out = np.full(n, 7.0, np.float32)
            return (lambda: so.group_softmax(values, groups, size=1000, out=out)), \
                {"out": out, "values": values, "groups": groups}
        rows = max(n // B, SIZE)
        # every row the same row of memory (stride 0): a long call in little memory
        values = np.broadcast_to(np.arange(B, dtype=np.float64), (rows, B))
        out = np.full((SIZE, B), 7.0)
        if case == "segment-sum":
            indptr = np.linspace(0, rows, SIZE + 1).astype(np.intp)
            return (lambda: so.segment_reduce(values, indptr, "sum", out=out)), \
                {"out": out, "indptr": indptr}
        func = case.split("-")[1]
        groups = np.tile(np.arange(SIZE, dtype=np.int8), rows // SIZE)
        values = values[:groups.size]
        return (lambda: so.group_reduce(values, groups, func, size=SIZE, out=out)), \
            {"out": out, "groups": groups}

    def run(call):
        call()

    # the softmax's arrays grow with the call (about 20 bytes a value): at most 2**27
    # values, so that the two softmax children side by side stay within memory
    cap = 1 << 27 if case == "softmax" else None
    small_call, small_watched, call, watched, estimate = calibrate(make, run, 1 << 20, seconds, cap)
    small_out = small_watched["out"]
    expected = small_out.copy()
    before = {k: v.copy() for k, v in watched.items()}
    out = interrupt_part_way(run, call, estimate, at)
    out["unchanged"] = {k: bool(np.array_equal(v, before[k])) for k, v in watched.items()}
    # healthy: the calibration call again, on the same threads, gives the same bits
    small_out[...] = 7.0
    small_call()
    out["healthy"] = bool(np.array_equal(small_out, expected))
    print(json.dumps(out))
''')

# (case, threads, seconds the call is sized to, fraction of it at which SIGINT comes)
CASES = [
    ("reduce-sum", 1, 10, 0.1), ("reduce-sum", 2, 10, 0.1), ("reduce-max", 2, 10, 0.1),
    ("segment-sum", 1, 10, 0.1), ("segment-sum", 2, 10, 0.1),
    ("softmax", 1, 3, 0.3), ("softmax", 2, 3, 0.3),
]


@pytest.fixture(scope="module")
def reports():
    """Each child calibrates alone, then the calls run side by side."""
    return run_children(CHILD, CASES, ROOT)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}t")
def test_interrupt_stops_the_group_call_and_leaves_out_as_it_was(reports, case):
    r = reports[case]
    assert "error" not in r, r.get("error")
    assert r["raised"] == "KeyboardInterrupt", r
    # well before its end: the call had (1 - at) of its estimated time still to go
    left = r["estimate"] - r["signal_at"]
    assert r["delay"] < max(0.5 * left, 1.0), r
    assert all(r["unchanged"].values()), r          # out and the inputs as they were
    assert not r.get("notes"), r                    # no note: out holds nothing of the call
    assert r["healthy"], r

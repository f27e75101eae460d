"""Ctrl-C during a long call (docs/contract.md, "Interrupts").

Each case runs in a child process: the child times a small call, sizes the same call to
last about ten seconds on this machine (three for the NumPy fallback, whose per-update
cost is high and which needs memory per update), sends itself SIGINT part of the way in
and reports when KeyboardInterrupt arrived and what the arrays held.  The test asserts
that the call stopped well before its end -- no tight limit: a busy machine slows a call
and its stop alike -- and that it left the promised state: out of place the inputs are
untouched; in place the note is on the exception, each update row is applied whole, and
a mean (all updates equal to data's value) leaves no undivided sum.

The children calibrate one after the other, then their calls run side by side (the
fallback's two first): the file takes about twenty seconds.
Under tools/sanitize.sh these cases are skipped (marker ``slow``): the calibration works
there, but ten seconds of work under ASan is minutes.
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
    B = 1024                                 # the width of a row of data

    def make(n):
        """(call, arrays to keep an eye on) for a call of about n updates."""
        if case == "check":
            # an index read with overlapping strides: m * m values, no stride 0 to
            # shortcut, the last one out of range: the check is the whole call
            m = max(int(n ** 0.5), 2)
            base = np.zeros(2 * m, dtype=np.intp)
            base[-2] = 10 ** 9
            idx = np.lib.stride_tricks.as_strided(base, (m, m), (8, 8))
            data = np.zeros(m)
            return (lambda: so.scatter_update(data, idx, 1.0, reduction="add", out=data)), \
                {"data": data, "base": base}
        if case.startswith("fallback"):
            # dtypes without a C loop: NumPy's ufunc.at in scatterops/_generic.py
            dt = ">f8" if case == "fallback_mean" else np.longdouble
            data = np.full((4096, 8), 3.0, dtype=dt)
            idx = np.random.default_rng(0).integers(0, 4096, n // 8)
            return (lambda: so.scatter_update(data, idx, np.array(3.0, dt), reduction="mean",
                                              out=data)), {"data": data, "idx": idx}
        red, inplace = case.split("_")
        fill = 3.0 if red in ("mean", "zerostride") else 0.0
        data = np.full((4096, B), fill)
        if red == "zerostride":
            # two rows, each index repeated along a stride-0 dim (a block of its own)
            idx = np.broadcast_to(np.array([[5], [7]]), (2, max(n // B // 2, 1)))
            return (lambda: so.scatter_update(data, idx, 3.0, reduction="mean", out=data)), \
                {"data": data}
        if red == "none":
            # every row index over and over (stride 0 along the first dim, no memory):
            # the pass that keeps each row's last writer is the long phase
            idx = np.broadcast_to(np.arange(4096), (max(n // B // 4096, 1), 4096))
            kw = {"out": data} if inplace == "in" else {}
            return (lambda: so.scatter_update(data, idx, 1.0, reduction="none", **kw)), \
                {"data": data}
        idx = np.random.default_rng(0).integers(0, 4096, max(n // B, 1))
        upd = fill if red == "mean" else 1.0
        kw = {"out": data} if inplace == "in" else {}
        return (lambda: so.scatter_update(data, idx, upd, reduction=red, **kw)), \
            {"data": data, "idx": idx}

    def run(call):
        try:
            call()
        except IndexError:
            pass                             # "check": its index is bad on purpose

    n0 = 1 << 18 if case.startswith("fallback") else 1 << 22
    _, _, call, watched, estimate = calibrate(make, run, n0, seconds)
    before = {k: v.copy() for k, v in watched.items()}
    out = interrupt_part_way(run, call, estimate, at)
    out["unchanged"] = {k: bool(np.array_equal(v, before[k])) for k, v in watched.items()}
    if "data" in watched:
        d = np.asarray(watched["data"], dtype=np.float64)
        out["values"] = sorted(set(np.unique(d).tolist()))[:20]
        out["rows_whole"] = bool((d == d[:, :1]).all()) if d.ndim == 2 else None
        out["sum"] = float(d.sum())
    print(json.dumps(out))
''')

# (case, threads, seconds the call is sized to, fraction of it at which SIGINT comes)
CASES = [
    ("add_out", 1, 10, 0.1), ("add_out", 2, 10, 0.1),
    ("add_in", 1, 10, 0.1), ("add_in", 2, 10, 0.1),
    ("none_in", 1, 10, 0.1), ("none_in", 2, 10, 0.1),
    ("mean_in", 1, 10, 0.1), ("mean_in", 2, 10, 0.1),
    ("zerostride_in", 1, 10, 0.1),
    ("check", 1, 10, 0.1), ("check", 2, 10, 0.1),
    ("fallback_mean", 1, 3, 0.5), ("fallback_ld", 1, 1.5, 0.5),
]


@pytest.fixture(scope="module")
def reports():
    """Each child calibrates alone (one after the other, so that no other child slows
    its small call), then the calls run side by side: the fallback's two first, then the
    others."""
    fallback = [c for c in CASES if c[0].startswith("fallback")]
    return run_children(CHILD, CASES, ROOT, [fallback, [c for c in CASES if c not in fallback]])


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}t")
def test_interrupt_stops_the_call(reports, case):
    r = reports[case]
    assert "error" not in r, r.get("error")
    name, _, _, at = case
    assert r["raised"] == "KeyboardInterrupt", r
    # well before its end: the call had (1 - at) of its estimated time still to go
    left = r["estimate"] - r["signal_at"]
    assert r["delay"] < max(0.5 * left, 1.0), r
    if name.endswith("_out") or name == "check":
        assert all(r["unchanged"].values()), r          # nothing written, nothing returned
        assert not r.get("notes"), r
        return
    assert any("interrupted while writing into out" in n for n in r["notes"]), r
    if name.startswith("add"):
        assert not r["unchanged"]["data"], r            # it stopped part of the way
        if case[1] == 1:
            assert r["rows_whole"], r                   # each update row whole
    if name.startswith("none"):
        assert set(r["values"]) <= {0.0, 1.0}, r        # an element's own prefix: 0 or 1
    if "mean" in name or "zerostride" in name:
        assert r["values"] == [3.0], r                  # no undivided sum anywhere

"""Time scatterops against its peers on the same inputs.

    python -m benchmarks [--quick] [--repeat N] [-k PATTERN]
    python benchmarks/run.py [...]

Each *case* makes its inputs once and holds a dict ``peers``: peer name -> factory.  A factory takes
the inputs and returns a zero-argument callable that does the whole operation out of place (copy of
``data`` included) and returns the result as a NumPy array.  Every callable is run once and its result
compared with the first peer's (``np.array_equal``) before it is timed; a peer whose result differs is
reported as MISMATCH and not timed.  The time is the median of ``--repeat`` runs (``time.perf_counter``),
each run ``number`` calls for the cases too small to time one call.

Adding a peer (torch, onnxruntime, openvino, ...) is adding an entry to ``PEERS`` (the module it
needs) and a factory to the cases it can do; a peer whose module does not import is skipped with a
note, and every available peer gets a column.  Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

if __name__ == "__main__" and not __package__:
    # `python benchmarks/run.py` from a checkout: import scatterops as `python -m benchmarks` would.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

#: peer name -> the module it needs (imported lazily, skipped with a note when missing).
#: The first entry is the baseline the others are checked against and the speedup is relative to.
PEERS: Dict[str, str] = {
    "numpy": "numpy",
    "scatterops": "scatterops",
}
#: the peer whose speed is reported relative to the others
SUBJECT = "scatterops"

Inputs = Dict[str, np.ndarray]
Factory = Callable[[Inputs], Callable[[], np.ndarray]]


@dataclass
class Case:
    name: str
    make: Callable[[], Inputs]             # builds the inputs (called once, just before timing)
    peers: Dict[str, Factory]              # peer name -> factory
    number: int = 1                        # calls per timed run (for the tiny cases)
    note: str = ""


@dataclass
class Row:
    case: Case
    times: Dict[str, Optional[float]] = field(default_factory=dict)   # seconds per call
    notes: List[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Peer factories.  `so` is the scatterops module, imported only when it is available.


def _so():
    import scatterops
    return scatterops


def numpy_update_axis0(x: Inputs):
    data, idx, upd = x["data"], x["indices"], x["updates"]

    def run():
        o = data.copy()
        o[idx] = upd
        return o
    return run


def numpy_update_axis1(x: Inputs):
    data, idx, upd = x["data"], x["indices"], x["updates"]

    def run():
        o = data.copy()
        o[:, idx] = upd
        return o
    return run


def scatterops_update(axis: int, **kw):
    def factory(x: Inputs):
        f = _so().scatter_update
        data, idx, upd = x["data"], x["indices"], x["updates"]
        return lambda: f(data, idx, upd, axis, **kw)
    return factory


def numpy_nd_add_at(x: Inputs):
    data, idx, upd = x["data"], x["indices"], x["updates"]
    flat = idx[:, 0]

    def run():
        o = data.copy()
        np.add.at(o, flat, upd)
        return o
    return run


def numpy_nd_assign(x: Inputs):
    data, idx, upd = x["data"], x["indices"], x["updates"]
    k = idx.shape[-1]
    where = tuple(idx[..., j] for j in range(k))

    def run():
        o = data.copy()
        o[where] = upd
        return o
    return run


def scatterops_nd(**kw):
    def factory(x: Inputs):
        f = _so().scatter_nd
        data, idx, upd = x["data"], x["indices"], x["updates"]
        return lambda: f(data, idx, upd, **kw)
    return factory


def numpy_put_along_axis(axis: int):
    def factory(x: Inputs):
        data, idx, upd = x["data"], x["indices"], x["updates"]

        def run():
            o = data.copy()
            np.put_along_axis(o, idx, upd, axis=axis)
            return o
        return run
    return factory


def numpy_rows_at(ufunc):
    """``ufunc.at(o, rows, updates)``: the NumPy spelling of a scatter along axis 0 whose index is
    one row number per update row (``indices = rows[:, None]`` expanded to the updates' shape)."""
    def factory(x: Inputs):
        data, rows, upd = x["data"], x["rows"], x["updates"]

        def run():
            o = data.copy()
            ufunc.at(o, rows, upd)
            return o
        return run
    return factory


def scatterops_elements(axis: int, **kw):
    def factory(x: Inputs):
        f = _so().scatter_elements
        data, idx, upd = x["data"], x["indices"], x["updates"]
        return lambda: f(data, idx, upd, axis, **kw)
    return factory


# --------------------------------------------------------------------------------------------
# Cases


def cases(quick: bool) -> List[Case]:
    rng = np.random.default_rng(20240531)
    f32 = np.float32
    out: List[Case] = []

    def tiny():
        return {"data": np.arange(16, dtype=f32), "indices": np.array([3, 1, 12, 7]),
                "updates": np.array([-1.0, -2.0, -3.0, -4.0], f32)}
    out.append(Case("tiny: update 4 of 16 float32 (per-call overhead)", tiny,
                    {"numpy": numpy_update_axis0, "scatterops": scatterops_update(0)},
                    number=2000 if quick else 20000))

    def seed_update():
        data = rng.random((1000, 256, 10, 15), dtype=f32)
        idx = rng.integers(0, 256, size=(125, 20))
        upd = rng.random((1000, 125, 20, 10, 15), dtype=f32)
        return {"data": data, "indices": idx, "updates": upd}
    out.append(Case("ScatterUpdate-3 ex. 1: (1000,256,10,15) f32, idx (125,20), axis 1",
                    seed_update,
                    {"numpy": numpy_update_axis1, "scatterops": scatterops_update(1)},
                    note="updates are 1.5 GB; numpy: o[:, idx] = u"))

    def seed_nd():
        data = rng.random((1000, 256, 10, 15), dtype=f32)
        flat = rng.choice(1000 * 256 * 10, size=25 * 125, replace=False)
        idx = np.stack(np.unravel_index(flat, (1000, 256, 10)), axis=-1).reshape(25, 125, 3)
        upd = rng.random((25, 125, 15), dtype=f32)
        return {"data": data, "indices": idx, "updates": upd}
    out.append(Case("ScatterNDUpdate-3 ex.: (1000,256,10,15) f32, idx (25,125,3)", seed_nd,
                    {"numpy": numpy_nd_assign, "scatterops": scatterops_nd()},
                    note="numpy: o[i, j, k] = u"))

    n = 10**6 if quick else 10**7

    def nd_add():
        return {"data": rng.random(n, dtype=f32),
                "indices": rng.integers(0, n, size=(n, 1)),
                "updates": rng.random(n, dtype=f32)}
    out.append(Case(f"scatter_nd add: {n:.0e} f32 updates into {n:.0e}, duplicates", nd_add,
                    {"numpy": numpy_nd_add_at, "scatterops": scatterops_nd(reduction="add")},
                    note="numpy: np.add.at"))

    rows, cols = (1000, 1000) if quick else (4000, 1000)

    def elements_none():
        return {"data": rng.random((rows, cols), dtype=f32),
                "indices": rng.integers(0, cols, size=(rows, cols)),
                "updates": rng.random((rows, cols), dtype=f32)}
    out.append(Case(f"scatter_elements none: ({rows},{cols}) f32, axis 1", elements_none,
                    {"numpy": numpy_put_along_axis(1), "scatterops": scatterops_elements(1)},
                    note="numpy: np.put_along_axis"))

    nodes, edges = (10_000, 50_000) if quick else (100_000, 500_000)

    def graph():
        target = rng.integers(0, nodes, size=edges)
        return {"data": rng.random((nodes, 64), dtype=f32),
                # one row number per edge, expanded (a stride-0 view) to the updates' shape
                "indices": np.broadcast_to(target[:, None], (edges, 64)),
                "rows": target,
                "updates": rng.standard_normal((edges, 64), dtype=f32)}
    for red, ufunc in (("add", np.add), ("max", np.maximum)):
        out.append(Case(f"scatter_elements {red}: {edges} rows into ({nodes},64) f32, axis 0",
                        graph,
                        {"numpy": numpy_rows_at(ufunc),
                         "scatterops": scatterops_elements(0, reduction=red)},
                        note=f"numpy: np.{ufunc.__name__}.at(o, rows, u)"))
    return out


# --------------------------------------------------------------------------------------------
# Running and reporting


def available_peers() -> Dict[str, Optional[str]]:
    """peer -> None if it imports, else the reason it is skipped."""
    status: Dict[str, Optional[str]] = {}
    for peer, module in PEERS.items():
        try:
            importlib.import_module(module)
            status[peer] = None
        except Exception as exc:  # ImportError, or a broken install
            status[peer] = f"{type(exc).__name__}: {exc}"
    return status


def time_call(fn: Callable[[], np.ndarray], repeat: int, number: int) -> float:
    """Median seconds per call over `repeat` runs of `number` calls."""
    samples = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(number):
            r = fn()
        samples.append((time.perf_counter() - t0) / number)
        del r
    return statistics.median(samples)


def run_case(case: Case, peers: List[str], repeat: int) -> Row:
    row = Row(case)
    inputs = case.make()
    baseline = None
    for peer in peers:
        factory = case.peers.get(peer)
        if factory is None:
            row.times[peer] = None
            continue
        try:
            fn = factory(inputs)
            result = fn()
        except Exception as exc:
            row.times[peer] = None
            row.notes.append(f"{peer} failed: {type(exc).__name__}: {exc}")
            continue
        if baseline is None:
            baseline = result
        elif not (result.shape == baseline.shape and result.dtype == baseline.dtype
                  and np.array_equal(result, baseline)):
            row.times[peer] = None
            row.notes.append(f"MISMATCH: {peer}'s result differs from {peers[0]}'s; not timed")
            continue
        del result
        row.times[peer] = time_call(fn, repeat, case.number)
        del fn
    del inputs, baseline
    gc.collect()
    return row


def fmt_time(t: Optional[float]) -> str:
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def table(rows: List[Row], peers: List[str]) -> str:
    others = [p for p in peers if p != SUBJECT]
    head = ["case"] + [f"{p} time" for p in peers] + \
        ["speedup" if p == peers[0] else f"vs {p}" for p in others if SUBJECT in peers]
    body = []
    for row in rows:
        cells = [row.case.name] + [fmt_time(row.times.get(p)) for p in peers]
        subject = row.times.get(SUBJECT)
        if SUBJECT in peers:
            for p in others:
                t = row.times.get(p)
                cells.append(f"{t / subject:.2f}x" if t and subject else "-")
        body.append(cells)
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":"
                          for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), rule] + [line(r) for r in body])


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smaller inputs and fewer repeats (well under a minute)")
    ap.add_argument("--repeat", type=int, default=None, metavar="N",
                    help="timed runs per case and peer; the median is reported (default 5, 3 with --quick)")
    ap.add_argument("-k", dest="pattern", default="", metavar="PATTERN",
                    help="run only the cases whose name contains PATTERN")
    args = ap.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 5)
    if repeat < 1:
        ap.error("--repeat must be at least 1")

    status = available_peers()
    peers = [p for p, why in status.items() if why is None]
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, {'quick, ' if args.quick else ''}median of {repeat}")
    if "scatterops" in peers:
        import scatterops
        threads = getattr(scatterops, "get_num_threads", lambda: "?")()
        print(f"scatterops {scatterops.__version__} from {os.path.dirname(scatterops.__file__)}, "
              f"{threads} threads")
    for p, why in status.items():
        if why is not None:
            print(f"peer {p} skipped: {why}")
    print("each time is one out-of-place call (the copy of data included)")
    print()

    rows = []
    for case in cases(args.quick):
        if args.pattern and args.pattern not in case.name:
            continue
        print(f"  {case.name} ...", end="", flush=True)
        t0 = time.perf_counter()
        row = run_case(case, peers, repeat)
        print(f" {time.perf_counter() - t0:.1f} s")
        rows.append(row)

    if not rows:
        print(f"no case name contains {args.pattern!r}")
        return 1
    print()
    print(table(rows, peers))
    notes = [(r.case.name, n) for r in rows for n in ([r.case.note] if r.case.note else []) + r.notes]
    if notes:
        print()
        for name, n in notes:
            print(f"  {name}: {n}")
    mismatches = [r.case.name for r in rows if any(n.startswith("MISMATCH") for n in r.notes)]
    failures = [r.case.name for r in rows if any(" failed: " in n for n in r.notes)]
    return 1 if mismatches or failures else 0


if __name__ == "__main__":
    sys.exit(main())

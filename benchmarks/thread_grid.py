"""``python -m benchmarks.thread_grid``: scatterops on 2 threads against the same call on 1.

Each cell of a grid is one call (out size, number of updates, in place or out of place, dtype,
reduction, a 1-D ``scatter_elements`` or a ``scatter_update`` of rows), timed at 1 and at 2
threads (``scatterops.set_num_threads``), the two alternating run by run
(in a random order within each pair), medians of ``--repeat`` runs.  A row prints both medians, t2/t1, and
in how many of the pairs (run i at 1 thread, run i at 2) 2 threads were not slower than 1.1x.
``--busy`` keeps one CPU busy for the whole run (``modes.busy_core``), as ``python -m benchmarks
--busy`` does.  The grids (``--grid``):

* ``sizes``: float32 add, 1-D, out 1e2 .. 5e7 elements x 1e3 .. 1e7 updates, in place and out of
  place (the cells whose arrays would pass 600 MB together are left out);
* ``kinds``: float64, int64, float16 and the reductions none, max and mean, at out 1e3, 1e5 and
  1e7 with 1e5 and 1e6 updates, and rows of 8 and 64 float32 (``scatter_update``);
* ``all``: both.

``--max-ratio`` makes the exit status 1 when some cell's median t2/t1 is above it (a target to
check by hand, never run by the tests).  Nothing is asserted otherwise.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

import numpy as np

import scatterops

from . import core, modes


@dataclass
class Cell:
    name: str
    make: Callable[[], Callable[[], object]]     # builds the inputs, returns the call


def _fmt(n: int) -> str:
    e = len(str(n)) - 1
    m = n // 10**e
    return f"{m}e{e}" if m * 10**e == n else str(n)


def _values(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return rng.integers(-1000, 1000, n).astype(dt)
    return rng.random(n).astype(dt)


def elements(n: int, m: int, inplace: bool, dtype="float32", red: str = "add") -> Cell:
    """``scatter_elements`` of m updates into n elements, axis 0, random int64 indices."""
    def make():
        rng = np.random.default_rng(n + m)
        d, i, u = _values(rng, dtype, n), rng.integers(0, n, m), _values(rng, dtype, m)
        if inplace:
            return lambda: scatterops.scatter_elements(d, i, u, 0, reduction=red, out=d)
        return lambda: scatterops.scatter_elements(d, i, u, 0, reduction=red)
    return Cell(f"elements {np.dtype(dtype).name} {red} {_fmt(m)} into {_fmt(n)}"
                f"{' in place' if inplace else ''}", make)


def rows(n: int, m: int, f: int, inplace: bool, red: str = "add") -> Cell:
    """``scatter_update`` of m rows of f float32 into (n, f)."""
    def make():
        rng = np.random.default_rng(n + m + f)
        d = rng.random((n, f), dtype=np.float32)
        i, u = rng.integers(0, n, m), rng.random((m, f), dtype=np.float32)
        if inplace:
            return lambda: scatterops.scatter_update(d, i, u, 0, reduction=red, out=d)
        return lambda: scatterops.scatter_update(d, i, u, 0, reduction=red)
    return Cell(f"rows of {f} f32 {red} {_fmt(m)} into ({_fmt(n)},{f})"
                f"{' in place' if inplace else ''}", make)


def sizes_grid() -> Iterator[Cell]:
    for inplace in (False, True):
        for n in (10**2, 10**3, 10**4, 10**5, 10**6, 10**7, 5 * 10**7):
            for m in (10**3, 10**4, 10**5, 10**6, 10**7):
                if 4 * n + 12 * m <= 600 * 10**6:
                    yield elements(n, m, inplace)


def kinds_grid() -> Iterator[Cell]:
    for inplace in (False, True):
        for n in (10**3, 10**5, 10**7):
            for m in (10**5, 10**6):
                for dtype in ("float64", "int64", "float16"):
                    yield elements(n, m, inplace, dtype)
                for red in ("none", "max", "mean"):
                    yield elements(n, m, inplace, "float32", red)
        for f in (8, 64):
            for n in (10**3, 10**5):
                for m in (10**4, 10**5):
                    yield rows(n, m, f, inplace)


GRIDS = {"sizes": sizes_grid, "kinds": kinds_grid,
         "all": lambda: list(sizes_grid()) + list(kinds_grid())}


def time_cell(cell: Cell, threads: int, repeat: int, target: float, rng: random.Random):
    """(t1 samples, t2 samples) in seconds per call: ``repeat`` pairs, one run at each thread
    count, in a random order within each pair (a fixed order can alias with other processes'
    periodic load), each run ``k`` calls lasting about ``target`` seconds."""
    fn = cell.make()
    fn()
    k = core.calls_per_run(fn, target)
    out = {1: [], threads: []}
    for _ in range(repeat):
        order = [1, threads]
        rng.shuffle(order)
        for n in order:
            scatterops.set_num_threads(n)
            gc.collect()
            time.sleep(0.002)
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            out[n].append((time.perf_counter() - t0) / k)
    return out[1], out[threads]


def _us(s: float) -> str:
    return f"{s * 1e6:.0f}" if s >= 1e-4 else f"{s * 1e6:.1f}"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.thread_grid",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--grid", choices=sorted(GRIDS), default="sizes")
    ap.add_argument("-k", dest="pattern", default="",
                    help="only the cells whose name contains one of these comma-separated words")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=7, help="runs at each thread count (>= 7)")
    ap.add_argument("--target", type=float, default=0.01, help="seconds a run lasts, about")
    ap.add_argument("--busy", action="store_true", help="keep one CPU busy for the whole run")
    ap.add_argument("--max-ratio", type=float, default=None,
                    help="exit 1 if a cell's median t2/t1 is above this")
    args = ap.parse_args(argv)
    words = [w for w in args.pattern.split(",") if w]
    cells = [c for c in GRIDS[args.grid]() if not words or any(w in c.name for w in words)]
    busy = modes.busy_core() if args.busy else contextlib.nullcontext(None)
    worst = 0.0
    rng = random.Random(0)
    before = scatterops.get_num_threads()
    with busy as cpu:
        print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
              + ("" if cpu is None else f"; busy loop on CPU {cpu}"))
        t = args.threads
        print(f"| call | t1 µs | t{t} µs | t{t}/t1 | pairs t{t} <= 1.1 t1 |")
        print("|---|---:|---:|---:|---:|")
        try:
            for cell in cells:
                s1, s2 = time_cell(cell, t, args.repeat, args.target, rng)
                m1, m2 = core.median(s1), core.median(s2)
                ok = sum(b <= 1.1 * a for a, b in zip(s1, s2))
                worst = max(worst, m2 / m1)
                print(f"| {cell.name} | {_us(m1)} | {_us(m2)} | {m2 / m1:.2f} | {ok}/{len(s1)} |",
                      flush=True)
        finally:
            scatterops.set_num_threads(before)
    print(f"# worst t{args.threads}/t1: {worst:.2f}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if args.max_ratio is not None and worst > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())

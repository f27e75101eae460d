"""``python -m benchmarks.at_bench``: ``scatterops.at`` against NumPy's own ``ufunc.at``.

Three in-place float64 ``np.add.at`` forms, each timed at 1 and 2 scatterops threads
(``scatterops.set_num_threads``; NumPy's ``ufunc.at`` has one), the two
implementations interleaved run by run (``core.time_round_robin``), medians of
``--repeat`` runs.  Each row prints NumPy's time over scatterops' and whether it
reaches the row's target, then the fastest runs of each (what a quiet machine gives).  Before timing, each case checks once that both give the
same bytes (on copies).  Nothing is asserted.

``--small``: the small calls instead, on one thread -- each form at 2, 64 and 1000
updates, a float64 ``a`` of 1000 elements (100 x 100 for the tuple, 8 x 1000 for
``a[:, idx]``; float32 where a Python float b makes NumPy compute in float64),
the same call on the same array in place each run; the targets are 0.8x NumPy at 2
updates, 1x at 64 and 2x at 1000 (1x for a list index, which both convert).
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy as np

import scatterops

from . import core


@dataclass
class AtCase:
    name: str
    make: Callable[[np.random.Generator], Tuple[np.ndarray, object, np.ndarray]]  # a, indices, b
    target: float       # NumPy time / scatterops time to reach


def _one_d(rng):
    return np.zeros(100_000), rng.integers(0, 100_000, 1_000_000), rng.random(1_000_000)


def _tuple_2d(rng):
    idx = (rng.integers(0, 1000, 1_000_000), rng.integers(0, 1000, 1_000_000))
    return np.zeros((1000, 1000)), idx, rng.random(1_000_000)


def _slice_and_array(rng):
    idx = (slice(None), rng.integers(0, 20_000, 100_000))
    return np.zeros((64, 20_000)), idx, rng.random((64, 100_000))


CASES = [
    AtCase("1-D: 1e6 updates into 1e5, a[idx]", _one_d, 1.0),
    AtCase("2-D tuple: 1e6 updates into 1000 x 1000, a[rows, cols]", _tuple_2d, 5.0),
    AtCase("slice + array: a[:, idx], a 64 x 20000, 1e5 indices", _slice_and_array, 3.0),
]


def _small(form: str, n: int):
    """(ufunc, a, indices, b) of a small call of form with n updates."""
    rng = np.random.default_rng(n)
    idx = rng.integers(0, 1000, n)
    if form == "1-D int array":
        return np.add, np.zeros(1000), idx, rng.random(n)
    if form == "list index":
        return np.add, np.zeros(1000), idx.tolist(), rng.random(n)
    if form == "2-D tuple (rows, cols)":
        return np.add, np.zeros((100, 100)), (rng.integers(0, 100, n), rng.integers(0, 100, n)), rng.random(n)
    if form == "slice + array a[:, idx]":
        return np.add, np.zeros((8, 1000)), (slice(None), idx), rng.random((8, n))
    if form == "Python scalar b":
        return np.add, np.zeros(1000), idx, 1.5
    if form == "typed scalar b":
        return np.add, np.zeros(1000), idx, np.float64(1.5)
    if form == "Python float b, float32 a":
        return np.add, np.zeros(1000, np.float32), idx, 0.1
    return np.maximum, rng.random(1000), idx, rng.random(n)      # "np.maximum"


SMALL_FORMS = ["1-D int array", "list index", "2-D tuple (rows, cols)", "slice + array a[:, idx]",
               "Python scalar b", "typed scalar b", "Python float b, float32 a", "np.maximum"]
SMALL_SIZES = (2, 64, 1000)


def small_target(form: str, n: int) -> float:
    """The target of a small call: NumPy's time over scatterops'."""
    if form == "list index":
        return 0.8 if n == 2 else 1.0
    return {2: 0.8, 64: 1.0}.get(n, 2.0)


def run_small(repeat: int, target: float) -> int:
    """Times the small calls, scatterops on one thread; prints a row per form."""
    scatterops.set_num_threads(1)
    print(f"{'form':26} " + " ".join(f"{n:>16}" for n in SMALL_SIZES)
          + "   (each: NumPy us / so us = ratio, * short of its target)")
    for form in SMALL_FORMS:
        cells = []
        for n in SMALL_SIZES:
            ufunc, a, idx, b = _small(form, n)
            mine, theirs = a.copy(), a.copy()
            scatterops.at(ufunc, mine, idx, b)
            ufunc.at(theirs, idx, b)
            if mine.tobytes() != theirs.tobytes():
                print(f"{form} at {n}: results differ from {ufunc.__name__}.at")
                return 1
            entries = {"numpy": lambda: ufunc.at(a, idx, b),
                       "scatterops": lambda: scatterops.at(ufunc, a, idx, b)}
            samples, errors = core.time_round_robin(entries, repeat, target, pause=0.005, budget=60.0)
            if errors:
                raise RuntimeError(f"{form} at {n}: {errors}")
            t_np, t_so = core.median(samples["numpy"]), core.median(samples["scatterops"])
            mark = " " if t_np / t_so >= small_target(form, n) else "*"
            cells.append(f"{t_np * 1e6:5.2f}/{t_so * 1e6:5.2f}={t_np / t_so:4.2f}{mark}")
        print(f"{form:26} " + " ".join(f"{c:>16}" for c in cells))
    return 0


def check(case: AtCase) -> Optional[str]:
    """None if scatterops.at and np.add.at give the same bytes on this case, else what differs."""
    a, idx, b = case.make(np.random.default_rng(1))
    mine, theirs = a.copy(), a.copy()
    scatterops.at(np.add, mine, idx, b)
    np.add.at(theirs, idx, b)
    if mine.tobytes() != theirs.tobytes():
        return f"{np.count_nonzero(mine != theirs)} elements differ"
    return None


def run(case: AtCase, threads: int, repeat: int, target: float) -> Tuple[float, float, float, float]:
    """(NumPy's median, scatterops' median, NumPy's fastest, scatterops' fastest), in
    seconds, with scatterops on threads."""
    a, idx, b = case.make(np.random.default_rng(0))
    scatterops.set_num_threads(threads)
    entries = {"numpy": lambda: np.add.at(a, idx, b),
               "scatterops": lambda: scatterops.at(np.add, a, idx, b)}
    samples, errors = core.time_round_robin(entries, repeat, target, pause=0.02, budget=120.0)
    if errors:
        raise RuntimeError(f"{case.name}: {errors}")
    return (core.median(samples["numpy"]), core.median(samples["scatterops"]),
            min(samples["numpy"]), min(samples["scatterops"]))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.at_bench", description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=9, help="timed runs of each implementation (>= 7)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--target", type=float, default=0.05, help="seconds a timed run lasts at least")
    ap.add_argument("--small", action="store_true", help="the small calls (2, 64, 1000 updates)")
    args = ap.parse_args(argv)
    before = scatterops.get_num_threads()
    print(f"scatterops {scatterops.__version__} from {os.path.dirname(scatterops.__file__)}, "
          f"NumPy {np.__version__}, load {'/'.join(f'{v:.2f}' for v in os.getloadavg())}, "
          f"medians of {args.repeat} interleaved runs")
    if args.small:
        try:
            return run_small(args.repeat, min(args.target, 0.01))
        finally:
            scatterops.set_num_threads(before)
    print(f"{'case':58} {'threads':>7} {'NumPy ms':>9} {'so ms':>8} {'ratio':>6} {'target':>6}  result"
          f"   (fastest runs: NumPy ms, so ms, ratio)")
    try:
        for case in CASES:
            problem = check(case)
            if problem:
                print(f"{case.name}: results differ from np.add.at ({problem})")
                return 1
            for t in args.threads:
                t_np, t_so, f_np, f_so = run(case, t, args.repeat, args.target)
                ratio = t_np / t_so
                verdict = "pass" if ratio >= case.target else "short"
                print(f"{case.name:58} {t:>7} {t_np * 1e3:>9.2f} {t_so * 1e3:>8.2f} "
                      f"{ratio:>6.2f} {case.target:>6.1f}  {verdict:6} "
                      f"  ({f_np * 1e3:.2f}, {f_so * 1e3:.2f}, {f_np / f_so:.2f})")
    finally:
        scatterops.set_num_threads(before)
    return 0


if __name__ == "__main__":
    sys.exit(main())

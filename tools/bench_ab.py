#!/usr/bin/env python3
"""Time two builds of scatterops against each other, runs interleaved A, B, B, A, A, B, ...

    python tools/bench_ab.py A B [-k KEYS] [-n RUNS] [--harness own|each] [--peers] [--json]
                             [any other option of python -m benchmarks, e.g. --repeat 3]

A and B are checkouts, each with a built ``scatterops/_core*.so`` (``python setup.py build_ext
--inplace``).  Each run is one ``python -m benchmarks -k KEYS --skip <every peer> --json FILE``
process with its working directory and ``PYTHONPATH`` set to the checkout, so it imports that
checkout's scatterops (checked: the run stops if scatterops comes from anywhere else).  Runs
alternate in pairs, (A, B), (B, A), (A, B), ..., so that a drift of the machine (another job
starting, a CPU warming) falls on both sides alike; ``-n`` pairs are run (default 7).

``--harness own`` (the default): every run uses the benchmark cases of *this* repository (the one
this script is in), whichever checkout's scatterops it imports, so both sides time the same cases
-- A may be an older checkout whose ``benchmarks/`` lacks a case or ``--json``.  ``--harness each``
runs each checkout's own ``python -m benchmarks`` (it must have ``--json``).

Prints, per case: the median over the runs of scatterops' time (each run's own median of
``--repeat`` timed runs) for A and for B, B/A (below 1: B is faster), and in how many of the pairs
B was more than 5% slower than A.  ``--json`` prints that as JSON instead, with every run's times.
Peers are left out (``--skip``) unless ``--peers`` is given: only scatterops' times are compared.

Nothing here asserts a time; the exit status is 1 only if a run failed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # this repository
PEERS = ("numpy", "torch", "onnxruntime", "openvino", "jax", "numba",  # as benchmarks/peers.py
         "numpy_groupies")
SLOWER = 1.05

# Run this repository's benchmarks with the checkout's scatterops: import scatterops first (from
# the working directory, the checkout), then put this repository first on the path for
# ``benchmarks`` (the checkout may have a ``benchmarks`` folder of its own).
_BOOT = r"""
import os, sys
harness, checkout = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
import scatterops
where = os.path.realpath(scatterops.__file__)
if not where.startswith(os.path.join(os.path.realpath(checkout), "")):
    sys.exit(f"bench_ab: scatterops imported from {where}, not from {checkout}")
sys.path.insert(0, harness)
for m in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
    del sys.modules[m]
from benchmarks.run import main
sys.exit(main(sys.argv[1:]))
"""


def run_once(checkout: str, bench_args: List[str], harness: str) -> Dict[str, dict]:
    """One benchmark process in ``checkout`` -> case key -> {"name", "time" (s or None)}."""
    fd, path = tempfile.mkstemp(prefix="bench_ab_", suffix=".json")
    os.close(fd)
    try:
        args = bench_args + ["--json", path]
        if harness == "own":            # this repository's harness: its runs keep no record
            cmd = [sys.executable, "-c", _BOOT, HERE, checkout] + args + ["--no-record"]
        else:
            cmd = [sys.executable, "-m", "benchmarks"] + args
        env = dict(os.environ, PYTHONPATH=checkout)
        proc = subprocess.run(cmd, cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"bench_ab: the run in {checkout} wrote no results (exit status "
                             f"{proc.returncode})")
        if proc.returncode != 0:
            print(f"bench_ab: warning: the run in {checkout} exited with {proc.returncode} "
                  "(scatterops failed a case, or a result differs from NumPy's)", file=sys.stderr)
        so_file = os.path.realpath(report.get("scatterops_file") or "")
        if not so_file.startswith(os.path.join(os.path.realpath(checkout), "")):
            raise SystemExit(f"bench_ab: the run in {checkout} imported scatterops from {so_file}")
        # a performance-v2 case has a row per thread count: those keys get the count
        seen = [c["key"] for c in report["cases"]]
        return {(c["key"] if seen.count(c["key"]) == 1 else f"{c['key']} [{c.get('threads')}t]"):
                {"name": c["name"], "time": c["scatterops"]} for c in report["cases"]}
    finally:
        os.unlink(path)


def describe(checkout: str) -> str:
    """The checkout's commit (and -dirty) and when its C core was built."""
    import datetime
    import glob
    git = subprocess.run(["git", "-C", checkout, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip()
    cores = glob.glob(os.path.join(checkout, "scatterops", "_core*.so")) + \
        glob.glob(os.path.join(checkout, "scatterops", "_core*.pyd"))
    built = (datetime.datetime.fromtimestamp(os.path.getmtime(cores[0])).strftime("%Y-%m-%d %H:%M:%S")
             if cores else "no built _core")
    return f"{checkout} ({git or 'not a git checkout'}, _core built {built})"


def fmt_time(t) -> str:
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.3g} us"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tools/bench_ab.py", description=__doc__.split("\n\n")[0],
                                 epilog="Other options are passed to python -m benchmarks.")
    ap.add_argument("a", metavar="A", help="the checkout timed first (the before)")
    ap.add_argument("b", metavar="B", help="the other checkout (the after)")
    ap.add_argument("-k", dest="pattern", default="",
                    help="the cases, as python -m benchmarks -k takes them (default: all)")
    ap.add_argument("-n", "--runs", type=int, default=7,
                    help="pairs of runs, one of each checkout a pair (default 7)")
    ap.add_argument("--harness", choices=("own", "each"), default="own",
                    help="own: this repository's benchmarks for both (default); each: each "
                         "checkout's own")
    ap.add_argument("--peers", action="store_true", help="do not --skip the peers")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args, extra = ap.parse_known_args(argv)
    if args.runs < 1:
        ap.error("-n must be at least 1")
    a, b = os.path.abspath(args.a), os.path.abspath(args.b)
    bench_args = (["-k", args.pattern] if args.pattern else []) + \
        ([] if args.peers else ["--skip", ",".join(PEERS)]) + extra

    order = []
    for p in range(args.runs):
        order += [("A", p), ("B", p)] if p % 2 == 0 else [("B", p), ("A", p)]
    times: Dict[str, Dict[str, List]] = {}      # key -> side -> [time per pair]
    names: Dict[str, str] = {}
    for i, (side, p) in enumerate(order):
        checkout = a if side == "A" else b
        print(f"run {i + 1}/{len(order)}: {side} (pair {p + 1})", file=sys.stderr, flush=True)
        for key, r in run_once(checkout, bench_args, args.harness).items():
            names.setdefault(key, r["name"])
            slot = times.setdefault(key, {"A": [None] * args.runs, "B": [None] * args.runs})
            slot[side][p] = r["time"]

    rows = []
    for key, t in times.items():
        ta = [x for x in t["A"] if x is not None]
        tb = [x for x in t["B"] if x is not None]
        ma = statistics.median(ta) if ta else None
        mb = statistics.median(tb) if tb else None
        pairs = [(x, y) for x, y in zip(t["A"], t["B"]) if x is not None and y is not None]
        slower = sum(y > SLOWER * x for x, y in pairs)
        rows.append({"case": key, "name": names[key], "median_a": ma, "median_b": mb,
                     "b_over_a": (mb / ma) if ma and mb else None,
                     "pairs": len(pairs), "b_slower_pairs": slower,
                     "runs_a": t["A"], "runs_b": t["B"]})

    if args.json:
        json.dump({"a": describe(a), "b": describe(b), "harness": args.harness,
                   "benchmark_args": bench_args, "pairs": args.runs, "unit": "seconds per call",
                   "slower_threshold": SLOWER, "cases": rows}, sys.stdout, indent=1)
        print()
        return 0

    print(f"A = {describe(a)}")
    print(f"B = {describe(b)}")
    print(f"{args.runs} pairs, run A B, B A, A B, ...; each run: python -m benchmarks "
          f"{' '.join(bench_args)} ({'this repository' if args.harness == 'own' else 'each checkout'}'s"
          " benchmarks); scatterops' time per call, median over the runs")
    print()
    head = ["case", "median A", "median B", "B/A", f"B > {SLOWER:g} A"]
    body = [[r["case"], fmt_time(r["median_a"]), fmt_time(r["median_b"]),
             f"{r['b_over_a']:.3f}" if r["b_over_a"] else "-",
             f"{r['b_slower_pairs']} of {r['pairs']}"] for r in rows]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    for j, line in enumerate([head] + body):
        print("| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(line, widths))) + " |")
        if j == 0:
            print("|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":"
                                 for i, w in enumerate(widths)) + "|")
    print()
    print("B/A below 1: B is faster. Last column: the pairs in which B took more than "
          f"{(SLOWER - 1) * 100:.0f}% longer than A.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

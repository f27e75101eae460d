"""``python -m benchmarks.interrupt_delay``: how long a call takes to stop after Ctrl-C.

For a few call kinds at 1 and 2 threads, a child process sizes the call to last about
``--seconds`` (from a smaller call it times first), sends itself SIGINT a second in and
measures the time from the signal to the KeyboardInterrupt.  Printed: the median of
``--runs`` children per row, and the slowest.  Nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(r'''
    import json, os, signal, sys, threading, time
    import numpy as np
    import scatterops as so
    # a Ctrl-C raises KeyboardInterrupt here however the suite was started (a shell's
    # background job starts with SIGINT ignored, and a child inherits that)
    signal.signal(signal.SIGINT, signal.default_int_handler)

    kind, nthreads, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    so.set_num_threads(nthreads)
    rng = np.random.default_rng(0)

    def make(n):
        if kind == "check":          # the index check: overlapping strides, last value bad
            m = max(int(n ** 0.5), 2)
            base = np.zeros(2 * m, dtype=np.intp)
            base[-2] = 10 ** 9
            idx = np.lib.stride_tricks.as_strided(base, (m, m), (8, 8))
            data = np.zeros(m)
            return lambda: so.scatter_update(data, idx, 1.0, reduction="add", out=data)
        if kind == "fallback":       # longdouble: NumPy's ufunc.at
            data = np.zeros((4096, 8), dtype=np.longdouble)
            idx = rng.integers(0, 4096, n // 8)
            return lambda: so.scatter_update(data, idx, np.longdouble(1), reduction="add", out=data)
        if kind == "elements":       # random elements into a small out
            data = np.zeros(1000)
            idx = rng.integers(0, 1000, n)
            return lambda: so.scatter_elements(data, idx, 1.0, reduction="add", out=data)
        data = np.full((4096, 256), 1.0)
        idx = np.broadcast_to(rng.integers(0, 4096, 4096), (max(n // 256 // 4096, 1), 4096))
        red, where = kind.split("_")
        kw = {"out": data} if where == "in" else {}
        return lambda: so.scatter_update(data, idx, 1.0, reduction=red, **kw)

    def run(call):
        try:
            call()
        except IndexError:
            pass

    n = 1 << 18 if kind == "fallback" else 1 << 22
    while True:
        call = make(n)
        t = time.perf_counter(); run(call); small = time.perf_counter() - t
        if small >= 0.2 or n > 1 << 40:
            break
        n *= 4
    call = make(int(n * seconds / small))
    sent = []
    timer = threading.Timer(1.0, lambda: (sent.append(time.perf_counter()),
                                          os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    try:
        run(call)
        print(json.dumps({"delay": None}))
    except KeyboardInterrupt:
        print(json.dumps({"delay": time.perf_counter() - sent[0]}))
''')

KINDS = ["add_out", "add_in", "mean_in", "none_in", "elements", "check", "fallback"]


def delay(kind: str, nthreads: int, seconds: float) -> float | None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", CHILD, kind, str(nthreads), str(seconds)],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{kind} at {nthreads} threads failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])["delay"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="children per row (default 3)")
    ap.add_argument("--seconds", type=float, default=5.0,
                    help="the length each call is sized to (default 5)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: " + ",".join(KINDS))
    args = ap.parse_args(argv)
    print(f"delay from SIGINT to KeyboardInterrupt, median of {args.runs} runs "
          f"(calls sized to {args.seconds:g} s, signal 1 s in)")
    print(f"{'call':<10} {'threads':>7} {'median ms':>10} {'max ms':>8}")
    for kind in args.kinds.split(","):
        for nthreads in (1, 2):
            ds = [delay(kind, nthreads, args.seconds) for _ in range(args.runs)]
            if any(d is None for d in ds):
                print(f"{kind:<10} {nthreads:>7} {'not stopped: ended first':>19}")
                continue
            print(f"{kind:<10} {nthreads:>7} {1e3 * statistics.median(ds):>10.1f} "
                  f"{1e3 * max(ds):>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The one-thread float32 scatter-add cases against a serial numba loop, two checkouts interleaved.

    python -m benchmarks.one_thread BEFORE AFTER [-n PAIRS] [--repeat R]

BEFORE and AFTER are checkouts with a built ``scatterops/_core*.so``.  Each run is one child
process (this file with ``--child``) importing one checkout's scatterops at 1 thread and timing,
per case, scatterops in place (``out=data``) and out of place, the numba loop
``for i in range(n): o[ix[i]] += u[i]`` on ``data`` and on ``data.copy()``, and (int64 indices
into at most 10^3 elements) ``numpy_groupies.aggregate`` plus ``data``: the median of R calls
each.  Runs alternate (BEFORE, AFTER), (AFTER, BEFORE), ...; the table has each side's median
over the runs, how many pairs AFTER was faster in, and the peers' medians over all runs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = [(10**6, 10**3, "int64"), (10**6, 3 * 10**4, "int64"), (10**6, 10**6, "int64"),
         (10**5, 10**3, "int64"), (10**6, 10**2, "int64"), (10**6, 10**2, "int32"),
         (10**6, 10**2, "int16"), (10**6, 10**2, "int8"), (10**6, 10**2, "uint8"),
         (10**6, 10**3, "int32"), (10**6, 10**6, "int32")]


def child(repeat: int) -> dict:
    import numba
    import numpy as np

    import scatterops as so
    so.set_num_threads(1)

    @numba.njit
    def loop(o, ix, u):
        for i in range(ix.shape[0]):
            o[ix[i]] += u[i]

    def med(f):
        f()
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
        return float(np.median(ts))

    rng = np.random.default_rng(1)
    out = {}
    for m, n, dt in CASES:
        ix = rng.integers(0, n, m).astype(dt)
        u = rng.random(m, dtype=np.float32)
        d = rng.random(n, dtype=np.float32)
        key = f"{m:.0e} into {n:.0e}, {dt}".replace("e+0", "e")
        out[key + ", in place"] = {
            "so": med(lambda: so.scatter_update(d, ix, u, reduction="add", out=d)),
            "numba": med(lambda: loop(d, ix, u))}
        out[key + ", out of place"] = {
            "so": med(lambda: so.scatter_update(d, ix, u, reduction="add")),
            "numba": med(lambda: loop(d.copy(), ix, u))}
        if n <= 10**3 and dt == "int64":
            import numpy_groupies as npg
            out[key + ", out of place"]["numpy_groupies"] = med(
                lambda: npg.aggregate(ix, u, func="sum", size=n, dtype=np.float32) + d)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="*")
    ap.add_argument("-n", type=int, default=7, help="pairs of runs (default 7)")
    ap.add_argument("--repeat", type=int, default=9, help="calls per median (default 9)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        json.dump(child(args.repeat), sys.stdout)
        return
    a, b = args.checkouts
    here = os.path.dirname(os.path.abspath(__file__))
    runs = {a: [], b: []}
    for k in range(args.n):
        for c in ((a, b) if k % 2 == 0 else (b, a)):
            r = subprocess.run([sys.executable, os.path.join(here, "one_thread.py"), "--child",
                                "--repeat", str(args.repeat)], cwd=c, capture_output=True,
                               text=True, env=dict(os.environ, PYTHONPATH=c), check=True)
            runs[c].append(json.loads(r.stdout))
    print(f"| case | before | after | after/before | faster | numba | after/numba | numpy_groupies |")
    print("|---|---|---|---|---|---|---|---|")
    for key in runs[a][0]:
        ta = statistics.median(r[key]["so"] for r in runs[a])
        tb = statistics.median(r[key]["so"] for r in runs[b])
        faster = sum(rb[key]["so"] < ra[key]["so"] for ra, rb in zip(runs[a], runs[b]))
        peer = {p: statistics.median(r[key][p] for r in runs[a] + runs[b])
                for p in runs[a][0][key] if p != "so"}
        g = f"{peer['numpy_groupies'] * 1e6:.0f} us" if "numpy_groupies" in peer else ""
        print(f"| {key} | {ta * 1e6:.0f} us | {tb * 1e6:.0f} us | {tb / ta:.2f} | {faster}/{args.n} "
              f"| {peer['numba'] * 1e6:.0f} us | {tb / peer['numba']:.2f} | {g} |")


if __name__ == "__main__":
    main()

"""``python -m benchmarks.dask_bench [--scale S]``: scatterops.dask on a 2-worker LocalCluster.

Scatter-add of N random updates (float32, int64 indices) into an N-element float32 array in
chunks of N/10 (N = 1e8 at --scale 1), the inputs persisted on the cluster before the clock
starts and the result persisted there (not fetched) when it stops, against

* single-process scatterops (``scatterops.scatter_update``, its default thread count) on the
  same arrays, fetched to this process;
* ``da.bincount(indices, weights=updates) + data`` (NumPy's bincount sums in float64: not
  the bits of the scatter; the per-chunk partial sums, N float64 each, are added two at a time);
* ``flox.groupby_reduce(updates, indices, func="sum") + data``, when flox is installed and
  N <= --flox-max-n (it took 190 s at N = 1e7 on the 2-core machine).

For each: wall time, peak RSS per worker during the compute (sampled every 20 ms), and
whether the result is bit-equal to single-process scatterops.  For scatterops.dask, where the
time goes: task compute time summed by stage (routing, picking pieces, apply) and the time
the workers spent receiving data from each other (transfer).

Then a case whose data is larger than one worker's memory limit (3N float32 under a
memory_limit per worker of the data's bytes / 1.5, at least 512 MiB; 3N/10 updates; the
result reduced by a sum, so no worker ever holds it whole): it must complete; its peak RSS per
worker is printed.
"""
from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Dict, List

import numpy as np

_SAMPLER: Dict[str, object] = {}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _start_sampler() -> int:
    """In a worker: sample this process's RSS every 20 ms until _stop_sampler."""
    stop = threading.Event()
    peak = [_rss()]

    def run():
        while not stop.wait(0.02):
            peak[0] = max(peak[0], _rss())

    t = threading.Thread(target=run, daemon=True)
    t.start()
    _SAMPLER.update(stop=stop, peak=peak, thread=t)
    return peak[0]


def _stop_sampler() -> int:
    _SAMPLER["stop"].set()          # type: ignore[attr-defined]
    _SAMPLER["thread"].join()       # type: ignore[attr-defined]
    return max(_SAMPLER["peak"][0], _rss())   # type: ignore[index]


def _sampler():
    """The sampler functions by reference to this module (run as __main__, they would be
    pickled by value, each call with a fresh _SAMPLER)."""
    from benchmarks import dask_bench
    return dask_bench._start_sampler, dask_bench._stop_sampler


def _timed_on_cluster(client, make, label: str):
    """Build the collection with make(), persist it, wait; return (seconds, peaks, result, stream)."""
    from distributed import get_task_stream, wait
    _start_sampler, _stop_sampler = _sampler()
    client.run(_start_sampler)
    with get_task_stream(client) as ts:
        t0 = time.perf_counter()
        result = make().persist()
        wait(result)
        seconds = time.perf_counter() - t0
    peaks = client.run(_stop_sampler)
    return seconds, sorted(peaks.values()), result, ts.data


def _breakdown(stream: List[dict]) -> Dict[str, float]:
    """Task compute seconds summed by stage, and transfer seconds, over all workers."""
    out: Dict[str, float] = {}
    for task in stream:
        key = task["key"]
        name = key[0] if isinstance(key, tuple) else key
        stage = ("routing" if "-route-" in name else "pieces" if "-piece-" in name
                 else "apply" if "-dask-" in name else "other")
        for ss in task["startstops"]:
            what = stage if ss["action"] == "compute" else ss["action"]
            out[what] = out.get(what, 0.0) + ss["stop"] - ss["start"]
    return out


def _peers(client, data, indices, updates, n: int, want: np.ndarray, flox_max_n: float) -> list:
    """The rows of da.bincount and flox (when installed) on the persisted inputs."""
    import dask.array as da
    rows = []
    # each chunk's bincount is N float64 partial sums: they are added two at a time
    seconds, peaks, result, _ = _timed_on_cluster(
        client, lambda: data + da.bincount(indices, weights=updates, minlength=n, split_every=2),
        "bincount")
    got = result.compute()
    rows.append(("da.bincount(weights) + data (float64)", seconds, peaks,
                 got.dtype == want.dtype and got.tobytes() == want.tobytes()))
    del result, got
    try:
        import flox
    except ImportError:
        return rows + [("flox.groupby_reduce: not installed", None, None, None)]
    if n > flox_max_n:
        return rows + [(f"flox groupby_reduce: not run above N = {flox_max_n:.0e} "
                        "(--flox-max-n)", None, None, None)]

    def with_flox():
        sums, _ = flox.groupby_reduce(updates, indices, func="sum",
                                      expected_groups=np.arange(n), isbin=False)
        return data + sums.astype(np.float32)
    try:
        seconds, peaks, result, _ = _timed_on_cluster(client, with_flox, "flox")
    except Exception as exc:   # a peer that fails is reported, not fatal
        return rows + [(f"flox groupby_reduce: failed ({type(exc).__name__})", None, None, None)]
    got = result.compute()
    rows.append((f"flox {flox.__version__} groupby_reduce(sum) + data", seconds, peaks,
                 got.dtype == want.dtype and got.tobytes() == want.tobytes()))
    return rows


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", type=float, default=1.0, help="sizes times this (1: N = 1e8)")
    p.add_argument("--flox-max-n", type=float, default=2e7,
                   help="run flox only up to this N (it took 190 s at N = 1e7 here)")
    args = p.parse_args(argv)

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    import scatterops
    import scatterops.dask as sd

    n = int(1e8 * args.scale)
    chunk = max(1, n // 10)
    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit="8GiB") as cluster, \
            Client(cluster) as client:
        rng = da.random.default_rng(0)
        data = rng.standard_normal(n, chunks=chunk, dtype=np.float32).persist()
        indices = rng.integers(0, n, n, chunks=chunk, dtype=np.int64).persist()
        updates = rng.standard_normal(n, chunks=chunk, dtype=np.float32).persist()
        data_np, indices_np, updates_np = dask.compute(data, indices, updates)

        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            want = scatterops.scatter_update(data_np, indices_np, updates_np, reduction="add")
            times.append(time.perf_counter() - t0)
        single = float(np.median(times))
        rows.append(("scatterops, one process (%d threads)" % scatterops.get_num_threads(),
                     single, None, True))
        del want
        want = scatterops.scatter_update(data_np, indices_np, updates_np, reduction="add")
        del data_np, indices_np, updates_np

        seconds, peaks, result, stream = _timed_on_cluster(
            client, lambda: sd.scatter_update(data, indices, updates, reduction="add"), "dask")
        equal = result.compute().tobytes() == want.tobytes()
        rows.append(("scatterops.dask, 2 workers", seconds, peaks, equal))
        parts = _breakdown(stream)
        del result

        rows += _peers(client, data, indices, updates, n, want, args.flox_max_n)

    print(f"scatter-add of {n:.0e} float32 updates into {n:.0e} float32 elements, "
          f"chunks of {chunk:.0e}, 2 worker processes of 1 thread (loopback)")
    print(f"| method | time (s) | vs one process | peak RSS per worker (GiB) | bit-equal |")
    print("|---|---|---|---|---|")
    for name, secs, peaks, eq in rows:
        if secs is None:
            print(f"| {name} | - | - | - | - |")
            continue
        pk = " / ".join(_gib(x) for x in peaks) if peaks else "-"
        print(f"| {name} | {secs:.2f} | {secs / single:.2f}x | {pk} | {'yes' if eq else 'no'} |")
    total = sum(parts.values())
    print("\nscatterops.dask, where the time goes (seconds summed over both workers):")
    for what, secs in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {what:10s} {secs:6.2f}  ({100 * secs / total:.0f}%)")

    # data larger than one worker's memory limit
    big = 3 * n
    limit = max(int(big * 4 / 1.5), 512 * 2**20)   # a worker process alone takes ~200 MiB
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=limit) as cluster, \
            Client(cluster) as client:
        rng = da.random.default_rng(1)
        data = rng.standard_normal(big, chunks=chunk, dtype=np.float32)
        indices = rng.integers(0, big, big // 10, chunks=chunk, dtype=np.int64)
        updates = rng.standard_normal(big // 10, chunks=chunk, dtype=np.float32)
        _start_sampler, _stop_sampler = _sampler()
        client.run(_start_sampler)
        t0 = time.perf_counter()
        total_sum = sd.scatter_update(data, indices, updates, reduction="add").sum(
            dtype=np.float64).compute()
        seconds = time.perf_counter() - t0
        peaks = sorted(client.run(_stop_sampler).values())
    print(f"\ndata larger than a worker's memory limit: {big:.0e} float32 ({_gib(big * 4)} GiB) "
          f"under memory_limit {_gib(limit)} GiB per worker, {big // 10:.0e} updates: completed "
          f"in {seconds:.1f} s (sum {total_sum:.6g}), peak RSS per worker "
          f"{' / '.join(_gib(x) for x in peaks)} GiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

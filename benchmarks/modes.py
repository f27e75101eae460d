"""The benchmark's other modes: a busy core (``--busy``), several callers at once (``--callers N``),
the peak memory of each call (``--memory``) and scatterops without its output cache
(``--output-cache off|both``).

* ``--busy``: a process spinning on one CPU (the last this process may use) for the whole run, so
  a threaded call meets a descheduled thread as on a shared machine; ended when the run ends.
* ``--callers N``: for each selected case, N Python threads each make scatterops' call at once
  (all released by one barrier) against the same N calls one after another, timed in interleaved
  rounds; target: at once <= 1.1x one after another (reported, never asserted).  Out of place the
  callers share the inputs; in place each has its own copy of data.
* ``--memory``: each (case, thread count, implementation) once more, in a fresh subprocess
  (``python -m benchmarks.modes memory ...``): it imports the implementation's modules, builds the
  inputs (RSS now: the baseline), builds the implementation and makes one warm-up call, then makes
  one more call with the resident-set high-water mark reset just before it (Linux
  ``/proc/self/clear_refs``); peak = that high-water mark - the baseline.  What the library keeps
  between calls (ONNX Runtime's arena, OpenVINO's output tensor, scatterops' output cache, JIT
  code) is part of it.  Where the mark cannot be reset, ``getrusage(RUSAGE_SELF).ru_maxrss`` after
  the call is used (an upper bound: it includes the warm-up).  The group cases (``groups.py``)
  report the rise of the mark over the call instead: the mark less the resident memory just
  before the call (after the warm-up), so what the implementation built beforehand is left out;
  their 1-CPU rows run pinned to one CPU, as they are timed.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from typing import Dict, Iterator, List, Optional

import numpy as np

from . import core, peers

# ---------------------------------------------------------------------------------------------
# --busy


@contextlib.contextmanager
def busy_core() -> Iterator[int]:
    """A busy-loop process pinned to one CPU while the block runs; yields that CPU."""
    cpu = sorted(os.sched_getaffinity(0))[-1]
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        yield cpu
    finally:
        proc.terminate()
        proc.wait()


# ---------------------------------------------------------------------------------------------
# --callers N


def time_callers(case: core.Case, callers: int, repeat: int, target: float) -> Optional[dict]:
    """Median seconds of ``callers`` calls made one after another and made at once from as many
    Python threads (each round: every caller makes ``k`` calls, ``k`` such that a round lasts
    about ``target`` seconds).  -> None if the case has no scatterops implementation."""
    im = next((i for i in case.impls if i.peer == peers.SUBJECT), None)
    if im is None:
        return None
    x = case.make()
    fns = [im.build(dict(x, data=x["data"].copy()) if case.inplace else x) for _ in range(callers)]
    for fn in fns:
        fn()
    k = max(1, core.calls_per_run(fns[0], target / callers))
    start, done = threading.Barrier(callers + 1), threading.Barrier(callers + 1)
    stop = False
    errors: List[BaseException] = []

    def worker(fn):
        while True:
            start.wait()
            if stop:
                return
            try:
                for _ in range(k):
                    fn()
            except BaseException as exc:        # reported, and the round still ends
                errors.append(exc)
            done.wait()

    threads = [threading.Thread(target=worker, args=(fn,), daemon=True) for fn in fns]
    for th in threads:
        th.start()
    seq: List[float] = []
    par: List[float] = []
    try:
        for _ in range(repeat):
            gc.collect()
            t0 = time.perf_counter()
            for fn in fns:
                for _ in range(k):
                    fn()
            seq.append(time.perf_counter() - t0)
            gc.collect()
            time.sleep(0.02)
            start.wait()
            t0 = time.perf_counter()
            done.wait()
            par.append(time.perf_counter() - t0)
    finally:
        stop = True
        start.wait()
        for th in threads:
            th.join()
    if errors:
        raise errors[0]
    return {"one": statistics.median(seq) / (k * callers), "sequential": statistics.median(seq) / k,
            "at_once": statistics.median(par) / k}


# ---------------------------------------------------------------------------------------------
# --memory


def _status_kib(field: str) -> Optional[int]:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_high_water() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure_memory(key: str, index: int, threads: int, quick: bool) -> dict:
    """In this (fresh) process: the peak resident memory of implementation ``index`` of case
    ``key`` above its inputs (see the module's docstring)."""
    from . import groups
    from .cases import all_cases
    case = next(c for c in all_cases(quick) + groups.group_cases(quick) if c.key == key)
    im = case.impls[index]
    for module in peers.MODULES[im.peer]:
        importlib.import_module(module)
    peers.configure(threads, [im.peer])
    with groups.pinned(threads if groups.TAG in case.tags else 0):
        x = case.make()
        gc.collect()
        base = _status_kib("VmRSS")
        fn = im.build(x)
        res = fn()
        del res
        gc.collect()
        reset = _reset_high_water()
        before = _status_kib("VmRSS")
        res = np.asarray(fn())
        peak = _status_kib("VmHWM") if reset else None
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del res
    return {"peak": max(0, peak - (base or 0)) * 1024,
            "rise": max(0, peak - (before or 0)) * 1024, "exact_mark": reset}


def memory_of(key: str, index: int, threads: int, quick: bool, env: Optional[Dict[str, str]] = None,
              field: str = "peak") -> Optional[int]:
    """``measure_memory`` in a fresh subprocess; -> its ``field`` (``"peak"`` above the inputs,
    ``"rise"`` over the call) in bytes, or None if it failed."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "benchmarks.modes", "memory", key, str(index), str(threads),
           "1" if quick else "0"]
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env)
    if r.returncode != 0:
        return None
    try:
        return int(json.loads(r.stdout.strip().splitlines()[-1])[field])
    except (ValueError, IndexError, KeyError):
        return None


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "memory":
        import warnings
        warnings.filterwarnings("ignore")
        print(json.dumps(measure_memory(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                                        sys.argv[5] == "1")))
    else:
        sys.exit("usage: python -m benchmarks.modes memory KEY IMPL_INDEX THREADS QUICK(0/1)")

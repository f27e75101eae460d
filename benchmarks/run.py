"""Time scatterops against NumPy, PyTorch, ONNX Runtime, OpenVINO, JAX, a numba loop and
numpy_groupies on the same inputs.

    python -m benchmarks [--quick] [--threads N] [--repeat N] [-k KEYS] [--skip PEERS]
                         [--markdown] [--plot FILE.png] [--json FILE] [--sweep-plot FILE.png]
                         [--busy] [--callers N] [--memory] [--output-cache on|off|both]
                         [--record FOLDER | --no-record]
    python benchmarks/run.py [...]

What is timed (``cases.py``): the OpenVINO ScatterUpdate-3 and ScatterNDUpdate-3 examples at full
size, a 10^7 scatter-add with duplicates, graph message passing (add / max / mean), a
scatter_elements along rows, float16 add, int64 max, a transposed data, a tiny call, and the
in-place forms of the first and the third.  Each peer does each case with its own natural API
(``peers.py``); a peer that cannot do a case shows ``n/a``, a peer whose package does not import is
left out with a note.

Then the small calls (``-k s``): 4, 64 and 1000 float64 updates with ``reduction="add"`` in each
call form (arrays, a scalar, Python lists, a cast, int32 and uint8 indices, broadcast updates,
mean, ``include_self=False``, ``out=``, in place) against ``np.add.at``; the same on float32
``data`` of 1000 elements (``small.py``: also ``include_self=False`` max and ``scatter_nd`` with
``indices[:, None]``), and a row per ``mode=`` on indices all in range, with ``mode="raise"``
timed in the same rounds; in a table of their own (form, n, both times, their ratio, the
target and whether it is reached: reported, never asserted).

The group reductions (``groups.py``, ``-k groups``, run only when selected): sum, mean, max,
argmax, var, first, logsumexp, softmax, rows and a sorted segment sum, at 1 CPU (the process
pinned) and at ``--threads``, against NumPy, numpy_groupies, numbagg, pandas, torch, PyG and JAX,
in a table of their own with the targets ``groups.py`` names.

Then the performance-v2 cases (``sweep.py``, ``-k v2``): sizes swept from L1 to DRAM, histogram
shapes, index dtypes, narrow rows, message passing, sorted indices and mean, each at 1 thread and at
``--threads``, in a table of their own with a target and pass / short per row (``targets.py``).
A peer whose package is missing is left out with a note (JAX, numba and numpy_groupies are
optional, like the others).  ``--busy``, ``--callers N``, ``--memory`` and ``--output-cache`` are
described in ``modes.py``; ``--sweep-plot FILE.png`` draws the out-size sweep (ns per update against
output size, log-log, a line per library).

How (``core.py``):

* every library runs with the same thread count: ``--threads`` (default: the CPUs this process
  may use), through ``torch.set_num_threads``, ``scatterops.set_num_threads``, ONNX Runtime's
  ``intra_op_num_threads`` and OpenVINO's ``INFERENCE_NUM_THREADS``; NumPy uses one thread;
* an out-of-place timing includes the copy of ``data`` (peers that return a new array make it
  themselves; in-place APIs are given a clone, or an out-of-place variant is used); an in-place
  case runs every implementation on its own copy of ``data``, modified call after call;
* each implementation is called twice before it is timed and both results are checked against
  scatterops' result: bit-equal, or -- where the peer does not define the result bit for bit --
  ``~``: within ``np.allclose`` for float sums in the peer's own order, or, for
  ``reduction="none"`` with duplicate indices, each multiply-written element holding one of the
  values written there.  Anything else is ``MISMATCH`` and not timed (so is a peer that changes
  its input, or whose two calls differ where it claims a defined result); two calls that differ
  are reported in the notes (a race shows that way).  An implementation that raises is ``n/a``
  (the message is in the notes); one that raises later, while being timed, is ``failed``;
* times are medians of ``--repeat`` runs (default 5, 3 with ``--quick``; the group cases at least
  7, ``groups.REPEAT``, whatever the time budget), each run one call, or
  as many calls as fill ~50 ms for fast calls; the runs of all implementations of a case are
  interleaved, so that noise from other processes falls on all of them alike;
* the bandwidth floor of each case (defined in ``cases.py``'s docstring) is timed in the same
  rounds, and so is ``data.copy()`` (a fresh output, for out-of-place cases).

The header names the date, the machine (CPUs, model), the library versions, the source and build
time of the scatterops core that was measured, the thread count and the load average (this may be
a shared machine: ``[runs a..b]`` in the notes shows the spread of each median).

Columns: a peer's best time over its APIs (all of them are listed in the notes), scatterops'
time, ``vs best`` = best peer time / scatterops time (above 1: scatterops is faster; which peer
was best is named), the floor, and ``x floor`` = scatterops time / floor time.

Every run that times something writes its record, the medians and how many rounds agreed per
case and implementation, as JSON under ``benchmarks/results/`` (``record.py``);
``python -m benchmarks.report`` makes the README's table, the charts and docs/performance.md's
tables from the latest records.

``--json FILE`` also writes every case's results (per implementation: status, median and each
run's seconds per call) as JSON, the stable form for scripts (``tools/bench_ab.py``).

Nothing here asserts a time.  The exit status is 1 if scatterops failed a case or its result
differs from NumPy's where NumPy defines the result exactly, else 0.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

if __name__ == "__main__" and not __package__:
    # `python benchmarks/run.py` from a checkout: import `benchmarks` and scatterops as
    # `python -m benchmarks` would (and keep this folder's module names off the top level).
    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[0] = _root

import numpy as np

from benchmarks import core, groups, modes, peers, record, small as small_calls, targets
from benchmarks.cases import all_cases

SUBJECT = peers.SUBJECT


@dataclass
class Result:
    impl: core.Impl
    status: str = "n/a"             # "ok" | "~" | "MISMATCH" | "n/a" (raised) | "failed" (raised later)
    note: str = ""
    time: Optional[float] = None
    samples: List[float] = field(default_factory=list)
    peak: Optional[int] = None      # --memory: peak resident bytes of a call above its inputs


@dataclass
class Row:
    case: core.Case
    results: List[Result] = field(default_factory=list)
    floor: Optional[float] = None
    floor_desc: str = ""
    extras: Dict[str, float] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    threads: Optional[int] = None   # the thread count every library had (None: --threads)
    updates: int = 0                # update elements
    pool: Optional[Tuple[int, int, int, int]] = None  # timed runs: jobs, late, declined, busy

    def best(self, peer: str) -> Optional[Result]:
        timed = [r for r in self.results if r.impl.peer == peer and r.time is not None]
        return min(timed, key=lambda r: r.time) if timed else None

    def subject(self) -> Optional[Result]:
        return self.best(SUBJECT)


# --------------------------------------------------------------------------------------------
# Running a case


def run_case(case: core.Case, available: List[str], repeat: int, target: float, budget: float,
             pause: float) -> Row:
    row = Row(case)
    x = case.make()
    data = x["data"]
    row.updates = int(np.size(x["updates"]))
    impls = [im for im in case.impls if im.peer in available]
    impls.sort(key=lambda im: im.peer != SUBJECT)           # the reference first
    saved = None if case.inplace else data.copy()
    dests = (lambda: case.dests(x)) if case.dests else None
    entries: Dict[str, core.Call] = {}
    by_key: Dict[str, Result] = {}
    ref = None
    for im in impls:
        res = Result(im)
        row.results.append(res)
        try:
            # two calls, each checked (a race shows in one call and not the next); for an in-place
            # case each on a fresh copy of data.  The first result is copied: OpenVINO's is its
            # output tensor, which the next call overwrites.
            xx = dict(x, data=data.copy()) if case.inplace else x
            fn = im.build(xx)
            first = np.array(fn(), copy=True)
            if case.inplace:
                del fn, xx
                fn = im.build(dict(x, data=data.copy()))
            second = np.asarray(fn())
            if im.ref is not None:          # a bar: checked against its own operation's result
                own = np.asarray(im.ref(x))
                checks = [core.check_result(im, out, own, data, dests) for out in (first, second)]
                del own
            elif ref is None:
                ref = first
                res.status = "ok"
                if im.peer != SUBJECT:
                    row.notes.append(f"scatterops is missing or failed: results are checked against "
                                     f"{im.peer} {im.label}")
                checks = [(res.status, "")]
                checks.append(core.check_result(core.Impl(im.peer, im.label, im.build), second,
                                                ref, data, dests))
            else:
                checks = [core.check_result(im, out, ref, data, dests) for out in (first, second)]
            worst = max(checks, key=lambda c: ("ok", "~", "MISMATCH").index(c[0]))
            res.status, res.note = worst
            if not core.same(first, second):
                res.note = ((res.note + "; ") if res.note else "") + (
                    "two identical calls gave different results (" +
                    core.describe_diff(np.asarray(second), first) + ")")
                if res.status == "ok":
                    res.status = "MISMATCH"
            elif checks[0][0] != checks[1][0]:
                res.note += f" (first call: {checks[0][0]}, second call: {checks[1][0]})"
            del first, second
            if saved is not None and not np.array_equal(data, saved, equal_nan=True):
                res.status, res.note = "MISMATCH", "it changed its input data"
                np.copyto(data, saved)
            if res.status in ("ok", "~"):
                if case.inplace:                    # time it on a copy of its own
                    fn = im.build(dict(x, data=data.copy()))
                key = f"{im.peer}: {im.label}"
                entries[key] = fn
                by_key[key] = res
            del fn
        except Exception as exc:           # it cannot do this case
            res.status, res.note = "n/a", f"raised {type(exc).__name__}: {_first_line(exc)}"
    del ref, saved
    try:
        if case.floor is not None:
            floor_fn, row.floor_desc = case.floor(x)
            entries["floor"] = floor_fn
    except Exception as exc:
        row.notes.append(f"floor failed: {type(exc).__name__}: {exc}")
    if not case.inplace and case.time_copy:
        entries["extra: data.copy() (a fresh array)"] = data.copy
    for name, build in case.extras.items():
        entries["extra: " + name] = build(x)
    gc.collect()

    before = _job_tally()
    samples, errors = core.time_round_robin(entries, repeat, target, pause, budget)
    row.pool = _tally_change(before, _job_tally())
    for key, xs in samples.items():
        t = core.median(xs)
        if key == "floor":
            row.floor = t
        elif key.startswith("extra: "):
            if t is not None:
                row.extras[key[7:]] = t
        else:
            by_key[key].time = t
            by_key[key].samples = xs
    for key, err in errors.items():
        if key in by_key:
            by_key[key].status, by_key[key].note = "failed", err
            by_key[key].time = None
        else:
            row.notes.append(f"{key} failed: {err}")
    entries.clear()
    del entries, x, data
    gc.collect()
    return row


def _job_tally() -> Dict[int, tuple]:
    try:
        from scatterops import _core
        return _core.job_tally()
    except (ImportError, AttributeError):
        return {}


def _tally_change(before: Dict[int, tuple], after: Dict[int, tuple]) -> Optional[Tuple[int, int, int, int]]:
    """What scatterops' thread pool did over the timed runs of a case, all kinds of job together:
    (jobs run on the pool, of those late, jobs declined while their kind backed off, jobs handed
    back because another call had the pool); None when it did nothing."""
    total = [0] * 6
    for kind, t in after.items():
        b = before.get(kind, (0,) * 6)
        for f in range(6):
            total[f] += t[f] - b[f]
    jobs, late, declined, busy = total[0], sum(total[1:4]), total[4], total[5]
    return (jobs, late, declined, busy) if any((jobs, declined, busy)) else None


# --------------------------------------------------------------------------------------------
# Reporting


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else ""


fmt_time = core.fmt_time


def cell(row: Row, peer: str) -> str:
    mine = [r for r in row.results if r.impl.peer == peer]
    if not mine:
        return "n/a"
    best = row.best(peer)
    if best is not None:
        return (("~" if best.status == "~" else "") + fmt_time(best.time)
                + (f" ({best.impl.threads}t)" if best.impl.threads else "")
                + (f", +{fmt_mib(best.peak)}" if best.peak is not None else ""))
    for status in ("MISMATCH", "failed"):
        if any(r.status == status for r in mine):
            return status
    return "n/a"


def fmt_mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def table(rows: List[Row], columns: List[str]) -> str:
    head = ["case"] + columns + ["vs best peer", "floor", "x floor"]
    body = []
    for row in rows:
        cells = [row.case.name] + [cell(row, p) for p in columns]
        so = row.subject()
        bests = [(row.best(p).time, p) for p in columns if p != SUBJECT and row.best(p)]
        if so and bests:
            t, p = min(bests)
            cells.append(f"{t / so.time:.2f}x {p}")
        else:
            cells.append("-")
        cells.append(fmt_time(row.floor))
        cells.append(f"{so.time / row.floor:.2f}" if so and row.floor else "-")
        body.append(cells)
    return grid(head, body)


def grid(head: List[str], body: List[List[str]], left: Tuple[int, ...] = (0,)) -> str:
    """A Markdown table: the columns numbered in ``left`` left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) if i in left else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    rule = "|" + "|".join("-" * (w + 2) if i in left else "-" * (w + 1) + ":"
                          for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), rule] + [line(r) for r in body])


def small_table(rows: List[Row]) -> Tuple[str, int, int]:
    """The small-call rows (``-k s``): per row the form, n, scatterops' time, the NumPy bar's
    time, their ratio and the target with a pass / short mark; a NumPy spelling of an operation
    that has no NumPy call (mean, include_self=False) on a line of its own under its row, without
    a target.  -> (table, rows that pass, rows with a target that could be judged)."""
    head = ["form", "n", "scatterops", "NumPy", "NumPy / scatterops", "target", "NumPy call"]
    body = []
    passed = judged = 0
    for row in rows:
        tg = row.case.target
        so = row.subject()
        bar = next((r for r in row.results if r.impl.peer == "numpy" and r.impl.label == tg.bar),
                   None)
        ratio = (bar.time / so.time) if (so and bar and bar.time is not None) else None
        mark = "-"
        if ratio is not None:
            judged += 1
            ok = ratio >= tg.ratio
            passed += ok
            mark = f">= {tg.ratio:g}x " + ("pass" if ok else "SHORT")
        body.append([tg.form, str(tg.n), _small_cell(so, row, SUBJECT), _small_cell(bar, row, "numpy"),
                     f"{ratio:.2f}x" if ratio is not None else "-", mark, tg.bar])
        for r in row.results:
            rr = (r.time / so.time) if (so and r.time is not None) else None
            if r.impl.peer == small_calls.MODE_RAISE:     # the same call with mode="raise"
                body.append([f"{tg.form}: mode=\"raise\", same rounds", str(tg.n),
                             _small_cell(r, row, r.impl.peer), "",
                             f"raise / this {rr:.2f}x" if rr is not None else "-", "-", ""])
                continue
            if r.impl.peer != "numpy" or r is bar:
                continue
            body.append([f"{tg.form}: a NumPy spelling", str(tg.n), "", _small_cell(r, row, "numpy"),
                         f"{rr:.2f}x" if rr is not None else "-", "-", r.impl.label])
    return grid(head, body, left=(0, len(head) - 1)), passed, judged


def _small_cell(res: Optional[Result], row: Row, peer: str) -> str:
    if res is None:
        return cell(row, peer) if any(r.impl.peer == peer for r in row.results) else "n/a"
    if res.time is None:
        return res.status
    return ("~" if res.status == "~" else "") + fmt_time(res.time)


def small_notes(row: Row) -> List[str]:
    """Only what is out of the ordinary: checks that were not bit-equal, failures, and notes."""
    out = [f"{r.impl.peer} {r.impl.label}: {r.status}: {r.note}" for r in row.results if r.note]
    out += [f"{r.impl.peer} {r.impl.label}: {r.status}" for r in row.results
            if not r.note and r.status not in ("ok", "~")]
    return out + row.notes


def json_report(rows: List[Row], head: str, argv: List[str], threads: int, repeat: int) -> dict:
    """Per case, per implementation: status and median seconds per call (None if not timed)."""
    so_file = so_source = None
    try:
        import scatterops
        so_file = scatterops.__file__
        so_source = git_version(os.path.dirname(os.path.dirname(os.path.abspath(so_file))))
    except Exception:
        pass
    cases = []
    for row in rows:
        so = row.subject()
        tg = row.case.target
        cases.append({
            "key": row.case.key, "name": row.case.name, "inplace": row.case.inplace,
            "threads": row.threads if row.threads is not None else threads,
            "scatterops": so.time if so else None,
            "impls": [{"peer": r.impl.peer, "label": r.impl.label, "status": r.status,
                       "note": r.note, "median": r.time, "runs": list(r.samples),
                       "peak_bytes": r.peak}
                      for r in row.results],
            "floor": row.floor, "extras": dict(row.extras),
            "pool": None if row.pool is None else dict(zip(("jobs", "late", "declined", "busy"),
                                                           row.pool)),
            "target": None if tg is None else {"form": tg.form, "n": tg.n, "ratio": tg.ratio,
                                               "bar": tg.bar},
        })
    return {"header": head, "argv": argv, "threads": threads, "repeat": repeat,
            "scatterops_file": so_file, "scatterops_source": so_source, "unit": "seconds per call",
            "cases": cases}


def row_notes(row: Row, columns: List[str]) -> List[str]:
    out = list(row.case.notes)
    timed = []
    for p in columns:
        mine = [r for r in row.results if r.impl.peer == p]
        if not mine:
            if p in row.case.na:
                out.append(f"{p}: n/a ({row.case.na[p]})")
            continue
        best = row.best(p)
        parts = []
        for r in mine:
            s = r.impl.label + " "
            s += (("~" if r.status == "~" else "") + fmt_time(r.time)) if r.time is not None else r.status
            if best is r and len(mine) > 1:
                s += " (best)"
            if r.samples and (best is r or p == SUBJECT) and len(r.samples) > 1:
                s += f" [runs {fmt_time(min(r.samples))}..{fmt_time(max(r.samples))}]"
            parts.append(s)
        timed.append(f"{p} " + ", ".join(parts))
    out.append("timed: " + "; ".join(timed))
    for r in row.results:
        if r.note:
            out.append(f"{r.impl.peer} {r.impl.label}: {r.status}: {r.note}")
    if row.floor_desc:
        out.append(f"floor = {row.floor_desc}: {fmt_time(row.floor)}")
    so = row.subject()
    for name, t in row.extras.items():
        s = f"{name}: {fmt_time(t)}"
        if so:
            d = so.time - t
            s += f"; scatterops - that = {'-' if d < 0 else ''}{fmt_time(abs(d))}"
        out.append(s)
    out += row.notes
    return out


def git_version(root: str) -> str:
    try:
        r = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip()
    except Exception:
        return ""


def make_header(versions: Dict[str, str], threads: int, repeat: int, quick: bool) -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    libs = ", ".join(f"{p} {versions[p]}" for p in peers.PEERS
                     if p in versions)
    so = f"scatterops {versions[SUBJECT]}" if SUBJECT in versions else "scatterops missing"
    g = git_version(root)
    bench = ""
    so_root = _subject_root()
    if so_root and os.path.realpath(so_root) != os.path.realpath(root):
        # scatterops from another checkout (tools/bench_ab.py): name its source, and these cases'
        g_so = git_version(so_root)
        if g_so:
            g, bench = g_so, (f"benchmarks {git_version(root)}" if g else "")
    built = _core_built()
    if g or built:
        so += " (" + ", ".join(filter(None, [f"source {g}" if g else "", built, bench])) + ")"
    return (f"{datetime.date.today().isoformat()} · {peers.nproc()} CPUs, {peers.cpu_model()} · "
            f"Python {platform.python_version()}, {libs} · {so} · {threads} threads · "
            f"median of {repeat}{', --quick' if quick else ''} · load average at start "
            f"{_loadavg()}")


def _subject_root() -> str:
    """The folder holding the imported ``scatterops`` package ("" if it does not import)."""
    try:
        import scatterops
        return os.path.dirname(os.path.dirname(os.path.abspath(scatterops.__file__)))
    except Exception:
        return ""


def _core_built() -> str:
    """When the C core that is imported was built (the checkout may be rebuilt between runs)."""
    try:
        import scatterops._core as c
        t = datetime.datetime.fromtimestamp(os.path.getmtime(c.__file__))
        return f"_core built {t:%Y-%m-%d %H:%M:%S}"
    except Exception:
        return ""


def _loadavg() -> str:
    try:
        return "/".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "?"


def plot(rows: List[Row], columns: List[str], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    series = columns + ["floor"]
    colors = {"numpy": "#4C72B0", "torch": "#DD8452", "onnxruntime": "#55A868",
              "openvino": "#8172B3", "scatterops": "#C44E52", "floor": "#BBBBBB"}
    fig, ax = plt.subplots(figsize=(max(10, 1.05 * len(rows) + 2), 6))
    width = 0.8 / len(series)
    marks = []                      # (x, symbol) for results that were not timed
    for j, s in enumerate(series):
        xs, ys, approx = [], [], []
        for i, row in enumerate(rows):
            best = None if s == "floor" else row.best(s)
            t = row.floor if s == "floor" else (best.time if best else None)
            if t:
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(t)
                if best is not None and best.status == "~":
                    approx.append((xs[-1], t))
        for xa, ya in approx:
            ax.text(xa, ya * 1.15, "~", ha="center", va="bottom", fontsize=9)
        for i, row in enumerate(rows):
            c = cell(row, s) if s != "floor" else ""
            if c in ("MISMATCH", "failed"):
                marks.append((i + (j - (len(series) - 1) / 2) * width, "×" if c == "MISMATCH" else "!"))
        ax.bar(xs, ys, width, label=s, color=colors.get(s, None),
               hatch="//" if s == "floor" else None, edgecolor="white" if s != "floor" else "#777777",
               linewidth=0.5)
    ax.set_yscale("log")
    bottom = ax.get_ylim()[0]
    for xm, sym in marks:
        ax.text(xm, bottom * 1.3, sym, ha="center", va="bottom", fontsize=11, color="#C00000")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_time(v)))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r.case.key for r in rows])
    ax.set_xlabel("case (see the table)\n~ not bit-equal to scatterops, within the peer's definition;  "
                  "× result wrong (MISMATCH), not timed;  no bar: n/a", fontsize=9)
    ax.set_ylabel("time per call, median (log scale)")
    import textwrap
    ax.set_title("\n".join(textwrap.wrap(title, int(12 * fig.get_figwidth()))), fontsize=8)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------------------------


def selected(case: core.Case, pattern: str) -> bool:
    for p in filter(None, (s.strip() for s in pattern.split(","))):
        if p == case.key or case.key.startswith(p + "-") or (len(p) > 1 and p in case.name) \
                or p in case.tags:
            return True
    return False


V2_LEGEND = (
    "Times are medians per call (~: not bit-equal to scatterops, within the peer's own "
    "definition; +N MiB with --memory: peak resident memory of one call above its inputs). "
    "vs best peer: best peer time / scatterops time. Targets: >= 1x the best peer; in cache "
    "(output <= 1e6 elements) at 1 thread the serial numba loop is judged apart: scatterops within "
    "1.5x of it in place, 1.2x out of place (the loop on a copy of data); out of cache at 2+ "
    "threads >= 1.5x the best peer; int32 indices no slower than int64 (reported, never asserted). "
    "numpy and the serial numba loop run on one thread in every row; jax has no per-call thread "
    "setting (XLA's CPU pool uses every CPU in every row); torch, onnxruntime, openvino, "
    "numpy_groupies (its numba backend's parallel path) and scatterops use the row's thread "
    "count.")


def thread_counts(case: core.Case, threads: int) -> Tuple[int, ...]:
    """The v2 and group cases run at 1 thread and at ``threads``; the others at ``threads``."""
    twice = case.out_size is not None or groups.TAG in case.tags
    return (1, threads) if twice and threads > 1 else (threads,)


def _cache_state(mode: str) -> str:
    try:
        import scatterops._core as c
        limit = c.output_cache_info()["limit"]
    except Exception:
        return "scatterops' output cache: unknown"
    state = f"on ({limit // 2**20} MiB)" if limit else "off (SCATTEROPS_OUTPUT_CACHE=0)"
    s = f"scatterops' output cache {state} in the scatterops column"
    if mode == "both":
        s += f"; the column '{targets.NOCACHE}' is timed in a child process with it off"
    return s


def _mode_header(busy_cpu: Optional[int]) -> str:
    return "" if busy_cpu is None else f" · --busy: a busy loop on CPU {busy_cpu}"


def print_notes(rows: List[Row], columns: List[str], markdown: bool, out) -> None:
    for row in rows:
        notes = row_notes(row, columns)
        key = row.case.key + (f" [{row.threads}t]" if row.case.out_size or groups.TAG in row.case.tags
                              else "")
        if markdown:
            print(f"- **{key}**: " + " · ".join(notes), file=out)
        else:
            print(f"{key}:", file=out)
            for n in notes:
                print(f"    {n}", file=out)


def cache_off_column(rows: List[Row], threads: int, repeat: int, quick: bool) -> None:
    """--output-cache both: time scatterops on the v2 out-of-place rows again in a child process
    with SCATTEROPS_OUTPUT_CACHE=0, as a Result of peer ``targets.NOCACHE``."""
    want = [r for r in rows if r.case.out_size is not None and not r.case.inplace]
    if not want:
        return
    import tempfile
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "off.json")
        cmd = [sys.executable, "-m", "benchmarks", "-k", ",".join(sorted({r.case.key for r in want})),
               "--threads", str(threads), "--repeat", str(repeat), "--skip", ",".join(peers.PEERS),
               "--output-cache", "off", "--json", path, "--no-record"] + (
                   ["--quick"] if quick else [])
        subprocess.run(cmd, cwd=root, env=dict(os.environ, SCATTEROPS_OUTPUT_CACHE="0"),
                       stdout=subprocess.DEVNULL, stderr=sys.stderr)
        try:
            with open(path) as f:
                got = {(c["key"], c["threads"]): c for c in json.load(f)["cases"]}
        except (OSError, ValueError):
            return
    for row in want:
        c = got.get((row.case.key, row.threads))
        if not c:
            continue
        im = next((i for i in c["impls"] if i["peer"] == SUBJECT), None)
        if im is None or im["median"] is None:
            continue
        res = Result(core.Impl(targets.NOCACHE, im["label"] + " (SCATTEROPS_OUTPUT_CACHE=0)",
                               lambda x: None), im["status"], im["note"], im["median"], im["runs"])
        row.results.append(res)


def measure_rows(rows: List[Row], quick: bool, log) -> None:
    """--memory: the peak memory of every timed implementation, each in a fresh subprocess (a
    group case: the rise over the call, ``modes.py``)."""
    for row in rows:
        print(f"  memory: {row.case.key} ...", end="", flush=True, file=log)
        field = "rise" if groups.TAG in row.case.tags else "peak"
        for res in row.results:
            if res.status in ("ok", "~") and res.impl in row.case.impls:
                res.peak = modes.memory_of(row.case.key, row.case.impls.index(res.impl),
                                           row.threads or peers.THREADS, quick, field=field)
        print(" done", file=log)


def run_callers(cases: List[core.Case], callers: int, threads: int, repeat: int, target: float,
                available: List[str], head: str, markdown: bool) -> int:
    """--callers N: per case and thread count, N calls one after another against N at once."""
    if SUBJECT not in available:
        print("--callers: scatterops does not import", file=sys.stderr)
        return 1
    body = []
    passed = judged = 0
    for case in cases:
        for n in sorted({1, threads}):
            peers.configure(n, available)
            print(f"  callers: {case.key} [{n}t] ...", end="", flush=True, file=sys.stderr)
            try:
                r = modes.time_callers(case, callers, max(repeat, 3), target)
            except Exception as exc:
                print(f" failed: {type(exc).__name__}: {_first_line(exc)}", file=sys.stderr)
                continue
            print(" done", file=sys.stderr)
            if r is None:
                continue
            ratio = r["at_once"] / r["sequential"]
            ok = ratio <= 1.1
            judged += 1
            passed += ok
            body.append([case.name, str(n), fmt_time(r["one"]), fmt_time(r["sequential"]),
                         fmt_time(r["at_once"]), f"{ratio:.2f}x", "<= 1.1x " + ("pass" if ok else "SHORT")])
    peers.configure(threads, available)
    print(("**scatterops benchmark** — " if markdown else "") + head)
    print()
    print(f"{callers} Python threads each calling scatterops at once, against the same "
          f"{callers} calls one after another (scatterops' thread count per row)")
    print()
    print(grid(["case", "threads", "one call", f"{callers} one after another", f"{callers} at once",
                "at once / one after another", "target"], body))
    print()
    print(f"{passed} of {judged} rows reach their target (medians of the rounds; reported, never "
          "asserted)")
    return 0


def small_target(row: Row) -> Tuple[Optional[str], Optional[bool]]:
    """A small-call row's target and whether it is reached (as ``small_table`` judges it)."""
    tg = row.case.target
    so = row.subject()
    bar = next((r for r in row.results if r.impl.peer == "numpy" and r.impl.label == tg.bar), None)
    if so is None or bar is None or bar.time is None:
        return f">= {tg.ratio:g}x", None
    return f">= {tg.ratio:g}x", bar.time / so.time >= tg.ratio


def make_record(rows: List[Row], head: str, versions: Dict[str, str], threads: int, repeat: int,
                load_end: str, columns: List[str], argv: List[str], commit: str,
                start: datetime.datetime, quick: bool) -> dict:
    """The run's record for benchmarks/results/ (``record.py`` says what it holds)."""
    by_key = {(r.case.key, r.threads or 1): r for r in rows if r.case.out_size is not None}

    by_group = {(r.case.key, r.threads or 1): r for r in rows if groups.TAG in r.case.tags}

    def target_of(row):
        if groups.TAG in row.case.tags:
            return groups.target(row, by_group)
        if row.case.target is not None:
            return small_target(row)
        if row.case.out_size is not None:
            return targets.v2_target(row, by_key, columns)
        return None, None
    return record.make(
        rows, date=start, commit=commit,
        cpu=peers.cpu_model(), cpus=peers.nproc(), threads=threads, repeat=repeat, quick=quick,
        command=" ".join(["python -m benchmarks"] + argv), versions=versions,
        load_average=head.rsplit("load average at start ", 1)[-1].split(" · ")[0] + " at the start, "
        + load_end + " at the end", subject=SUBJECT,
        twins=(targets.TWIN, small_calls.MODE_RAISE, targets.NOCACHE), target_of=target_of)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smaller inputs and fewer repeats (about a minute)")
    ap.add_argument("--threads", type=int, default=None, metavar="N",
                    help=f"threads for every library (default: the CPUs this process may use, {peers.nproc()})")
    ap.add_argument("--repeat", type=int, default=None, metavar="N",
                    help="timed runs per implementation; the median is reported (default 5, 3 with --quick)")
    ap.add_argument("-k", dest="pattern", default="", metavar="KEYS",
                    help="run only these cases, comma-separated: a key (a, b, c, d-add, ..., h-c), "
                         "a key's first part (d: the three graph cases, h: both in-place cases), "
                         "or text in the case's name")
    ap.add_argument("--skip", default="", metavar="PEERS",
                    help="leave these peers out, comma-separated (as if not installed)")
    ap.add_argument("--markdown", action="store_true",
                    help="print a header line, the table and the notes as Markdown")
    ap.add_argument("--plot", metavar="FILE.png", default=None,
                    help="also draw a bar chart (log time per case, a bar per implementation)")
    ap.add_argument("--json", metavar="FILE", default=None,
                    help="also write the results as JSON: per case, per implementation, the status "
                         "and the median seconds per call (and each run's); '-' for stdout, "
                         "instead of the tables")
    ap.add_argument("--busy", action="store_true",
                    help="keep one CPU busy (a spinning process pinned to it) for the whole run")
    ap.add_argument("--callers", type=int, default=None, metavar="N",
                    help="instead of the tables: N Python threads calling scatterops at once "
                         "against the same calls one after another, per selected case")
    ap.add_argument("--memory", action="store_true",
                    help="also measure each implementation's peak memory above its inputs, each "
                         "(case, implementation) in a fresh subprocess (slow: use with -k)")
    ap.add_argument("--output-cache", choices=("on", "off", "both"), default="on",
                    help="scatterops' output cache: on (the default: as a user gets it), off "
                         "(SCATTEROPS_OUTPUT_CACHE=0), or both (the v2 out-of-place rows get a "
                         "column timed in a child process with the cache off)")
    ap.add_argument("--record", metavar="FOLDER", default=record.RESULTS,
                    help="write the run's record (JSON: per case, thread count and implementation "
                         "the median, the rounds and how many agreed) into FOLDER (default: "
                         "benchmarks/results; see benchmarks/record.py)")
    ap.add_argument("--no-record", action="store_true", help="write no record")
    ap.add_argument("--sweep-plot", metavar="FILE.png", default=None,
                    help="draw the out-size sweep: ns per update against output size, one line "
                         "per library, log-log (without -k: runs -k sweep-out)")
    args = ap.parse_args(argv)
    if args.output_cache == "off" and os.environ.get("SCATTEROPS_OUTPUT_CACHE") != "0":
        if "scatterops" in sys.modules:     # read at import: run again in a child that has it
            argv_now = sys.argv[1:] if argv is None else list(argv)
            return subprocess.call([sys.executable, "-m", "benchmarks"] + argv_now,
                                   env=dict(os.environ, SCATTEROPS_OUTPUT_CACHE="0"),
                                   cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        os.environ["SCATTEROPS_OUTPUT_CACHE"] = "0"
    if args.callers is not None and args.callers < 1:
        ap.error("--callers must be at least 1")
    if args.sweep_plot and not args.pattern:
        args.pattern = "sweep-out"
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 5)
    threads = args.threads if args.threads is not None else peers.nproc()
    if repeat < 1:
        ap.error("--repeat must be at least 1")
    if threads < 1:
        ap.error("--threads must be at least 1")
    target, budget = (0.02, 6.0) if args.quick else (0.05, 120.0)

    status = peers.available()
    for p in filter(None, (s.strip() for s in args.skip.split(","))):
        if p not in status:
            ap.error(f"--skip: unknown peer {p!r} (peers: {', '.join(status)})")
        if p == SUBJECT:
            ap.error("--skip: scatterops is what is being measured")
        status[p] = "--skip"
    available = [p for p, why in status.items() if why is None]
    versions = peers.configure(threads, available)
    columns = [p for p in peers.PEERS + [SUBJECT] if p in available]
    if SUBJECT in available:
        available.append(targets.TWIN)     # timed in its case's rounds, judged, not a column
        available.append(small_calls.MODE_RAISE)   # likewise, beside the mode= rows
    busy = modes.busy_core() if args.busy else contextlib.nullcontext(None)
    log = sys.stderr
    with busy as busy_cpu:
        head = make_header(versions, threads, repeat, args.quick) + _mode_header(busy_cpu)
        skipped = [f"{p} left out: {why}" for p, why in status.items() if why is not None]
        print(head, file=log)
        for s in skipped:
            print(s, file=log)
        # the group reductions' cases run when -k selects them (-k groups)
        cases = [c for c in all_cases(args.quick) + groups.group_cases(args.quick)
                 if (selected(c, args.pattern) if args.pattern else groups.TAG not in c.tags)]
        if args.callers is not None:
            return run_callers(cases, args.callers, threads, repeat, target, available, head,
                               args.markdown)
        rows: List[Row] = []
        t_all = time.perf_counter()
        started = datetime.datetime.now(datetime.timezone.utc)
        commit = git_version(_subject_root() or os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        for case in cases:
            for n in thread_counts(case, threads):
                peers.configure(n, available)
                twice = case.out_size or groups.TAG in case.tags
                print(f"  {case.name}{f' [{n}t]' if twice else ''} ...", end="", flush=True, file=log)
                t0 = time.perf_counter()
                # a group case's 1-thread row: the whole process on one CPU; its median is of
                # groups.REPEAT rounds at least, with no time budget cutting them short
                grouped = groups.TAG in case.tags
                with groups.pinned(n if grouped else 0):
                    rows.append(run_case(case, available,
                                         max(repeat, groups.REPEAT) if grouped else repeat,
                                         target, float("inf") if grouped else budget,
                                         pause=0.02))
                rows[-1].threads = n
                pool = rows[-1].pool
                print(f" {time.perf_counter() - t0:.1f} s" + (
                    f" (pool: {pool[0]} jobs, {pool[1]} late, {pool[2]} declined, {pool[3]} busy)"
                    if pool else ""), file=log)
        peers.configure(threads, available)
        if args.output_cache == "both":
            cache_off_column(rows, threads, repeat, args.quick)
            if any(r.best(targets.NOCACHE) for r in rows):
                columns.append(targets.NOCACHE)
        if args.memory:
            measure_rows(rows, args.quick, log)
    load_end = _loadavg()
    print(f"  total {time.perf_counter() - t_all:.0f} s; load average now {load_end}", file=log)
    if not rows:
        print(f"no case matches -k {args.pattern!r}", file=log)
        return 1

    if not args.no_record:
        path = record.write(make_record(rows, head, versions, threads, repeat, load_end, columns,
                                        sys.argv[1:] if argv is None else list(argv), commit,
                                        started, args.quick), args.record)
        print(f"record written to {path}", file=log)
    if args.json:
        report = json_report(rows, head, sys.argv[1:] if argv is None else list(argv), threads, repeat)
        if args.json == "-":
            json.dump(report, sys.stdout, indent=1)
            print()
        else:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
            print(f"JSON written to {args.json}", file=log)
    out = open(os.devnull, "w") if args.json == "-" else sys.stdout
    small = [r for r in rows if r.case.target is not None]
    v2 = [r for r in rows if r.case.out_size is not None]
    grouped = [r for r in rows if groups.TAG in r.case.tags]
    rows_all, rows = rows, [r for r in rows if r.case.target is None and r.case.out_size is None
                            and groups.TAG not in r.case.tags]
    if args.markdown:
        print(f"**scatterops benchmark** — {head}", file=out)
        print(file=out)
    else:
        print(head, file=out)
    for s in skipped:
        print(("- " if args.markdown else "") + s, file=out)
    if not args.markdown or skipped:
        print(file=out)
    if rows:
        print(table(rows, [c for c in columns if c != targets.NOCACHE]), file=out)
        print(file=out)
        print("Times are medians per call, out of place (the copy of data included) unless the case "
              "says in place. ~: the result is not bit-equal to scatterops' but within the peer's "
              "own definition (see the notes). n/a: the peer has no such operation. vs best peer: "
              "best peer time / scatterops time. x floor: scatterops time / the bandwidth floor "
              "(NumPy, same run).", file=out)
        print(file=out)
    print_notes(rows, columns, args.markdown, out)
    if v2:
        if rows:
            print(file=out)
        text, passed, judged = targets.v2_table(v2, columns, cell, grid)
        print(("**Performance v2**" if args.markdown else "Performance v2") + " (-k v2): every "
              "case at 1 thread and at --threads, every library at that thread count where it has "
              "a setting; " + _cache_state(args.output_cache), file=out)
        print(file=out)
        print(text, file=out)
        print(file=out)
        print(f"{passed} of {judged} rows reach their target. " + V2_LEGEND, file=out)
        print(file=out)
        print_notes(v2, columns, args.markdown, out)
    if grouped:
        if rows or v2:
            print(file=out)
        text, passed, judged = groups.table(grouped, columns, cell, grid)
        print(("**Group reductions**" if args.markdown else "Group reductions") + " (-k groups): "
              "each case at 1 CPU and at --threads", file=out)
        print(file=out)
        print(text, file=out)
        print(file=out)
        print(f"{passed} of {judged} rows reach their targets. " + groups.LEGEND, file=out)
        print(file=out)
        print_notes(grouped, columns, args.markdown, out)
    if small:
        if rows:
            print(file=out)
        print(("**Small calls**" if args.markdown else "Small calls") +
              ' (-k s): scatter_elements(data, indices, updates, 0, reduction="add") in each call '
              "form, n float64 updates into max(16, n) elements, and (f32: rows) n float32 updates "
              "into 1000 elements, against np.add.at", file=out)
        print(file=out)
        text, passed, judged = small_table(small)
        print(text, file=out)
        print(file=out)
        print(f"{passed} of {judged} rows reach their target. Times are medians per call; "
              "NumPy / scatterops above 1: scatterops is faster. Targets: 2x np.add.at on a copy "
              "where the arguments are arrays or scalars, 1x where a Python list is converted, 1x "
              "np.add.at in place for the in-place form (reported, never asserted). mean and "
              "include_self=False have no NumPy call: their bar is the add, and a NumPy spelling "
              "is timed on the line below (~: not bit-equal to scatterops).", file=out)
        odd = [(row, small_notes(row)) for row in small]
        for row, notes in odd:
            if notes:
                print(("- " if args.markdown else "") + f"{row.case.key}: " + " · ".join(notes),
                      file=out)
    print(("- " if args.markdown else "") + f"load average at the end: {load_end} "
          "(1/5/15 min; other processes on this machine compete for its cores)", file=out)
    if args.plot and rows:
        plot(rows, columns, args.plot, head)
        print(f"plot written to {args.plot}", file=log)
    if args.sweep_plot:
        if targets.sweep_plot(v2, columns, args.sweep_plot, head):
            print(f"sweep plot written to {args.sweep_plot}", file=log)
        else:
            print("--sweep-plot: no sweep-out case was run", file=log)

    bad = False
    for row in rows_all:
        so = [r for r in row.results if r.impl.peer == SUBJECT]
        npy = [r for r in row.results if r.impl.peer == "numpy" and r.impl.check == "exact"]
        if any(r.status in ("failed", "n/a") for r in so) or any(r.status == "MISMATCH" for r in npy):
            bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""The performance-v2 table (``sweep.py``'s cases): one row per case and thread count, each with its
target and whether this run reaches it, and the sweep chart (``--sweep-plot``).

Targets (medians; every ratio is taken within one run, whose rounds interleave all implementations):

* every case: best peer time / scatterops time >= 1.0, at 1 thread and at more;
* in cache (the output has at most 10^6 elements), 1 thread: the serial numba loop is left out of
  "best peer" and judged on its own -- in place, scatterops within 1.5x of the loop
  (``numba / scatterops >= 1/1.5``); out of place, within 1.2x of the loop run on a copy of data;
* out of cache (more than 10^6 elements), 2 threads or more: best peer / scatterops >= 1.5;
* int32 indices (``not_slower_than``): scatterops no slower than with int64 at the same thread
  count.  The int32 case also times scatterops with the same indices as int64 (peer ``TWIN``) in
  its own rounds, and that comparison is the one judged: the int64 case's row ran minutes earlier
  or later, and this machine's speed moves by more than the difference between the two.

Reported as ``pass`` / ``SHORT``, never asserted.  Out of place, scatterops' times are with its
output cache as the process has it (the header says which: on by default); ``--output-cache both``
adds a column timed in a child process with ``SCATTEROPS_OUTPUT_CACHE=0``.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

IN_CACHE = 10**6            # output elements
LOOP = "numba"              # the serial hand-written loop's peer name
NOCACHE = "scatterops, output cache off"
TWIN = "scatterops, int64 indices"   # the int32 cases' same call with int64 indices, same rounds
#: each library's colour in the charts (scatterops' dashed where its output cache is off)
COLORS = {"numpy": "#4C72B0", "torch": "#DD8452", "onnxruntime": "#55A868", "openvino": "#8172B3",
          "jax": "#937860", "numba": "#DA8BC3", "numpy_groupies": "#8C8C8C",
          "scatterops": "#C44E52"}


def v2_target(row, by_key: Dict[Tuple[str, int], object], columns: List[str]
              ) -> Tuple[str, Optional[bool]]:
    """-> (the targets as text, True / False = reached / short, None = could not be judged)."""
    case = row.case
    so = row.subject()
    if so is None:
        return "-", None
    threads = row.threads or 1
    in_cache = case.out_size <= IN_CACHE
    texts, oks = [], []

    def ratio_to(peer_list):
        bests = [row.best(p) for p in peer_list]
        bests = [b for b in bests if b is not None]
        if not bests:
            return None
        return min(b.time for b in bests) / so.time

    others = [p for p in columns if p not in ("scatterops", NOCACHE)]
    need = 1.5 if (not in_cache and threads >= 2) else 1.0
    judged_peers = [p for p in others if not (in_cache and threads == 1 and p == LOOP)]
    r = ratio_to(judged_peers)
    texts.append(f">= {need:g}x best" + (" but numba" if len(judged_peers) < len(others) else ""))
    if r is not None:
        oks.append(r >= need)
    if in_cache and threads == 1 and LOOP in others:
        within = 1.5 if case.inplace else 1.2
        texts.append(f"<= {within:g}x numba")
        r = ratio_to([LOOP])
        if r is not None:
            oks.append(r >= 1 / within)
    if case.not_slower_than:
        twin = row.best(TWIN)
        other = by_key.get((case.not_slower_than, threads))
        if twin is not None:
            texts.append(f"<= int64 indices, same rounds (int32/int64 {so.time / twin.time:.2f})")
            oks.append(so.time <= twin.time)
        else:
            texts.append(f"<= {case.not_slower_than}")
            if other is not None and other.subject() is not None:
                oks.append(so.time <= other.subject().time)
    return ", ".join(texts), (all(oks) if oks else None)


def v2_table(rows, columns: List[str], cell, grid) -> Tuple[str, int, int]:
    """-> (the table, rows that reach their target, rows that could be judged)."""
    by_key = {(r.case.key, r.threads or 1): r for r in rows}
    shown = [c for c in columns if any(res.impl.peer == c for r in rows for res in r.results)]
    head = ["case", "threads"] + shown + ["vs best peer", "target", "result"]
    body = []
    passed = judged = 0
    for row in rows:
        cells = [f"{row.case.key}: {row.case.name.split(': ', 1)[-1]}", str(row.threads or 1)]
        cells += [cell(row, p) for p in shown]
        so = row.subject()
        bests = [(row.best(p).time, p) for p in shown if p not in ("scatterops", NOCACHE)
                 and row.best(p)]
        cells.append(f"{min(bests)[0] / so.time:.2f}x {min(bests)[1]}" if so and bests else "-")
        text, ok = v2_target(row, by_key, shown)
        cells.append(text)
        cells.append("-" if ok is None else ("pass" if ok else "SHORT"))
        if ok is not None:
            judged += 1
            passed += ok
        body.append(cells)
    return grid(head, body, left=(0,)), passed, judged


def sweep_plot(rows, columns: List[str], path: str, title: str) -> bool:
    """ns per update against the output size (the ``sweep-out-*`` cases), log-log, one line per
    library (its best implementation), one panel per (form, thread count).  -> False if no row
    of the out-size sweep was run."""
    sweep = [r for r in rows if r.case.key.startswith("sweep-out-")]
    if not sweep:
        return False
    panels: Dict[Tuple[bool, int], Dict[str, List[Tuple[int, float]]]] = {}
    for r in sorted(sweep, key=lambda r: r.case.out_size):
        lines = panels.setdefault((r.case.inplace, r.threads or 1), {})
        for p in columns:
            best = r.best(p)
            if best is not None:
                lines.setdefault(p, []).append((r.case.out_size, best.time / r.updates * 1e9))
    draw_sweep(panels, columns, path, title)
    return True


def draw_sweep(panels: Dict[Tuple[bool, int], Dict[str, List[Tuple[int, float]]]],
               libraries: List[str], path: str, title: str) -> None:
    """The sweep chart: per (in place, threads) a panel, per library a line of (output elements,
    ns per update) points, log-log; a library keeps its colour (its place in ``libraries``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5), squeeze=False,
                             sharey=True)
    for ax, (inplace, threads) in zip(axes[0], sorted(panels)):
        for j, p in enumerate(libraries):
            points = sorted(panels[(inplace, threads)].get(p, []))
            if points:
                ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=p,
                        color=COLORS.get(p.split(",")[0], f"C{j % 10}"),
                        linewidth=2.5 if p.startswith("scatterops") else 1.2,
                        linestyle="--" if p == NOCACHE else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("output elements (float32)")
        ax.set_title(f"{'in place' if inplace else 'out of place'}, {threads} thread"
                     f"{'s' if threads > 1 else ''}", fontsize=10)
        ax.grid(which="both", alpha=0.3)
    axes[0][0].set_ylabel("ns per update (median)")
    handles = {}
    for ax in axes[0]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    axes[0][0].legend(handles.values(), handles.keys(), fontsize=8, loc="upper left")
    import textwrap
    fig.suptitle("\n".join(textwrap.wrap(title, 150)), fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

"""The README's performance table, the charts and docs/performance.md's tables, made from the
benchmark's records (``benchmarks/results/``, written by every ``python -m benchmarks`` run).

    python -m benchmarks.report [--results FOLDER] [--root DIR] [--check] [--no-charts]

Each table comes from the latest record that holds rows of its kind (``record.py``), ``--quick``
runs left out: a run of ``-k s`` alone renews the small calls and leaves the other tables as the
last run of their cases made them.

* ``README.md``, between ``<!-- report:main -->`` and ``<!-- /report:main -->``: the cases of every
  peer (``main``), a column per peer with the best of its APIs, and ``vs best peer``;
* ``docs/performance.md``, between the same kind of markers: ``main``, ``v2`` (the everyday calls,
  at each thread count, with their targets) and ``small`` (the small calls against NumPy);
* ``docs/benchmark.png`` (the main cases, a bar per library, log time) and ``docs/sweep.png`` (ns
  per update against the output size, the ``sweep-out`` rows of the v2 record), with matplotlib.

``--check`` changes nothing and exits 1 if a table in the files is not the one the records give.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Dict, List, Optional, Tuple

if __name__ == "__main__" and not __package__:
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from benchmarks import record, targets                  # noqa: E402
from benchmarks.core import fmt_time                    # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = ["numpy", "torch", "onnxruntime", "openvino", "jax", "numba", "numpy_groupies"]
SUBJECT = "scatterops"
#: file -> the tables it holds
FILES = {"README.md": ["main"],
         os.path.join("docs", "performance.md"): ["main", "v2", "small", "groups"]}
#: the group reductions' peers, in their table's order
GROUP_PEERS = ["numpy", "torch", "jax", "numpy_groupies", "numbagg", "pandas"]


def grid(head: List[str], body: List[List[str]], left=(0,)) -> str:
    rule = "|" + "|".join("---" if i in left else "---:" for i in range(len(head))) + "|"
    return "\n".join(["| " + " | ".join(head) + " |", rule]
                     + ["| " + " | ".join(r) + " |" for r in body])


def latest(records: List[dict], table: str) -> Optional[dict]:
    """The latest record of a full-size run (not ``--quick``) holding rows of ``table``."""
    found = [r for r in records if not r.get("quick")
             and any(row["table"] == table for row in r["rows"])]
    return found[-1] if found else None


def _cases(rec: dict, table: str) -> List[Tuple[Tuple[str, int], List[dict]]]:
    """The record's rows of ``table`` grouped by (case, threads), in the order they ran."""
    groups: Dict[Tuple[str, int], List[dict]] = {}
    for row in rec["rows"]:
        if row["table"] == table:
            groups.setdefault((row["case"], row["threads"]), []).append(row)
    return list(groups.items())


def _timed(row: dict) -> bool:
    return row["median"] is not None and row["status"] in ("ok", "~")


def _cell(rows: List[dict]) -> str:
    """A library's cell: its fastest API whose result was accepted, else why there is none."""
    timed = [r for r in rows if _timed(r)]
    if timed:
        best = min(timed, key=lambda r: r["median"])
        return (("~" if best["status"] == "~" else "") + fmt_time(best["median"])
                + (f" ({best['impl_threads']}t)" if best.get("impl_threads") else ""))
    for status in ("MISMATCH", "failed"):
        if any(r["status"] == status for r in rows):
            return status
    return "n/a"


def _best_peer(rows: List[dict]) -> Optional[dict]:
    timed = [r for r in rows if r["role"] == "peer" and _timed(r)]
    return min(timed, key=lambda r: r["median"]) if timed else None


def _agreed(row: Optional[dict]) -> str:
    if row is None or row.get("runs_agreed") is None or not row.get("repeats"):
        return "-"
    return f"{row['runs_agreed']}/{row['repeats']}"


def _subject(rows: List[dict]) -> Optional[dict]:
    timed = [r for r in rows if r["role"] == "subject" and _timed(r)]
    return min(timed, key=lambda r: r["median"]) if timed else None


def _ratio(so: Optional[dict], other: Optional[dict]) -> str:
    if so is None or other is None:
        return "-"
    return f"{other['median'] / so['median']:.2f}x"


def peer_table(rec: dict, table: str) -> Tuple[str, int, int]:
    """The main or v2 table: a column per library, vs best peer, and the target where there is
    one.  -> (table, rows that reach their target, rows with a judged target)."""
    groups = _cases(rec, table)
    shown = [p for p in PEERS if any(r["peer"] == p and _timed(r) for _, rows in groups
                                     for r in rows)]
    v2 = table == "v2"
    head = ["case"] + (["threads"] if v2 else []) + shown + [SUBJECT, "vs best peer"] + (
        ["runs agreed", "target", "result"] if v2 else [])
    body, passed, judged = [], 0, 0
    for (case, threads), rows in groups:
        so, best = _subject(rows), _best_peer(rows)
        line = [rows[0]["name"]] + ([str(threads)] if v2 else [])
        line += [_cell([r for r in rows if r["peer"] == p]) for p in shown]
        line.append(_cell([r for r in rows if r["role"] == "subject"]))
        line.append(_ratio(so, best) + (f" {best['peer']}" if so and best else ""))
        if v2:
            result = rows[0]["result"]
            line += [_agreed(best), rows[0]["target"] or "-", result or "-"]
            if result:
                judged += 1
                passed += result == "pass"
        body.append(line)
    return grid(head, body, left=(0,) if not v2 else (0, len(head) - 2)), passed, judged


def small_table(rec: dict) -> Tuple[str, int, int]:
    """The small calls: scatterops against the NumPy call it is held to (the bar), and for a mode=
    row the same call with mode="raise" in the same rounds."""
    head = ["call", "scatterops", "NumPy", "NumPy / scatterops", "runs agreed", "target", "result"]
    body, passed, judged = [], 0, 0
    for (case, threads), rows in _cases(rec, "small"):
        so = _subject(rows)
        bar = next((r for r in rows if r["role"] == "bar"), None)
        name = rows[0]["name"].split("small call, ", 1)[-1]
        result = rows[0]["result"]
        timed_bar = bar if bar and _timed(bar) else None
        body.append([name, _cell([r for r in rows if r["role"] == "subject"]),
                     _cell([bar]) if bar else "n/a", _ratio(so, timed_bar),
                     _agreed(bar), rows[0]["target"] or "-", result or "-"])
        if result:
            judged += 1
            passed += result == "pass"
        for twin in (r for r in rows if r["role"] == "twin" and _timed(r)):
            form = twin["peer"].split(", ", 1)[-1]      # "scatterops, mode=raise": mode=raise
            body.append([f"{name}: the same call with {form}, same rounds", _cell([twin]), "",
                         f"{form} / this {_ratio(so, twin)}", _agreed(twin), "-", "-"])
    return grid(head, body, left=(0, 5, 6)), passed, judged


def groups_table(rec: dict) -> Tuple[str, int, int]:
    """The group reductions: a case at 1 CPU (pinned) and at all, a column per library, and the
    targets as the run judged them."""
    groups = _cases(rec, "groups")
    shown = [p for p in GROUP_PEERS if any(r["peer"] == p and _timed(r) for _, rows in groups
                                           for r in rows)]
    head = ["case", "CPUs"] + shown + [SUBJECT, "targets", "result"]
    body, passed, judged = [], 0, 0
    for (case, threads), rows in groups:
        result = rows[0]["result"]
        cpus = "1 (pinned)" if threads == 1 else str(threads)
        line = [rows[0]["name"].split("groups: ", 1)[-1], cpus]
        line += [_cell([r for r in rows if r["peer"] == p]) for p in shown]
        line += [_cell([r for r in rows if r["role"] == "subject"]), rows[0]["target"] or "-",
                 {"pass": "met", "SHORT": "not met"}.get(result, result or "-")]
        body.append(line)
        if result:
            judged += 1
            passed += result == "pass"
    return grid(head, body, left=(0, len(head) - 2, len(head) - 1)), passed, judged


def caption(rec: dict, table: str = "main") -> str:
    path = "benchmarks/results/" + os.path.basename(rec.get("path", "?"))
    # a table's own rounds where its rows say (the group cases take at least 7)
    repeats = [r["repeats"] for r in rec["rows"] if r["table"] == table and r.get("repeats")]
    repeat = max(repeats) if repeats else rec["repeat"]
    made = ("" if rec.get("source", "run") == "run" else f" The record was {rec['source']}.")
    return (f"From `{path}`: {rec['date'][:10]}, scatterops at "
            f"{rec['commit']}, {rec['cpus']} CPUs ({rec['cpu']}), {rec['threads']} threads, "
            f"median of {repeat} interleaved rounds, load average {rec['load_average']}; "
            f"`{rec['command']}`.{made}")


def render(records: List[dict], table: str) -> Optional[str]:
    rec = latest(records, table)
    if rec is None:
        return None
    if table == "small":
        text, passed, judged = small_table(rec)
    elif table == "groups":
        text, passed, judged = groups_table(rec)
    else:
        text, passed, judged = peer_table(rec, table)
    tail = f"\n\n{passed} of {judged} rows reach their target." if judged else ""
    return f"{caption(rec, table)}\n\n{text}{tail}"


def fill(text: str, table: str, body: str) -> str:
    """``text`` with what stands between ``table``'s markers replaced by ``body``."""
    pattern = re.compile(rf"(<!-- report:{table} -->\n)(?:.*?\n)?(<!-- /report:{table} -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"no <!-- report:{table} --> ... <!-- /report:{table} --> markers")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text, count=1)


def update(root: str, records: List[dict]) -> Dict[str, Tuple[str, str]]:
    """-> {file: (the text it has, the text the records give)} for every file with markers."""
    out = {}
    for name, tables in FILES.items():
        path = os.path.join(root, name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            old = f.read()
        new = old
        for table in tables:
            if f"<!-- report:{table} -->" not in new:
                continue
            body = render(records, table)
            if body is not None:
                new = fill(new, table, body)
        out[path] = (old, new)
    return out


# ---------------------------------------------------------------------------------------------
# Charts


COLORS = targets.COLORS


def bar_chart(rec: dict, path: str) -> None:
    """The main cases: log time per case, a bar per library (its best API)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _cases(rec, "main")
    series = [p for p in PEERS if any(r["peer"] == p and _timed(r) for _, rows in groups
                                      for r in rows)] + [SUBJECT]
    fig, ax = plt.subplots(figsize=(max(10, 1.05 * len(groups) + 2), 6))
    width = 0.8 / len(series)
    for j, p in enumerate(series):
        xs, ys = [], []
        for i, (_, rows) in enumerate(groups):
            timed = [r for r in rows if r["peer"] == p and _timed(r)]
            if timed:
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(min(r["median"] for r in timed))
        ax.bar(xs, ys, width, label=p, color=COLORS.get(p))
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([case for (case, _), _ in groups])
    ax.set_xlabel("case (see the table); no bar: the library has no such call, "
                  "or its result was wrong")
    ax.set_ylabel("seconds per call, median (log scale)")
    ax.set_title(f"scatterops benchmark, {rec['date'][:10]}, {rec['commit']}, {rec['cpu']}, "
                 f"{rec['threads']} threads", fontsize=9)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def sweep_chart(rec: dict, path: str) -> bool:
    """ns per update against the output size (the sweep-out rows), as ``--sweep-plot`` draws
    it.  -> False if the record has no such rows."""
    rows = [r for r in rec["rows"] if r["table"] == "v2" and r["case"].startswith("sweep-out-")
            and r.get("out_size") and r.get("updates")]
    if not rows:
        return False
    best: Dict[Tuple[bool, int], Dict[str, Dict[int, float]]] = {}
    for r in rows:
        if _timed(r):
            line = best.setdefault((r["case"].endswith("-inplace"), r["threads"]), {}).setdefault(
                r["peer"], {})
            t = r["median"] / r["updates"] * 1e9
            line[r["out_size"]] = min(line.get(r["out_size"], t), t)
    panels = {k: {p: sorted(v.items()) for p, v in lines.items()} for k, lines in best.items()}
    targets.draw_sweep(panels, PEERS + [SUBJECT], path,
                       f"1e6 float32 updates, {rec['date'][:10]}, {rec['commit']}, {rec['cpu']}")
    return True


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.report",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=record.RESULTS, metavar="FOLDER",
                    help="where the records are (default: benchmarks/results)")
    ap.add_argument("--root", default=ROOT, metavar="DIR",
                    help="the checkout whose README.md and docs/ are written (default: this one)")
    ap.add_argument("--check", action="store_true",
                    help="change nothing; exit 1 if a table differs from what the records give")
    ap.add_argument("--no-charts", action="store_true", help="leave the charts as they are")
    args = ap.parse_args(argv)
    records = record.load_all(args.results)
    if not records:
        print(f"no record in {args.results}", file=sys.stderr)
        return 1
    stale = []
    for path, (old, new) in update(args.root, records).items():
        if old == new:
            continue
        stale.append(path)
        if not args.check:
            with open(path, "w") as f:
                f.write(new)
            print(f"wrote {path}", file=sys.stderr)
    if args.check:
        for path in stale:
            print(f"{path}: a table is not what the records give (python -m benchmarks.report)",
                  file=sys.stderr)
        return 1 if stale else 0
    if not args.no_charts:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("matplotlib is not installed: the charts are left as they are "
                  "(pip install -e '.[bench]')", file=sys.stderr)
            return 0
        main_rec, v2_rec = latest(records, "main"), latest(records, "v2")
        if main_rec is not None:
            bar_chart(main_rec, os.path.join(args.root, "docs", "benchmark.png"))
        if v2_rec is not None:
            sweep_chart(v2_rec, os.path.join(args.root, "docs", "sweep.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The machine-readable record of a benchmark run, written under ``benchmarks/results/``.

Every ``python -m benchmarks`` run that times something writes one JSON file there (``--no-record``
leaves it out), named ``DATE-COMMIT.json`` (``2026-11-28T071502Z-1bce891.json``), and
``python -m benchmarks.report`` makes the README's table, the chart and the tables of
docs/performance.md from the latest records.  A record holds:

* ``date`` (UTC, ISO 8601), ``commit`` (``git describe --always --dirty`` of the scatterops source
  that was measured), ``cpu`` (the CPU model), ``cpus`` (the CPUs the process may use),
  ``threads`` (``--threads``), ``repeat``, ``quick`` (``--quick``: smaller inputs, which the
  report leaves out), ``command``, ``versions`` (of every library timed),
  ``load_average`` (at the start and at the end) and ``source`` (``"run"``, or how a record
  that no run wrote was made);
* ``rows``: one per case, thread count and implementation: ``table`` (``main``: the cases of
  every peer; ``v2``: the everyday calls; ``small``: the small calls; ``threads``; ``groups``: the group reductions), ``case`` (the
  key ``-k`` takes), ``name``, ``threads``, ``peer``, ``label`` (the peer's API), ``role``
  (``subject``: scatterops; ``peer``; ``bar``: the NumPy call a small call is held to;
  ``spelling``: a NumPy spelling shown beside it; ``twin``: scatterops in another form in the
  same rounds), ``status`` (``ok``, ``~`` not bit-equal within the peer's definition,
  ``MISMATCH``, ``n/a``, ``failed``), ``median`` (seconds per call, or null), ``repeats`` (the
  timed rounds), ``runs_agreed`` (for a peer or bar: in how many of those rounds the comparison
  with scatterops went the way the medians' did; null for scatterops itself), ``impl_threads``
  (an implementation's own thread count where it differs from the row's, else null),
  ``updates`` and ``out_size`` (update elements, and output elements for the out-size sweep),
  and the case's ``target`` and ``result`` (``pass`` / ``SHORT``, or null where the case has no
  target).
"""
from __future__ import annotations

import datetime
import json
import os
import statistics
from typing import List, Optional

FORMAT = "scatterops benchmark record 1"
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def table_of(case) -> str:
    if "groups" in case.tags:
        return "groups"
    if case.target is not None:
        return "small"
    if case.out_size is not None:
        return "v2"
    if case.key == "threads":
        return "threads"
    return "main"


def runs_agreed(mine: List[float], theirs: List[float]) -> Optional[int]:
    """Of the rounds both were timed in (the same round robin), how many put the two on the same
    side as their medians do."""
    if not mine or not theirs:
        return None
    faster = statistics.median(mine) < statistics.median(theirs)
    return sum((a < b) == faster for a, b in zip(mine, theirs))


def role_of(row, res, subject, twins) -> str:
    if res.impl.peer == subject:
        return "subject"
    if res.impl.peer in twins:
        return "twin"
    tg = row.case.target
    if tg is not None and res.impl.peer == "numpy":
        return "bar" if res.impl.label == tg.bar else "spelling"
    return "peer"


def make(rows, *, date: datetime.datetime, commit: str, cpu: str, cpus: int, threads: int,
         repeat: int, quick: bool, command: str, versions: dict, load_average: str,
         subject: str, twins=(), target_of=None, source: str = "run") -> dict:
    """The record of a run: ``rows`` are run.py's rows; ``target_of(row)`` -> (target text, True /
    False / None) judges a row that has a target."""
    out = []
    for row in rows:
        so = row.subject()
        target, ok = (target_of(row) if target_of else (None, None))
        for res in row.results:
            role = role_of(row, res, subject, twins)
            agreed = (runs_agreed(so.samples, res.samples)
                      if so is not None and role in ("peer", "bar", "twin") else None)
            out.append({
                "table": table_of(row.case), "case": row.case.key, "name": row.case.name,
                "threads": row.threads if row.threads is not None else threads,
                "peer": res.impl.peer, "label": res.impl.label, "role": role,
                "status": res.status, "median": res.time, "repeats": len(res.samples),
                "runs_agreed": agreed, "impl_threads": res.impl.threads,
                "updates": row.updates, "out_size": row.case.out_size, "target": target,
                "result": None if ok is None else ("pass" if ok else "SHORT"),
            })
    return {"format": FORMAT, "source": source,
            "date": date.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": commit, "cpu": cpu, "cpus": cpus, "threads": threads, "repeat": repeat,
            "quick": quick, "command": command, "versions": versions, "load_average": load_average,
            "rows": out}


def write(record: dict, folder: str = RESULTS) -> str:
    """Write ``record`` as ``folder/DATE-COMMIT.json``; -> the path."""
    os.makedirs(folder, exist_ok=True)
    d = record["date"]                  # a day, or a UTC time to the second
    stamp = d[:10] + ("T" + d[11:19].replace(":", "") + "Z" if len(d) > 10 else "")
    commit = (record.get("commit") or "unknown").replace("/", "_")
    path = os.path.join(folder, f"{stamp}-{commit}.json")
    head = {k: v for k, v in record.items() if k not in ("rows", "path")}
    rows = ",\n".join("  " + json.dumps(row) for row in record["rows"])  # a row a line
    with open(path, "w") as f:
        f.write(json.dumps(head, indent=1)[:-2] + ',\n "rows": [\n' + rows + "\n ]\n}\n")
    return path


def load_all(folder: str = RESULTS) -> List[dict]:
    """Every record in ``folder``, oldest first (by the date each holds)."""
    found = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                rec = json.load(f)
            if rec.get("format") == FORMAT:
                rec["path"] = os.path.join(folder, name)
                found.append(rec)
    return sorted(found, key=lambda r: (r["date"], r["path"]))

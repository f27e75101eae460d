"""The benchmark's record and report (benchmarks/record.py, benchmarks/report.py) and the small-call
rows of benchmarks/small.py: every run writes a record, the report makes the README's table from
it, the committed tables are the ones the committed records give, and every small row runs."""
import json
import os
import shutil
import sys

import numpy as np
import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

from benchmarks import cases, core, peers, record, report, run, small  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_every_small_row_runs_and_agrees_with_numpy():
    f32 = small.small_cases()
    assert len({c.key for c in f32}) == len(f32) == (len(small.FORMS) + len(small.MODES)) * 3
    for case in f32:
        x = case.make()
        assert x["data"].dtype == np.float32 and x["data"].size == small.SIZE
    for case in cases.small_cases() + f32:
        x = case.make()
        got, ref = {}, None
        for im in case.impls:
            xx = dict(x, data=x["data"].copy()) if case.inplace else x
            got[im.label] = np.array(im.build(xx)(), copy=True)
            if im.peer == "scatterops":
                ref = got[im.label]
        for im in case.impls:
            own = np.asarray(im.ref(x)) if im.ref is not None else ref
            status, note = core.check_result(im, got[im.label], own, x["data"], None)
            assert status in ("ok", "~"), (case.key, im.label, note)


def test_small_rows_are_selected_by_s():
    keys = {c.key for c in run.all_cases(quick=True) if run.selected(c, "s")}
    assert {f"s-f32-{form}-{n}" for form, _, _ in small.FORMS for n in small.SIZES} <= keys
    assert {f"s-mode-{m}-{n}" for m in small.MODES for n in small.SIZES} <= keys
    assert not any(k.startswith("sweep") for k in keys)


def test_runs_agreed_counts_the_rounds_on_the_medians_side():
    assert record.runs_agreed([1.0, 1.0, 1.0], [2.0, 2.0, 0.5]) == 2
    assert record.runs_agreed([2.0, 2.0, 2.0], [1.0, 3.0, 1.0]) == 2
    assert record.runs_agreed([], [1.0]) is None


def _markers(root):
    os.makedirs(os.path.join(root, "docs"))
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("# x\n\n<!-- report:main -->\nold\n<!-- /report:main -->\n\nafter\n")


def test_a_run_writes_a_record_and_the_report_makes_the_readme_table_from_it(tmp_path):
    results = tmp_path / "results"
    others = [p for p in peers.PEERS if p != "numpy"]
    status = run.main(["-k", "s-f32-arrays-4,s-mode-wrap-4", "--quick", "--repeat", "2",
                       "--skip", ",".join(others), "--record", str(results)])
    assert status == 0
    [name] = os.listdir(results)
    with open(results / name) as f:
        rec = json.load(f)
    for field in ("date", "commit", "cpu", "cpus", "threads", "repeat", "command", "versions",
                  "load_average", "rows"):
        assert field in rec, field
    assert rec["format"] == record.FORMAT and rec["source"] == "run"
    by = {(r["case"], r["role"]): r for r in rec["rows"]}
    so, bar = by[("s-f32-arrays-4", "subject")], by[("s-f32-arrays-4", "bar")]
    assert so["peer"] == "scatterops" and bar["peer"] == "numpy" and so["table"] == "small"
    assert so["median"] > 0 and bar["median"] > 0 and so["repeats"] == bar["repeats"] == 2
    assert 0 <= bar["runs_agreed"] <= 2 and so["runs_agreed"] is None
    assert so["target"] == ">= 2x" and so["result"] in ("pass", "SHORT")
    assert by[("s-mode-wrap-4", "twin")]["peer"] == small.MODE_RAISE

    # the report puts a table made from the record between the README's markers; here the
    # record holds only small rows, so a main-table record is made beside it
    assert rec["quick"] is True             # a --quick run: the report shows none of it
    assert report.render(record.load_all(str(results)), "small") is None
    main = dict(rec, date="2000-01-01", quick=False, rows=[
        {"table": "main", "case": "a", "name": "a: one case", "threads": 2, "peer": p,
         "label": None, "role": role, "status": "ok", "median": t, "repeats": 3,
         "runs_agreed": None, "impl_threads": None, "target": None, "result": None}
        for p, role, t in [("numpy", "peer", 0.506), ("scatterops", "subject", 0.0198)]])
    record.write(main, str(results))
    root = tmp_path / "checkout"
    _markers(root)
    assert report.main(["--results", str(results), "--root", str(root), "--no-charts"]) == 0
    text = (root / "README.md").read_text()
    assert "old" not in text and text.endswith("<!-- /report:main -->\n\nafter\n")
    assert "| a: one case | 506 ms | 19.8 ms | 25.56x numpy |" in text
    assert "2000-01-01" in text
    assert report.main(["--results", str(results), "--root", str(root), "--check"]) == 0
    (root / "README.md").write_text(text.replace("19.8 ms", "18 ms"))
    assert report.main(["--results", str(results), "--root", str(root), "--check"]) == 1


def test_the_latest_record_of_each_table_is_the_one_shown(tmp_path):
    rec = {"format": record.FORMAT, "source": "run", "commit": "c", "cpu": "x", "cpus": 1,
           "threads": 1, "repeat": 1, "command": "c", "versions": {}, "load_average": "0"}

    def rows(t):
        return [{"table": "main", "case": "a", "name": "a: one case", "threads": 1, "peer": p,
                 "label": None, "role": role, "status": "ok", "median": t * k, "repeats": 1,
                 "runs_agreed": None, "impl_threads": None, "target": None, "result": None}
                for p, role, k in [("numpy", "peer", 2), ("scatterops", "subject", 1)]]
    record.write(dict(rec, date="2001-01-01T00:00:00Z", rows=rows(1.0)), str(tmp_path))
    record.write(dict(rec, date="2002-01-01T00:00:00Z", rows=rows(3.0)), str(tmp_path))
    record.write(dict(rec, date="2003-01-01T00:00:00Z", rows=[]), str(tmp_path))  # no main rows
    text = report.render(record.load_all(str(tmp_path)), "main")
    assert "2002-01-01" in text and "| a: one case | 6.00 s | 3.00 s | 2.00x numpy |" in text


@pytest.mark.skipif(not os.path.exists(os.path.join(_ROOT, "README.md")),
                    reason="README.md is not beside the tests")
def test_the_committed_tables_are_what_the_committed_records_give(tmp_path):
    # README.md and docs/performance.md hold the tables python -m benchmarks.report makes from
    # benchmarks/results/: edited by hand, or a record added without the report, they differ
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    for name in ("README.md", os.path.join("docs", "performance.md")):
        shutil.copy(os.path.join(_ROOT, name), root / name)
        assert "<!-- report:main -->" in (root / name).read_text(), name
    assert report.main(["--root", str(root), "--check"]) == 0, (
        "run python -m benchmarks.report and commit the tables it writes")

"""The group reductions' benchmark (benchmarks/groups.py): every case's NumPy peers agree with
scatterops as the table says, empty groups included, and the targets are judged as printed."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import groups, peers, run  # noqa: E402

ONLY = ["numpy", peers.SUBJECT]         # no extra needed


def _row(case, threads=1):
    row = run.run_case(case, ONLY, repeat=1, target=0.0, budget=0.0, pause=0.0)
    row.threads = threads
    return row


@pytest.mark.parametrize("case", groups.group_cases(quick=True), ids=lambda c: c.key)
def test_every_numpy_peer_of_a_quick_case_agrees_with_scatterops(case):
    row = _row(case)
    got = {(r.impl.peer, r.impl.label): (r.status, r.note) for r in row.results}
    assert got[(peers.SUBJECT, row.subject().impl.label)][0] == "ok", got
    for (peer, label), (status, note) in got.items():
        assert status in ("ok", "~"), (label, status, note)
    assert any("the draw (seed 0)" in n for n in case.notes), case.notes


@pytest.mark.parametrize("key", ["groups-max-f32", "groups-mean-f64"])
def test_empty_groups_of_the_full_size_draw_are_held_to_the_peers_own_fill(key):
    # 1e6 ids into 1e5 groups leave some empty: np.maximum.at gives -inf there, which is
    # bit-equal to scatterops given fill_value=-inf, not a mismatch
    case = next(c for c in groups.group_cases(quick=False) if c.key == key)
    row = _row(case)
    assert not case.notes[-1].endswith(" 0 groups empty"), case.notes
    for r in row.results:
        assert r.status == "ok", (r.impl.label, r.status, r.note)


def test_each_target_is_printed_met_or_not_met():
    case = next(c for c in groups.group_cases(quick=True) if c.key == "groups-segment-f32")
    one, two = _row(case, 1), _row(case, 2)
    by_key = {(case.key, 1): one, (case.key, 2): two}
    names = [name for name, _, _ in groups.judge(two, by_key)]
    assert names == ["bit-equal >= 1x", "any >= 0.7x", "1t / 2t >= 1.6"]
    text, _ = groups.target(two, by_key)
    assert text.count(": met") + text.count(": not met") == 3, text
    table, _, judged = groups.table([one, two], ONLY, run.cell, run.grid)
    assert judged == 2 and "1t / 2t >= 1.6" in table

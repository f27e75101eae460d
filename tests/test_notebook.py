"""examples/scatterops_tour.ipynb runs headless, top to bottom, and every check in it holds.

The notebook's cells ``assert`` what their outputs claim (the specifications' outputs, NumPy's
``ufunc.at`` results, bit-identical thread counts), so a change that makes the tour wrong fails
here.  Needs the ``notebook`` extra (nbclient, nbformat, ipykernel, matplotlib); skips without it,
or when the tests run without the checkout's examples/ beside them.
"""
import os
from pathlib import Path

import pytest

from extras import need

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "scatterops_tour.ipynb"

nbformat = need("nbformat")
nbclient = need("nbclient")
need("ipykernel")
need("matplotlib")

pytestmark = pytest.mark.skipif(not NOTEBOOK.exists(), reason=f"{NOTEBOOK} is not beside the tests")


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_notebook_executes_and_its_checks_hold(tmp_path):
    import scatterops

    nb = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel imports the scatterops this test imports (a checkout's in-place build, or the
    # installed package), and draws with the inline backend, not a window
    root = os.path.dirname(os.path.dirname(scatterops.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    env.pop("MPLBACKEND", None)
    client = nbclient.NotebookClient(nb, timeout=None, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env)    # raises CellExecutionError, naming the cell, if any cell fails

    cells = _code_cells(nb)
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1))
    outputs = [o for c in cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert f"scatterops {scatterops.__version__}" in text
    assert "bit-identical to each other and to np.add.at: True" in text
    assert any("image/png" in o.get("data", {}) for o in outputs), "the chart was not drawn"


def test_notebook_is_saved_executed_with_outputs():
    # the committed notebook shows its results without being run: every code cell executed in
    # order, with output, and no error output saved
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    cells = _code_cells(nb)
    assert cells and [c.execution_count for c in cells] == list(range(1, len(cells) + 1))
    assert all(c.outputs for c in cells)
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]


README = NOTEBOOK.parent.parent / "README.md"


def _ms(cell: str):
    """A README benchmark cell ("483 ms", "1.42 s", "~1.1 ms", "339 ms (1t)", "n/a",
    "MISMATCH") in milliseconds, or None where the peer gave no usable time."""
    import re
    m = re.match(r"~?([0-9.]+) (us|ms|s)\b", cell.strip())
    if not m:
        return None
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside the examples")
def test_notebook_chart_shows_the_readme_benchmark_table():
    # the tour's chart draws numbers typed into a cell "from the README's full run": they must
    # be the ones README.md's Performance table shows now, not an older run's
    import ast
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cell = next(c for c in _code_cells(nb) if "table = [" in c.source)
    tree = ast.parse(cell.source)
    table = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "table")
    peers = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "peers")
    rows = {}
    for line in README.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > len(peers):
            rows[cells[0].replace(",", "")] = cells[1:1 + len(peers)]
    header = next(v for k, v in rows.items() if k == "case")
    assert header == peers, f"README's table has the columns {header}, the notebook {peers}"
    for label, *times in table:
        match = [k for k in rows if k.startswith(label)]
        assert len(match) == 1, f"notebook row {label!r} matches README rows {match}"
        want = [_ms(c) for c in rows[match[0]]]
        for peer, got, exp in zip(peers, times, want):
            assert (got is None) == (exp is None) and (got is None or abs(got - exp) <= 0.005 * exp), \
                f"{label}, {peer}: the notebook draws {got} ms, README.md shows {exp} ms"

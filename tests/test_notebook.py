"""examples/scatterops_tour.ipynb runs headless, top to bottom, and every check in it holds.

The notebook's cells ``assert`` what their outputs claim (the specifications' outputs, NumPy's
``ufunc.at`` results, bit-identical thread counts), so a change that makes the tour wrong fails
here.  Needs the ``notebook`` extra (nbclient, nbformat, ipykernel, matplotlib); skips without it,
or when the tests run without the checkout's examples/ beside them.
"""
import os
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "scatterops_tour.ipynb"

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

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

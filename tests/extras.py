"""The optional extras of pyproject.toml, and the skips of the tests that need them.

A bare ``pip install -e '.[test]'`` runs the whole suite but the tests of the peers, ml_dtypes and
the notebook, which skip.  ``need(module)`` is ``pytest.importorskip`` with a reason that says
which extra installs the module, so a skip reads ``needs torch: pip install -e '.[peers]'``
instead of ``could not import 'torch'``.
"""
from __future__ import annotations

import pytest

#: module -> the extra of pyproject.toml that installs it
EXTRA_OF = {
    "mypy": "test", "threadpoolctl": "test",
    "torch": "peers", "onnx": "peers", "onnxruntime": "peers", "openvino": "peers",
    "ml_dtypes": "peers",
    "nbformat": "notebook", "nbclient": "notebook", "ipykernel": "notebook",
    "matplotlib": "notebook",
    "dask": "dask", "distributed": "dask",
}


def skip_reason(module: str) -> str:
    """What a test that needs module says when it skips."""
    return f"needs {module}: pip install -e '.[{EXTRA_OF[module]}]'"


def need(module: str, minversion=None):
    """``pytest.importorskip(module)``, skipping with the extra that installs it."""
    return pytest.importorskip(module, minversion=minversion, reason=skip_reason(module))

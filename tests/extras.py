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
    "numpy_groupies": "groups", "numba": "groups", "numbagg": "groups", "pandas": "groups",
    "jax": "groups", "torch_geometric": "groups",
}


def skip_reason(module: str, extra=None) -> str:
    """What a test that needs module says when it skips (extra: one that installs it, when
    several do and the test belongs to that one)."""
    return f"needs {module}: pip install -e '.[{extra or EXTRA_OF[module]}]'"


def need(module: str, minversion=None, extra=None):
    """``pytest.importorskip(module)``, skipping with the extra that installs it."""
    return pytest.importorskip(module, minversion=minversion, reason=skip_reason(module, extra))

"""Sphinx configuration: the scatterops documentation site.

Build it from the root of a checkout with the package built in place or installed
(``pip install -e '.[docs]'``)::

    python -m sphinx -W -b html docs docs/_build/html

Pages are Markdown (myst-parser) except the API reference (``api.rst``), which autodoc and
numpydoc generate from the docstrings; ``docs/_build`` and ``docs/generated`` are build output.
"""
from __future__ import annotations

import sys
from pathlib import Path

# the checkout's own package first (an in-place build), as `python -m pytest` does from the root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import scatterops  # noqa: E402

project = "scatterops"
author = "the scatterops authors"
copyright = "the scatterops authors, MIT License"
release = scatterops.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build"]

# One page per public function or module, generated at build time from api.rst's lists.
autosummary_generate = True
autodoc_default_options = {"members": True}
autodoc_member_order = "bysource"
# The functions are C (their signature is their __text_signature__); numpydoc renders the
# docstrings' sections and leaves class member tables out.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

myst_heading_anchors = 3

html_theme = "alabaster"
html_title = f"scatterops {release}"
html_static_path: list[str] = []

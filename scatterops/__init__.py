"""scatterops: exact, deterministic tensor scatter operations for NumPy arrays of any dtype.

``scatter_update`` (OpenVINO ScatterUpdate, PyTorch index_copy/index_add),
``scatter_nd`` (ONNX ScatterND, OpenVINO ScatterNDUpdate, PyTorch index_put_) and
``scatter_elements`` (ONNX ScatterElements, PyTorch scatter/scatter_reduce),
written in C on the NumPy C API; ``at``, a drop-in for ``ufunc.at`` that runs on
the same core.  ``scatterops.reference`` holds the three functions in plain
NumPy.  The contract is in docs/contract.md.
"""
from ._version import __version__
from . import _settings  # noqa: F401  (the environment, set in the C core before any call)
from ._api import scatter_elements, scatter_nd, scatter_update
from ._aggregate import aggregate
from ._at import at
from ._groups import group_reduce, group_softmax, segment_reduce, segment_softmax
from ._threads import get_num_threads, set_num_threads, threads

__all__ = ["scatter_update", "scatter_nd", "scatter_elements", "at",
           "group_reduce", "segment_reduce", "group_softmax", "segment_softmax", "aggregate",
           "set_num_threads", "get_num_threads", "threads", "__version__"]

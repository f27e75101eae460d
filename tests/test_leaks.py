"""Repeated calls, successful or failing, do not grow memory (objects or C buffers
handed to Python would show in tracemalloc; the C core's own malloc'd plans and
tables are freed on every path, which tools/sanitize.sh checks as well)."""
import tracemalloc

import numpy as np
import pytest
from numpy.exceptions import AxisError

import scatterops as so

D = np.zeros((4, 5))
OBJ = np.array([1, 2, 3], dtype=object)
CALLS = {
    "fast-none": lambda: so.scatter_update(D, [1, 2], np.ones((4, 2)), axis=1),
    "fast-add-inplace": lambda: so.scatter_nd(D, [[1], [1]], np.ones((2, 5)), reduction="add", out=D),
    "lists": lambda: so.scatter_elements([1, 2, 3], [0, 0], [5, 6], reduction="max"),
    "mean-noself": lambda: so.scatter_elements(D, np.zeros((2, 5), np.int8), 1.0, reduction="mean",
                                               include_self=False),
    "object-add": lambda: so.scatter_elements(OBJ, [0, 2], [10, 20], reduction="add"),
    "index-error": (lambda: so.scatter_update(D, [9], 1.0), IndexError),
    "type-error": (lambda: so.scatter_update(D, [1.5], 1.0), TypeError),
    "value-error": (lambda: so.scatter_nd(D, [[0, 0, 0]], 1.0), ValueError),
    "axis-error": (lambda: so.scatter_elements(D, [[0]], 1.0, axis=5), AxisError),
    "reduction-error": (lambda: so.scatter_nd(np.array(["a"]), [[0]], "b", reduction="add"), TypeError),
}


def _run(call, n):
    fn, exc = call if isinstance(call, tuple) else (call, None)
    for _ in range(n):
        if exc is None:
            fn()
        else:
            with pytest.raises(exc):
                fn()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_repeated_calls_do_not_grow_memory(name):
    _run(CALLS[name], 500)                      # warm caches (hypothesis-free, numpy's)
    tracemalloc.start()
    try:
        _run(CALLS[name], 500)
        before = tracemalloc.get_traced_memory()[0]
        _run(CALLS[name], 20000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{name}: {grown} bytes more after 20000 calls"


def test_object_reference_counts_stable_over_many_calls():
    import sys
    marker = object()
    data = np.array([marker, None, None], dtype=object)
    before = sys.getrefcount(marker)
    for _ in range(10000):
        so.scatter_update(data, [1, 2], [marker, marker])
        with pytest.raises(IndexError):
            so.scatter_update(data, [7], [marker])
    assert sys.getrefcount(marker) == before

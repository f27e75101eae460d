"""The suite's strategies: ``scatterops.strategies`` (the public module that draws every
call the properties run, valid or not, and compares results bit for bit) with the suite's
defaults, and ``snapshot``.

``cases`` is ``scatterops.strategies.calls`` with the defaults the properties were written
for: every out mode, ``reduction="none"`` only, and (reduction, dtype) pairs NumPy has no
loop for drawn too unless ``defined_only=True``.
"""
from __future__ import annotations

import numpy as np

from scatterops.strategies import *  # noqa: F401,F403 - the suite reads them as strategies.X
from scatterops.strategies import (ALL_DTYPES, FUNCS, LAYOUTS, OUT_MODES, Call, calls,
                                   out_of_range_calls)

#: the suite's name for a drawn call
Case = Call


def cases(funcs=FUNCS, dtypes=ALL_DTYPES, reductions=("none",), include_self=None,
          out_modes=OUT_MODES, layout_kinds=LAYOUTS, index_mode="any", broadcast=True,
          updates_casts=True, nonempty_indices=False, defined_only=False):
    """A whole call (``scatterops.strategies.calls``, the suite's defaults)."""
    return calls(funcs, dtypes, reductions, include_self=include_self, out_modes=out_modes,
                 layout_kinds=layout_kinds, index_mode=index_mode, broadcast=broadcast,
                 updates_casts=updates_casts, nonempty_indices=nonempty_indices,
                 defined_only=defined_only)


def out_of_range_cases(position=None, funcs=FUNCS, reductions=("none",), defined_only=False, **kw):
    """(case, flat position, bad value, axis named, size): ``out_of_range_calls``, the
    suite's defaults."""
    return out_of_range_calls(funcs, position, reductions=reductions, defined_only=defined_only, **kw)


def snapshot(a):
    """A copy to compare against later with assert_identical(..., objects="is")."""
    return None if a is None else np.array(a, copy=True)

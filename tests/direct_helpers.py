"""What the tests of the direct form's element loops (test_direct_prefetch.py,
test_direct_eights.py, test_direct_four_no_wrap.py, test_direct_unsigned_four.py) share: random
indices of any integer dtype, the dtypes and reductions they run, and two checks."""
import numpy as np
import pytest

import scatterops as so
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)
from scatterops.strategies import assert_identical as same

# data dtypes and reductions of the loops' every-length tests (complex has no max or min)
CASES = [(d, r) for d in ["float32", "float64", "int64", "int8", "complex64"]
         for r in ["add", "sub", "mul", "max", "min"]
         if not (d == "complex64" and r in ("max", "min"))]


def indices(dtype, n, size, seed):
    """n random indices of dtype into size elements, negatives from the end where signed, all
    within dtype's range."""
    info = np.iinfo(dtype)
    lo = max(-size, int(info.min))
    hi = min(size, int(info.max) + 1)
    return np.random.default_rng(seed).integers(lo, hi, n).astype(dtype)


def assert_bad_index_named(data, idx, pos, value):
    """An add and a max of ones with idx, whose first bad index is value at pos, raise an
    IndexError naming indices[pos] = value, out of place and in place; nothing is written."""
    kept = data.copy()
    upd = np.ones(len(idx), np.float32)
    for reduction in ("add", "max"):
        with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {value} is out of bounds"):
            so.scatter_elements(data, idx, upd, 0, reduction=reduction)
        inplace = data.copy()
        with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {value} is out of bounds"):
            so.scatter_elements(inplace, idx, upd, 0, reduction=reduction, out=inplace)
        same(inplace, kept)
    same(data, kept)


def assert_both_ways_equal_the_reference(data, idx, upd, reduction):
    """scatter_elements along axis 0, out of place and in place, has the reference's bits."""
    want = reference.scatter_elements(data, idx, upd, 0, reduction=reduction)
    same(so.scatter_elements(data, idx, upd, 0, reduction=reduction), want)
    inplace = data.copy()
    so.scatter_elements(inplace, idx, upd, 0, reduction=reduction, out=inplace)
    same(inplace, want)

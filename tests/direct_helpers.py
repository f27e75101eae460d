"""What the tests of the direct form's element loops (test_direct_prefetch.py,
test_direct_eights.py) share: random indices of any integer dtype."""
import numpy as np


def indices(dtype, n, size, seed):
    """n random indices of dtype into size elements, negatives from the end where signed, all
    within dtype's range."""
    info = np.iinfo(dtype)
    lo = max(-size, int(info.min))
    hi = min(size, int(info.max) + 1)
    return np.random.default_rng(seed).integers(lo, hi, n).astype(dtype)

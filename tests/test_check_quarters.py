"""The bounds check before an in-place call's first write reads each chunk of
8192 indices as four quarters side by side (csrc/plan/check_run.c).  A bad
index in any quarter, in the remainder after the fourth, at a chunk's edge, or
at either end is found, named at its own position, and nothing is written."""
import numpy as np
import pytest

import scatterops
import scatterops.reference

CHUNK = 8192
# lengths: under one chunk with a remainder after the quarters, one chunk, and
# two chunks and a bit (the last chunk's quarters short)
LENGTHS = [1, 3, 7, 1001, CHUNK, 2 * CHUNK + 13]
TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _positions(m):
    out = {0, m - 1}
    for c in range(0, m, CHUNK):
        k = min(CHUNK, m - c)
        q = k // 4
        for p in (0, q - 1, q, 2 * q - 1, 2 * q, 3 * q - 1, 3 * q, 4 * q - 1, 4 * q, k - 1):
            if 0 <= p < k:
                out.add(c + p)
    return sorted(out)


@pytest.mark.parametrize("itype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("m", LENGTHS)
def test_bad_index_found_anywhere(itype, m):
    n = 50
    rng = np.random.default_rng(m)
    lo = 0 if np.dtype(itype).kind == "u" else -n
    base = rng.integers(lo, n, m).astype(itype)
    upd = np.ones(m, np.float32)
    bads = [n, np.iinfo(itype).max]
    if np.dtype(itype).kind == "i":
        bads += [-n - 1, np.iinfo(itype).min]
    for pos in _positions(m):
        for bad in bads:
            idx = base.copy()
            idx[pos] = bad
            data = np.arange(n, dtype=np.float32)
            before = data.copy()
            with pytest.raises(IndexError, match=rf"indices\[{pos}\] = {bad} is out of bounds"):
                scatterops.scatter_elements(data, idx, upd, 0, reduction="add", out=data)
            np.testing.assert_array_equal(data, before)
    # and with every index good the call runs and matches the reference
    data = np.arange(n, dtype=np.float32)
    want = scatterops.reference.scatter_elements(data, base, upd, 0, reduction="add")
    got = scatterops.scatter_elements(data, base, upd, 0, reduction="add", out=data)
    np.testing.assert_array_equal(got, want)

"""The cache of freed output blocks (csrc/py/output_cache.c): large out-of-place results take memory
that an earlier, dropped result had already faulted in.  What must hold: results are right
whatever the block held before, a live result's memory is never handed out again, the
arrays own their data like any NumPy array, and the cache stays within its bounds."""
import gc
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import scatterops
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)

MiB = 1 << 20


def _info():
    return _core.output_cache_info()


def _big_case(seed, rows=2048, cols=256, dtype=np.float32):
    """data of rows * cols * 4 bytes (2 MiB by default): past the cache's 1 MiB threshold."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((rows, cols)).astype(dtype)
    idx = rng.integers(-rows, rows, 300)
    upd = rng.standard_normal((300, cols)).astype(dtype)
    return data, idx, upd


@pytest.mark.parametrize("reduction", ["none", "add", "max", "mean"])
def test_reused_blocks_give_the_reference_result(reduction):
    """Drop each result, so the next call reuses its block (filled with other values)."""
    if _info()["limit"] == 0:
        pytest.skip("SCATTEROPS_OUTPUT_CACHE=0 in this environment")
    hits = _info()["hits"]
    for seed in range(6):
        data, idx, upd = _big_case(seed)
        got = scatterops.scatter_update(data, idx, upd, reduction=reduction)
        want = reference.scatter_update(data, idx, upd, reduction=reduction)
        np.testing.assert_array_equal(got, want)
        # something unlike data, left behind in the block for the next call
        got[...] = np.float32(np.nan) if seed % 2 else np.float32(-7.0)
        del got
    assert _info()["hits"] > hits, _info()


def test_non_contiguous_data_reuses_blocks_too():
    data, idx, upd = _big_case(1, rows=4096)
    view = data[::2]
    for _ in range(3):
        got = scatterops.scatter_update(view, idx % 2048, upd)
        np.testing.assert_array_equal(got, reference.scatter_update(view, idx % 2048, upd))
        assert got.flags.c_contiguous and got.flags.owndata
        got.fill(3)
        del got


def test_live_results_never_share_memory():
    data, idx, upd = _big_case(2)
    kept = [scatterops.scatter_elements(data, np.zeros_like(upd, dtype=np.intp), upd)
            for _ in range(8)]
    for i, a in enumerate(kept):
        for b in kept[i + 1:]:
            assert not np.shares_memory(a, b)
    want = reference.scatter_elements(data, np.zeros_like(upd, dtype=np.intp), upd)
    for a in kept:
        np.testing.assert_array_equal(a, want)


def test_results_own_their_data_and_can_be_resized():
    data, idx, upd = _big_case(3)
    for _ in range(2):
        got = scatterops.scatter_update(data, idx, upd)
        assert got.flags.owndata and got.base is None and got.flags.writeable
        want = got.copy()
        got.resize((4096, 256), refcheck=False)          # grows: a new block, old contents kept
        np.testing.assert_array_equal(got[:2048], want)
        assert not got[2048:].any()                      # ndarray.resize zero-fills
        got.resize((10, 256), refcheck=False)            # shrinks below the threshold
        np.testing.assert_array_equal(got, want[:10])
        del got


def test_the_cache_stays_within_its_bounds():
    info = _info()
    kept = []
    for rows in (600, 1100, 2100, 4200, 600, 9000, 1100):
        data, idx, upd = _big_case(rows, rows=rows)
        kept.append(scatterops.scatter_update(data, idx % rows, upd))
    kept.clear()
    gc.collect()
    info = _info()
    assert info["blocks"] <= 4 and info["bytes"] <= info["limit"], info


def test_tracemalloc_still_sees_the_output():
    """NumPy reports arrays' data to tracemalloc whatever their memory handler."""
    data, idx, upd = _big_case(4)
    scatterops.scatter_update(data, idx, upd)            # warm the cache
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        got = scatterops.scatter_update(data, idx, upd)
        now = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert now - before >= got.nbytes


_CHILD = """
import numpy as np, scatterops, scatterops._core as c
data = np.zeros((2048, 256), np.float32)
for _ in range(3):
    r = scatterops.scatter_update(data, [1, 2], np.ones((2, 256), np.float32))
    assert r.sum() == 512
    del r
print(c.output_cache_info())
"""


@pytest.mark.parametrize("value, blocks", [("0", 0), ("1048576", 0), ("", 1), ("not a number", 1)])
def test_environment_variable_sets_the_limit(value, blocks):
    """SCATTEROPS_OUTPUT_CACHE: the bytes to keep; 0 turns the cache off; a block larger than
    the limit is freed; an empty or unreadable value keeps the default."""
    env = dict(os.environ, SCATTEROPS_OUTPUT_CACHE=value)
    # the child imports scatterops from where this process did (a checkout or an install)
    where = os.path.dirname(os.path.dirname(os.path.abspath(scatterops.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([where, env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    info = eval(proc.stdout)
    assert info["blocks"] == blocks, info
    if value in ("0", "1048576"):
        assert info["limit"] == int(value) and info["hits"] == 0
    else:
        assert info["limit"] == 256 * MiB and info["hits"] == 2

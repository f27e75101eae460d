"""Large copies of data (base/copy.c) store past the caches, 64 bytes a step, with memcpy for the
bytes before the first aligned store and after the last whole step: 32-byte stores where the CPU
has AVX2, 16-byte ones where it does not.  By default only copies larger than a quarter of L3 (and
32 MiB) are streamed; ``_core.set_stream_copy_min(0)`` streams every copy that goes through
copy.c, so that small arrays test the same code:

* out of place on 1 and 2 threads (the fresh copy, cut between the threads at 4 KiB), data at
  every byte offset from an aligned address and of lengths on either side of the 64-byte step,
  the result bit-equal to NumPy's;
* into another out (``out=``): both misaligned, the copy and the result bit-equal, and data left
  as it was; an out that overlaps data takes NumPy's copy, which is still right (these two, on
  arrays of 32 MiB, are marked slow: the sanitizer run leaves them out);
* the same in a child process with AVX2 turned off (the 16-byte stores).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import scatterops as so
from scatterops import _core

N = (1 << 20) + 1024        # bytes: above the output cache's 1 MiB, where copy.c does the copy


@pytest.fixture(autouse=True)
def every_copy_streamed():
    old = _core.set_stream_copy_min(0)
    yield
    _core.set_stream_copy_min(old)


def _bytes_at(offset, n, seed):
    """n random uint8 at the given byte offset from a 64-byte aligned address."""
    buf = np.empty(n + 128, np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    a = buf[start:start + n]
    a[:] = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    return a


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("offset", [0, 1, 16, 31, 33, 63])
@pytest.mark.parametrize("extra", [0, 1, 63, 64, 65, 4097])
def test_out_of_place_at_every_alignment(threads, offset, extra):
    n = N + extra
    data = _bytes_at(offset, n, extra)
    kept = data.copy()
    idx = np.array([0, n - 1, n // 2, n // 2 + 1, -1], np.int64)
    upd = np.array([1, 2, 3, 4, 5], np.uint8)
    want = data.copy()
    np.add.at(want, idx, upd)
    with so.threads(threads):
        got = so.scatter_update(data, idx, upd, reduction="add")
        _same(got, want)
        _same(_core.copy(data), kept)
    _same(data, kept)


@pytest.mark.slow                               # 32 MiB arrays: not under the sanitizers
@pytest.mark.parametrize("offset", [(0, 0), (61, 40)])
def test_into_another_out(offset):
    n = (32 << 20) + 77                      # so_copy_into's own fast path starts at 32 MiB
    data = _bytes_at(offset[0], n, 1)
    kept = data.copy()
    out = _bytes_at(offset[1], n, 2)
    idx = np.array([5, 5, n - 2], np.int64)
    upd = np.array([1, 1, 9], np.uint8)
    want = data.copy()
    np.add.at(want, idx, upd)
    assert so.scatter_update(data, idx, upd, reduction="add", out=out) is out
    _same(out, want)
    _same(data, kept)


@pytest.mark.slow
def test_an_out_that_overlaps_data():
    n = (32 << 20) + 8
    buf = np.random.default_rng(4).integers(0, 256, n + 4096, dtype=np.uint8)
    data, out = buf[4096:], buf[:n]          # out starts before data and runs into it
    want = data.copy()
    np.add.at(want, [0, 7], [1, 2])
    so.scatter_update(data, np.array([0, 7]), np.array([1, 2], np.uint8), reduction="add",
                      out=out)
    _same(out, want)


_CHILD = r"""
import numpy as np
import scatterops as so
from scatterops import _core
assert not _core.cpu_features()[2]        # (f16c, avx512, avx2)
_core.set_stream_copy_min(0)
for threads in (1, 2):
    for offset in (0, 5, 40):
        for extra in (0, 15, 4097):
            n = (1 << 20) + extra
            buf = np.empty(n + 128, np.uint8)
            start = (-buf.ctypes.data) % 64 + offset
            data = buf[start:start + n]
            data[:] = np.random.default_rng(extra).integers(0, 256, n, dtype=np.uint8)
            want = data.copy()
            np.add.at(want, [0, n - 1], [3, 4])
            with so.threads(threads):
                got = so.scatter_update(data, np.array([0, n - 1]), np.array([3, 4], np.uint8),
                                        reduction="add")
            assert np.array_equal(got, want)
print("ok")
"""


def test_sixteen_byte_stores_without_avx2():
    env = dict(os.environ, SCATTEROPS_NO_AVX2="1", SCATTEROPS_NO_AVX512="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(so.__file__)),
                                         env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]

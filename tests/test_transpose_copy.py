"""Out-of-place results are C-contiguous even when data is a transposed (F-ordered) view:
csrc/base/copy.c's so_transpose_copy copies such a data strip by strip (2-D, at least 1 MiB,
no object references), 2-, 4- and 8-byte items in blocks transposed in vector registers
(with AVX2).
Held to the reference over item sizes, shapes that fill neither the strips (one cache line
of out wide, 128 rows long) nor the 8 x 8 / 4 x 4 blocks, thread counts, the scalar loop
alone (SCATTEROPS_NO_AVX2=1), and the arrays it must leave to NumPy's copy."""
import os
import subprocess
import sys

import numpy as np
import pytest

import scatterops
import fast_reference as reference     # the reference's bits, whole-array

DTYPES = ["u1", "i2", "f2", "f4", "f8", "c16", "S3", "V12", ">f4", "<i8", "m8[s]"]
SHAPES = [(1000, 333), (77, 5000), (4099, 70)]


def _transposed(dtype, rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(cols, rows, np.dtype(dtype).itemsize), dtype=np.uint8)
    base = raw.view(dtype).reshape(cols, rows)
    if base.dtype.kind in "fc":
        base[~np.isfinite(base)] = 0       # keep NaN bit patterns out of the comparison
    return base.T                           # (rows, cols), F-ordered


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    before = scatterops.get_num_threads()
    scatterops.set_num_threads(request.param)
    yield request.param
    scatterops.set_num_threads(before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_none_on_a_transposed_data(dtype, shape, threads):
    data = _transposed(dtype, *shape)
    assert data.flags.f_contiguous and not data.flags.c_contiguous
    if data.nbytes < 1 << 20:
        data = _transposed(dtype, shape[0] * 4, shape[1])
    rng = np.random.default_rng(1)
    idx = rng.integers(-data.shape[0], data.shape[0], 7)
    upd = _transposed(dtype, 7, data.shape[1], seed=2).copy()
    got = scatterops.scatter_update(data, idx, upd)
    want = reference.scatter_update(data, idx, upd)
    assert got.flags.c_contiguous
    assert got.tobytes() == want.tobytes()


def test_the_scalar_loop_alone_gives_the_same_bytes():
    """SCATTEROPS_NO_AVX2=1 leaves every item to the scalar loop, in a child process (the
    choice is made once a process).  Same data, same bytes as the reference."""
    code = r"""
import sys, numpy as np, scatterops as so
sys.path.insert(0, sys.argv[1])
import fast_reference as reference     # the reference's bits, whole-array
from test_transpose_copy import DTYPES, SHAPES, _transposed
for threads in (1, 2):
    so.set_num_threads(threads)
    for dtype in DTYPES:
        for rows, cols in SHAPES:
            data = _transposed(dtype, rows * 4, cols)
            idx = np.array([0, -1, 5])
            upd = _transposed(dtype, 3, cols, seed=2).copy()
            got = so.scatter_update(data, idx, upd)
            assert got.flags.c_contiguous
            assert got.tobytes() == reference.scatter_update(data, idx, upd).tobytes(), dtype
print("ok")
"""
    env = dict(os.environ, SCATTEROPS_NO_AVX2="1")
    res = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stdout + res.stderr


@pytest.mark.parametrize("reduction", ["add", "max", "mean"])
def test_reductions_on_a_transposed_data(reduction, threads):
    data = _transposed("f4", 1500, 400, seed=3)
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 1500, 300)
    upd = rng.standard_normal((300, 400)).astype(np.float32)
    got = scatterops.scatter_update(data, idx, upd, reduction=reduction)
    want = reference.scatter_update(data, idx, upd, reduction=reduction)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)


def test_unaligned_transposed_data_is_copied_by_numpy():
    """An F-ordered array at an odd address: the tile loops load whole items, so NumPy copies."""
    rows, cols = 700, 400
    buf = np.zeros(rows * cols * 8 + 1, np.uint8)[1:]
    data = buf.view(np.float64).reshape(cols, rows).T
    data[...] = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    assert not data.flags.aligned and data.flags.f_contiguous
    got = scatterops.scatter_update(data, [0, -1], np.ones((2, cols)))
    np.testing.assert_array_equal(got, reference.scatter_update(data, [0, -1], np.ones((2, cols))))


def test_object_transposed_data():
    data = np.empty((400, 400), object).T
    data[...] = 1
    data = np.asfortranarray(data.astype(object))
    got = scatterops.scatter_update(data, [3], np.full((1, 400), 7, object))
    assert got.flags.c_contiguous and (got[3] == 7).all() and got.sum() == 400 * 399 + 7 * 400

"""The direct form of a 1-D call (call/direct.c): indices of every integer dtype read as given,
checked by chunk minimum and maximum (plan/check_run.c), then one loop by dtype, reduction and
index dtype (kernels/indexed.c).

The drawn tests reach it with small calls; here it runs long (the GIL released, the loop in
pieces, the check over many chunks) on one thread, on every index dtype, against NumPy's
``ufunc.at`` bit for bit, with a bad index in a late chunk, values at the ends of each index
type's range, strided data, ``out=`` another array and ``mode=`` after the check raised.
"""
import numpy as np
import pytest

import scatterops as so
from scatterops import _core

N = 20_000          # above the size from which a call releases the GIL
SIZE = 100
INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
UFUNC = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@pytest.fixture
def one_thread():
    with so.threads(1):
        yield


def _indices(dtype, n=N, size=SIZE, seed=0):
    rng = np.random.default_rng(seed)
    lo = -size if np.dtype(dtype).kind == "i" else 0
    return rng.integers(lo, size, n).astype(dtype)


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 7, shape).astype(dtype)
    v = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    v = v.astype(dtype)
    v[::97] = np.nan                           # NaN on either side of max / min
    return v


def _expected(data, idx, upd, red):
    ref = data.copy()
    with np.errstate(invalid="ignore"):
        UFUNC[red].at(ref, idx.astype(np.intp), upd)
    return ref


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8),
                                  np.ascontiguousarray(b).view(np.uint8))


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype,red", [("float32", "add"), ("float64", "max"), ("float32", "min"),
                                       ("int16", "mul"), ("uint64", "add"),
                                       ("complex128", "add"), ("complex64", "max")])
def test_long_call_every_index_dtype(one_thread, idx_dtype, dtype, red):
    idx = _indices(idx_dtype)
    upd = _values(dtype, N, 1)
    if red == "mul" and dtype == "int16":
        upd = (upd % 3).astype(dtype)
    data = _values(dtype, SIZE, 2)
    want = _expected(data, idx, upd, red)
    _same(so.scatter_update(data, idx, upd, reduction=red), want)
    _same(so.scatter_elements(data, idx, upd, reduction=red), want)
    _same(so.scatter_nd(data, idx[:, None], upd, reduction=red), want)
    inplace = data.copy()
    assert so.scatter_update(inplace, idx, upd, reduction=red, out=inplace) is inplace
    _same(inplace, want)


@pytest.mark.parametrize("idx_dtype", ["int8", "int32", "uint16", "int64"])
def test_long_call_strided_data_and_out(one_thread, idx_dtype):
    idx = _indices(idx_dtype)
    upd = _values("float32", N, 3)
    base = _values("float32", 3 * SIZE, 4)
    data = base[::3]                             # out at a stride of 12 bytes
    want = _expected(data, idx, upd, "add")
    _same(so.scatter_update(data, idx, upd, reduction="add"), want)
    target = np.zeros(2 * SIZE, np.float32)[::-2]  # another out, negative stride
    assert so.scatter_update(data, idx, upd, reduction="add", out=target) is target
    _same(target, want)
    view = base.copy()[::3]
    so.scatter_update(view, idx, upd, reduction="add", out=view)
    _same(view, want)


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("n", [N, 300])
def test_bad_index_in_a_late_chunk_writes_nothing(one_thread, idx_dtype, n):
    idx = _indices(idx_dtype, n)
    where = n - 5                                # the last chunk of the check
    idx[where] = SIZE                            # one past the end, in every type
    idx[where + 2] = SIZE + 1
    data = _values("float32", SIZE, 5)
    before = data.copy()
    with pytest.raises(IndexError, match=rf"indices\[{where}\] = {SIZE} "):
        so.scatter_update(data, idx, np.ones(n, np.float32), reduction="add", out=data)
    _same(data, before)
    with pytest.raises(IndexError, match=rf"indices\[{where}\] = {SIZE} "):
        so.scatter_elements(data, idx, np.ones(n, np.float32), reduction="max")


@pytest.mark.parametrize("idx_dtype,value,size,ok", [
    ("int8", -128, 128, True), ("int8", -128, 127, False), ("int8", 127, 128, True),
    ("int16", -32768, 32768, True), ("int16", 32767, 32767, False),
    ("uint8", 255, 256, True), ("uint8", 255, 255, False),
    ("uint64", 2**63 + 5, 10, False), ("uint64", 2**64 - 1, 10, False),
    ("int64", -2**63, 10, False), ("int32", -2**31, 10, False), ("uint32", 2**32 - 1, 10, False),
])
def test_the_ends_of_each_index_type(one_thread, idx_dtype, value, size, ok):
    idx = np.zeros(N, idx_dtype)
    idx[N // 2] = value
    data = np.zeros(size, np.float64)
    upd = np.arange(N, dtype=np.float64)
    if ok:
        want = data.copy()
        np.add.at(want, idx.astype(np.intp), upd)
        _same(so.scatter_update(data, idx, upd, reduction="add"), want)
    else:
        with pytest.raises(IndexError, match=rf"indices\[{N // 2}\] = {value} "):
            so.scatter_update(data, idx, upd, reduction="add", out=data)
        assert not data.any()


def test_empty_axis_refuses_every_index(one_thread):
    with pytest.raises(IndexError):
        so.scatter_update(np.zeros(0, np.float32), np.zeros(N, np.int32), np.ones(N, np.float32),
                          reduction="add")


@pytest.mark.parametrize("idx_dtype", ["int8", "int32", "uint16"])
@pytest.mark.parametrize("mode", ["clip", "wrap", "drop"])
def test_mode_after_the_direct_check_raised(one_thread, idx_dtype, mode):
    idx = _indices(idx_dtype, 1000, 50)
    idx[::7] = 90
    data = _values("float32", 60, 6)
    upd = _values("float32", 1000, 7)
    wide = idx.astype(np.intp)
    want = so.scatter_update(data, wide, upd, reduction="add", mode=mode)
    _same(so.scatter_update(data, idx, upd, reduction="add", mode=mode), want)


@pytest.fixture
def rewrite():
    yield _core._test_rewrite_indices
    _core._test_rewrite_indices(None)


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("n", [N, 40])
@pytest.mark.parametrize("value", [-100, 100])
def test_rewritten_narrow_indices_stay_inside_out(one_thread, rewrite, idx_dtype, n, value):
    """The indices rewritten after the check (to a value cut to their size, out of range for
    every type here): every write of the direct loop stays inside out.  Where the loop is the
    only reader of the indices (one pass into a scratch copy of out: the long runs here), it
    finds them bad and raises, out untouched."""
    buf = np.zeros(50 + 2 * 4096, np.float32)
    data = buf[4096:4096 + 50]
    idx = np.arange(n).astype(idx_dtype) % 50
    rewrite(value)
    try:
        so.scatter_update(data, idx, np.ones(n, np.float32), reduction="add", out=data)
    except IndexError:
        assert n == N and not data.any()
    assert not buf[:4096].any() and not buf[4096 + 50:].any()


_CHILD = r"""
import numpy as np, scatterops as so
so.set_num_threads(1)
for dt in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
    signed = np.dtype(dt).kind == "i"
    idx = (np.arange(20_000) % 100 - (50 if signed else 0)).astype(dt)
    data = np.zeros(100, np.float32)
    want = data.copy()
    np.add.at(want, idx.astype(np.intp), np.ones(20_000, np.float32))
    assert (so.scatter_update(data, idx, np.ones(20_000, np.float32), reduction="add")
            == want).all(), dt
    for bad in [100, -101] if signed else [100]:
        idx[17_000] = bad
        try:
            so.scatter_update(data, idx, np.ones(20_000, np.float32), reduction="add", out=data)
        except IndexError as e:
            assert "indices[17000]" in str(e), (dt, str(e))
        else:
            raise AssertionError(dt)
        assert not data.any()
        idx[17_000] = 0
print("ok")
"""


@pytest.mark.parametrize("switch", ["SCATTEROPS_NO_AVX512", "SCATTEROPS_NO_AVX2"])
def test_check_without_the_wider_vectors(switch):
    """The minimum and maximum loops built for AVX2 and the portable ones (each chosen where
    the wider one is switched off), in a child: the switches hold for a whole process."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, SCATTEROPS_NO_AVX512="1")
    env[switch] = "1"
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(so.__file__)),
                                         env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]

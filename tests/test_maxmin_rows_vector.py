"""The floats' max and min without a branch (kernels/ops.h: NAME_max1 for one element at a time,
NAME_maxv for a row the compiler vectorises) and the row loops built for AVX2 (kernels/rows.c:
add, sub, mul, max and min of the 4- and 8-byte integers and floats, a row of 8 as one vector).

Random values almost never put the cases that tell a max apart side by side, so here every data
element and every update comes from a small pool, into a small out: either both zeros below
everything else (for max; above for min), so that the result is a zero whose sign says which
side a tie took, or NaN, both zeros, both infinities and equal finite values with about three
updates an element, so that NaN meets every value on either side and the results still differ
(with hundreds of updates an element every result would be NaN).  Each
call is held bit for bit to NumPy's ``ufunc.at`` (where two NaNs meet, any NaN: the contract
does not promise which), for the element loop (``scatter_elements`` on 1-D data) and for the row
loops of every compile-time row length and others, out of place and in place, on one thread and
on two; and once more in a child process with AVX2 switched off (the portable loops).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import scatterops as so
from scatterops import _core
from scatterops.strategies import assert_identical

POOL = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.5, 2.5]
ZEROS = {"max": [0.0, -0.0, -1.0, -np.inf], "min": [0.0, -0.0, 1.0, np.inf]}
UFUNC = {"max": np.maximum, "min": np.minimum, "add": np.add, "sub": np.subtract,
         "mul": np.multiply}
ROW_LENGTHS = [1, 2, 3, 4, 5, 8, 9, 16, 64]


def _pool(dtype, shape, rng, pool=POOL):
    return np.array(pool, dtype)[rng.integers(0, len(pool), shape)]


def _case(dtype, red, pool, shape, rng):
    """(data, updates, updates per element): ties of zeros with many updates an element,
    or the NaN pool with about three."""
    values = ZEROS[red] if pool == "zeros" else POOL
    n = (40 if pool == "zeros" else 3) * shape[0]
    return _pool(dtype, shape, rng, values), _pool(dtype, (n,) + shape[1:], rng, values), n


def _want(data, idx, upd, red):
    ref = data.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        UFUNC[red].at(ref, idx.astype(np.intp), upd)
    return ref


def _same(got, want):
    assert_identical(np.ascontiguousarray(got), np.ascontiguousarray(want), nans="any")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("pool", ["zeros", "nan"])
@pytest.mark.parametrize("idx_dtype", ["int32", "int64", "uint16"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("red", ["max", "min"])
def test_element_loop_special_values(threads, pool, idx_dtype, dtype, red):
    rng = np.random.default_rng(7)
    size = 500
    data, upd, n = _case(dtype, red, pool, (size,), rng)
    idx = rng.integers(0, size, n).astype(idx_dtype)
    want = _want(data, idx, upd, red)
    assert len(np.unique(want.view(f"u{want.itemsize}"))) >= 2   # results that tell apart
    before = _core.direct_calls()
    with so.threads(threads):
        _same(so.scatter_elements(data, idx, upd, reduction=red), want)
        inplace = data.copy()
        so.scatter_elements(inplace, idx, upd, reduction=red, out=inplace)
        _same(inplace, want)
    if threads == 1:
        assert _core.direct_calls() >= before + 2    # the element loop ran, not another path


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("pool", ["zeros", "nan"])
@pytest.mark.parametrize("f", ROW_LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("red", ["max", "min"])
def test_row_loops_special_values(threads, pool, f, dtype, red):
    rng = np.random.default_rng(f)
    rows = 60
    data, upd, n = _case(dtype, red, pool, (rows, f), rng)
    idx = rng.integers(-rows, rows, n)
    want = _want(data, idx, upd, red)
    assert len(np.unique(want.view(f"u{want.itemsize}"))) >= 2
    before = _core.rows_direct_calls()
    with so.threads(threads):
        _same(so.scatter_update(data, idx, upd, reduction=red), want)
        inplace = data.copy()
        so.scatter_update(inplace, idx, upd, reduction=red, out=inplace)
        _same(inplace, want)
    if threads == 1:
        assert _core.rows_direct_calls() >= before + 2


@pytest.mark.parametrize("f", ROW_LENGTHS)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
@pytest.mark.parametrize("red", ["add", "sub", "mul", "max", "min"])
def test_vector_row_loops_every_op(one_thread_rows, f, dtype, red):
    """The dtypes and ops the AVX2 row loops take, integers wrapping as NumPy's do."""
    rng = np.random.default_rng(f * 31 + len(dtype))
    rows, n = 11, 2000
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, (rows, f), dtype=dtype, endpoint=True)
        upd = rng.integers(info.min, info.max, (n, f), dtype=dtype, endpoint=True)
    else:
        data = _pool(dtype, (rows, f), rng)
        upd = (rng.standard_normal((n, f)) * 3).astype(dtype)
        upd[::5] = _pool(dtype, upd[::5].shape, rng)
    idx = rng.integers(0, rows, n).astype(np.int32)
    _same(so.scatter_update(data, idx, upd, reduction=red), _want(data, idx, upd, red))


@pytest.fixture
def one_thread_rows():
    with so.threads(1):
        yield


_CHILD = r"""
import numpy as np
import scatterops as so
from scatterops.strategies import assert_identical
POOL = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.5, 2.5]
ZEROS = {"max": [0.0, -0.0, -1.0, -np.inf], "min": [0.0, -0.0, 1.0, np.inf]}
rng = np.random.default_rng(3)
so.set_num_threads(1)
for dtype in ("float32", "float64"):
    for red, uf in (("max", np.maximum), ("min", np.minimum), ("add", np.add)):
        for f in (0, 1, 2, 4, 8, 9, 16):
            shape = (7,) if f == 0 else (7, f)
            n = 3000
            data = np.array(POOL, dtype)[rng.integers(0, len(POOL), shape)]
            upd = np.array(POOL, dtype)[rng.integers(0, len(POOL), (n,) + shape[1:])]
            idx = rng.integers(0, 7, n)
            want = data.copy()
            with np.errstate(invalid="ignore"):
                uf.at(want, idx, upd)
            got = (so.scatter_elements(data, idx, upd, reduction=red) if f == 0
                   else so.scatter_update(data, idx, upd, reduction=red))
            assert_identical(got, want, nans="any")
print("ok")
"""


def test_portable_loops_without_avx2():
    """SCATTEROPS_NO_AVX2=1 (a whole process's switch, so in a child): the portable row loops
    and the same branch-free max and min."""
    env = dict(os.environ, SCATTEROPS_NO_AVX2="1", SCATTEROPS_NO_AVX512="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(so.__file__)),
                                         env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]

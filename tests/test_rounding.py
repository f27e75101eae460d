"""float16 rounds once per update, as ufunc.at does, on every path through the
C core (contiguous or strided indices and updates, element or slice targets)."""
import numpy as np
import pytest

import scatterops as so

# 4096 + 1 and 4096 - 1 round back to 4096 in float16 (ties to even); combining the
# ones first would give 4100 or 4092
BIG, SMALL, COUNT = 4096.0, 1.0, 4


def _layouts():
    idx = np.zeros(COUNT, np.intp)
    upd = np.full(COUNT, SMALL, np.float16)
    yield "contiguous", idx, upd
    yield "strided-indices", np.zeros(2 * COUNT, np.intp)[::2], upd
    yield "strided-updates", idx, np.full(2 * COUNT, SMALL, np.float16)[::2]
    yield "int8-indices", idx.astype(np.int8), upd
    yield "reversed", idx[::-1], upd[::-1]


@pytest.mark.parametrize("name,idx,upd", list(_layouts()), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("reduction,ufunc", [("add", np.add), ("sub", np.subtract)])
def test_float16_rounds_once_per_update_on_elements(name, idx, upd, reduction, ufunc):
    data = np.array([BIG, 0.0], np.float16)
    expected = data.copy()
    ufunc.at(expected, np.asarray(idx, np.intp), upd)
    assert expected[0] == BIG            # the property the data is built to show
    got_nd = so.scatter_nd(data, np.asarray(idx)[:, None], upd, reduction=reduction)
    got_el = so.scatter_elements(data, idx, upd, reduction=reduction)
    got_up = so.scatter_update(data, idx, upd, reduction=reduction)
    for got in (got_nd, got_el, got_up):
        assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("reduction,ufunc", [("add", np.add), ("sub", np.subtract)])
def test_float16_rounds_once_per_update_on_slices(reduction, ufunc):
    data = np.full((2, 40), BIG, np.float16)
    idx = np.zeros(COUNT, np.intp)
    upd = np.full((COUNT, 40), SMALL, np.float16)
    expected = data.copy()
    ufunc.at(expected, idx, upd)
    got = so.scatter_update(data, idx, upd, reduction=reduction)
    assert got.tobytes() == expected.tobytes()
    got = so.scatter_elements(data, np.broadcast_to(idx[:, None], upd.shape), upd,
                              reduction=reduction)
    assert got.tobytes() == expected.tobytes()


# Every float16 bit pattern against every reduction: the typed kernels convert with the
# F16C instructions where the CPU has them (csrc/kernels/reduce.c), with NumPy's npy_half
# functions otherwise; both must give ufunc.at's result (any NaN for a NaN).
_ALL_HALVES = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _every_pair_case(seed):
    rng = np.random.default_rng(seed)
    data = _ALL_HALVES.copy()
    upd = rng.permutation(_ALL_HALVES)
    idx = np.arange(1 << 16)
    return data, idx, upd


@pytest.mark.parametrize("reduction, ufunc", [("add", np.add), ("sub", np.subtract),
                                              ("mul", np.multiply), ("max", np.maximum),
                                              ("min", np.minimum)])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_float16_value_reduces_as_ufunc_at(reduction, ufunc, seed):
    data, idx, upd = _every_pair_case(seed)
    want = data.copy()
    with np.errstate(all="ignore"):
        ufunc.at(want, idx, upd)
        got = so.scatter_elements(data, idx, upd, reduction=reduction)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert (got.view(np.uint16)[~nan] == want.view(np.uint16)[~nan]).all()
    if reduction in ("max", "min"):
        # max / min return one operand's bits: NaN payloads too
        assert (got.view(np.uint16) == want.view(np.uint16)).all()


def test_float16_without_f16c_gives_the_same_results():
    """SCATTEROPS_NO_F16C=1: the portable conversions, in a child process."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, scatterops\n"
            "h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)\n"
            "u = np.random.default_rng(0).permutation(h)\n"
            "i = np.arange(1 << 16)\n"
            "with np.errstate(all='ignore'):\n"
            "    for r in ('add', 'sub', 'mul', 'max', 'min'):\n"
            "        g = scatterops.scatter_elements(h, i, u, reduction=r)\n"
            "        w = h.copy(); getattr(np, {'add': 'add', 'sub': 'subtract', 'mul': 'multiply',\n"
            "                                   'max': 'maximum', 'min': 'minimum'}[r]).at(w, i, u)\n"
            "        n = np.isnan(w)\n"
            "        assert (np.isnan(g) == n).all(), r\n"
            "        assert (g.view(np.uint16)[~n] == w.view(np.uint16)[~n]).all(), r\n"
            "print('ok')\n")
    # the child imports scatterops from where this process did (a checkout or an install)
    where = os.path.dirname(os.path.dirname(os.path.abspath(so.__file__)))
    env = dict(os.environ, SCATTEROPS_NO_F16C="1",
               PYTHONPATH=os.pathsep.join([where, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr

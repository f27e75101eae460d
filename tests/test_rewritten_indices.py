"""Indices rewritten after they were checked never put a write outside out.

Another Python thread may write into ``indices`` while a call runs with the GIL
released, and an object dtype's ``__del__`` (run when ``reduction="none"`` replaces
an element) may do the same with the GIL held.  The result is then unspecified, but
every write must stay inside ``out`` (docs/contract.md); a call that reads them only once,
in the loop itself, finds them bad and raises the IndexError with ``out`` untouched.  Such races are not
reproducible, so ``_core._test_rewrite_indices(v)`` makes every call rewrite its
indices to ``v`` right after the check, deterministically; each path with its own walk
(elements, rows of every width, slices, index tuples, the masked and the mean walks,
object dtype, one thread and several) runs with values far out of range on both sides.
Under the sanitizer build (tools/sanitize.sh) a write outside ``out`` is an error;
here a guard region around ``out`` must come back untouched.
"""
import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import scatterops as so
from scatterops import _core


@pytest.fixture
def rewrite():
    def start(value):
        _core._test_rewrite_indices(value)
    yield start
    _core._test_rewrite_indices(None)


def _guarded(shape, dtype):
    """An array of shape with guard elements before and after it, in one buffer."""
    n = int(np.prod(shape))
    buf = np.zeros(n + 2 * 4096, dtype=dtype)
    if buf.dtype == object:
        buf[:] = 0
    guard = buf.copy()
    return buf, buf[4096:4096 + n].reshape(shape), guard


def _guard_intact(buf, guard):
    n = buf.size - 2 * 4096
    assert buf[:4096].tolist() == guard[:4096].tolist()
    assert buf[4096 + n:].tolist() == guard[4096 + n:].tolist()


CASES = {
    # name: (func, data shape, indices, updates shape, kw)
    "elements 1-D": ("scatter_elements", (50,), np.arange(40) % 50, (40,), {}),
    "elements 2-D axis 1": ("scatter_elements", (8, 50), np.tile(np.arange(30) % 50, (8, 1)),
                            (8, 30), {"axis": 1}),
    "update rows of 2": ("scatter_update", (50, 2), np.arange(40) % 50, (40, 2), {}),
    "update rows of 16": ("scatter_update", (50, 16), np.arange(40) % 50, (40, 16), {}),
    "update rows of 128": ("scatter_update", (50, 128), np.arange(40) % 50, (40, 128), {}),
    "update inner axis": ("scatter_update", (4, 50, 3), np.arange(20) % 50, (4, 20, 3),
                          {"axis": 1}),
    "nd elements": ("scatter_nd", (10, 10), np.stack([np.arange(30) % 10, np.arange(30) % 7],
                                                     axis=-1), (30,), {}),
    "nd rows of 2": ("scatter_nd", (50, 2), (np.arange(40) % 50)[:, None], (40, 2), {}),
    "nd slices of 64": ("scatter_nd", (50, 64), (np.arange(40) % 50)[:, None], (40, 64), {}),
}

LARGE = {
    # enough work for threads, the owned split and the GIL released
    "large elements": ("scatter_elements", (100_000,), np.arange(300_000) % 100_000,
                       (300_000,), {}),
    "large rows of 16": ("scatter_update", (20_000, 16), np.arange(60_000) % 20_000,
                         (60_000, 16), {}),
    "large expanded rows": ("scatter_elements", (20_000, 16),
                            np.broadcast_to((np.arange(60_000) % 20_000)[:, None], (60_000, 16)),
                            (60_000, 16), {}),
}


@pytest.mark.parametrize("value", [10**9, -10**12, 2**62])
@pytest.mark.parametrize("red", ["none", "add", "max", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("case", sorted(CASES) + sorted(LARGE))
@pytest.mark.parametrize("threads", [1, 2])
def test_rewritten_indices_stay_inside_out(rewrite, case, red, include_self, value, threads):
    func, shape, idx, ushape, kw = {**CASES, **LARGE}[case]
    old = so.get_num_threads()
    so.set_num_threads(threads)
    try:
        buf, data, guard = _guarded(shape, np.float32)
        upd = np.ones(ushape, np.float32)
        before = data.copy()
        rewrite(value)
        try:
            result = getattr(so, func)(data, np.array(idx), upd, reduction=red,
                                       include_self=include_self, out=data, **kw)
        except IndexError:
            # a call whose one pass reads the indices only once (the mean's pairs, a scratch
            # copy of out) finds them bad and writes nothing
            np.testing.assert_array_equal(data, before)
        else:
            assert result is data
        _guard_intact(buf, guard)
    finally:
        so.set_num_threads(old)


@pytest.mark.parametrize("value", [10**9, -10**12])
@pytest.mark.parametrize("case", ["update rows of 2", "nd rows of 2", "nd elements",
                                  "elements 1-D"])
def test_rewritten_indices_object_dtype(rewrite, case, value):
    func, shape, idx, ushape, kw = CASES[case]
    buf, data, guard = _guarded(shape, object)
    upd = np.full(ushape, "x", dtype=object)
    rewrite(value)
    getattr(so, func)(data, np.array(idx), upd, out=data, **kw)
    _guard_intact(buf, guard)
    gc.collect()


def test_del_that_rewrites_the_indices_does_not_crash():
    """The old values' __del__ sets the checked index array far out of range while an
    in-place reduction="none" replaces them: in a child, so that a crash fails the
    test instead of the run."""
    code = textwrap.dedent("""
        import numpy as np, scatterops as so
        targets = []
        class Evil:
            def __del__(self):
                for t in targets:
                    t[...] = 10**9
        rows = np.arange(8)
        for func, shape, ix, ushape in [
            ("scatter_update", (8, 2), rows.copy(), (8, 2)),
            ("scatter_nd", (8, 2), rows[:, None].copy(), (8, 2)),
            ("scatter_nd", (8, 8), np.stack([rows, rows], -1), (8,)),
        ]:
            for _ in range(3):
                targets[:] = []
                data = np.empty(shape, object)
                data[...] = [[Evil() for _ in range(shape[1])] for _ in range(shape[0])]
                ix[...] = (rows if ix.ndim == 1 else rows[:, None] if ix.shape[1] == 1
                           else np.stack([rows, rows], -1))     # valid again
                targets[:] = [ix]
                getattr(so, func)(data, ix, np.full(ushape, "u", object), out=data)
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "ok"

"""The call layer's one decision (csrc/call/choose.c), read through ``_core._choose``.

``_core._choose(kind, data, indices, updates, axis, reduction, include_self, mode, out,
nthreads)`` gives the name of the strategy a call would take without running it.  The
cases below hold the decision table against the thresholds csrc/call/cost.h documents
(the fused copy from 1 MiB of data, rows of at most 128 bytes on one thread, the check
beside the walk from 2**18 index values, the private partial outputs from 4 updates an
element of out and 2**15 a thread), and show that every strategy is still reached, each
call giving the reference's bits when it is run.
"""
import numpy as np
import pytest

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)

UPDATE, ND, ELEMENTS = (_core.KINDS[k] for k in ("scatter_update", "scatter_nd", "scatter_elements"))
FUNCS = {UPDATE: "scatter_update", ND: "scatter_nd", ELEMENTS: "scatter_elements"}

FUSED_MIN_BYTES = 1 << 20
ROWS_ONE_THREAD_BYTES = 128
SIDE_CHECK_MIN = 1 << 18
GIL_RELEASE_MIN = 1 << 14


@pytest.fixture(autouse=True)
def cost_model_on():
    before = _core.set_cost_model(True)
    yield
    _core.set_cost_model(before)


def choose(kind, d, i, u, axis=0, reduction="add", include_self=True, mode="raise", out=None,
           nthreads=1):
    return _core._choose(kind, d, i, u, axis, reduction, include_self, mode, out, nthreads)


def runs_as_the_reference(kind, d, i, u, axis=0, reduction="add", include_self=True, nthreads=1):
    """The call, run on nthreads threads, gives the reference's bits."""
    before = so.get_num_threads()
    so.set_num_threads(nthreads)
    try:
        args = (d, i, u) if kind == ND else (d, i, u, axis)
        got = getattr(so, FUNCS[kind])(*args, reduction=reduction, include_self=include_self)
    finally:
        so.set_num_threads(before)
    want = getattr(reference, FUNCS[kind])(*args, reduction=reduction, include_self=include_self)
    assert got.tobytes() == want.tobytes()


def test_small_1d_calls_take_the_direct_form():
    rng = np.random.default_rng(0)
    d, i, u = np.zeros(100), rng.integers(0, 100, 50), np.ones(50)
    for red in ("add", "max", "mean"):
        assert choose(ELEMENTS, d, i, u, reduction=red) == "direct"
        assert choose(ND, d, i[:, None], u, reduction=red) == "direct"
    for i2 in (i.astype(np.int32), i.astype(np.uint16)):
        assert choose(ELEMENTS, d, i2, u) == "direct"
    runs_as_the_reference(ELEMENTS, d, i, u, reduction="mean")


def test_what_the_direct_form_does_not_take_goes_the_general_way():
    rng = np.random.default_rng(1)
    d, i, u = np.zeros(100), rng.integers(0, 100, 50), np.ones(50)
    assert choose(ELEMENTS, d, i, u, reduction="none") == "general"          # no "none" loop on elements
    assert choose(ELEMENTS, d, i, u, include_self=False) == "general"        # not a mean
    assert choose(ELEMENTS, d, i[::2], u[::2].copy()) == "general"          # indices not contiguous
    assert choose(ELEMENTS, d, i, u.astype(np.float64)[::-1]) == "general"  # updates backwards
    runs_as_the_reference(ELEMENTS, d, i, u, include_self=False)


def test_dtypes_without_a_c_loop_take_the_fallback():
    d = np.zeros(10, object)
    assert choose(ELEMENTS, d, np.array([1, 2]), np.array([1, 2], object)) == "generic"
    d = np.zeros(10, np.longdouble)
    assert choose(ELEMENTS, d, np.array([1, 2]), np.ones(2, np.longdouble)) == "generic"


def test_rows_take_the_direct_form_on_one_thread_up_to_128_bytes():
    rng = np.random.default_rng(2)
    n = 2 * GIL_RELEASE_MIN              # a large call: on several threads the split is weighed
    for f, dtype in ((2, np.float32), (32, np.float32), (16, np.float64)):
        d = np.zeros((1000, f), dtype)
        i = rng.integers(0, 1000, n)
        u = np.ones((n, f), dtype)
        assert f * d.itemsize <= ROWS_ONE_THREAD_BYTES
        assert choose(UPDATE, d, i, u) == "direct_rows"
        assert choose(UPDATE, d, i, u, nthreads=2) == "direct_rows"
        assert choose(ND, d, i[:, None], u, nthreads=2) == "direct_rows"
        assert choose(ELEMENTS, d, np.broadcast_to(i[:, None], (n, f)), u, nthreads=2) == "direct_rows"
    runs_as_the_reference(UPDATE, d, i, u, nthreads=2)
    # not rows of contiguous elements: the general way
    d = np.zeros((8, 1000), np.float32)
    assert choose(UPDATE, d, rng.integers(0, 1000, 50), np.ones((8, 50), np.float32), axis=1) \
        != "direct_rows"


def test_the_fused_copy_from_1_mib_of_data():
    rng = np.random.default_rng(3)
    i = rng.integers(0, 256, (512, 3))
    for rows, want in ((512, "fused_copy"), (511, "general")):
        d = np.zeros((rows, 256))
        assert (d.nbytes >= FUSED_MIN_BYTES) == (want == "fused_copy")
        ii, u = i[:rows] if rows < 512 else i, np.ones((min(rows, 512), 3))
        assert choose(ELEMENTS, d, ii, u, axis=1) == want
        # into an out, or with a mean, no fused copy
        assert choose(ELEMENTS, d, ii, u, axis=1, out=d.copy()) == "general"
        assert choose(ELEMENTS, d, ii, u, axis=1, reduction="mean") == "general"
    runs_as_the_reference(ELEMENTS, np.zeros((512, 256)), i, np.ones((512, 3)), axis=1)


def test_the_check_beside_the_walk_from_2_18_index_values():
    # 1-D, its indices a step apart (no direct form): out of place on two threads, the check
    # runs beside the walk from SIDE_CHECK_MIN index values on (or the owned split checks)
    rng = np.random.default_rng(4)
    d = np.zeros(4096, np.float32)                      # 16 KiB: a small out
    for n in (SIDE_CHECK_MIN, SIDE_CHECK_MIN - 2):
        i = rng.integers(0, 4096, 2 * n)[::2]
        u = np.ones(n, np.float32)
        got = choose(ELEMENTS, d, i, u, nthreads=2)
        if n >= SIDE_CHECK_MIN:
            assert got in ("checked_beside", "checked_by_owners")
        else:
            assert got not in ("checked_beside", "direct")
        assert choose(ELEMENTS, d, i, u, nthreads=1) == "general"
        assert choose(ELEMENTS, d, i, u, nthreads=2, out=d.copy()) == "general"
    runs_as_the_reference(ELEMENTS, d, i, u, nthreads=2)


def test_the_owned_split_checks_a_large_fresh_result():
    # tests/test_checked_walk.py's calls into 4 MiB: split by index value, checking (the cost
    # model off: every split that can run runs, on any machine)
    _core.set_cost_model(False)
    rng = np.random.default_rng(5)
    big, n = 1 << 20, 1 << 17
    d = rng.standard_normal(big).astype(np.float32)
    i = rng.integers(-big, big, n)
    u = rng.standard_normal(n).astype(np.float32)
    got = {choose(ND, d, i[:, None], u, reduction=red, nthreads=2) for red in ("none", "add")}
    assert got == {"checked_by_owners"}
    assert choose(ND, d, i[:, None], u, reduction="add", nthreads=1) != "checked_by_owners"
    assert choose(ND, d, i[:, None], u, reduction="add", out=d.copy(), nthreads=2) \
        != "checked_by_owners"
    runs_as_the_reference(ND, d, i[:, None], u, reduction="none", nthreads=2)


def test_a_mode_is_no_part_of_the_choice():
    # the choice is made before any index is read: a bad index under "wrap" takes the same
    # strategy as a good one, and the mode's transform follows what it finds
    d, u = np.zeros(10), np.ones(3)
    for mode in ("raise", "wrap", "clip", "drop"):
        assert choose(ELEMENTS, d, np.array([1, 2, 3]), u, mode=mode) == "direct"
        assert choose(ELEMENTS, d, np.array([1, 20, 3]), u, mode=mode) == "direct"


def test_choose_checks_its_arguments():
    with pytest.raises(ValueError):
        _core._choose(7, np.zeros(3), [0], [1.0], 0, "add", True, "raise", None, 1)
    with pytest.raises(ValueError, match="rank"):
        _core._choose(ELEMENTS, np.zeros(3), [[0]], [1.0], 0, "add", True, "raise", None, 1)

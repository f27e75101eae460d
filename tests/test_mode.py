"""mode=: what an index outside its axis means ("raise", "wrap", "clip", "drop").

The C functions are held to the reference (whose mode is written apart, in plain NumPy)
bit for bit, on valid calls whose indices hold out-of-range values at random positions,
for every function, dtype, reduction, layout and out= form; and to the hand-worked
examples below, which say what each mode means.
"""
import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import scatterops as so
from scatterops import reference

import strategies as S
from strategies import assert_identical

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

MODES = ("raise", "wrap", "clip", "drop")


@st.composite
def mode_cases(draw):
    """(case, mode): a valid call with some index values replaced by out-of-range ones."""
    mode = draw(st.sampled_from(MODES))
    case = draw(S.cases(dtypes=S.ALL_DTYPES + S.REDUCTION_DTYPES, reductions=S.REDUCTION_NAMES,
                        defined_only=True, nonempty_indices=True,
                        out_modes=("none", "separate", "inplace", "strided")))
    ivals = case.indices.values
    bad = ivals.astype(ivals.dtype.newbyteorder("="))
    flat = bad.reshape(-1)
    S_ = case.data.shape
    for pos in draw(st.lists(st.integers(0, flat.size - 1), max_size=4)):
        axis = pos % ivals.shape[-1] if case.func == "scatter_nd" else case.axis_value % len(S_)
        flat[pos] = draw(st.sampled_from(S.bad_values(bad.dtype, S_[axis])))
    case = dataclasses.replace(case, indices=S.Recipe(bad.astype(ivals.dtype), case.indices.layout))
    return case, mode


def _outcome(case, module, mode):
    p = case.prepare()
    fn = getattr(module, case.func)
    try:
        return fn(*p.positional(), out=p.out, mode=mode, **case.options()), p
    except IndexError as exc:
        return exc, p


@given(mode_cases())
def test_every_mode_equals_the_reference(cm):
    case, mode = cm
    got, p_got = _outcome(case, so, mode)
    want, p_want = _outcome(case, reference, mode)
    if isinstance(want, IndexError):
        assert isinstance(got, IndexError), f"the reference raised {want!r}, scatterops did not"
        assert str(got) == str(want)
        if case.out_mode == "inplace":   # nothing written
            assert_identical(p_got.data, case.data.make(), objects="eq", nans="bits")
        return
    assert not isinstance(got, IndexError), got
    assert type(got) is np.ndarray
    assert_identical(got, want, objects=case.object_compare, nans=case.nans)


def test_wrap_clip_drop_by_hand():
    d = np.zeros(5)
    idx = [[7], [-7], [2], [-1]]
    u = [1.0, 2.0, 3.0, 4.0]
    # wrap: 7 -> 2, -7 -> 3, -1 -> 4 (modulo 5, as np.put)
    assert so.scatter_nd(d, idx, u, mode="wrap").tolist() == [0, 0, 3, 2, 4]
    # clip: 7 -> 4, -7 -> 0, -1 keeps its meaning (4)
    assert so.scatter_nd(d, idx, u, mode="clip").tolist() == [2, 0, 3, 0, 4]
    # drop: 7 and -7 are skipped
    assert so.scatter_nd(d, idx, u, mode="drop").tolist() == [0, 0, 3, 0, 4]
    with pytest.raises(IndexError, match="indices.0, 0. = 7"):
        so.scatter_nd(d, idx, u)
    # scatter_nd: drop skips the whole tuple when any component is outside
    got = so.scatter_nd(np.zeros((2, 3)), [[0, 1], [2, 0], [1, 5], [1, 2]], [1.0, 2.0, 3.0, 4.0],
                        mode="drop")
    assert got.tolist() == [[0, 1, 0], [0, 0, 4]]
    # each component wraps on its own axis
    got = so.scatter_nd(np.zeros((2, 3)), [[3, -4]], [9.0], mode="wrap")
    assert got.tolist() == [[0, 0, 0], [0, 0, 9]]
    # scatter_update drops whole slices; scatter_elements single elements, in order
    got = so.scatter_update(np.zeros((2, 3)), [5, 0, -9, 2], [[1, 2, 3, 4], [5, 6, 7, 8]],
                            axis=1, mode="drop")
    assert got.tolist() == [[2, 0, 4], [6, 0, 8]]
    got = so.scatter_elements(np.zeros((2, 3)), [[0, 9, 0], [2, 2, -4]],
                              [[1, 2, 3], [4, 5, 6]], axis=1, mode="drop", reduction="add")
    assert got.tolist() == [[4, 0, 0], [0, 0, 9]]
    # padded edge lists: a sentinel beyond the range needs no filtering first
    src = np.array([0, 1, 1, -1, -1])
    msgs = np.array([1.0, 2.0, 3.0, 100.0, 100.0])
    assert so.scatter_elements(np.zeros(2), np.where(src < 0, 2, src), msgs, reduction="add",
                               mode="drop").tolist() == [1, 5]


def test_wrap_takes_the_users_uint64_value():
    big = np.array([[2 ** 64 - 1], [2 ** 63 + 3]], np.uint64)
    got = so.scatter_nd(np.zeros(5), big, [1.0, 2.0], mode="wrap")
    want = np.zeros(5)
    want[(2 ** 64 - 1) % 5] = 1.0
    want[(2 ** 63 + 3) % 5] = 2.0
    assert got.tolist() == want.tolist()


def test_an_axis_of_size_zero_still_raises():
    for mode in ("wrap", "clip"):
        with pytest.raises(IndexError, match="size 0"):
            so.scatter_nd(np.zeros((0, 2)), [[3]], np.zeros((1, 2)), mode=mode)
    assert so.scatter_nd(np.zeros((0, 2)), [[3]], np.zeros((1, 2)), mode="drop").shape == (0, 2)


def test_mode_mean_counts_only_kept_updates():
    got = so.scatter_elements(np.zeros(3), [0, 0, 7, 1], [2.0, 4.0, 100.0, 6.0],
                              reduction="mean", include_self=False, mode="drop")
    assert got.tolist() == [3.0, 6.0, 0.0]


@pytest.mark.parametrize("mode, exc, text", [
    ("Wrap", ValueError, "mode must be one of"), ("", ValueError, "got ''"),
    (3, TypeError, "mode must be a str"), (None, TypeError, "got NoneType")])
@pytest.mark.parametrize("module", [so, reference])
def test_bad_mode(module, mode, exc, text):
    for call in (lambda: module.scatter_nd(np.zeros(3), [[0]], [1.0], mode=mode),
                 lambda: module.scatter_update(np.zeros(3), [0], [1.0], mode=mode),
                 lambda: module.scatter_elements(np.zeros(3), [0], [1.0], mode=mode)):
        with pytest.raises(exc, match=text):
            call()


def test_drop_in_place_leaves_out_written_only_where_kept():
    d = np.arange(6.0)
    r = so.scatter_update(d, [10, 1], [7.0, 8.0], out=d, mode="drop")
    assert r is d
    assert d.tolist() == [0, 8, 2, 3, 4, 5]


def _counting_index_errors():
    """The error hook wrapped to count the IndexErrors of an index out of range it builds."""
    from scatterops import _core, _generic, _messages
    built = []

    def error(code, func, fields):
        if code == "index_range":
            built.append(func)
        return _messages.error(code, func, fields)
    return built, lambda: _core.set_hooks(error, _generic.apply), \
        lambda: _core.set_hooks(_messages.error, _generic.apply)


def _mode_forms():
    """(name, call(module, mode)): a call with values outside in each way a call checks its
    indices: the direct loop's check first or while it runs (small and large, in place and not,
    indices of their own dtype), the general walk's check (2-D, scatter_nd, scatter_update, a
    mean, include_self=False), the long check without the GIL, the check fused with a
    threaded walk."""
    rng = np.random.default_rng(7)

    def idx(n, size, dtype=np.int64):
        i = rng.integers(-size, size, n)
        i[n // 3] = size + 2
        i[-1] = -size - 5
        return i.astype(dtype)

    def form(name, func, d, *args, inplace=False, **kw):
        def call(m, mode):
            o = d.copy() if inplace else None
            return getattr(m, func)(o if inplace else d, *args, mode=mode, out=o, **kw)
        return name, call

    forms = []
    for n in (4, 64, 1000, 100_000):
        i, u, d = idx(n, 50), rng.random(n), rng.random(50)
        forms += [form(f"elements-{n}", "scatter_elements", d, i, u, reduction="add"),
                  form(f"elements-inplace-{n}", "scatter_elements", d, i, u, reduction="add",
                       inplace=True),
                  form(f"elements-int16-max-{n}", "scatter_elements", d, i.astype(np.int16), u,
                       reduction="max"),
                  form(f"elements-mean-{n}", "scatter_elements", d, i, u, reduction="mean",
                       include_self=False)]
    i, u = idx(200_000, 300_000), rng.random(200_000)
    forms.append(form("elements-large", "scatter_elements", rng.random(300_000), i, u,
                      reduction="add"))
    i2 = np.stack([idx(500, 20), idx(500, 30)], axis=-1)
    d2 = rng.random((20, 30))
    forms += [form("nd", "scatter_nd", d2, i2, rng.random(500), reduction="add"),
              form("nd-inplace", "scatter_nd", d2, i2, rng.random(500), inplace=True),
              form("update-axis1", "scatter_update", d2, idx(7, 30),
                   np.arange(140.0).reshape(20, 7), 1),
              form("elements-2d", "scatter_elements", d2, idx(40, 30).reshape(2, 20),
                   np.arange(40.0).reshape(2, 20), 1, reduction="mul")]
    return forms


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("mode", ["wrap", "clip", "drop"])
def test_a_mode_takes_effect_in_the_check_without_an_index_error(mode, nthreads):
    # the check a call makes anyway is where the mode applies: no IndexError is built (and
    # caught) on the way, and the result is the reference's bit for bit
    built, count, restore = _counting_index_errors()
    for name, call in _mode_forms():
        want = call(reference, mode)
        count()
        try:
            with so.threads(nthreads):
                got = call(so, mode)
        finally:
            restore()
        assert_identical(got, want, objects="eq", nans="bits"), name
        assert built == [], (name, built)


def test_raise_builds_one_index_error_a_call():
    built, count, restore = _counting_index_errors()
    for name, call in _mode_forms():
        count()
        try:
            with pytest.raises(IndexError):
                call(so, "raise")
        finally:
            restore()
        assert len(built) == 1, (name, built)
        built.clear()



INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _boundary_values(dtype, s):
    """The values where the rule changes its answer on an axis of size s, and the dtype's ends,
    as far as dtype holds them."""
    info = np.iinfo(dtype)
    return sorted({v for v in (-s - 1, -s, -s + 1, -1, 0, 1, s - 1, s, s + 1, info.min, info.max)
                   if info.min <= v <= info.max})


def _inside(v, s, dtype):
    return (0 <= v < s) if np.iinfo(dtype).min == 0 else (-s <= v < s)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_every_check_applies_one_rule_at_its_boundaries(dtype):
    # the rule -s <= v < s (v < s unsigned) is written once in C; the checks that use it and
    # the fused loops that keep a vectorised form of it (the direct loops, the chunked check of a
    # long run, the checked walk) all give its answer at the values where it changes
    for s in (1, 7, 200):
        for v in _boundary_values(dtype, s):
            for n in (3, 20_000):
                i = np.zeros(n, dtype)
                i[n // 2] = v
                d = np.arange(float(s))
                u = np.ones(n)
                forms = {
                    "direct, one pass": lambda: so.scatter_elements(d, i, u, reduction="add"),
                    "direct, into out": lambda: so.scatter_elements(
                        d, i, u, reduction="add", out=d.copy()),
                    "general": lambda: so.scatter_nd(
                        np.zeros((s, 2)), i[:, None], np.ones((n, 2)), reduction="add"),
                    "mean": lambda: so.scatter_elements(d, i, u, reduction="mean"),
                }
                for name, call in forms.items():
                    for nthreads in (1, 2):
                        with so.threads(nthreads):
                            if _inside(v, s, dtype):
                                call()
                            else:
                                with pytest.raises(IndexError):
                                    call()
                kept = i if _inside(v, s, dtype) else np.delete(i, n // 2)
                want = d.copy()
                np.add.at(want, kept.astype(np.int64), u[:kept.size])
                got = so.scatter_elements(d, i, u, reduction="add", mode="drop")
                assert_identical(got, want, objects="eq", nans="bits"), (v, s)
                if n == 3 and dtype != np.uint64:
                    # at reads an index as NumPy does, cast to intp (a uint64 above intp's
                    # range counts from the end there)
                    a = np.zeros((2, s))
                    if _inside(v, s, dtype):
                        so.at(np.add, a, (np.array([0, 1, 0]), i), 1.0)
                    else:
                        with pytest.raises(IndexError):
                            so.at(np.add, a, (np.array([0, 1, 0]), i), 1.0)

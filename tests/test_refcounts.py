"""Object dtype keeps reference counts right: every function, every reduction that
is defined for object (none, add, sub, mul, max, min, mean), out of place / with
a separate out / in place, include_self True and False -- and on the error paths
(an index out of range halfway, a refused cast, an element's own __add__ or
comparison raising in the middle of the scatter).

How: every object in data, indices-free updates and out is a ``Num`` marker.
For each marker, the change of ``sys.getrefcount`` across a call must equal the
change in how many slots of the arrays we still hold (data, updates, out, the
result) refer to it -- no more (a leak), no less (a missing INCREF, which would
end in a use-after-free).  ``Num.live`` counts the markers and every Num the
reductions create: once the arrays are dropped it must be back where it was, so
no intermediate (a partial sum, a discarded output) leaks either.

test_leaks.py checks one marker over many ``none`` calls; this file covers the
reductions, the three forms and the error paths.
"""
from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import scatterops
from scatterops import reference

FUNCS = ("scatter_update", "scatter_nd", "scatter_elements")
REDUCTIONS = ("none", "add", "sub", "mul", "max", "min", "mean")
FORMS = ("new", "out", "inplace")


class Boom(Exception):
    """What a Num raises when its fuse burns down."""


class Num:
    """A number-like object whose every instance is counted (live) and whose
    arithmetic and comparisons can be made to raise on the n-th call (fuse)."""

    live = 0                       # all instances alive
    epoch = 0                      # run_case starts a new epoch ...
    live_in: dict = {}             # ... and counts what it made: epoch -> instances alive
    fuse = None                    # None: never raise; n: the n-th operation from now raises
    ops = 0                        # operations so far

    __slots__ = ("v", "e", "__weakref__")

    def __init__(self, v):
        self.v = v
        self.e = Num.epoch
        Num.live += 1
        Num.live_in[self.e] = Num.live_in.get(self.e, 0) + 1

    def __del__(self):
        Num.live -= 1
        Num.live_in[self.e] -= 1

    def __repr__(self):
        return f"Num({self.v})"

    @staticmethod
    def _tick():
        Num.ops += 1
        if Num.fuse is not None:
            Num.fuse -= 1
            if Num.fuse <= 0:
                Num.fuse = None
                raise Boom("an element's operation raised")

    @staticmethod
    def _val(x):
        return x.v if isinstance(x, Num) else x

    def _op(self, other, f):
        Num._tick()
        return Num(f(self.v, Num._val(other)))

    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)
    def __truediv__(self, o): return self._op(o, lambda a, b: a / b)

    def _cmp(self, other, f):
        Num._tick()
        return f(self.v, Num._val(other))

    def __lt__(self, o): return self._cmp(o, lambda a, b: a < b)
    def __le__(self, o): return self._cmp(o, lambda a, b: a <= b)
    def __gt__(self, o): return self._cmp(o, lambda a, b: a > b)
    def __ge__(self, o): return self._cmp(o, lambda a, b: a >= b)
    def __eq__(self, o): return self._cmp(o, lambda a, b: a == b)
    def __ne__(self, o): return self._cmp(o, lambda a, b: a != b)
    __hash__ = object.__hash__


@pytest.fixture(autouse=True)
def _no_fuse():
    Num.fuse = None
    yield
    Num.fuse = None


def nums(values):
    arr = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        arr[i] = Num(v)
    return arr


def call_parts(func, seed=0):
    """(data, indices, updates, axis) of object dtype, with duplicate targets (so
    reductions combine and "none" overwrites), data (4, 3)."""
    rng = np.random.default_rng(seed)
    data = nums(rng.integers(1, 9, 12).tolist()).reshape(4, 3)
    if func == "scatter_update":
        idx = np.array([2, 0, 2, -1])
        upd = nums(rng.integers(1, 9, 12).tolist()).reshape(4, 3)
        return data, idx, upd, 0
    if func == "scatter_nd":
        idx = np.array([[1, 2], [3, 0], [1, 2], [0, 0], [-3, -1]])
        upd = nums(rng.integers(1, 9, 5).tolist())
        return data, idx, upd, None
    idx = np.array([[0, 1, -1], [2, 1, 1]])
    upd = nums(rng.integers(1, 9, 6).tolist()).reshape(2, 3)
    return data, idx, upd, 1


def call(mod, func, data, idx, upd, axis, **kw):
    f = getattr(mod, func)
    if func == "scatter_nd":
        return f(data, idx, upd, **kw)
    return f(data, idx, upd, axis, **kw)


def slot_counts(arrays):
    """id(object) -> how many slots of these object arrays hold it (each array once)."""
    counts: dict = {}
    seen = set()
    for a in arrays:
        if a is None or id(a) in seen:
            continue
        seen.add(id(a))
        for x in a.reshape(-1).tolist() if a.flags.c_contiguous else a.ravel().tolist():
            counts[id(x)] = counts.get(id(x), 0) + 1
    return counts


class Ledger:
    """Reference counts of a set of markers, to compare across a call."""

    def __init__(self, markers, arrays):
        self.markers = list(markers)
        self.refs = []
        for i in range(len(self.markers)):
            m = self.markers[i]
            self.refs.append(sys.getrefcount(m))
        self.slots = slot_counts(arrays)

    def check(self, arrays, where):
        # no gc.collect() first (it costs ~20 ms here): reference cycles are not
        # expected; if the counts are off, collect once and look again
        if self._mismatches(arrays):
            gc.collect()
        bad = self._mismatches(arrays)
        assert not bad, f"{where}: " + "; ".join(bad[:5]) + (f" (+{len(bad) - 5})" if len(bad) > 5 else "")

    def _mismatches(self, arrays):
        slots = slot_counts(arrays)
        bad = []
        for i in range(len(self.markers)):       # (zip's reused tuple would hold a reference)
            m = self.markers[i]
            expected = self.refs[i] + slots.get(id(m), 0) - self.slots.get(id(m), 0)
            got = sys.getrefcount(m)
            if got != expected:
                bad.append(f"{m!r}: refcount {got}, expected {expected} (was {self.refs[i]})")
        return bad


def values(a):
    return [[Num._val(x) for x in row] for row in np.atleast_2d(a).tolist()]


def run_case(func, reduction, form, include_self, fuse=None, mutate=None, expect=None):
    """One call with full bookkeeping; returns the exception raised, if any."""
    Num.epoch += 1
    epoch = Num.epoch
    data, idx, upd, axis = call_parts(func)
    if mutate is not None:
        data, idx, upd, axis = mutate(data, idx, upd, axis)
    out = {"new": None, "out": nums(range(100, 112)).reshape(4, 3), "inplace": data}[form]
    markers = [x for a in (data, upd, out) if a is not None and a.dtype == object
               for x in a.reshape(-1).tolist()]
    # the expected result (values) from the reference, on fresh copies
    kw = {"reduction": reduction, "include_self": include_self}
    ref = None
    if fuse is None and expect is None:
        ref = values(call(reference, func, data.copy(), idx, upd.copy(), axis, **kw))
    before_out = None if out is None else out.copy()
    ledger = Ledger(markers, [data, upd, out])
    error = None
    result = None
    Num.fuse = fuse
    try:
        result = call(scatterops, func, data, idx, upd, axis, out=out, **kw)
    except Exception as exc:   # noqa: BLE001 -- compared below
        # keep the class and text only: the traceback's frames hold the call's arrays
        error = (type(exc), repr(exc))
    finally:
        Num.fuse = None
    if expect is not None:
        assert error is not None and issubclass(error[0], expect), \
            f"expected {expect.__name__}, got {error}"
    elif fuse is None:
        assert error is None, error
    if error is None:
        if out is not None:
            assert result is out
        if ref is not None:
            assert values(result) == ref
    elif out is not None:
        # docs/contract.md: an error leaves out (and data) exactly as they were -- the same objects
        assert all(a is b for a, b in zip(out.reshape(-1).tolist(), before_out.reshape(-1).tolist())), \
            f"out was written before the error {error[1]}: {out!r} (was {before_out!r})"
    error_repr = error[1] if error else "no error"
    ledger.check([data, upd, out, result], f"{func} {reduction} {form} include_self={include_self}"
                 + f" ({error_repr})")
    # drop everything: every Num made during the call must be gone as well
    del data, idx, upd, out, result, markers, ledger, before_out
    if Num.live_in.get(epoch, 0):
        gc.collect()
    leaked = Num.live_in.get(epoch, 0)
    assert leaked == 0, f"{leaked} Num objects made by this call leaked ({error_repr})"
    return error_repr


@pytest.mark.parametrize("include_self", [True, False], ids=["self", "noself"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("func", FUNCS)
def test_object_scatter_keeps_reference_counts(func, reduction, form, include_self):
    run_case(func, reduction, form, include_self)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("func", FUNCS)
def test_broadcast_scalar_object_update(func, form):
    """One object broadcast to every update slot: it gains exactly one reference per
    slot that ends up holding it."""
    marker = Num(42)
    before = sys.getrefcount(marker)
    run_case(func, "none", form, True,
             mutate=lambda data, idx, upd, axis: (data, idx, np.array(marker, dtype=object), axis))
    assert sys.getrefcount(marker) == before


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("func", FUNCS)
def test_index_error_halfway_keeps_reference_counts(func, reduction, form):
    def mutate(data, idx, upd, axis):
        idx = idx.copy()
        idx.reshape(-1)[idx.size // 2] = 57
        return data, idx, upd, axis
    msg = run_case(func, reduction, form, True, mutate=mutate, expect=IndexError)
    assert "57" in msg


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("func", FUNCS)
def test_refused_cast_keeps_reference_counts(func, form):
    """Object updates into a float array: refused under 'same_kind'; the update markers
    must not have gained (or lost) a reference."""
    data, idx, upd, axis = call_parts(func)
    fdata = np.arange(12.0).reshape(4, 3)
    out = {"new": None, "out": np.zeros((4, 3)), "inplace": fdata}[form]
    markers = upd.reshape(-1).tolist()
    ledger = Ledger(markers, [upd])
    with pytest.raises(TypeError, match="updates"):
        call(scatterops, func, fdata, idx, upd, axis, out=out)
    ledger.check([upd], f"{func} refused cast ({form})")
    assert np.array_equal(fdata, np.arange(12.0).reshape(4, 3))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("func", FUNCS)
def test_cast_from_object_to_object_of_ints(func, form):
    """Python ints in a list as updates become an object array: the cast keeps them alive
    exactly once per slot."""
    def mutate(data, idx, upd, axis):
        return data, idx, upd.tolist(), axis
    # tolist() gives the same Num objects in a list: the markers are then only in data /
    # out, and the list's objects must come out with the same counts
    data, idx, upd, axis = call_parts(func)
    lst = upd.tolist()
    objs = upd.reshape(-1).tolist()
    del upd
    out = {"new": None, "out": nums(range(12)).reshape(4, 3), "inplace": data}[form]
    ledger = Ledger(objs, [data, out])
    res = call(scatterops, func, data, idx, lst, axis, out=out, reduction="none")
    ledger.check([data, out, res], f"{func} list updates ({form})")


def count_ops(func, reduction, include_self):
    data, idx, upd, axis = call_parts(func)
    Num.ops = 0
    call(scatterops, func, data, idx, upd, axis, reduction=reduction, include_self=include_self)
    return Num.ops


@pytest.mark.parametrize("include_self", [True, False], ids=["self", "noself"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("reduction", [r for r in REDUCTIONS if r != "none"])
@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("when", ["first", "middle", "last"])
def test_element_operation_raising_midway(func, reduction, form, include_self, when):
    """An element's __add__ / __lt__ / ... raises at its first, a middle or its last
    call: the exception propagates, nothing leaks, and out / data are left as they were
    (docs/contract.md: an error leaves out and data exactly as they were)."""
    n = count_ops(func, reduction, include_self)
    assert n >= 1
    fuse = {"first": 1, "middle": (n + 1) // 2, "last": n}[when]
    msg = run_case(func, reduction, form, include_self, fuse=fuse, expect=Boom)
    assert "raised" in msg


def test_many_calls_keep_the_marker_counts_flat():
    """All the above many times over one set of markers: the counts end where they began."""
    data, idx, upd, axis = call_parts("scatter_elements")
    markers = data.reshape(-1).tolist() + upd.reshape(-1).tolist()
    ledger = Ledger(markers, [data, upd])
    Num.epoch += 1
    epoch = Num.epoch
    for _ in range(200):
        for red in REDUCTIONS:
            scatterops.scatter_elements(data, idx, upd, axis, reduction=red)
            scatterops.scatter_elements(data, idx, upd, axis, reduction=red, include_self=False)
        Num.fuse = 3
        with pytest.raises(Boom):
            scatterops.scatter_elements(data, idx, upd, axis, reduction="add", out=data.copy())
        Num.fuse = None
        with pytest.raises(IndexError):
            scatterops.scatter_elements(data, idx * 9, upd, axis, reduction="max")
    gc.collect()
    ledger.check([data, upd], "200 rounds")
    assert Num.live_in.get(epoch, 0) == 0

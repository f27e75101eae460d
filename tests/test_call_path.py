"""Every valid call with a C loop runs in C, whatever Python objects its arguments are.

The C core binds, normalises and checks every call itself; the only way out of C is the
NumPy fallback for the dtypes that have no C loop (``scatterops/_generic.py``), and the
core counts every call that takes it (``_core.generic_calls()``).  Each call form below
has a C loop, so the count must not move, and the result must be the reference's, bit
for bit.  A rule that drifts (a form the C side stops handling, a dtype or reduction
sent to NumPy) makes one of these fail.  The last tests show the counter does count.
"""
import numpy as np
import pytest

import scatterops as so
from scatterops import _core
import fast_reference as reference     # the reference's bits, whole-array (tests/fast_reference.py)

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError

TYPED = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
INDEX_DTYPES = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", ">i4", ">i8", "<u8"]
REDUCTIONS = ["none", "add", "sum", "sub", "mul", "prod", "multiply", "max", "amax", "min",
              "amin", "mean"]


def _defined(red, dtype):
    dtype = np.dtype(dtype)
    if red == "none":
        return True
    if dtype.kind == "b":
        return red in ("add", "sum", "mul", "prod", "multiply", "max", "amax", "min", "amin")
    return True


def _in_c(call):
    """Run call(); assert it stayed in C, and return its result."""
    before = _core.generic_calls()
    result = call()
    assert _core.generic_calls() == before, "this call went to the NumPy fallback"
    return result


def _same(a, b):
    assert type(a) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == object:
        assert a.tolist() == b.tolist()
    elif a.dtype.kind == "f" and a.dtype.itemsize > 8:
        # longdouble: its padding bytes are not part of the value
        assert np.array_equal(a, b, equal_nan=True)
        assert (np.signbit(a) == np.signbit(b)).all()
    else:
        assert a.tobytes() == b.tobytes()


def _both(name, *args, **kw):
    """The call through scatterops (which must stay in C) and through the reference."""
    got = _in_c(lambda: getattr(so, name)(*args, **kw))
    if "out" in kw and kw["out"] is not None:
        out = kw["out"]
        kw = dict(kw, out=None)
        assert got is out
    want = getattr(reference, name)(*args, **kw)
    _same(np.asarray(got), want)


def _values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "c":
        return (rng.integers(-5, 6, n) + 1j * rng.integers(-5, 6, n)).astype(dtype)
    return rng.integers(0 if dtype.kind == "u" else -5, 6, n).astype(dtype)


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("dtype", TYPED)
@pytest.mark.parametrize("include_self", [True, False])
def test_every_typed_dtype_and_reduction_stays_in_c(dtype, red, include_self):
    if not _defined(red, dtype) or (red == "mean" and np.dtype(dtype).kind == "b"):
        pytest.skip("not defined for this dtype (a TypeError, tested in test_errors.py)")
    data = _values(dtype, 12, 1)
    idx = np.array([3, 0, 3, -1, 5, 3])
    upd = _values(dtype, 6, 2)
    _both("scatter_elements", data, idx, upd, reduction=red, include_self=include_self)
    _both("scatter_update", data.reshape(3, 4), [2, -3, 2], upd[:3].repeat(4).reshape(3, 4),
          reduction=red, include_self=include_self)
    _both("scatter_nd", data.reshape(3, 4), [[2, 1], [0, 0], [2, 1]], upd[:3],
          reduction=red, include_self=include_self)


@pytest.mark.parametrize("idtype", INDEX_DTYPES)
def test_every_index_dtype_stays_in_c(idtype):
    data = np.arange(10.0)
    idx = np.array([1, 9, 1, 0], dtype=idtype)
    _both("scatter_elements", data, idx, [1.0, 2.0, 3.0, 4.0], reduction="add")
    _both("scatter_nd", data, idx[:, None], [1.0, 2.0, 3.0, 4.0])
    _both("scatter_update", data.reshape(5, 2), idx[idx < 5], 7.0, axis=0, reduction="max")


CALL_FORMS = {
    "arrays": lambda d, i, u: so.scatter_elements(d, i, u, reduction="add"),
    "python float updates": lambda d, i, u: so.scatter_elements(d, i, 1.5, reduction="add"),
    "python int updates": lambda d, i, u: so.scatter_elements(d, i, 2, reduction="add"),
    "python bool updates": lambda d, i, u: so.scatter_elements(d, i, True, reduction="add"),
    "python int into uint8 (weak scalar)": lambda d, i, u: so.scatter_elements(
        d.astype(np.uint8), i, 200, reduction="add"),
    "python float into float16 (weak scalar)": lambda d, i, u: so.scatter_elements(
        d.astype(np.float16), i, 0.1, reduction="add"),
    "numpy scalar updates": lambda d, i, u: so.scatter_elements(d, i, np.float32(1.5),
                                                                reduction="add"),
    "0-d array updates": lambda d, i, u: so.scatter_elements(d, i, np.array(1.5),
                                                             reduction="add"),
    "list updates": lambda d, i, u: so.scatter_elements(d, i, u.tolist(), reduction="add"),
    "tuple updates": lambda d, i, u: so.scatter_elements(d, i, tuple(u.tolist()),
                                                         reduction="add"),
    "list indices": lambda d, i, u: so.scatter_elements(d, i.tolist(), u, reduction="add"),
    "list data": lambda d, i, u: so.scatter_elements(d.tolist(), i, u, reduction="add"),
    "cast updates": lambda d, i, u: so.scatter_elements(d, i, u.astype(np.float32),
                                                        reduction="add"),
    "int updates cast": lambda d, i, u: so.scatter_elements(d, i, np.arange(i.size),
                                                            reduction="add"),
    "broadcast updates": lambda d, i, u: so.scatter_elements(d, i, u[:1], reduction="add"),
    "strided updates": lambda d, i, u: so.scatter_elements(d, i, np.repeat(u, 2)[::2],
                                                           reduction="add"),
    "byte-swapped updates": lambda d, i, u: so.scatter_elements(d, i, u.astype(">f8"),
                                                                reduction="add"),
    "strided indices": lambda d, i, u: so.scatter_elements(d, np.repeat(i, 2)[::2], u,
                                                           reduction="add"),
    "mean": lambda d, i, u: so.scatter_elements(d, i, u, reduction="mean"),
    "mean without self": lambda d, i, u: so.scatter_elements(d, i, u, reduction="mean",
                                                             include_self=False),
    "include_self numpy bool": lambda d, i, u: so.scatter_elements(
        d, i, u, reduction="max", include_self=np.bool_(False)),
    "out separate": lambda d, i, u: so.scatter_elements(d, i, u, reduction="add",
                                                        out=np.empty_like(d)),
    "out strided": lambda d, i, u: so.scatter_elements(d, i, u, reduction="add",
                                                       out=np.empty(d.size * 2)[::2]),
    "out in place": lambda d, i, u: so.scatter_elements(d.copy(), i, u, reduction="add"),
    "keyword arguments": lambda d, i, u: so.scatter_elements(data=d, indices=i, updates=u,
                                                             axis=0, reduction="add"),
    "numpy int axis": lambda d, i, u: so.scatter_elements(d, i, u, np.int64(0), reduction="add"),
    "0-d array axis": lambda d, i, u: so.scatter_elements(d, i, u, np.array(-1),
                                                          reduction="add"),
    "negative axis": lambda d, i, u: so.scatter_elements(d, i, u, -1, reduction="add"),
    "non-interned reduction": lambda d, i, u: so.scatter_elements(d, i, u,
                                                                  reduction="".join("add")),
    "reduction alias": lambda d, i, u: so.scatter_elements(d, i, u, reduction="sum"),
    "transposed data": lambda d, i, u: so.scatter_update(np.asfortranarray(
        np.tile(d, (3, 1))), i % 3, 1.0, axis=0, reduction="add"),
    "empty indices []": lambda d, i, u: so.scatter_elements(d, [], [], reduction="add"),
    "0-d indices": lambda d, i, u: so.scatter_update(d, 3, 5.0),
    "scatter_nd k=0": lambda d, i, u: so.scatter_nd(d, [], d[::-1], reduction="add"),
    "scatter_nd tuple of scalars": lambda d, i, u: so.scatter_nd(d, (3,), 9.0),
    "scatter_nd slices": lambda d, i, u: so.scatter_nd(d.reshape(2, 5), [[1], [0], [1]],
                                                       np.ones((3, 5)), reduction="mul"),
    "none on str": lambda d, i, u: so.scatter_elements(d.astype("U3"), i, "ab"),
    "none on bytes": lambda d, i, u: so.scatter_elements(d.astype("S3"), i, b"ab"),
    "none on structured": lambda d, i, u: so.scatter_elements(
        np.zeros(d.size, "i4,f8"), i, np.ones(1, "i4,f8")),
    "none on datetime": lambda d, i, u: so.scatter_elements(
        d.astype("M8[s]"), i, np.datetime64(5, "s")),
    "none on object": lambda d, i, u: so.scatter_elements(d.astype(object), i, "x"),
    "none on longdouble": lambda d, i, u: so.scatter_elements(d.astype(np.longdouble), i, u),
    "none on byte-swapped": lambda d, i, u: so.scatter_elements(d.astype(">f8"), i, u),
    "large, threads": lambda d, i, u: so.scatter_elements(np.zeros(300_000), np.arange(300_000),
                                                          1.0, reduction="mean"),
}


@pytest.mark.parametrize("form", sorted(CALL_FORMS))
def test_every_call_form_stays_in_c(form):
    d = np.arange(10.0)
    i = np.array([3, -1, 3, 0, 9])
    u = np.array([0.5, 1.5, 2.5, 3.5, 4.5])
    result = _in_c(lambda: CALL_FORMS[form](d, i, u))
    assert isinstance(result, np.ndarray)


@pytest.mark.parametrize("form", sorted(CALL_FORMS))
def test_every_call_form_matches_the_reference(form):
    d = np.arange(10.0)
    i = np.array([3, -1, 3, 0, 9])
    u = np.array([0.5, 1.5, 2.5, 3.5, 4.5])
    got = CALL_FORMS[form](d, i, u)
    # the reference, called the same way
    saved = {n: getattr(so, n) for n in ("scatter_update", "scatter_nd", "scatter_elements")}
    try:
        for n in saved:
            setattr(so, n, getattr(reference, n))
        want = CALL_FORMS[form](d, i, u)
    finally:
        for n, f in saved.items():
            setattr(so, n, f)
    _same(got, want)


def test_errors_are_raised_in_c():
    """A wrong call raises from the C checks, without a detour through Python code that
    could run a second copy of a rule."""
    d = np.zeros(4)
    before = _core.generic_calls()
    with pytest.raises(IndexError):
        so.scatter_elements(d, [4], 1.0)
    with pytest.raises(AxisError):
        so.scatter_elements(d, [1], 1.0, axis=1)
    with pytest.raises(TypeError):
        so.scatter_elements(d, [1], 1.0, reduction="sub", out=np.zeros(4, bool))
    assert _core.generic_calls() == before


@pytest.mark.parametrize("call", [
    lambda: so.scatter_elements(np.zeros(4, np.longdouble), [1, 1], 1.0, reduction="add"),
    lambda: so.scatter_elements(np.zeros(4, ">f8"), [1, 1], 1.0, reduction="max"),
    lambda: so.scatter_elements(np.zeros(4, object), [1, 1], 1.0, reduction="add"),
    lambda: so.scatter_elements(np.zeros(4, "m8[s]"), [1, 1], np.timedelta64(2, "s"),
                                reduction="mean"),
], ids=["longdouble add", "byte-swapped max", "object add", "timedelta mean"])
def test_the_counter_counts_the_calls_without_a_c_loop(call):
    """The dtypes without a C loop take the NumPy fallback, and it is counted: the tests
    above would see a call that left C."""
    before = _core.generic_calls()
    call()
    assert _core.generic_calls() == before + 1


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
@pytest.mark.parametrize("red", ["none", "add", "mean"])
def test_a_subclass_comes_back_as_a_plain_ndarray(layout, red):
    class Sub(np.ndarray):
        pass

    d = np.arange(24.0).reshape(4, 6)
    d = {"contiguous": d, "strided": d[:, ::2], "transposed": d.T}[layout].view(Sub)
    got = _in_c(lambda: so.scatter_update(d, [1, 0, 1], 2.0, reduction=red))
    assert type(got) is np.ndarray and got.flags.c_contiguous
    _same(got, reference.scatter_update(np.asarray(d), [1, 0, 1], 2.0, reduction=red))

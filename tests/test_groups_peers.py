"""The group reductions against the libraries people use for them: numpy_groupies (its NumPy
and numba backends), numbagg, pandas' groupby, torch (``scatter_reduce``, ``segment_reduce``),
JAX (``jax.ops.segment_*``) and ``torch_geometric.utils.softmax``.

Where the peer takes each group's members in the order they stand and does the same IEEE
operations, the test asserts the same bits, with no tolerance; each such pair is named in the
test's parameters.  Where the peer computes another way, the test names that way (float64
accumulation of float32 sums, compensated sums, one-pass variances) and allows a tolerance.
The tests that pin where a peer answers otherwise (empty groups, NaN, signed zeros, dtypes)
are the evidence of the differences table in docs/contract.md ("Group reductions").
Each peer skips cleanly without it: ``pip install -e '.[groups]'`` installs them all.
"""
from __future__ import annotations

import numpy as np
import pytest

from extras import need

import scatterops
from scatterops import group_reduce, group_softmax, segment_reduce

SIZE = 41

# numpy_groupies warns of the float32 products that overflow to inf (the same inf here)
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def _case(dtype, nan=False, n=3000, features=None, seed=0):
    """values with groups 0..SIZE-1 of which several are empty (ids 3, 10, 17, ... and the
    last two never occur), NaN members in some groups if nan."""
    rng = np.random.default_rng(seed)
    shape = (n,) if features is None else (n, features)
    values = (rng.standard_normal(shape) * 3).astype(dtype)
    groups = rng.integers(0, SIZE - 2, n)
    groups[groups % 7 == 3] = 0
    if nan:
        values[rng.integers(0, n, n // 50)] = np.nan
        values[groups == 5] = np.nan            # a group of NaNs only
    return values, groups


def _canonical(a: np.ndarray) -> np.ndarray:
    """Every NaN as one NaN: the contract leaves a NaN's sign and payload open."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
    return a


def assert_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    g, w = (np.ascontiguousarray(_canonical(x)).reshape(-1) for x in (got, want))
    bad = (g.view(np.uint8).reshape(g.size, -1) != w.view(np.uint8).reshape(w.size, -1)).any(1)
    if bad.any():
        first = np.unravel_index(int(np.argmax(bad)), got.shape)
        raise AssertionError(f"{bad.sum()} of {bad.size} elements differ, the first at {first}: "
                             f"{got[first]!r} against {want[first]!r}")


def assert_close(got, want, rtol):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=0, equal_nan=True)


# ---- numpy_groupies ------------------------------------------------------------------------

@pytest.fixture(params=["numpy", "numba"])
def npg(request):
    """numpy_groupies' aggregate of one backend."""
    need("numpy_groupies", extra="groups")
    if request.param == "numba":
        need("numba", extra="groups")
        from numpy_groupies import aggregate_numba as backend
    else:
        from numpy_groupies import aggregate_numpy as backend
    return request.param, backend.aggregate


#: (func, numpy_groupies' name) -- the same bits as numpy_groupies, both backends, for float64
#: values: they sum (np.bincount / a numba loop), multiply, compare, divide and take members in
#: member order, as the contract does
NPG_SAME_FLOAT64 = [("sum", "sum"), ("prod", "prod"), ("max", "max"), ("min", "min"),
                    ("mean", "mean"), ("argmax", "argmax"), ("argmin", "argmin"),
                    ("first", "first"), ("last", "last"), ("count", "len"),
                    ("nansum", "nansum"), ("nanprod", "nanprod"), ("nanmax", "nanmax"),
                    ("nanmin", "nanmin"), ("nanmean", "nanmean"), ("nanargmax", "nanargmax"),
                    ("nanargmin", "nanargmin"), ("nanfirst", "nanfirst"), ("nanlast", "nanlast"),
                    ("nancount", "nanlen")]


@pytest.mark.parametrize("func, name", NPG_SAME_FLOAT64)
def test_numpy_groupies_float64_same_bits(npg, func, name):
    values, groups = _case(np.float64, nan=func.startswith("nan") or func == "count")
    _, aggregate = npg
    assert_bits(group_reduce(values, groups, func, size=SIZE),
                aggregate(groups, values, name, size=SIZE))


@pytest.mark.parametrize("func", ["prod", "max", "min", "argmax", "argmin", "first", "last",
                                  "nanmax", "nanmin", "nanfirst", "nanlast", "nanargmax"])
def test_numpy_groupies_float32_same_bits(npg, func):
    values, groups = _case(np.float32, nan=func.startswith("nan"))
    _, aggregate = npg
    assert_bits(group_reduce(values, groups, func, size=SIZE),
                aggregate(groups, values, func, size=SIZE))


@pytest.mark.parametrize("func", ["sum", "mean", "nansum", "nanmean"])
def test_numpy_groupies_float32_sums_numpy_backend_accumulates_in_float64(npg, func):
    # the NumPy backend sums float32 values with np.bincount, in float64, and rounds once at
    # the end; the numba backend adds in float32, in member order, as the contract does
    backend, aggregate = npg
    values, groups = _case(np.float32, nan=func.startswith("nan"))
    got = group_reduce(values, groups, func, size=SIZE)
    if backend == "numba":
        assert_bits(got, aggregate(groups, values, func, size=SIZE))
    else:
        assert_close(got, aggregate(groups, values, func, size=SIZE), rtol=1e-4)


@pytest.mark.parametrize("func", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_groupies_variance(npg, func, dtype):
    # the NumPy backend is two passes as the contract (float64 accumulation for float32);
    # the numba backend is one pass (sum and sum of squares), which loses digits
    backend, aggregate = npg
    values, groups = _case(dtype, nan=func.startswith("nan"))
    for ddof in (0, 1):
        got = group_reduce(values, groups, func, size=SIZE, ddof=ddof)
        want = aggregate(groups, values, func, size=SIZE, ddof=ddof)
        if backend == "numpy" and dtype == np.float64:
            assert_bits(got, want)
        else:
            assert_close(got, want, rtol=1e-3 if dtype == np.float32 else 1e-9)


def test_numpy_groupies_differences(npg):
    backend, aggregate = npg
    nan = np.nan
    # argmax / argmin of a group holding NaN: -1 there, the first NaN's position here
    v, g = np.array([1.0, nan, 3.0]), np.zeros(3, np.intp)
    assert aggregate(g, v, "argmax").tolist() == [-1]
    assert group_reduce(v, g, "argmax").tolist() == [1]
    # result dtypes: numpy_groupies widens int8 sums to the next int, np.sum to intp
    i8 = np.array([100, 100], np.int8)
    assert aggregate(np.zeros(2, np.intp), i8, "sum").dtype == np.int16
    assert group_reduce(i8, [0, 0]).dtype == np.intp
    # negative ids: a ValueError there, an IndexError (or mode="drop") here
    with pytest.raises(ValueError):
        aggregate(np.array([0, -1]), np.array([1.0, 2.0]), "sum")
    with pytest.raises(IndexError):
        group_reduce(np.array([1.0, 2.0]), [0, -1])
    # a float16 sum: numpy_groupies accumulates wider; the contract rounds per member
    ones = np.ones(10_000, np.float16)
    assert aggregate(np.zeros(10_000, np.intp), ones, "sum").tolist() == [10_000.0]
    assert group_reduce(ones, np.zeros(10_000, np.intp)).tolist() == [2048.0]
    # signed zeros: np.maximum.at keeps the later (NumPy backend, the contract); the numba
    # backend keeps the earlier
    z = np.array([0.0, -0.0])
    assert np.signbit(group_reduce(z, [0, 0], "max")).tolist() == [True]
    assert np.signbit(aggregate(np.zeros(2, np.intp), z, "max")).tolist() == [backend == "numpy"]
    # var of a group with count <= ddof: the fill there, NaN here (the fill is for empty groups)
    v, g = np.array([1.0, 2.0, 3.0]), np.array([0, 1, 1])
    assert aggregate(g, v, "var", ddof=1, fill_value=0.0).tolist() == [0.0, 0.5]
    assert np.isnan(group_reduce(v, g, "var", ddof=1, fill_value=0.0)[0])


def test_numpy_groupies_complex_mean_of_an_empty_group(npg):
    # NaN in both parts there, nan+0j (np.array(nan).astype(complex)) here
    _, aggregate = npg
    c = np.array([1 + 1j, 2])
    theirs, ours = aggregate(np.array([0, 2]), c, "mean"), group_reduce(c, [0, 2], "mean")
    assert np.isnan(theirs[1].imag) and ours[1].imag == 0 and np.isnan(ours[1].real)


def test_aggregate_matches_numpy_groupies_on_its_own_spelling(npg):
    _, aggregate = npg
    values, groups = _case(np.float64)
    for name in ("plus", "len", "amax", "nanlen", "and", "times"):
        assert_bits(scatterops.aggregate(groups, values, name, size=SIZE),
                    aggregate(groups, values, name, size=SIZE))
    two = np.stack([groups % 5, groups // 5])
    for order in ("C", "F"):
        assert_bits(scatterops.aggregate(two, values, "sum", size=(5, 9), order=order),
                    aggregate(two, values, "sum", size=(5, 9), order=order))


# ---- numbagg -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("func", ["nansum", "nanmean", "nanmax", "nanmin", "nanfirst", "nanlast",
                                  "nanprod"])
def test_numbagg_same_bits(func, dtype):
    numbagg = need("numbagg", extra="groups")
    values, groups = _case(dtype, nan=True)
    assert_bits(group_reduce(values, groups, func, size=SIZE),
                getattr(numbagg, "group_" + func)(values, groups, num_labels=SIZE))


@pytest.mark.parametrize("func", ["nancount", "nanargmax", "nanargmin"])
def test_numbagg_counts_and_positions_are_the_same_numbers_in_a_float_dtype(func):
    numbagg = need("numbagg", extra="groups")
    values, groups = _case(np.float64, nan=True)
    ours = group_reduce(values, groups, func, size=SIZE)
    theirs = getattr(numbagg, "group_" + func)(values, groups, num_labels=SIZE)
    assert ours.dtype == np.intp and theirs.dtype == np.float64
    empty = ours == (-1 if func != "nancount" else -2)     # numbagg's NaN for an empty group
    assert np.isnan(theirs[empty]).all()
    assert_bits(ours[~empty].astype(np.float64), theirs[~empty])


@pytest.mark.parametrize("func", ["nanvar", "nanstd"])
def test_numbagg_variance_is_one_pass(func):
    numbagg = need("numbagg", extra="groups")
    values, groups = _case(np.float64, nan=True)
    for ddof in (0, 1):
        assert_close(group_reduce(values, groups, func, size=SIZE, ddof=ddof),
                     getattr(numbagg, "group_" + func)(values, groups, num_labels=SIZE, ddof=ddof),
                     rtol=1e-9)
    # one pass loses the variance of large values with a small spread; two passes keep it
    v = np.array([1e8 + 1, 1e8 + 2, 1e8 + 3])
    assert getattr(numbagg, "group_" + func)(v, np.zeros(3, np.intp), num_labels=1,
                                              ddof=0).tolist() == [0.0]
    assert group_reduce(v, [0, 0, 0], func).tolist()[0] > 0.5


def test_numbagg_differences():
    numbagg = need("numbagg", extra="groups")
    z = np.array([0.0, -0.0])
    assert np.signbit(numbagg.group_nanmax(z, np.zeros(2, np.intp), num_labels=1)).tolist() == [False]
    assert np.signbit(group_reduce(z, [0, 0], "nanmax")).tolist() == [True]
    assert not [name for name in dir(numbagg) if name.startswith("group_") and
                not name.startswith("group_nan")]


# ---- pandas --------------------------------------------------------------------------------

#: (func, pandas' groupby method) -- the same bits: pandas skips NaN, so the nan-variants
PANDAS_SAME = [("nanmax", "max"), ("nanmin", "min"), ("nanfirst", "first"), ("nanlast", "last"),
               ("nanprod", "prod"), ("nancount", "count"), ("nanargmax", "idxmax"),
               ("nanargmin", "idxmin")]


def _pandas(values, groups, method, **kw):
    pd = need("pandas", extra="groups")
    observed = np.unique(groups)
    result = getattr(pd.Series(values).groupby(groups), method)(**kw)
    return observed, result.to_numpy()


@pytest.mark.parametrize("func, method", PANDAS_SAME)
def test_pandas_same_bits(func, method):
    values, groups = _case(np.float64, nan=True)
    if func in ("nanargmax", "nanargmin"):
        groups[groups == 5] = 6        # pandas' idxmax refuses an all-NaN group
    observed, theirs = _pandas(values, groups, method)
    assert_bits(group_reduce(values, groups, func, size=SIZE)[observed], theirs)


@pytest.mark.parametrize("func, method, kw", [("nansum", "sum", {}), ("nanmean", "mean", {}),
                                              ("nanvar", "var", {"ddof": 1}),
                                              ("nanstd", "std", {"ddof": 1})])
def test_pandas_compensated_sums_and_online_variance(func, method, kw):
    # pandas' Cython group sums are compensated (Kahan) and its variance is Welford's online
    # update: other bits, close values
    values, groups = _case(np.float64, nan=True)
    observed, theirs = _pandas(values, groups, method, **kw)
    ours = group_reduce(values, groups, func, size=SIZE, **kw)[observed]
    if func == "nansum":           # pandas' sum of an all-NaN group is 0, ours its fill 0
        assert_close(ours, theirs, rtol=1e-12)
    else:
        assert_close(ours, theirs, rtol=1e-9)


def test_pandas_differences():
    pd = need("pandas", extra="groups")
    nan = np.nan
    # groups with no member are absent there, filled here
    assert pd.Series([1.0, 2.0]).groupby([0, 2]).sum().index.tolist() == [0, 2]
    assert group_reduce([1.0, 2.0], [0, 2]).tolist() == [1.0, 0.0, 2.0]
    # idxmax of an all-NaN group: a ValueError there, the fill here
    with pytest.raises(ValueError):
        pd.Series([nan, 1.0]).groupby([0, 1]).idxmax()
    assert group_reduce([nan, 1.0], [0, 1], "nanargmax").tolist() == [-1, 1]
    # the std of one element: NaN there (ddof=1), 0.0 here (ddof=0)
    assert np.isnan(pd.Series([5.0]).groupby([0]).std().iloc[0])
    assert group_reduce([5.0], [0], "std").tolist() == [0.0]
    # NaN: skipped by default there (our nan-variants), propagated by the plain names here
    assert pd.Series([nan, 1.0]).groupby([0, 0]).max().tolist() == [1.0]
    assert np.isnan(group_reduce([nan, 1.0], [0, 0], "max")[0])


# ---- torch ---------------------------------------------------------------------------------

#: (func, torch's reduce, the value torch leaves in an empty group) -- the same bits:
#: scatter_reduce(include_self=False) on CPU combines each group's members in order
TORCH_SAME = [("sum", "sum", 0.0), ("prod", "prod", 0.0), ("mean", "mean", 0.0),
              ("max", "amax", 0.0), ("min", "amin", 0.0)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("func, reduce, empty", TORCH_SAME)
def test_torch_scatter_reduce_same_bits(func, reduce, empty, dtype):
    torch = need("torch", extra="groups")
    values, groups = _case(dtype, nan=func in ("max", "min"))
    src, index = torch.from_numpy(values), torch.from_numpy(groups)
    theirs = torch.zeros(SIZE, dtype=src.dtype).scatter_reduce(0, index, src, reduce,
                                                              include_self=False)
    assert_bits(group_reduce(values, groups, func, size=SIZE, fill_value=empty), theirs.numpy())


def test_torch_message_passing_sum_of_rows_same_bits():
    torch = need("torch", extra="groups")
    values, groups = _case(np.float32, features=16)
    src, index = torch.from_numpy(values), torch.from_numpy(groups)
    theirs = torch.zeros(SIZE, 16).index_add_(0, index, src)
    assert_bits(group_reduce(values, groups, size=SIZE), theirs.numpy())
    theirs = torch.zeros(SIZE, 16).scatter_reduce(0, index[:, None].expand(-1, 16), src, "sum")
    assert_bits(group_reduce(values, groups, size=SIZE), theirs.numpy())


#: (func, torch.segment_reduce's reduce, the value it gives an empty segment)
SEGMENT_SAME = [("sum", "sum", 0.0), ("mean", "mean", np.nan), ("max", "max", -np.inf),
                ("min", "min", np.inf), ("prod", "prod", 1.0)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("func, reduce, empty", SEGMENT_SAME)
def test_torch_segment_reduce_same_bits(func, reduce, empty, dtype):
    torch = need("torch", extra="groups")
    values, groups = _case(dtype, nan=func in ("max", "min"))
    order = np.argsort(groups, kind="stable")
    values = values[order]
    lengths = np.bincount(groups, minlength=SIZE)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    theirs = torch.segment_reduce(torch.from_numpy(values), reduce,
                                  lengths=torch.from_numpy(lengths), unsafe=True)
    assert_bits(segment_reduce(values, indptr, func, fill_value=empty), theirs.numpy())


def test_torch_differences():
    torch = need("torch", extra="groups")
    # signed zeros: torch's max keeps +0 whatever the order, np.maximum.at the later
    z = torch.tensor([0.0, -0.0], dtype=torch.float64)
    theirs = torch.zeros(1, dtype=torch.float64).scatter_reduce(
        0, torch.zeros(2, dtype=torch.long), z, "amax", include_self=False)
    assert np.signbit(theirs.numpy()).tolist() == [False]
    assert np.signbit(group_reduce(z.numpy(), [0, 0], "max")).tolist() == [True]
    # a float16 sum: torch accumulates wider
    ones = torch.ones(10_000, dtype=torch.float16)
    theirs = torch.zeros(1, dtype=torch.float16).scatter_reduce(
        0, torch.zeros(10_000, dtype=torch.long), ones, "sum")
    assert theirs.tolist() == [10_000.0]


# ---- JAX -----------------------------------------------------------------------------------

#: (func, jax.ops function, the value it gives an empty segment of float32)
JAX_SAME = [("sum", "segment_sum", 0.0), ("max", "segment_max", -np.inf),
            ("min", "segment_min", np.inf), ("prod", "segment_prod", 1.0)]


@pytest.mark.parametrize("func, name, empty", JAX_SAME)
@pytest.mark.parametrize("indices_are_sorted", [False, True])
def test_jax_segment_same_bits(func, name, empty, indices_are_sorted):
    jax = need("jax", extra="groups")
    values, groups = _case(np.float32, nan=func in ("max", "min"))
    if indices_are_sorted:
        order = np.argsort(groups, kind="stable")
        values, groups = values[order], groups[order]
    theirs = getattr(jax.ops, name)(values, groups, num_segments=SIZE,
                                    indices_are_sorted=indices_are_sorted)
    assert_bits(group_reduce(values, groups, func, size=SIZE, fill_value=empty),
                np.asarray(theirs))


def test_jax_differences():
    jax = need("jax", extra="groups")
    z = np.array([0.0, -0.0], np.float32)
    assert np.signbit(np.asarray(jax.ops.segment_max(z, np.zeros(2, np.int32), 1))).tolist() == [False]
    assert np.signbit(group_reduce(z, [0, 0], "max")).tolist() == [True]
    empty = np.asarray(jax.ops.segment_max(np.ones(1, np.float32), np.zeros(1, np.int32), 2))
    assert empty.tolist() == [1.0, -np.inf]
    assert np.isnan(group_reduce(np.ones(1, np.float32), [0], "max", size=2)[1])


def test_jax_drops_ids_outside_the_segments_as_mode_drop():
    jax = need("jax", extra="groups")
    values, groups = _case(np.float32)
    groups[::11] = -1
    groups[5::13] = SIZE + 3
    theirs = jax.ops.segment_sum(values, groups, num_segments=SIZE)
    assert_bits(group_reduce(values, groups, size=SIZE, mode="drop"), np.asarray(theirs))


# ---- softmax -------------------------------------------------------------------------------

def _numpy_softmax(values, groups, size):
    """The softmax as NumPy spells it: np.maximum.at, np.exp, np.add.at, the division."""
    m = np.full(size, -np.inf, values.dtype)
    np.maximum.at(m, groups, values)
    e = np.exp(values - m[groups])
    s = np.zeros(size, values.dtype)
    np.add.at(s, groups, e)
    return e / s[groups]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax_is_numpys_composition_bit_for_bit(dtype):
    values, groups = _case(dtype)
    assert_bits(group_softmax(values, groups, size=SIZE), _numpy_softmax(values, groups, SIZE))


def test_logsumexp_is_numpys_composition_bit_for_bit():
    values, groups = _case(np.float64)
    m = np.full(SIZE, -np.inf)
    np.maximum.at(m, groups, values)
    s = np.zeros(SIZE)
    np.add.at(s, groups, np.exp(values - m[groups]))
    with np.errstate(divide="ignore"):
        want = m + np.log(s)
    assert_bits(group_reduce(values, groups, "logsumexp", size=SIZE), want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_torch_geometric_softmax(dtype):
    # PyG: the max by scatter amax, torch.exp, the sum by scatter add, then a division by
    # (sum + 1e-16); torch.exp and np.exp are different implementations, which may differ
    # in the last bit
    torch = need("torch", extra="groups")
    need("torch_geometric", extra="groups")
    from torch_geometric.utils import softmax
    values, groups = _case(dtype, features=4)
    theirs = softmax(torch.from_numpy(values), torch.from_numpy(groups), num_nodes=SIZE)
    assert_close(group_softmax(values, groups, size=SIZE), theirs.numpy(),
                 rtol=4 * np.finfo(dtype).eps)

"""_core.route, scatterops.dask's routing of one chunk of updates to the blocks of data, against
a routing written here in plain NumPy (a stable argsort by block, as scatterops.dask did before
the routing moved to C).

Hypothesis draws the index dtype (8 to 64 bits, signed and unsigned, strided), values inside and
outside their axis (negatives, the dtype's extremes), every mode=, axes of size 0, chunkings of
equal and unequal blocks, payloads of several dtypes and (pre, n, post) shapes (broadcast ones
too), and scatter_elements' flat offsets; the C routing must give the same counts, local indices,
payload bytes -- or the same first bad value in C order.  No Dask needed (tools/sanitize.sh runs
it).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from scatterops import _core

MODES = ("raise", "wrap", "clip", "drop")
INDEX_DTYPES = [np.dtype(t) for t in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")]
PAYLOAD_DTYPES = [np.dtype(t) for t in ("f4", "f8", "i1", "c16", "U3", "O")]


# ----------------------------------------------------------------------------- the reference

def reference_route(rows, sizes, starts, mode, payloads, elements=None):
    """(error, counts, local, grouped payloads) as _core.route returns them, in NumPy."""
    n, k = rows.shape
    vals = rows.astype(object)          # exact for every dtype, uint64 included
    keep = np.ones(n, bool)
    target = np.zeros(n, np.int64)
    local = np.zeros((n, k), np.int64)
    bad = np.zeros((n, k), bool)
    pos = np.zeros((n, k), np.int64)
    for j in range(k):
        s = sizes[j]
        v = vals[:, j]
        inside = (v >= -s) & (v < s)
        if mode == "raise" or (mode != "drop" and s == 0):
            bad[:, j] = ~inside
        elif mode == "drop":
            keep &= inside
        p = np.where(inside, v, 0)
        if mode == "wrap" and s:
            p = np.where(inside, p, v % s)
        elif mode == "clip":
            p = np.where(inside, p, np.where(v < 0, 0, s - 1))
        p = np.where(p < 0, p + s, p)
        pos[:, j] = p.astype(np.int64)
    if bad.any():
        first = int(np.argmax(bad.reshape(-1)))
        row, j = divmod(first, k)
        return (row, j, int(vals[row, j])), None, None, None
    for j in range(k):
        st_j = np.asarray(starts[j], np.int64)
        b = np.clip(np.searchsorted(st_j, pos[:, j], side="right") - 1, 0, len(st_j) - 2)
        local[:, j] = pos[:, j] - st_j[b]
        target = target * (len(st_j) - 1) + b
    ntargets = int(np.prod([len(s) - 1 for s in starts], dtype=np.int64))
    if elements is not None and n:
        pre_map, naxis, post_map, axis_len, block_post = elements
        p, _, q = np.unravel_index(np.arange(n), (len(pre_map), naxis, len(post_map)))
        flat = (pre_map[p] * np.asarray(axis_len)[target] + local[:, 0]) * block_post + \
            post_map[q]
        local = flat
    elif elements is not None:
        local = local[:, 0]
    order = np.argsort(np.where(keep, target, ntargets), kind="stable")[:int(keep.sum())]
    counts = np.bincount(target[keep], minlength=ntargets)
    grouped = tuple(np.take(y, order, axis=1) for y in payloads)
    return None, counts, local[order], grouped


# ----------------------------------------------------------------------------- drawing calls

@st.composite
def block_starts(draw, size):
    """The block starts of an axis of size: equal blocks (the last one shorter), uneven ones,
    blocks of one, or one block."""
    how = draw(st.sampled_from(("equal", "uneven", "ones", "whole")))
    if size == 0 or how == "whole":
        return np.array([0, size], np.intp)
    if how == "ones":
        return np.arange(size + 1, dtype=np.intp)
    if how == "equal":
        w = draw(st.integers(1, size))
        return np.array(sorted(set(range(0, size, w)) | {size}), np.intp)
    cuts = draw(st.lists(st.integers(0, size), max_size=4))      # empty blocks too
    return np.array([0] + sorted(cuts) + [size], np.intp)


def _values(draw, dtype, size, count):
    info = np.iinfo(dtype)
    inside = st.integers(max(-size, info.min), min(size - 1, info.max)) if size else st.nothing()
    edges = st.sampled_from(sorted({info.min, info.max, min(size, info.max),
                                    max(-size - 1, info.min)}))
    out = draw(st.lists(st.one_of(inside, edges) if size else edges,
                        min_size=count, max_size=count))
    return out


@st.composite
def route_calls(draw):
    elements = draw(st.integers(0, 3)) == 0
    k = 1 if elements else draw(st.integers(0, 3))
    n = draw(st.integers(0, 40))
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    sizes = tuple(draw(st.integers(0, 30)) for _ in range(k))
    starts = tuple(draw(block_starts(s)) for s in sizes)
    cols = [_values(draw, dtype, s, n) for s in sizes]
    rows = np.array(list(zip(*cols)) if k else [()] * n, dtype=dtype).reshape(n, k)
    if draw(st.booleans()):                 # a strided view: every other row of a larger array
        wide = np.zeros((2 * n, k + 1), dtype)
        wide[::2, 1:] = rows
        rows = wide[::2, 1:]
    payloads = []
    for _ in range(draw(st.integers(0, 2))):
        pd = draw(st.sampled_from(PAYLOAD_DTYPES))
        pre, post = (1, 1) if draw(st.booleans()) else (draw(st.integers(1, 3)),
                                                        draw(st.integers(0, 3)))
        y = np.arange(pre * n * post).reshape(pre, n, post)
        y = y.astype(str) if pd.kind == "U" else y.astype(object) if pd.kind == "O" \
            else y.astype(pd)
        if draw(st.booleans()) and n:        # a broadcast row: stride 0 along n
            y = np.broadcast_to(y[:, :1], (pre, n, post))
        payloads.append(y)
    el = None
    if elements:
        pre, post = draw(st.sampled_from([(d, n // d) for d in range(1, n + 1) if n % d == 0]
                                         or [(0, 0)]))
        naxis = 1
        if pre and post:                    # n = pre * naxis * post
            naxis = draw(st.sampled_from([d for d in range(1, post + 1) if post % d == 0]))
            post //= naxis
        block_post = post + draw(st.integers(0, 2))
        pre_map = np.arange(pre, dtype=np.intp) * draw(st.integers(1, 3))
        post_map = np.arange(post, dtype=np.intp)
        axis_len = np.diff(starts[0]).astype(np.intp)
        el = (pre_map, naxis, post_map, axis_len, block_post)
    return dict(rows=rows, sizes=sizes, starts=starts, mode=draw(st.sampled_from(MODES)),
                payloads=tuple(payloads), elements=el,
                local_dtype=draw(st.sampled_from((np.int32, np.intp))))


def _run(c, local_dtype=None):
    return _core.route(c["rows"], c["sizes"], c["starts"], MODES.index(c["mode"]),
                       local_dtype, c["payloads"], c["elements"])


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.hasobject:
        assert got.tolist() == want.tolist()
    else:
        assert got.tobytes() == want.tobytes()


# ----------------------------------------------------------------------------- the properties

@given(route_calls())
def test_route_groups_by_block_as_a_stable_sort_does_and_counting_only_agrees(c):
    error, counts, local, grouped = _run(c, c["local_dtype"])
    want_error, want_counts, want_local, want_grouped = reference_route(
        c["rows"], c["sizes"], c["starts"], c["mode"], c["payloads"], c["elements"])
    counted = _run(c)                       # counting only: the same counts, or error
    assert error == want_error == counted[0] and counted[2] is None and counted[3] is None
    if want_error is not None:
        assert counts is None and local is None and grouped is None and counted[1] is None
        return
    assert counts.tolist() == want_counts.tolist() == counted[1].tolist()
    _same(local, want_local.astype(c["local_dtype"]))
    assert len(grouped) == len(want_grouped)
    for g, w in zip(grouped, want_grouped):
        _same(g, w)


def test_large_equal_blocks_use_the_exact_division_at_every_boundary():
    # the common call: int64 indices, blocks of 1e6 (a multiplication by 2**64 / width);
    # values on and beside every block boundary, negatives counting from the end
    size, width = 10**7, 10**6
    edges = np.arange(0, size + 1, width)
    vals = np.concatenate([edges[:-1], edges[1:] - 1, edges[1:-1] + 1, -1 - edges[:-1]])
    rows = np.repeat(vals, 3).astype(np.int64).reshape(-1, 1)
    upd = np.arange(rows.shape[0], dtype=np.float32).reshape(1, -1, 1)
    got = _core.route(rows, (size,), (edges,), 0, np.int32, (upd,), None)
    want = reference_route(rows, (size,), (edges,), "raise", (upd,))
    assert got[0] is None
    assert got[1].tolist() == want[1].tolist()
    _same(got[2], want[2].astype(np.int32).reshape(-1, 1))
    _same(got[3][0], want[3][0])


def test_the_first_bad_value_in_c_order_is_reported_with_its_exact_value():
    rows = np.array([[1, 2], [3, 2**64 - 1], [9, 0]], np.uint64)
    starts = (np.array([0, 2, 4]), np.array([0, 3]))
    assert _run(dict(rows=rows, sizes=(4, 3), starts=starts, mode="raise", payloads=(),
                     elements=None))[0] == (1, 1, 2**64 - 1)
    # under "wrap" an axis of size 0 still raises (nothing to wrap to); the other one wraps
    rows = np.array([[7, 0]], np.int8)
    starts = (np.array([0, 4]), np.array([0, 0]))
    assert _run(dict(rows=rows, sizes=(4, 0), starts=starts, mode="wrap", payloads=(),
                     elements=None))[0] == (0, 1, 0)


def test_object_payloads_hold_their_own_references():
    import sys
    item = object()
    before = sys.getrefcount(item)
    y = np.array([item, None, item], dtype=object).reshape(1, 3, 1)
    out = _core.route(np.array([[2], [0], [1]]), (3,), (np.array([0, 1, 3]),), 0, np.intp,
                      (y,), None)
    assert out[3][0].reshape(-1).tolist() == [None, item, item]
    del y
    assert sys.getrefcount(item) == before + 2
    del out
    assert sys.getrefcount(item) == before


@pytest.mark.parametrize("bad", [
    dict(rows=np.zeros((2, 1))),                                   # not integers
    dict(rows=np.zeros((2, 1), ">i8")),                            # not native
    dict(starts=(np.array([0, 2]),)),                              # not ending at the size
    dict(starts=(np.array([0, 3, 1, 3]),)),                        # decreasing
    dict(mode=4),
    dict(local_dtype=np.int16),
    dict(payloads=(np.zeros((1, 3, 1)),)),                         # n rows: 2, not 3
])
def test_bad_arguments_are_a_clear_value_error(bad):
    args = dict(rows=np.zeros((2, 1), np.int64), sizes=(3,), starts=(np.array([0, 3]),),
                mode=0, local_dtype=np.int32, payloads=(), elements=None)
    args.update(bad)
    with pytest.raises((ValueError, TypeError), match="route"):
        _core.route(args["rows"], args["sizes"], args["starts"], args["mode"],
                    args["local_dtype"], args["payloads"], args["elements"])

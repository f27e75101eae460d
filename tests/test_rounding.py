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

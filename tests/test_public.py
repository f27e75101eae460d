"""The public functions are C functions (_core.make_public): the plain call runs in C,
every other argument list goes to the Python implementation.  Both must take the same
arguments, give the same results and raise the same errors."""
import inspect

import numpy as np
import pytest

import scatterops as so
from scatterops import reference


def test_signatures_and_docstrings():
    for f in (so.scatter_update, so.scatter_elements):
        assert str(inspect.signature(f)) == \
            "(data, indices, updates, axis=0, *, reduction='none', include_self=True, mode='raise', out=None)"
        assert f.__module__ == "scatterops._api"
    assert str(inspect.signature(so.scatter_nd)) == \
        "(data, indices, updates, *, reduction='none', include_self=True, mode='raise', out=None)"
    for f in (so.scatter_update, so.scatter_nd, so.scatter_elements):
        assert "Examples" in f.__doc__ and f.__text_signature__.startswith("(data, indices")
        assert repr(f) == f"<built-in function {f.__name__}>"


def _key(name):
    # a keyword name that is equal to, but not the same object as, the interned one
    return "".join(list(name))


@pytest.mark.parametrize("red", ["none", "add", "mean", _key("max")])
def test_every_way_of_passing_arguments_gives_the_same_result(red):
    d = np.arange(12.0).reshape(3, 4)
    i = np.array([2, 0, 2])
    u = np.arange(12.0).reshape(3, 4) + 100
    want = reference.scatter_update(d, i, u, axis=0, reduction=red)
    calls = [
        lambda: so.scatter_update(d, i, u, reduction=red),
        lambda: so.scatter_update(d, i, u, 0, reduction=red),
        lambda: so.scatter_update(d, i, u, axis=0, reduction=red),
        lambda: so.scatter_update(d, i, u, **{_key("axis"): 0, _key("reduction"): red}),
        lambda: so.scatter_update(d, i, u, np.int64(0), reduction=red, include_self=True),
        lambda: so.scatter_update(d, i, u, axis=-2, reduction=red, out=None),
        lambda: so.scatter_update(d.tolist(), i.tolist(), u, reduction=red),
    ]
    for call in calls:
        assert call().tobytes() == want.tobytes()
    out = d.copy()
    assert so.scatter_update(out, i, u, reduction=red, out=out) is out
    assert out.tobytes() == want.tobytes()


def test_bad_argument_lists_raise_as_python_would():
    d, i, u = np.zeros(4), np.array([1]), np.ones(1)
    with pytest.raises(TypeError, match=r"scatter_update\(\) got an unexpected keyword argument 'bogus'"):
        so.scatter_update(d, i, u, bogus=1)
    with pytest.raises(TypeError, match=r"scatter_nd\(\) takes 3 positional arguments but 4"):
        so.scatter_nd(d, i[:, None], u, 0)
    with pytest.raises(TypeError, match=r"scatter_nd\(\) got an unexpected keyword argument 'axis'"):
        so.scatter_nd(d, i[:, None], u, axis=0)
    with pytest.raises(TypeError, match="multiple values for argument 'axis'"):
        so.scatter_elements(d, i, u, 0, axis=0)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'updates'"):
        so.scatter_elements(d, i)
    with pytest.raises(TypeError, match="takes from 3 to 4 positional arguments but 5"):
        so.scatter_elements(d, i, u, 0, "add")
    with pytest.raises(IndexError, match=r"scatter_update: indices\[0\] = 9"):
        so.scatter_update(d, [9], u)
    with pytest.raises(ValueError, match="reduction must be one of"):
        so.scatter_update(d, i, u, reduction="avg")

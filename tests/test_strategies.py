"""scatterops.strategies, the public strategies: the documented example runs and can fail,
calls draw what they claim, every kind of bad call raises what it says, and the optional
modules (this one and scatterops.onnx) stay out of ``import scatterops``.  (That drawn
calls give the reference's results is tests/test_properties.py's job.)"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings, strategies as st

import scatterops
import scatterops.strategies as ST
from scatterops import reference

ROOT = Path(__file__).resolve().parent.parent
TESTING_MD = ROOT / "docs" / "testing.md"

# NumPy warns about overflow in the same_kind casts of drawn values (float64 -> float16, ...)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# --------------------------------------------------------------------------------------
# the documented example
# --------------------------------------------------------------------------------------

def docstring_example() -> str:
    text = ST.__doc__.split("in a few lines::\n", 1)[1].split("\n\n``calls", 1)[0]
    return textwrap.dedent(text).strip()


def example_in_testing_md() -> str:
    text = TESTING_MD.read_text()
    return text.split("## Example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0].strip()


@pytest.mark.skipif(not TESTING_MD.exists(), reason="docs/testing.md is not beside the tests (an sdist)")
def test_the_example_is_the_same_in_the_docstring_and_docs_testing_md():
    assert docstring_example() == example_in_testing_md()


def _example_test(source: str):
    namespace: dict = {}
    exec(compile(source, "<scatterops.strategies example>", "exec"), namespace)
    return namespace["test_my_scatter_elements"]


def test_documented_example_passes():
    settings(max_examples=max(20, settings.default.max_examples // 4))(_example_test(docstring_example()))()


def test_documented_example_fails_on_a_scatter_that_lets_the_first_duplicate_win():
    wrong = docstring_example().replace("for pos in np.ndindex(indices.shape):",
                                        "for pos in reversed(list(np.ndindex(indices.shape))):")
    assert wrong != docstring_example()
    test = settings(max_examples=500, database=None, phases=[Phase.generate])(_example_test(wrong))
    with pytest.raises(AssertionError):
        test()


# --------------------------------------------------------------------------------------
# calls
# --------------------------------------------------------------------------------------

#: find() without shrinking: the first draw that fits is enough
FIRST = settings(database=None, phases=[Phase.generate], max_examples=2000)  # find stops at the first


def first(strategy, condition=lambda x: True):
    return find(strategy, condition, settings=FIRST)


def test_func_may_be_a_name_a_function_or_a_list():
    assert first(ST.calls(scatterops.scatter_nd)).func == "scatter_nd"
    assert first(ST.calls(["scatter_update"])).func == "scatter_update"
    with pytest.raises(ValueError, match="func must name one of"):
        first(ST.calls("scatter_add"))
    with pytest.raises(ValueError, match="index_mode"):
        first(ST.calls(index_mode="sorted"))


#: for properties of the strategies themselves (tests/test_properties.py runs the calls at length)
FEW = settings(max_examples=max(10, settings.default.max_examples // 8))


@FEW
@given(call=ST.calls(out_modes=("inplace", "separate", "none"), reductions=["none", "add"]))
def test_args_kwargs_arguments_and_run(call):
    args, kwargs = call.arguments()
    assert len(args) == (3 if call.func == "scatter_nd" else 4)
    assert kwargs["reduction"] == call.reduction and kwargs["include_self"] == call.include_self
    assert ("out" in kwargs) == (call.out_mode != "none")
    if call.out_mode == "inplace":
        assert kwargs["out"] is args[0]
    assert call.args[0] is not call.args[0], "args are fresh arrays on every read"
    seen = []
    result = call.run(lambda *a, **kw: seen.append((a, kw)) or "ran")
    assert result == "ran" and len(seen) == 1
    ST.assert_identical(call.run(), getattr(scatterops, call.func)(*args, **kwargs),
                        call.object_compare, nans=call.nans)


@settings(max_examples=max(40, settings.default.max_examples // 4))
@given(call=ST.calls(dtypes=[np.dtype("f8")], reductions=["none"], index_mode="unique",
                     nonempty_indices=True, broadcast=False))
def test_unique_indices_never_hit_an_element_twice(call):
    args, kwargs = call.arguments()
    data, indices = args[0], args[1]
    counts = getattr(scatterops, call.func)(np.zeros(data.shape), indices, 1.0, *args[3:],
                                            reduction="add")
    assert counts.max(initial=0) <= 1


@FEW
@given(recipe=ST.dtypes().flatmap(lambda dtype: ST.recipes(dtype, (2, 3))))
def test_recipes_hold_their_values_in_their_layout(recipe):
    a = recipe.make()
    ST.assert_identical(np.array(a, order="C"), recipe.values, objects="is")
    kind = recipe.layout.kind
    if kind == "reversed":
        assert all(s < 0 for s in a.strides)
    elif kind == "F":
        assert a.flags.f_contiguous
    elif kind == "unaligned":
        assert a.ctypes.data % 2 == 1


@pytest.mark.parametrize("kind", ["C", "F", "transposed", "reversed", "strided", "unaligned"])
def test_every_layout_is_drawn(kind):
    found = first(ST.recipes(np.dtype("i4"), (2, 3)), lambda r: r.layout.kind == kind)
    assert found.make().shape == (2, 3)


# --------------------------------------------------------------------------------------
# bad_calls
# --------------------------------------------------------------------------------------

BAD = [(func, kind) for kind, funcs in ST.BAD_KINDS.items() for func in funcs]


@pytest.mark.parametrize("func,kind", BAD, ids=[f"{f}-{k}" for f, k in BAD])
@settings(max_examples=4)
@given(data=st.data())
def test_every_kind_of_bad_call_raises_what_it_says(func, kind, data):
    bad = data.draw(ST.bad_calls(func, kinds=[kind], out_modes=ST.OUT_MODES))
    call, exc = bad
    assert call.func == func and exc is bad.raises
    for module in (scatterops, reference):
        with pytest.raises(exc) as info:
            call.run(module)
        for word in bad.words:
            assert word in str(info.value), (word, str(info.value))
        if exc is not ST.AxisError:
            assert not isinstance(info.value, ST.AxisError)


# --------------------------------------------------------------------------------------
# the optional modules without what they need
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("module,needs,words", [
    ("scatterops.strategies", "hypothesis", ["pip install hypothesis", "pip install -e '.[test]'"]),
    ("scatterops.onnx", "onnx", ["pip install onnx"]),
    ("scatterops.dask", "dask", ["pip install dask distributed", "pip install -e '.[dask]'"]),
])
def test_without_what_it_needs_the_import_error_says_what_to_install(module, needs, words):
    code = textwrap.dedent(f"""
        import sys
        sys.modules[{needs!r}] = None          # as if it were not installed
        import scatterops
        assert {module!r} not in sys.modules, "import scatterops imported it"
        try:
            import {module}
        except ImportError as e:
            print(e)
        else:
            raise SystemExit("imported")
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    for word in words:
        assert word in res.stdout, res.stdout


# ---- the oracle stays independent of the C core ----------------------------------------

_BLOCKED_CORE = r'''
import importlib.util, os, sys, types
import numpy as np

pkg_dir = sys.argv[1]


class Blocked(types.ModuleType):
    """scatterops._core: every name read from it fails the test."""
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AssertionError(f"the oracle read _core.{name}")


# the package without its __init__ (which loads the C core for the public functions)
pkg = types.ModuleType("scatterops")
pkg.__path__ = [pkg_dir]
sys.modules["scatterops"] = pkg
sys.modules["scatterops._core"] = Blocked("scatterops._core")
from scatterops import reference as R

d = np.arange(12.0).reshape(3, 4)
for red in ("none", "add", "sum", "sub", "mul", "prod", "max", "amin", "mean"):
    R.scatter_update(d, [2, -1, 2], np.ones((3, 4)), 0, reduction=red, include_self=False)
    R.scatter_nd(d, [[0, 1], [0, 1]], [5.0, 6.0], reduction=red)
    R.scatter_elements(d, [[3, 0, 3]], [[1.0, 2.0, 3.0]], 1, reduction=red)
for mode in ("raise", "wrap", "clip", "drop"):
    R.scatter_elements(d, [[9, -9]], [[1.0, 2.0]], 1, mode=mode) if mode != "raise" else None
for bad in (dict(reduction="nope"), dict(mode="nope"), dict(axis=5), dict(updates=np.ones(7))):
    kw = dict(dict(axis=0, updates=1.0), **bad)
    try:
        R.scatter_update(d, [0], kw.pop("updates"), kw.pop("axis"), **kw)
    except (ValueError, TypeError, IndexError):
        pass
    else:
        raise AssertionError(f"{bad}: no error")
from scatterops._reference_groups import FUNCS
v = np.array([[1.0, np.nan], [3.0, -0.0], [-np.inf, 2.0]])
for func in FUNCS:
    R.group_reduce(v, [1, -1, 1], func, mode="drop")
    R.segment_reduce(v, [0, 1, 3], func)
R.group_softmax(v, [0, 1, 0], log=True)
R.segment_softmax(v, [0, 2, 3])
for bad in (dict(func="median"), dict(mode="wrap"), dict(groups=[0, 9, 0])):
    kw = dict(dict(func="sum", groups=[0, 1, 0], size=2), **bad)
    try:
        R.group_reduce(v, kw.pop("groups"), kw.pop("func"), **kw)
    except (ValueError, IndexError):
        pass
    else:
        raise AssertionError(f"{bad}: no error")
print("independent")
'''


def test_the_reference_reads_no_table_or_rule_from_the_core():
    """scatterops.reference and the checks it uses run, errors included, the group reductions
    too, with every name of scatterops._core refused: the oracle's reading of the contract is
    its own."""
    import os
    import subprocess
    import sys
    pkg_dir = os.path.dirname(scatterops.__file__)
    res = subprocess.run([sys.executable, "-c", _BLOCKED_CORE, pkg_dir], capture_output=True,
                         text=True)
    assert res.returncode == 0 and res.stdout.strip() == "independent", res.stderr

"""scatterops.onnx: ONNX's Scatter, ScatterElements and ScatterND for onnx.reference.ReferenceEvaluator.

* ONNX's own node test cases of the three operators run through the evaluator with
  ``new_ops=scatterops.onnx.ops`` and give the expected outputs bit for bit.
* The scatterops ops are the ones that run (calls counted, and a result only they give).
* (Without onnx, ``import scatterops.onnx`` says what to install: tests/test_strategies.py.)
* On drawn calls (``scatterops.strategies.calls``), the evaluator with these ops gives what it
  gives with ONNX's own implementations, outside the differences docs/onnx.md lists; each of
  those differences has a small test of its own below, so the page stays true.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings

from extras import need

need("onnx")

from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import scatterops  # noqa: E402
import scatterops.onnx  # noqa: E402
import scatterops.strategies as ST  # noqa: E402
from strategies import assert_identical  # noqa: E402

# NumPy's warnings about overflow in the arithmetic of drawn values (ONNX's reference computes
# on NumPy scalars)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

OPS = ("Scatter", "ScatterElements", "ScatterND")


# --------------------------------------------------------------------------------------
# ONNX's node test cases
# --------------------------------------------------------------------------------------

def load_case_dir(path: Path):
    """(name, model, [(inputs, outputs)]) from a node test directory: model.onnx and
    test_data_set_*/input_*.pb, output_*.pb (as onnx/backend/test/data/node/ holds them)."""
    import onnx
    model = onnx.load(str(path / "model.onnx"))
    data_sets = []
    for ds in sorted(path.glob("test_data_set_*")):
        def tensors(prefix):
            files = sorted(ds.glob(f"{prefix}_*.pb"), key=lambda f: int(f.stem.split("_")[-1]))
            return [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in files]
        data_sets.append((tensors("input"), tensors("output")))
    return path.name, model, data_sets


def onnx_node_cases():
    """ONNX's node test cases of the three operators: the directories of the installed onnx
    package when it ships them, else the cases its export functions build (the wheels ship no
    onnx/backend/test/data/node/)."""
    import onnx
    data = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    dirs = sorted(data.glob("test_scatter*")) if data.is_dir() else []
    if dirs:
        return [load_case_dir(d) for d in dirs]
    node = importlib.import_module("onnx.backend.test.case.node")
    for name in ("scatter", "scatterelements", "scatternd"):
        importlib.import_module(f"onnx.backend.test.case.node.{name}")
    found = [c for c in node._NodeTestCases if c.model.graph.node[0].op_type in OPS]
    return sorted(((c.name, c.model, c.data_sets) for c in found), key=lambda c: c[0])


NODE_CASES = onnx_node_cases()


def run_model(model, inputs, new_ops=scatterops.onnx.ops):
    session = ReferenceEvaluator(model, new_ops=new_ops)
    return session.run(None, {i.name: v for i, v in zip(model.graph.input, inputs)})


@pytest.mark.parametrize("name,model,data_sets", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_onnx_node_case(name, model, data_sets):
    assert data_sets
    for inputs, outputs in data_sets:
        results = run_model(model, inputs)
        assert len(results) == len(outputs) == 1
        assert_identical(results[0], np.asarray(outputs[0]), where=name)


def test_node_cases_cover_the_three_ops_and_every_reduction():
    ops = {model.graph.node[0].op_type for _, model, _ in NODE_CASES}
    assert ops == set(OPS)
    reductions = {helper.get_attribute_value(a).decode()
                  for _, model, _ in NODE_CASES for a in model.graph.node[0].attribute
                  if a.name == "reduction"}
    assert reductions >= {"add", "mul", "max", "min"}


def test_node_case_directories_load(tmp_path):
    """The loader of onnx/backend/test/data/node/ directories, on one written out here."""
    import onnx
    name, model, data_sets = next(c for c in NODE_CASES if c[1].graph.node[0].op_type == "ScatterND")
    case = tmp_path / name
    (case / "test_data_set_0").mkdir(parents=True)
    onnx.save(model, str(case / "model.onnx"))
    inputs, outputs = data_sets[0]
    for prefix, arrays in (("input", inputs), ("output", outputs)):
        for i, a in enumerate(arrays):
            tensor = numpy_helper.from_array(np.asarray(a))
            (case / "test_data_set_0" / f"{prefix}_{i}.pb").write_bytes(tensor.SerializeToString())
    loaded_name, loaded_model, loaded_sets = load_case_dir(case)
    assert loaded_name == name and loaded_model.graph.node[0].op_type == "ScatterND"
    (li, lo), = loaded_sets
    assert len(li) == 3 and len(lo) == 1
    for got, want in zip(li + lo, list(inputs) + list(outputs)):
        assert_identical(got, np.asarray(want))
    assert_identical(run_model(loaded_model, li)[0], np.asarray(outputs[0]))


# --------------------------------------------------------------------------------------
# these ops, not ONNX's, run
# --------------------------------------------------------------------------------------

def node_model(op, opset=18, **attrs):
    return helper.make_node(op, ["data", "indices", "updates"], ["out"], **attrs), {"": opset}


def evaluate(op, data, indices, updates, new_ops=scatterops.onnx.ops, opset=18, **attrs):
    node, opsets = node_model(op, opset, **attrs)
    feeds = {"data": data, "indices": np.asarray(indices, np.int64), "updates": updates}
    return ReferenceEvaluator(node, opsets=opsets, new_ops=new_ops).run(None, feeds)[0]


def test_ops_list_names_the_three_operators():
    assert [op.__name__ for op in scatterops.onnx.ops] == ["Scatter", "ScatterElements", "ScatterND"]
    assert all(op.op_domain == "" for op in scatterops.onnx.ops)


@pytest.mark.parametrize("op,func,attrs", [
    ("ScatterND", "scatter_nd", {"reduction": "add"}),
    ("ScatterElements", "scatter_elements", {"axis": -1, "reduction": "max"}),
    ("Scatter", "scatter_elements", {"axis": 0}),
])
def test_the_scatterops_function_runs(monkeypatch, op, func, attrs):
    seen = []
    original = getattr(scatterops._api, func)

    def counting(*args, **kwargs):
        seen.append((args, kwargs))
        return original(*args, **kwargs)
    monkeypatch.setattr(scatterops._api, func, counting)
    data = np.arange(6, dtype=np.float32)
    indices = [[4], [1], [4]] if op == "ScatterND" else [4, 1, 4]
    updates = np.array([10, 20, 30], np.float32)
    result = evaluate(op, data, indices, updates, opset=10 if op == "Scatter" else 18, **attrs)
    assert len(seen) == 1, f"{op} did not run scatterops.{func}"
    args, kwargs = seen[0]
    assert kwargs.get("reduction", "none") == attrs.get("reduction", "none")
    if op != "ScatterND":
        assert args[3] == attrs["axis"]
    expected = {"ScatterND": [0, 21, 2, 3, 44, 5], "ScatterElements": [0, 20, 2, 3, 30, 5],
                "Scatter": [0, 20, 2, 3, 30, 5]}[op]
    assert_identical(result, np.array(expected, np.float32))


def test_a_result_only_scatterops_gives():
    # max with a NaN update: NumPy's maximum (scatterops) propagates it; ONNX's ScatterElements
    # takes Python's max(), which keeps data's value
    data, upd = np.array([1.0, 2.0], np.float32), np.array([np.nan, np.nan], np.float32)
    ours = evaluate("ScatterElements", data, [0, 1], upd, reduction="max")
    assert np.isnan(ours).all()
    assert_identical(evaluate("ScatterElements", data, [0, 1], upd, new_ops=None, reduction="max"), data)


def test_attributes_default_to_axis_0_and_no_reduction():
    data = np.zeros((2, 2), np.float64)
    ours = evaluate("ScatterElements", data, [[1, 0]], np.array([[5.0, 6.0]]))
    assert_identical(ours, np.array([[0.0, 6.0], [5.0, 0.0]]))
    assert_identical(evaluate("ScatterND", data, [[1]], np.array([[7.0, 8.0]])),
                     np.array([[0.0, 0.0], [7.0, 8.0]]))


def test_a_reduction_onnx_does_not_define_is_a_value_error():
    # ONNX's own ScatterND treats an unknown reduction as none
    data = np.zeros(3)
    with pytest.raises(ValueError, match=r"ScatterND: the reduction attribute must be one of .*'mean'"):
        evaluate("ScatterND", data, [[0]], np.ones(1), reduction="mean")
    assert_identical(evaluate("ScatterND", data, [[0]], np.ones(1), new_ops=None, reduction="mean"),
                     np.array([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="ScatterElements: the reduction attribute"):
        evaluate("ScatterElements", data, [0], np.ones(1), reduction="sum")


def test_onnx_has_no_scatter_of_its_own():
    # opset 9/10 Scatter: only scatterops.onnx.ops runs it
    node, opsets = node_model("Scatter", 10)
    with pytest.raises(Exception, match="Scatter"):
        ReferenceEvaluator(node, opsets=opsets).run(
            None, {"data": np.zeros(2), "indices": np.zeros(1, np.int64), "updates": np.ones(1)})
    assert_identical(evaluate("Scatter", np.zeros(2), [1], np.ones(1), opset=10), np.array([0.0, 1.0]))


# --------------------------------------------------------------------------------------
# against ONNX's own implementations on drawn calls
# --------------------------------------------------------------------------------------

ONNX_OP = {"scatter_elements": "ScatterElements", "scatter_nd": "ScatterND"}
ONNX_DTYPES = [np.dtype(c) for c in ("?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8",
                                     "f2", "f4", "f8", "c8", "c16")]


def _known_difference(call) -> str:
    """Why ONNX's own implementation may give another result for this call (docs/onnx.md), or ""."""
    values = np.concatenate([call.data.values.reshape(-1), call.updates.values.reshape(-1)])
    if call.func == "scatter_elements" and call.canonical in ("max", "min") and values.dtype.kind in "fc":
        parts = np.concatenate([values.real, values.imag]) if values.dtype.kind == "c" else values
        if np.isnan(parts).any() or (parts == 0).any():
            return "ScatterElements max / min with a NaN or a zero: Python's max() / min()"
    if call.func == "scatter_nd" and call.canonical == "mul" and values.dtype.kind == "c":
        return "ScatterND complex mul: NumPy's array loop"
    return ""


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(call=ST.calls(tuple(ONNX_OP), ONNX_DTYPES, ("none", "add", "mul", "max", "min"), 3,
                     include_self=True, broadcast=False, updates_casts=False))
def test_same_result_as_onnx_own_implementation(call):
    """Every index dtype, layout and byte order goes in as ONNX holds it: int64 indices and
    C-contiguous arrays of the native byte order (what the evaluator gets from a model)."""
    note(repr(call))
    why = _known_difference(call)
    note(f"known difference: {why or 'none'}")
    attrs = {} if call.reduction == "none" else {"reduction": call.reduction}
    if call.func == "scatter_elements":
        attrs["axis"] = call.axis_value
    native = [np.array(r.values, order="C").astype(r.dtype.newbyteorder("="))
              for r in (call.data, call.updates)]
    args = (ONNX_OP[call.func], native[0], call.indices.values.astype(np.int64), native[1])
    ours = evaluate(*args, **attrs)
    assert_identical(ours, call.run(), nans=call.nans)
    if not why:
        assert_identical(ours, evaluate(*args, new_ops=None, **attrs), nans=call.nans)


def test_scatter_elements_max_min_nan_and_signed_zero_differ():
    data, upd = np.array([1.0, np.nan], np.float32), np.array([np.nan, 1.0], np.float32)
    for red in ("max", "min"):
        assert np.isnan(evaluate("ScatterElements", data, [0, 1], upd, reduction=red)).all()
        theirs = evaluate("ScatterElements", data, [0, 1], upd, new_ops=None, reduction=red)
        assert_identical(theirs, np.array([1.0, np.nan], np.float32))     # a NaN in data only
    data, upd = np.array([-0.0, 0.0], np.float32), np.array([0.0, -0.0], np.float32)
    for red, ufunc in (("max", np.maximum), ("min", np.minimum)):
        assert_identical(evaluate("ScatterElements", data, [0, 1], upd, reduction=red), ufunc(data, upd))
        assert_identical(evaluate("ScatterElements", data, [0, 1], upd, new_ops=None, reduction=red), data)
    cdata, cupd = np.array([1 + 1j], np.complex128), np.array([complex(0, np.nan)])
    assert np.isnan(evaluate("ScatterElements", cdata, [0], cupd, reduction="max")).all()
    assert_identical(evaluate("ScatterElements", cdata, [0], cupd, new_ops=None, reduction="max"), cdata)


def test_scatter_elements_shape_errors_differ():
    data = np.zeros((2, 2))
    # updates larger than indices: ONNX's implementation reads the part indices cover
    with pytest.raises(ValueError, match="updates"):
        evaluate("ScatterElements", data, [[1]], np.ones((2, 2)))
    assert_identical(evaluate("ScatterElements", data, [[1]], np.ones((2, 2)), new_ops=None),
                     np.array([[0.0, 0.0], [1.0, 0.0]]))
    # indices longer than data off the axis: an IndexError from NumPy there
    with pytest.raises(ValueError, match=r"indices.shape\[1\] = 3 exceeds data.shape\[1\] = 2"):
        evaluate("ScatterElements", data, np.zeros((1, 3)), np.ones((1, 3)), axis=0)
    with pytest.raises(IndexError):
        evaluate("ScatterElements", data, np.zeros((1, 3)), np.ones((1, 3)), new_ops=None, axis=0)


def test_out_of_range_index_is_an_index_error_naming_the_position():
    message = r"indices\[1, 0\] = 3 is out of bounds for axis 0 of data with size 3"
    with pytest.raises(IndexError, match=message):
        evaluate("ScatterND", np.zeros(3), [[0], [3]], np.ones(2))
    with pytest.raises(IndexError):
        evaluate("ScatterND", np.zeros(3), [[0], [3]], np.ones(2), new_ops=None)

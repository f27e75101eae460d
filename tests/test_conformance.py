"""Conformance: scatterops against the specifications' own test cases and against the peers.

* ONNX's node test cases for Scatter, ScatterElements and ScatterND, as shipped in the
  installed ``onnx`` package (``onnx.backend.test.case.node``), run through scatterops and
  compared bit for bit with the expected outputs.
* hypothesis differential tests against ``onnx.reference.ReferenceEvaluator``, ONNX Runtime
  (CPU, one intra-op thread), OpenVINO (``openvino.opset15``, CPU) and PyTorch (CPU), over
  the dtypes and reductions each peer defines.  Every peer gets C-contiguous copies with
  int64 indices; scatterops gets the drawn arrays as they are (any index dtype, any
  layout).  The peer's result must equal scatterops' bit for bit (any NaN for NaN where a
  reduction computes, as in test_properties).

Where a peer is known to differ, the differential test keeps those inputs out and says why
(``KNOWN:`` comments), and a test of its own in the last section shows the difference on a
small example: ``xfail(strict=True)`` where the peer gives another result (it starts
failing -- XPASS -- the day the peer changes), a plain assertion where the peer refuses an
input scatterops accepts.

A peer that is not installed skips its tests, naming the extra that installs it
(``pip install -e '.[peers]'``, tests/extras.py).
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, note, settings, strategies as st

import scatterops

import strategies as S
from extras import need
from strategies import assert_identical

# NumPy's warnings about overflow and invalid values in the drawn values' arithmetic;
# torch's "index_reduce() is in beta"
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:index_reduce:UserWarning")]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench_peers():
    """benchmarks/peers.py: the one-node ONNX Runtime model and the one-op OpenVINO model."""
    try:
        return importlib.import_module("benchmarks.peers")
    except ImportError:
        if _ROOT not in sys.path:
            sys.path.append(_ROOT)
        return importlib.import_module("benchmarks.peers")


# --------------------------------------------------------------------------------------
# the peers: one module-scoped fixture each, skipping when the package is not installed
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def onnx_reference():
    need("onnx")
    return importlib.import_module("onnx.reference")


@pytest.fixture(scope="module")
def ort():
    need("onnx")
    return need("onnxruntime")


@pytest.fixture(scope="module")
def ov():
    need("openvino")
    return importlib.import_module("openvino.opset15")


@pytest.fixture(scope="module")
def torch():
    return need("torch")


ONNX_REDUCTION = {"none": "none", "add": "add", "mul": "mul", "max": "max", "min": "min"}
OV_REDUCTION = {"none": "none", "add": "sum", "sub": "sub", "mul": "prod", "max": "max", "min": "min",
                "mean": "mean"}
TORCH_REDUCTION = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin", "mean": "mean"}


def _c(a) -> np.ndarray:
    """What a peer gets: a C-contiguous copy."""
    return np.array(a, order="C", copy=True)


def _i64(a) -> np.ndarray:
    return np.asarray(a).astype(np.int64)


def onnx_node(op, reduction="none", axis=None):
    from onnx import helper
    attrs = {}
    if axis is not None:
        attrs["axis"] = int(axis)
    if reduction != "none":
        attrs["reduction"] = ONNX_REDUCTION[reduction]
    return helper.make_node(op, ["data", "indices", "updates"], ["out"], **attrs), attrs


def run_onnx_reference(op, data, indices, updates, reduction="none", axis=None, opset=18):
    from onnx.reference import ReferenceEvaluator
    node, _ = onnx_node(op, reduction, axis)
    sess = ReferenceEvaluator(node, opsets={"": opset})
    return sess.run(None, {"data": _c(data), "indices": _i64(indices), "updates": _c(updates)})[0]


def run_ort(op, data, indices, updates, reduction="none", axis=None):
    """A one-node opset-18 model on ONNX Runtime's CPU provider with ONE intra-op thread:
    with more, its ScatterND writes duplicate indices from several threads at once."""
    _, attrs = onnx_node(op, reduction, axis)
    inputs = {"data": _c(data), "indices": _i64(indices), "updates": _c(updates)}
    call = _bench_peers().ort_call(op, inputs, data.shape, data.dtype, threads=1, **attrs)
    return np.array(call(), copy=True)


def run_ov(func, data, indices, updates, axis=None, reduction="none", include_self=True):
    """A one-op model (opset15 scatter_update / scatter_nd_update / scatter_elements_update)
    compiled for the CPU, one thread."""
    def make(ops, p):
        if func == "scatter_update":
            return ops.scatter_update(p[0], p[1], p[2], ops.constant(np.int64(axis)))
        if func == "scatter_nd":
            return ops.scatter_nd_update(p[0], p[1], p[2], OV_REDUCTION[reduction])
        return ops.scatter_elements_update(p[0], p[1], p[2], ops.constant(np.int64(axis)),
                                           OV_REDUCTION[reduction], include_self)
    call = _bench_peers().ov_call(make, [_c(data), _i64(indices), _c(updates)], threads=1)
    return np.array(call(), copy=True)


def run_torch(func, data, indices, updates, axis=None, reduction="none", include_self=True):
    """scatter_elements: ``scatter`` / ``scatter_reduce``; scatter_nd: ``index_put_``
    (accumulate=True for add); scatter_update: ``index_copy`` / ``index_add`` /
    ``index_reduce`` with the indices flattened to 1-D (same C order of updates)."""
    import torch
    d = torch.from_numpy(_c(data))
    i = torch.from_numpy(_i64(indices))
    u = torch.from_numpy(_c(updates))
    if func == "scatter_elements":
        if reduction == "none":
            r = d.scatter(axis, i, u)
        else:
            r = d.scatter_reduce(axis, i, u, TORCH_REDUCTION[reduction], include_self=include_self)
    elif func == "scatter_nd":
        k = i.shape[-1]
        r = d.clone().index_put_(tuple(i[..., j] for j in range(k)), u, accumulate=reduction == "add")
    else:
        a = axis % d.ndim
        flat = i.reshape(-1)
        u = u.reshape(tuple(d.shape[:a]) + (flat.numel(),) + tuple(d.shape[a + 1:]))
        if reduction == "none":
            r = d.index_copy(a, flat, u)
        elif reduction == "add":
            r = d.index_add(a, flat, u)
        else:
            r = d.index_reduce(a, flat, u, TORCH_REDUCTION[reduction], include_self=include_self)
    return r.numpy()


def run_scatterops(case: S.Case) -> np.ndarray:
    return case.prepare().call(scatterops)


def peer_args(case: S.Case):
    """data, indices, updates, axis of a drawn case, C-contiguous, axis an int."""
    return (case.data.values, case.indices.values, case.updates.values,
            None if case.func == "scatter_nd" else case.axis_value)


def check(case: S.Case, peer_result, nans=None) -> None:
    """Bit for bit; nans="any": any NaN where scatterops has a NaN (sign, payload free)."""
    expected = run_scatterops(case)
    assert_identical(peer_result, expected, where=f"peer vs scatterops ({case.func}, {case.reduction})",
                     nans=nans or case.nans)


# --------------------------------------------------------------------------------------
# drawing calls a peer can take
# --------------------------------------------------------------------------------------

#: differential tests: each example builds a session / compiles a model, so half the profile's
#: examples (dev 20, CI 100)
PEER_SETTINGS = settings(max_examples=max(20, settings.default.max_examples // 2))


def peer_cases(funcs, dtypes, reductions, include_self=True, index_mode="any", nonnegative=False):
    """Whole calls (strategies.cases) without what no peer takes: no out=, updates of the
    required shape and of data's dtype.  nonnegative: every index written as its
    non-negative twin (for peers that refuse negative indices)."""
    strategy = S.cases(funcs=funcs, dtypes=dtypes, reductions=reductions, include_self=include_self,
                       out_modes=("none",), broadcast=False, updates_casts=False,
                       index_mode=index_mode, defined_only=True)
    return strategy.map(_nonnegative) if nonnegative else strategy


def _bounds(case: S.Case) -> np.ndarray:
    shape = case.data.shape
    if case.func == "scatter_nd":
        return np.array(shape[:case.indices.shape[-1]], dtype=np.int64)
    return np.int64(shape[case.axis_value % len(shape)])


def _nonnegative(case: S.Case) -> S.Case:
    v = case.indices.values
    idx = v.astype(np.int64)
    if idx.size:
        idx = np.where(idx < 0, idx + _bounds(case), idx)
    idx = idx.astype(v.dtype.newbyteorder("=")).astype(v.dtype)
    return dataclasses.replace(case, indices=S.Recipe(idx, case.indices.layout))


def map_values(case: S.Case, fn) -> S.Case:
    """The same call with fn applied to the values of data and updates."""
    return dataclasses.replace(case, data=S.Recipe(fn(case.data.values), case.data.layout),
                               updates=S.Recipe(fn(case.updates.values), case.updates.layout))


def _dt(*codes):
    return [np.dtype(c) for c in codes]


INTS = _dt("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")


# --------------------------------------------------------------------------------------
# ONNX's own node test cases
# --------------------------------------------------------------------------------------

ONNX_OPS = ("Scatter", "ScatterElements", "ScatterND")


def _onnx_node_cases():
    """ONNX's node test cases of the three ops, as the installed onnx package builds them
    (the export functions of onnx/backend/test/case/node/scatter*.py; the wheel ships no
    data/node/test_scatter* directories).  Importing just those three modules runs their
    exports; collect_testcases() would import every op's module (seconds)."""
    try:
        node = importlib.import_module("onnx.backend.test.case.node")
        for name in ("scatter", "scatterelements", "scatternd"):
            importlib.import_module(f"onnx.backend.test.case.node.{name}")
    except ImportError:
        return []
    found = getattr(node, "_NodeTestCases", None)
    if found is None:                              # pragma: no cover - onnx reorganised
        found = node.collect_testcases()
    return sorted((c for c in found if c.model.graph.node[0].op_type in ONNX_OPS), key=lambda c: c.name)


ONNX_NODE_CASES = _onnx_node_cases()


def _onnx_params():
    if not ONNX_NODE_CASES:
        return [pytest.param(None, id="onnx-not-installed")]
    return [pytest.param(c, id=c.name) for c in ONNX_NODE_CASES]


def onnx_call(node, inputs):
    """The scatterops call an ONNX node means: (function, args, kwargs)."""
    from onnx import helper
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    unknown = set(attrs) - {"axis", "reduction"}
    assert not unknown, f"{node.op_type}: attributes {unknown} have no scatterops mapping"
    reduction = attrs.get("reduction", b"none")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    data, indices, updates = inputs
    if node.op_type == "ScatterND":
        return scatterops.scatter_nd, (data, indices, updates), {"reduction": reduction}
    # Scatter-9/11 is ScatterElements without a reduction
    return (scatterops.scatter_elements, (data, indices, updates, attrs.get("axis", 0)),
            {"reduction": reduction})


@pytest.mark.parametrize("case", _onnx_params())
def test_onnx_node_case(case):
    need("onnx")
    assert case is not None, "onnx imports but its node test cases for the scatter ops were not found"
    node = case.model.graph.node[0]
    for inputs, outputs in case.data_sets:
        func, args, kwargs = onnx_call(node, inputs)
        result = func(*args, **kwargs)
        assert len(outputs) == 1
        assert_identical(result, np.asarray(outputs[0]), where=case.name)


def test_onnx_node_cases_cover_the_three_ops():
    need("onnx")
    ops = {c.model.graph.node[0].op_type for c in ONNX_NODE_CASES}
    assert ops == set(ONNX_OPS), f"node cases found for {sorted(ops)} only"
    reductions = set()
    from onnx import helper
    for c in ONNX_NODE_CASES:
        for a in c.model.graph.node[0].attribute:
            if a.name == "reduction":
                reductions.add(helper.get_attribute_value(a).decode())
    assert reductions >= {"add", "mul", "max", "min"}, reductions


# --------------------------------------------------------------------------------------
# input restrictions for known differences (each shown by a test in the last section)
# --------------------------------------------------------------------------------------

def _floats(values: np.ndarray) -> bool:
    return values.dtype.kind in "fc"


def no_nan(values: np.ndarray) -> np.ndarray:
    """NaN (in either part of a complex) replaced by 0."""
    if not _floats(values):
        return values
    v = values.copy()
    v[np.isnan(v)] = 0
    return v


def no_negative_zero(values: np.ndarray) -> np.ndarray:
    """-0.0 replaced by +0.0 (in both parts of a complex)."""
    if not _floats(values):
        return values
    v = values.copy()
    for part in ((v.real, v.imag) if v.dtype.kind == "c" else (v,)):
        part[(part == 0) & np.signbit(part)] = 0
    return v


def int32_values(values: np.ndarray) -> np.ndarray:
    """64-bit integers wrapped into what int32 holds (uint64: 0 .. 2**31 - 1)."""
    if values.dtype.kind not in "iu" or values.dtype.itemsize < 8:
        return values
    if values.dtype.kind == "u":
        return values & values.dtype.type(2 ** 31 - 1)
    return values.astype(np.int32).astype(values.dtype)


def float32_values(values: np.ndarray) -> np.ndarray:
    """float64 values rounded to float32 (NaN payloads included, so bits survive a trip
    through float32), infinities and what float32 cannot hold replaced by 1."""
    if values.dtype != np.dtype("f8"):
        return values
    with np.errstate(all="ignore"):
        v = values.astype(np.float32).astype(values.dtype)
    v[np.isinf(v)] = 1
    return v


def signed_range(values: np.ndarray) -> np.ndarray:
    """uint32 values with the top bit cleared (they compare alike as int32)."""
    if values.dtype.kind != "u" or values.dtype.itemsize != 4:
        return values
    return values & values.dtype.type(np.iinfo(values.dtype).max >> 1)


def restrict(case: S.Case, *fns) -> S.Case:
    for fn in fns:
        case = map_values(case, fn)
    return case


# --------------------------------------------------------------------------------------
# differential: onnx.reference.ReferenceEvaluator (ScatterElements-18, ScatterND-18)
# --------------------------------------------------------------------------------------

ONNX_OP = {"scatter_elements": "ScatterElements", "scatter_nd": "ScatterND"}
#: every ONNX tensor type NumPy holds natively (string, bfloat16 and float8 aside)
ONNX_DTYPES = _dt("?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16")
ONNX_REDUCTIONS = ("none", "add", "mul", "max", "min")


def onnx_reference_cases():
    both = ("scatter_elements", "scatter_nd")
    complex_ = _dt("c8", "c16")
    return st.one_of(
        peer_cases(both, ONNX_DTYPES, ("none", "add", "max", "min")),
        # KNOWN: its ScatterND multiplies whole slices with NumPy's array loop, which can round
        # complex products otherwise than the scalar loop of np.multiply.at
        # (test_onnx_reference_scatter_nd_complex_mul_uses_the_array_loop)
        peer_cases(both, [d for d in ONNX_DTYPES if d not in complex_], ("mul",)),
        peer_cases(("scatter_elements",), complex_, ("mul",)),
    )


@PEER_SETTINGS
@given(case=onnx_reference_cases())
def test_onnx_reference_evaluator_matches(onnx_reference, case):
    if case.func == "scatter_elements" and case.canonical in ("max", "min"):
        # KNOWN: its ScatterElements takes Python's max() / min(): a NaN update never wins,
        # and on a -0.0 / +0.0 tie data's zero stays
        # (test_onnx_reference_scatter_elements_max_min_ignore_nan_updates)
        case = restrict(case, no_nan, no_negative_zero)
    note(repr(case))
    d, i, u, a = peer_args(case)
    check(case, run_onnx_reference(ONNX_OP[case.func], d, i, u, case.canonical, a))


# --------------------------------------------------------------------------------------
# differential: ONNX Runtime, CPU, one intra-op thread
# --------------------------------------------------------------------------------------

ORT_BASE = _dt("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8")


def ort_cases():
    """What ORT's CPU kernels take: none on bool, the integers and the floats; add / mul
    also on bool, not float16; max / min not on bool, float16 for ScatterElements only.
    No complex at all (test_onnxruntime_refuses_what_scatterops_takes)."""
    both = ("scatter_elements", "scatter_nd")
    return st.one_of(
        peer_cases(both, _dt("?", "f2") + ORT_BASE, ("none",)),
        peer_cases(both, _dt("?") + ORT_BASE, ("add", "mul")),
        peer_cases(both, ORT_BASE, ("max", "min")),
        peer_cases(("scatter_elements",), _dt("f2"), ("max", "min")),
    )


@PEER_SETTINGS
@given(case=ort_cases())
def test_onnxruntime_matches(ort, case):
    if case.canonical in ("max", "min"):
        # KNOWN: with a NaN on one side the update wins, NaN or not
        # (test_onnxruntime_max_min_take_the_update_when_either_is_nan); float16 max / min
        # between -0.0 and +0.0 differs (test_onnxruntime_float16_max_min_signed_zero)
        case = restrict(case, no_nan)
        if case.data.dtype == np.dtype("f2"):
            case = restrict(case, no_negative_zero)
    note(repr(case))
    d, i, u, a = peer_args(case)
    check(case, run_ort(ONNX_OP[case.func], d, i, u, case.canonical, a))


# --------------------------------------------------------------------------------------
# differential: OpenVINO opset15 on the CPU plugin
# --------------------------------------------------------------------------------------

OV_INTS = _dt("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")
OV_INTS_32 = OV_INTS[:-2]


def ov_cases():
    """ScatterUpdate-3 (assignment), ScatterNDUpdate-15 (none, sum, sub, prod, max, min),
    ScatterElementsUpdate-12 (none, sum, prod, max, min, mean; use_init_val = include_self).
    float16: assignment, max and min only (the CPU plugin sums in float32:
    test_openvino_float16_sums_round_once); float64 likewise (computed in float32).  No complex."""
    fl = _dt("f4", "f8")
    return st.one_of(
        peer_cases(("scatter_update",), _dt("?", "f2") + OV_INTS + fl, ("none",), nonnegative=True),
        peer_cases(("scatter_nd",), _dt("?", "f2") + OV_INTS + fl, ("none", "max", "min")),
        # KNOWN: int64 / uint64 arithmetic wraps at 32 bits (test_openvino_64_bit_integers_computed_in_int32)
        peer_cases(("scatter_nd",), _dt("?") + OV_INTS_32 + _dt("f4"), ("add", "sub", "mul")),
        peer_cases(("scatter_elements",), _dt("?", "f2") + OV_INTS + fl, ("none",)),
        peer_cases(("scatter_elements",), _dt("?", "f2") + OV_INTS + fl, ("max", "min"), include_self=None),
        peer_cases(("scatter_elements",), _dt("?") + OV_INTS_32 + _dt("f4"), ("add", "mul", "mean"),
                   include_self=None),
    ).filter(_ov_takes)


def _ov_takes(case: S.Case) -> bool:
    # KNOWN: the CPU plugin refuses 0-d indices in ScatterUpdate
    # (test_openvino_refuses_what_scatterops_takes); ScatterNDUpdate with k == 0 does nothing
    # (test_openvino_scatter_nd_empty_index_tuple_is_a_no_op)
    if case.func == "scatter_update":
        return len(case.indices.shape) > 0
    if case.func == "scatter_nd":
        return case.indices.shape[-1] > 0
    return True


@PEER_SETTINGS
@given(case=ov_cases())
def test_openvino_matches(ov, case):
    # KNOWN: scatter_update's negative indices are kept out by ov_cases (ScatterUpdate-3
    # forbids them, the CPU plugin writes out of bounds: test_openvino_scatter_update_negative_indices)
    # KNOWN: the CPU plugin computes int64 and uint64 in int32, float64 in float32 (with
    # inf saturated to float32's largest finite value)
    # (test_openvino_64_bit_integers_computed_in_int32, test_openvino_float64_computed_in_float32)
    case = restrict(case, int32_values, float32_values)
    if case.canonical == "mean" and case.data.dtype.kind in "iu":
        # KNOWN: integer mean rounds toward zero, not down (test_openvino_integer_mean_truncates):
        # small non-negative values keep every sum non-negative
        case = restrict(case, lambda v: np.abs(v) % 3 if v.dtype.kind == "i" else v % 3)
    if not case.include_self and case.canonical in ("add", "mean"):
        # KNOWN: with use_init_val=false the sum starts from +0.0, so a lone -0.0 update
        # gives +0.0 (test_openvino_without_init_val_sums_start_from_positive_zero)
        case = restrict(case, no_negative_zero)
    if case.canonical in ("max", "min"):
        # KNOWN: an update's NaN loses (test_openvino_max_min_keep_data_when_either_is_nan,
        # test_openvino_without_init_val_max_min_of_nan_updates_is_the_identity); uint32
        # compares as int32 (test_openvino_uint32_max_min_compare_as_int32)
        # KNOWN: on a tie between -0.0 and +0.0 data's zero stays
        # (test_openvino_max_min_signed_zero_ties_keep_data)
        case = restrict(case, no_nan, signed_range, no_negative_zero)
    # KNOWN: float16 goes through float32: a signalling NaN comes back quiet, on every
    # element (test_openvino_float16_sums_round_once): NaN bits not compared there
    nans = "any" if case.data.dtype == np.dtype("f2") else None
    note(repr(case))
    d, i, u, a = peer_args(case)
    check(case, run_ov(case.func, d, i, u, a, case.canonical, case.include_self), nans)


# --------------------------------------------------------------------------------------
# differential: PyTorch (CPU)
# --------------------------------------------------------------------------------------

TORCH_DTYPES = _dt("?", "u1", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "c8", "c16")
TORCH_REAL = _dt("u1", "i1", "i2", "i4", "i8", "f2", "f4", "f8")


def torch_cases():
    """scatter_elements: scatter / scatter_reduce (sum, prod, amax, amin, mean, include_self);
    scatter_nd: index_put_ (accumulate for add); scatter_update: index_copy / index_add /
    index_reduce (prod, amax, amin, mean, include_self).  No uint16/32/64; no complex
    max / min, no mean of bool, no index_reduce of bool or complex.  Negative indices only for
    index_put_ (test_torch_refuses_negative_indices)."""
    both = ("scatter_elements", "scatter_update")
    return st.one_of(
        peer_cases(both, TORCH_DTYPES, ("none",), nonnegative=True),
        # KNOWN: index_add multiplies complex updates by alpha = 1 + 0j: -0.0 and NaN parts
        # change (test_torch_complex_index_add_multiplies_by_one)
        # KNOWN: index_add on float16 can sum in float32 too (test_torch_float16_scatter_reduce_sums_round_once)
        peer_cases(("scatter_update",), [d for d in _dt("?") + TORCH_REAL if d != np.dtype("f2")], ("add",),
                   nonnegative=True),
        # KNOWN: scatter_reduce sums float16 in float32 when include_self=True
        # (test_torch_float16_scatter_reduce_sums_round_once)
        peer_cases(("scatter_elements",), [d for d in TORCH_DTYPES if d != np.dtype("f2")], ("add",),
                   nonnegative=True),
        peer_cases(("scatter_elements",), TORCH_DTYPES, ("add",), include_self=False, nonnegative=True),
        # KNOWN: scatter_reduce(prod) rounds complex products otherwise than np.multiply
        # (test_torch_complex_prod_rounds_otherwise), and with include_self=False multiplies
        # into 1 + 0j (test_torch_without_self_reductions_start_from_the_identity)
        peer_cases(("scatter_elements",), _dt("?") + TORCH_REAL, ("mul",), include_self=None, nonnegative=True),
        # KNOWN: index_reduce(prod) on float16 fails an internal assert (test_torch_refuses_what_scatterops_takes)
        peer_cases(("scatter_update",), [d for d in TORCH_REAL if d != np.dtype("f2")], ("mul",),
                   include_self=None, nonnegative=True),
        peer_cases(both, TORCH_REAL, ("max", "min"), include_self=None, nonnegative=True),
        # KNOWN: complex mean divides in complex64 and divides untouched elements by 1
        # (test_torch_complex_mean)
        peer_cases(("scatter_update",), TORCH_REAL, ("mean",), include_self=None, nonnegative=True),
        # KNOWN: scatter_reduce's float16 mean sums in float32 (test_torch_float16_scatter_reduce_sums_round_once)
        peer_cases(("scatter_elements",), [d for d in TORCH_REAL if d != np.dtype("f2")], ("mean",),
                   include_self=None, nonnegative=True),
        # KNOWN: index_put_ refuses k == 0, an empty index tuple (test_torch_refuses_what_scatterops_takes)
        peer_cases(("scatter_nd",), TORCH_DTYPES, ("none", "add")).filter(lambda c: c.indices.shape[-1] > 0),
    )


@PEER_SETTINGS
@given(case=torch_cases())
def test_torch_matches(torch, case):
    if not case.include_self and case.canonical in ("add", "mean"):
        # KNOWN: with include_self=False the sum starts from +0.0: a lone -0.0 update gives
        # +0.0 (test_torch_without_self_reductions_start_from_the_identity)
        case = restrict(case, no_negative_zero)
    if case.canonical in ("max", "min"):
        # KNOWN: on a -0.0 / +0.0 tie the zero already there stays, NumPy's float32/64 loops
        # take the update (test_torch_max_min_signed_zero_ties_keep_self)
        case = restrict(case, no_negative_zero)
    # KNOWN: scatter / scatter_reduce on float16 turn every NaN of the tensor, hit or not,
    # into 0x7FFF (test_torch_float16_scatter_rewrites_every_nan): NaN bits not compared there
    nans = "any" if case.func == "scatter_elements" and case.data.dtype == np.dtype("f2") else None
    note(repr(case))
    d, i, u, a = peer_args(case)
    check(case, run_torch(case.func, d, i, u, a, case.canonical, case.include_self), nans)


# --------------------------------------------------------------------------------------
# the known differences, one small example each
# --------------------------------------------------------------------------------------
# Each test asserts scatterops' result (docs/contract.md) and the peer's, so it fails if either
# changes: then docs/contract.md's "Where a runtime gives another result" needs a look.

F4, F2 = np.float32, np.float16
NAN = np.nan


def test_onnx_reference_scatter_elements_max_min_ignore_nan_updates(onnx_reference):
    data, idx, upd = np.array([1.0, 1.0], F4), np.array([0, 1]), np.array([NAN, NAN], F4)
    for red in ("max", "min"):
        ours = scatterops.scatter_elements(data, idx, upd, reduction=red)
        assert np.isnan(ours).all()                                   # like np.maximum / np.minimum
        theirs = run_onnx_reference("ScatterElements", data, idx, upd, red, 0)
        assert_identical(theirs, data)                                # Python's max(1.0, nan) is 1.0
        # its ScatterND takes np.maximum / np.minimum and agrees
        assert np.isnan(run_onnx_reference("ScatterND", data, idx[:, None], upd, red)).all()
    # a tie between -0.0 and +0.0: Python's max / min keep the first (data's zero)
    data, upd = np.array([-0.0, 0.0], F4), np.array([0.0, -0.0], F4)
    for red in ("max", "min"):
        ours = scatterops.scatter_elements(data, idx, upd, reduction=red)
        assert_identical(ours, {"max": np.maximum, "min": np.minimum}[red](data, upd))
        assert_identical(ours, upd)                                   # NumPy's float32 loop
        assert_identical(run_onnx_reference("ScatterElements", data, idx, upd, red, 0), data)


def test_onnx_reference_scatter_nd_complex_mul_uses_the_array_loop(onnx_reference):
    """Its ScatterND writes output[idx] *= updates[i]: NumPy's array loop for complex
    multiply, which on some CPUs (SIMD) rounds otherwise than the scalar loop np.multiply.at
    uses -- and scatterops agrees with np.multiply.at."""
    a, b = complex(1286742750677285, 1), complex(-1, 7)
    row_a, row_b = np.zeros(18, complex), np.zeros(18, complex)
    row_a[7], row_b[7] = a, b
    at = np.array([a]); np.multiply.at(at, [0], b)
    if (row_a * row_b)[7] == at[0]:
        pytest.skip("NumPy's array and scalar complex multiply loops agree on this CPU")
    data = row_a.reshape(2, 9)
    upd = row_b.reshape(2, 9)
    # k == 0: each empty index tuple addresses the whole array
    ours = scatterops.scatter_nd(data, np.zeros((1, 0), np.int64), upd[None], reduction="mul")
    assert ours[0, 7] == at[0]
    theirs = run_onnx_reference("ScatterND", data, np.zeros((1, 0), np.int64), upd[None], "mul")
    assert theirs[0, 7] == (row_a * row_b)[7] != ours[0, 7]


@pytest.mark.parametrize("op", ["ScatterElements", "ScatterND"])
def test_onnxruntime_max_min_take_the_update_when_either_is_nan(ort, op):
    data, upd = np.array([NAN, 1.0, NAN], F4), np.array([0.0, NAN, NAN], F4)
    idx = np.array([0, 1, 2])
    for red in ("max", "min"):
        if op == "ScatterElements":
            ours = scatterops.scatter_elements(data, idx, upd, reduction=red)
            theirs = run_ort(op, data, idx, upd, red, 0)
        else:
            ours = scatterops.scatter_nd(data, idx[:, None], upd, reduction=red)
            theirs = run_ort(op, data, idx[:, None], upd, red)
        assert np.isnan(ours).all()                                   # NaN from either side
        assert_identical(theirs, np.array([0.0, NAN, NAN], F4), nans="any")   # data's NaN lost


def test_onnxruntime_float16_max_min_signed_zero(ort):
    data, idx, upd = np.array([-0.0, 0.0], F2), np.array([0, 1]), np.array([0.0, -0.0], F2)
    for red in ("max", "min"):
        ours = scatterops.scatter_elements(data, idx, upd, reduction=red)
        assert_identical(ours, np.array([-0.0, 0.0], F2))            # np.maximum(-0.0, 0.0) is -0.0
        assert_identical(ours, getattr(np, {"max": "maximum", "min": "minimum"}[red])(data, upd))
        # ORT's float16 kernel: on a tie (-0.0 == +0.0) the update wins
        assert_identical(run_ort("ScatterElements", data, idx, upd, red, 0), upd)
        # float32 agrees
        ours32 = scatterops.scatter_elements(data.astype(F4), idx, upd.astype(F4), reduction=red)
        assert_identical(run_ort("ScatterElements", data.astype(F4), idx, upd.astype(F4), red, 0), ours32)


def test_onnxruntime_refuses_what_scatterops_takes(ort):
    """float16 add / mul, bool max / min, every complex type: ORT has no kernel."""
    import onnxruntime
    cases = [(np.float16, "add"), (np.float16, "mul"), (np.bool_, "max"), (np.bool_, "min"),
             (np.complex64, "none"), (np.complex128, "add")]
    for dt, red in cases:
        data, idx, upd = np.ones(3, dt), np.array([0, 0]), np.ones(2, dt)
        scatterops.scatter_elements(data, idx, upd, reduction=red)     # works
        state = onnxruntime.capi.onnxruntime_pybind11_state
        with pytest.raises((state.NotImplemented, state.Fail, state.RuntimeException,
                            state.InvalidGraph)):
            run_ort("ScatterElements", data, idx, upd, red, 0)


def test_openvino_max_min_keep_data_when_either_is_nan(ov):
    data, upd = np.array([NAN, 1.0, NAN], F4), np.array([0.0, NAN, NAN], F4)
    idx = np.array([0, 1, 2])
    for red in ("max", "min"):
        assert np.isnan(scatterops.scatter_elements(data, idx, upd, reduction=red)).all()
        expected = np.array([NAN, 1.0, NAN], F4)                      # an update's NaN lost
        assert_identical(run_ov("scatter_elements", data, idx, upd, 0, red), expected, nans="any")
        assert_identical(run_ov("scatter_nd", data, idx[:, None], upd, None, red), expected, nans="any")


def test_openvino_without_init_val_max_min_of_nan_updates_is_the_identity(ov):
    """use_init_val=false: an element hit only by NaN updates gets the lowest / highest float."""
    data, idx, upd = np.zeros(2, F4), np.array([1]), np.array([NAN], F4)
    fmax = np.finfo(F4).max
    for red, identity in (("max", -fmax), ("min", fmax)):
        ours = scatterops.scatter_elements(data, idx, upd, reduction=red, include_self=False)
        assert_identical(ours, np.array([0, NAN], F4), nans="any")    # the update itself
        assert_identical(run_ov("scatter_elements", data, idx, upd, 0, red, False), np.array([0, identity], F4))


def test_openvino_max_min_signed_zero_ties_keep_data(ov):
    data, idx, upd = np.array([-0.0, 0.0], F4), np.array([0, 1]), np.array([0.0, -0.0], F4)
    for red in ("max", "min"):
        ours = scatterops.scatter_nd(data, idx[:, None], upd, reduction=red)
        ufunc = {"max": np.maximum, "min": np.minimum}[red]
        assert_identical(ours, ufunc(data, upd))                      # NumPy's float32 loop: upd here
        assert_identical(ours, upd)
        assert_identical(run_ov("scatter_nd", data, idx[:, None], upd, None, red), data)
        assert_identical(run_ov("scatter_elements", data, idx, upd, 0, red), data)


def test_openvino_64_bit_integers_computed_in_int32(ov):
    for dt in (np.int64, np.uint64):
        data = np.array([2 ** 40 + 1, 5, 7], dt)
        upd = np.array([2 ** 41 + 3, 2 ** 62 + 1], dt)
        idx = np.array([0, 1])
        assert_identical(scatterops.scatter_elements(data, idx, upd), np.array([2 ** 41 + 3, 2 ** 62 + 1, 7], dt))
        assert_identical(run_ov("scatter_elements", data, idx, upd, 0), np.array([3, 1, 7], dt))
        assert_identical(run_ov("scatter_update", data, idx, upd, 0), np.array([3, 1, 7], dt))
        assert_identical(run_ov("scatter_nd", data, idx[:, None], upd, None, "add"), np.array([4, 6, 7], dt))


def test_openvino_uint32_max_min_compare_as_int32(ov):
    data, idx, upd = np.array([0, 2 ** 32 - 1], np.uint32), np.array([0, 1]), np.array([2 ** 31, 1], np.uint32)
    assert_identical(scatterops.scatter_elements(data, idx, upd, reduction="max"),
                     np.array([2 ** 31, 2 ** 32 - 1], np.uint32))
    assert_identical(run_ov("scatter_elements", data, idx, upd, 0, "max"), np.array([0, 1], np.uint32))


def test_openvino_float64_computed_in_float32(ov):
    """Rounded to float32, and saturated: inf and 1e300 become float32's largest finite."""
    data = np.array([1e-300, 0.0, np.inf, -1e300], np.float64)
    idx, upd = np.array([1]), np.array([1 + 2 ** -40])
    assert_identical(scatterops.scatter_elements(data, idx, upd), np.array([1e-300, 1 + 2 ** -40, np.inf, -1e300]))
    fmax = float(np.finfo(np.float32).max)
    assert_identical(run_ov("scatter_elements", data, idx, upd, 0), np.array([0.0, 1.0, fmax, -fmax]))


def test_openvino_float16_sums_round_once(ov):
    """docs/contract.md: one rounding per update (np.add.at); the CPU plugin sums in float32.  It
    also quiets a signalling NaN of an element no update touches."""
    data, idx, upd = np.array([2048, 0], F2), np.array([0, 0, 0]), np.ones(3, F2)
    assert_identical(scatterops.scatter_elements(data, idx, upd, reduction="add"), np.array([2048, 0], F2))
    assert_identical(run_ov("scatter_elements", data, idx, upd, 0, "add"), np.array([2052, 0], F2))
    assert_identical(run_ov("scatter_nd", data, idx[:, None], upd, None, "add"), np.array([2052, 0], F2))
    snan = np.array([0, 0x7C01], np.uint16).view(F2)
    ours = scatterops.scatter_elements(snan, np.array([0]), np.zeros(1, F2))
    assert ours.view(np.uint16).tolist() == [0, 0x7C01]
    theirs = run_ov("scatter_elements", snan, np.array([0]), np.zeros(1, F2), 0)
    assert theirs.view(np.uint16).tolist() == [0, 0x7E01]


def test_openvino_without_init_val_sums_start_from_positive_zero(ov):
    data, idx, upd = np.array([1.0], F4), np.array([0]), np.array([-0.0], F4)
    for red in ("add", "mean"):
        assert_identical(scatterops.scatter_elements(data, idx, upd, reduction=red, include_self=False),
                         np.array([-0.0], F4))
        assert_identical(run_ov("scatter_elements", data, idx, upd, 0, red, False), np.array([0.0], F4))


def test_openvino_integer_mean_truncates(ov):
    data, idx, upd = np.array([0, 0], np.int32), np.array([0, 0]), np.array([-3, 0], np.int32)
    # docs/contract.md: floor division (-3 // 2 == -2), as PyTorch
    ours = scatterops.scatter_elements(data, idx, upd, reduction="mean", include_self=False)
    assert_identical(ours, np.array([-2, 0], np.int32))
    assert_identical(run_torch("scatter_elements", data, idx, upd, 0, "mean", False), ours)
    assert_identical(run_ov("scatter_elements", data, idx, upd, 0, "mean", False), np.array([-1, 0], np.int32))


def test_openvino_scatter_nd_empty_index_tuple_is_a_no_op(ov):
    """k == 0: each empty tuple addresses the whole array (ONNX, ORT, the ONNX reference)."""
    data, idx, upd = np.arange(3, dtype=F4), np.zeros((2, 0), np.int64), np.array([[7, 8, 9], [4, 5, 6]], F4)
    assert_identical(scatterops.scatter_nd(data, idx, upd), np.array([4, 5, 6], F4))
    assert_identical(run_ov("scatter_nd", data, idx, upd), data)


def test_openvino_refuses_what_scatterops_takes(ov):
    """0-d indices in ScatterUpdate; complex types."""
    with pytest.raises(RuntimeError, match="scalar"):
        run_ov("scatter_update", np.zeros(3, F4), np.array(1), np.array(5, F4), 0)
    assert_identical(scatterops.scatter_update(np.zeros(3, F4), np.array(1), np.array(5, F4)),
                     np.array([0, 5, 0], F4))
    with pytest.raises(Exception):
        run_ov("scatter_elements", np.zeros(3, np.complex64), np.array([1]), np.ones(1, np.complex64), 0)


def test_openvino_takes_bool_sub_which_scatterops_refuses(ov):
    data, idx, upd = np.array([True, False]), np.array([[0]]), np.array([True])
    with pytest.raises(TypeError, match="bool"):
        scatterops.scatter_nd(data, idx, upd, reduction="sub")      # np.subtract has no bool loop
    run_ov("scatter_nd", data, idx, upd, None, "sub")                 # OpenVINO computes something


_OV_NEGATIVE = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path[:0] = [sys.argv[1], sys.argv[2]]
    from test_conformance import run_ov
    r = run_ov("scatter_update", np.zeros(5, np.float32), np.array([-1, 0]),
               np.array([1, 2], np.float32), 0)
    print(" ".join(str(float(x)) for x in r))
""")


@pytest.mark.xfail(strict=True, reason="KNOWN: OpenVINO's ScatterUpdate-3 forbids negative indices; "
                                       "the CPU plugin writes out of bounds (garbage result)")
def test_openvino_scatter_update_negative_indices(ov):
    """Run in a child process: the plugin writes outside the buffer."""
    ours = scatterops.scatter_update(np.zeros(5, F4), np.array([-1, 0]), np.array([1, 2], F4))
    assert_identical(ours, np.array([2, 0, 0, 0, 1], F4))
    proc = subprocess.run([sys.executable, "-c", _OV_NEGATIVE, _ROOT, os.path.dirname(os.path.abspath(__file__))],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = np.array([float(x) for x in proc.stdout.split()], F4)
    assert_identical(theirs, ours)


def test_torch_refuses_negative_indices(torch):
    data, idx, upd = np.zeros(5, F4), np.array([-1, 0]), np.array([1, 2], F4)
    expected = np.array([2, 0, 0, 0, 1], F4)
    assert_identical(scatterops.scatter_elements(data, idx, upd), expected)
    for func, red in (("scatter_elements", "none"), ("scatter_elements", "add"), ("scatter_update", "none"),
                      ("scatter_update", "add"), ("scatter_update", "max")):
        with pytest.raises((RuntimeError, IndexError)):
            run_torch(func, data, idx, upd, 0, red)
    assert_identical(run_torch("scatter_nd", data, idx[:, None], upd), expected)   # index_put_ takes them


def test_torch_refuses_what_scatterops_takes(torch):
    """uint16/32/64, an empty index tuple (k == 0) in index_put_, complex max / min,
    index_reduce(prod) on float16."""
    for dt in (np.uint16, np.uint32, np.uint64):
        with pytest.raises((TypeError, RuntimeError)):
            run_torch("scatter_elements", np.zeros(3, dt), np.array([1]), np.ones(1, dt), 0)
    with pytest.raises(RuntimeError):
        run_torch("scatter_nd", np.zeros(3, F4), np.zeros((1, 0), np.int64), np.ones((1, 3), F4))
    with pytest.raises(RuntimeError):
        run_torch("scatter_elements", np.zeros(3, np.complex64), np.array([1]), np.ones(1, np.complex64), 0, "max")
    # index_reduce(prod) on float16: "iter.ninputs() == traits::arity INTERNAL ASSERT FAILED"
    for inc in (True, False):
        with pytest.raises(RuntimeError):
            run_torch("scatter_update", np.zeros((1, 1), F2), np.array([0, 0]), np.zeros((2, 1), F2), 0, "mul", inc)


def test_torch_float16_scatter_reduce_sums_round_once(torch):
    """docs/contract.md: one rounding per update; scatter_reduce sums float16 in float32, and so does
    index_add on some shapes.  index_put_(accumulate=True) agrees with scatterops."""
    data, idx, upd = np.array([2048, 0], F2), np.array([0, 0, 0]), np.ones(3, F2)
    ours = scatterops.scatter_elements(data, idx, upd, reduction="add")
    assert_identical(ours, np.array([2048, 0], F2))
    assert_identical(run_torch("scatter_elements", data, idx, upd, 0, "add"), np.array([2052, 0], F2))
    assert_identical(run_torch("scatter_elements", data, idx, upd, 0, "mean"), np.array([513, 0], F2))
    # include_self=False: the mean still sums in float32 ((2048 + 1 + 1) / 3 = 683.3 -> 683.5;
    # scatterops: 2048 + 1 + 1 == 2048 in float16, 2048 / 3 -> 682.5)
    data2, upd2 = np.zeros(1, F2), np.array([2048, 1, 1], F2)
    assert_identical(scatterops.scatter_elements(data2, idx, upd2, reduction="mean", include_self=False),
                     np.array([682.5], F2))
    assert_identical(run_torch("scatter_elements", data2, idx, upd2, 0, "mean", False), np.array([683.5], F2))
    assert_identical(scatterops.scatter_elements(data, idx, upd, reduction="mean"), np.array([512, 0], F2))
    assert_identical(run_torch("scatter_nd", data, idx[:, None], upd, None, "add"), ours)
    # index_add on rows of three: 1024 + 0.5 + 0 + 1 is 1025 one rounding at a time, 1026 in float32
    data3, idx3 = np.zeros((1, 3), F2), np.array([0, 0, 0, 0])
    upd3 = np.array([[0, 0, 1024], [0, 0, 0.5], [0, 0, 0], [0, 0, 1]], F2)
    assert_identical(scatterops.scatter_update(data3, idx3, upd3, reduction="add"), np.array([[0, 0, 1025]], F2))
    assert_identical(run_torch("scatter_update", data3, idx3, upd3, 0, "add"), np.array([[0, 0, 1026]], F2))


def test_torch_float16_scatter_rewrites_every_nan(torch):
    """scatter / scatter_reduce on float16 return every NaN of self -- elements no update
    hits included -- as 0x7FFF; index_copy / index_put_ / float32 keep the bits."""
    data = np.array([0, 0x7E00, 0x7E01, 0xFE00], np.uint16).view(F2)
    idx, upd = np.array([0]), np.array([1.0], F2)
    ours = scatterops.scatter_elements(data, idx, upd)
    assert_identical(ours[1:], data[1:])
    for red in ("none", "add"):
        theirs = run_torch("scatter_elements", data, idx, upd, 0, red)
        assert theirs[1:].view(np.uint16).tolist() == [0x7FFF] * 3, theirs.view(np.uint16)
    assert_identical(run_torch("scatter_update", data, idx, upd, 0), ours)
    assert_identical(run_torch("scatter_nd", data, idx[:, None], upd), ours)


def test_torch_without_self_reductions_start_from_the_identity(torch):
    """docs/contract.md: the first update is assigned.  scatter_reduce(include_self=False) starts from
    the identity: +0.0 + -0.0 is +0.0; (1 + 0j) * (0 - 0j) is 0 + 0j."""
    data, idx, upd = np.array([1.0], F4), np.array([0]), np.array([-0.0], F4)
    for red in ("add", "mean"):
        assert_identical(scatterops.scatter_elements(data, idx, upd, reduction=red, include_self=False),
                         np.array([-0.0], F4))
        assert_identical(run_torch("scatter_elements", data, idx, upd, 0, red, False), np.array([0.0], F4))
    # float prod agrees (1 * -0.0 is -0.0), complex does not
    assert_identical(run_torch("scatter_elements", data, idx, upd, 0, "mul", False), upd)
    cdata = np.array([1 + 1j, 1 + 1j], np.complex64)
    cupd = np.array([complex(0, -0.0), complex(0, np.nan)], np.complex64)
    ours = scatterops.scatter_elements(cdata, np.array([0, 1]), cupd, reduction="mul", include_self=False)
    assert_identical(ours, cupd)
    theirs = run_torch("scatter_elements", cdata, np.array([0, 1]), cupd, 0, "mul", False)
    assert theirs[0] == 0 and not np.signbit(theirs[0].imag)
    assert np.isnan(theirs[1].real) and np.isnan(theirs[1].imag)


def test_torch_complex_index_add_multiplies_by_one(torch):
    """index_add computes self + alpha * source with alpha = 1 + 0j: an update (0, -0.0)
    becomes (0, +0.0), an update (0, NaN) becomes (NaN, NaN).  scatter_add agrees with
    scatterops."""
    data, idx = np.array([complex(0, -0.0), 0], np.complex64), np.array([0, 1])
    upd = np.array([complex(0, -0.0), complex(0, np.nan)], np.complex64)
    ours = scatterops.scatter_update(data, idx, upd, reduction="add")
    assert_identical(ours, data + upd)
    assert np.signbit(ours[0].imag) and ours[1].real == 0 and np.isnan(ours[1].imag)
    theirs = run_torch("scatter_update", data, idx, upd, 0, "add")
    assert theirs[0] == 0 and not np.signbit(theirs[0].imag)
    assert np.isnan(theirs[1].real) and np.isnan(theirs[1].imag)
    assert_identical(run_torch("scatter_elements", data, idx, upd, 0, "add"), ours)


def test_torch_max_min_signed_zero_ties_keep_self(torch):
    data, idx, upd = np.array([0.0, -0.0], F4), np.array([0, 1]), np.array([-0.0, 0.0], F4)
    for red in ("max", "min"):
        ours = scatterops.scatter_elements(data, idx, upd, reduction=red)
        assert_identical(ours, {"max": np.maximum, "min": np.minimum}[red](data, upd))
        assert_identical(ours, upd)
        assert_identical(run_torch("scatter_elements", data, idx, upd, 0, red), data)
        assert_identical(run_torch("scatter_update", data, idx, upd, 0, red), data)


def test_torch_complex_prod_rounds_otherwise(torch):
    data, idx = np.array([1 + 1.5j]), np.array([0, 0, 0])
    upd = np.array([1j, 1 + 3002399751580331j, 1j])
    ours = scatterops.scatter_elements(data, idx, upd, reduction="mul")
    at = data.copy()
    np.multiply.at(at, idx, upd)
    assert_identical(ours, at)
    assert ours[0].real == 4503599627370495.0
    theirs = run_torch("scatter_elements", data, idx, upd, 0, "mul")
    assert theirs[0].real == 4503599627370495.5 and theirs[0].imag == ours[0].imag


def test_torch_complex_mean(torch):
    """complex mean: scatterops divides in complex128 and rounds once; scatter_reduce
    divides in complex64, and divides an element no update hits by 1 (an inf part turns
    the other NaN)."""
    data, idx = np.array([complex(0, np.inf), 2 - 1j], np.complex64), np.array([1, 1])
    upd = np.array([-1 - 3j, -3 - 3j], np.complex64)
    ours = scatterops.scatter_elements(data, idx, upd, reduction="mean")
    assert_identical(ours, np.array([complex(0, np.inf), np.complex128(-2 - 7j) / 3], np.complex64))
    theirs = run_torch("scatter_elements", data, idx, upd, 0, "mean")
    assert np.isnan(theirs[0].real) and theirs[0].imag == np.inf, theirs
    assert theirs[1].real == ours[1].real and theirs[1].imag == np.nextafter(ours[1].imag, np.float32(-3))

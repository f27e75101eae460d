"""ONNX's Scatter, ScatterElements and ScatterND, run by scatterops, for ONNX's reference evaluator.

``ops`` lists one ``onnx.reference.op_run.OpRun`` subclass per operator; hand it to the
evaluator and every node of these types in the model runs through scatterops::

    from onnx.reference import ReferenceEvaluator
    import scatterops.onnx

    session = ReferenceEvaluator(model, new_ops=scatterops.onnx.ops)
    outputs = session.run(None, feeds)

The attributes are ONNX's: ``reduction`` (``"none"``, ``"add"``, ``"mul"``, ``"max"``,
``"min"``; ScatterND and ScatterElements) and ``axis`` (ScatterElements, and Scatter, the
opset-9 operator that is ScatterElements without a reduction).  Where scatterops' rules differ
from ONNX's own reference implementation of these operators (NaN in max / min, ties of signed
zeros, errors), see docs/onnx.md.  Needs onnx (``pip install onnx``); ``import scatterops``
does not import this module.
"""
from __future__ import annotations

try:
    from onnx.reference.op_run import OpRun
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("scatterops.onnx needs onnx: pip install onnx "
                      "(or, from a checkout of scatterops, pip install -e '.[peers]')") from _exc

from . import _api

__all__ = ["ops", "Scatter", "ScatterElements", "ScatterND"]

#: the values ONNX defines for the reduction attribute (ScatterND-18, ScatterElements-18)
ONNX_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _reduction(op: str, value) -> str:
    """The reduction attribute as scatterops takes it ("none" when the node has none)."""
    if value is None:
        return "none"
    if isinstance(value, bytes):
        value = value.decode()
    if value not in ONNX_REDUCTIONS:
        raise ValueError(f"{op}: the reduction attribute must be one of {list(ONNX_REDUCTIONS)}, "
                         f"got {value!r}")
    return value


def _axis(value) -> int:
    return 0 if value is None else int(value)


class ScatterND(OpRun):
    """ONNX ScatterND (opsets 11, 13, 16, 18) as ``scatterops.scatter_nd``."""

    op_domain = ""

    def _run(self, data, indices, updates, reduction=None):
        return (_api.scatter_nd(data, indices, updates,
                                reduction=_reduction("ScatterND", reduction)),)


class ScatterElements(OpRun):
    """ONNX ScatterElements (opsets 11, 13, 16, 18) as ``scatterops.scatter_elements``."""

    op_domain = ""

    def _run(self, data, indices, updates, axis=None, reduction=None):
        return (_api.scatter_elements(data, indices, updates, _axis(axis),
                                      reduction=_reduction("ScatterElements", reduction)),)


class Scatter(OpRun):
    """ONNX Scatter (opsets 9 and 11; deprecated since 11): ScatterElements without a reduction."""

    op_domain = ""

    def _run(self, data, indices, updates, axis=None):
        return (_api.scatter_elements(data, indices, updates, _axis(axis)),)


#: the operators for ``ReferenceEvaluator(model, new_ops=ops)``
ops = [Scatter, ScatterElements, ScatterND]

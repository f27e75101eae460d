"""The peers: which libraries are compared, and the plumbing to ask each of them for a scatter.

* ``numpy``: fancy assignment, ``ufunc.at``, ``np.put_along_axis`` -- one thread.
* ``torch`` (CPU): ``scatter`` / ``scatter_add`` / ``scatter_reduce`` / ``index_put`` /
  ``index_copy`` / ``index_add`` / ``index_reduce`` on tensors that share the NumPy inputs'
  memory (``torch.from_numpy``, no copy).  Out of place, the ``torch.<op>(self, ...)`` functions
  are used: they clone ``self`` and scatter into the clone, so the copy is in the timing; the
  in-place cases call the ``self.<op>_`` methods on a tensor sharing ``data``'s memory.  The
  result goes back to NumPy with ``.numpy()`` (no copy).  ``torch.set_num_threads(threads)``.
* ``onnxruntime``: a one-node model (ScatterND / ScatterElements, opset 18) built in memory with
  ``onnx.helper``, one ``InferenceSession`` on the CPU provider with ``intra_op_num_threads =
  threads`` (``inter_op_num_threads = 1``), run with ``session.run`` on the NumPy inputs.
* ``openvino``: a one-op ``ov.Model`` (``openvino.opset15`` scatter_update / scatter_nd_update /
  scatter_elements_update) compiled for ``"CPU"`` with ``INFERENCE_NUM_THREADS = threads``,
  ``NUM_STREAMS = 1``, ``PERFORMANCE_HINT = LATENCY`` and ``INFERENCE_PRECISION_HINT = f32`` (so a
  CPU with bf16 support does not compute f32 in bf16), run with ``infer(..., share_inputs=True,
  share_outputs=True)``: inputs are read where they lie, the result is the request's output tensor.

ONNX Runtime and OpenVINO write their result into memory they keep between calls (ORT's arena,
OpenVINO's output tensor), which is already touched after the first call; scatterops, NumPy and
torch return a new array each call and pay for fresh pages.  That is how each is normally used; it
is a (small) advantage to the first two in the out-of-place timings.
"""
from __future__ import annotations

import importlib
import os
import time
from typing import Dict, List, Optional, Sequence

import numpy as np

#: column order; the subject comes last
PEERS: List[str] = ["numpy", "torch", "onnxruntime", "openvino"]
SUBJECT = "scatterops"
#: the modules each needs
MODULES: Dict[str, Sequence[str]] = {
    "numpy": ("numpy",),
    "torch": ("torch",),
    "onnxruntime": ("onnxruntime", "onnx"),
    "openvino": ("openvino",),
    "scatterops": ("scatterops",),
}

THREADS = 1     # set by configure()


def available() -> Dict[str, Optional[str]]:
    """peer -> None if its modules import, else why it is left out."""
    status: Dict[str, Optional[str]] = {}
    for peer in PEERS + [SUBJECT]:
        why = None
        for module in MODULES[peer]:
            tries = 10 if peer == SUBJECT else 1    # scatterops may be being rebuilt: retry
            for attempt in range(tries):
                try:
                    importlib.import_module(module)
                    why = None
                    break
                except Exception as exc:  # ImportError, or a broken install
                    why = f"{module}: {type(exc).__name__}: {exc}"
                    if attempt + 1 < tries:
                        time.sleep(2)
            if why:
                break
        status[peer] = why
    return status


def configure(threads: int, peers: Sequence[str]) -> Dict[str, str]:
    """Set every threaded library to ``threads``; -> peer -> version."""
    global THREADS
    THREADS = threads
    versions = {"numpy": np.__version__}
    if "torch" in peers:
        import torch
        torch.set_num_threads(threads)
        versions["torch"] = torch.__version__
    if "onnxruntime" in peers:
        import onnx
        import onnxruntime
        versions["onnxruntime"] = onnxruntime.__version__
        versions["onnx"] = onnx.__version__
    if "openvino" in peers:
        import openvino
        versions["openvino"] = openvino.__version__.split("-")[0]
    if SUBJECT in peers:
        import scatterops
        scatterops.set_num_threads(threads)
        versions[SUBJECT] = scatterops.__version__
    return versions


# ---------------------------------------------------------------------------------------------
# torch


def t(a: np.ndarray):
    """A torch tensor sharing ``a``'s memory (strides kept)."""
    import torch
    return torch.from_numpy(a)


# ---------------------------------------------------------------------------------------------
# ONNX Runtime


def ort_call(op: str, inputs: Dict[str, np.ndarray], out_shape, out_dtype, threads: Optional[int] = None,
             **attrs):
    """A callable running a one-node ONNX model ``op(data, indices, updates)`` (opset 18) on
    ``inputs`` (name -> array, in the node's input order), returning its output."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    def info(name, dtype, shape):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                             list(shape))
    names = list(inputs)
    node = helper.make_node(op, names, ["out"], **attrs)
    graph = helper.make_graph([node], f"one_{op}", [info(k, v.dtype, v.shape) for k, v in inputs.items()],
                              [info("out", out_dtype, out_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS if threads is None else threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 4       # errors reach the caller as exceptions (reported as n/a)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = dict(inputs)
    run = sess.run
    return lambda: run(None, feed)[0]


# ---------------------------------------------------------------------------------------------
# OpenVINO


def ov_call(make_node, inputs: Sequence[np.ndarray], threads: Optional[int] = None):
    """A callable running a one-op OpenVINO model on the CPU.  ``make_node(ops, params)`` builds the
    op from ``openvino.opset15`` and the model's Parameters (one per input, same shape and dtype)."""
    import openvino as ov
    import openvino.opset15 as ops
    params = [ops.parameter(list(a.shape), a.dtype, name=f"in{i}") for i, a in enumerate(inputs)]
    node = make_node(ops, params)
    model = ov.Model([node], params, "one_op")
    core = ov.Core()
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": THREADS if threads is None else threads,
        "NUM_STREAMS": 1,
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32",
    })
    req = compiled.create_infer_request()
    feed = {i: a for i, a in enumerate(inputs)}
    infer = req.infer

    def run():
        return infer(feed, share_inputs=True, share_outputs=True)[0]
    run.keep = (core, compiled, req)     # the request must outlive the callable's results
    return run


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def nproc() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

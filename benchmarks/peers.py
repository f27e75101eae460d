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
* ``jax`` (CPU): ``x.at[idx].add(u)`` / ``.max`` / ``.min`` under ``jax.jit`` on arrays put on the
  device once (untimed), each call ended by ``block_until_ready()``; ``jax_enable_x64`` is on, so
  int64 stays int64.  JAX has no per-call thread setting: XLA's CPU client uses its own pool of
  all CPUs at every ``--threads``.  JAX arrays are immutable: it has no in-place form.
* ``numba``: the serial ``@njit`` loop a user writes by hand (``for i in range(n): o[ix[i]] +=
  u[i]``, see ``numba_loop``); out of place it runs on ``data.copy()``.  One thread: a ``prange``
  loop would race on duplicate indices.
* ``numpy_groupies``: ``aggregate(idx, u, func, size=n)`` (its numba backend, and ``aggregate_np``)
  where the case is an aggregation of 1-D updates into a range; the aggregate is then combined
  with ``data`` (``data + sums``, ``np.maximum(data, maxes)``, ...), so a sum is not bit-equal to a
  scatter-add in update order (``~``).  Its numba backend splits large calls over numba's thread
  pool (per-thread partial sums, combined at the end), so ``configure`` sets numba's thread count
  to the row's: one thread in the 1-thread rows, ``--threads`` in the others.
* ``numbagg`` and ``pandas``: their group functions (``group_nansum``, ``groupby(...).sum()``,
  ...), in the group reductions' cases only (``groups.py``).

Every peer's build makes its first call itself where that call compiles (numba) or traces (JAX),
so no timed call pays for it; ``run.py`` also calls every implementation twice before timing.

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
PEERS: List[str] = ["numpy", "torch", "onnxruntime", "openvino", "jax", "numba", "numpy_groupies",
                    "numbagg", "pandas"]
SUBJECT = "scatterops"
#: the modules each needs
MODULES: Dict[str, Sequence[str]] = {
    "numpy": ("numpy",),
    "torch": ("torch",),
    "onnxruntime": ("onnxruntime", "onnx"),
    "openvino": ("openvino",),
    "jax": ("jax", "jaxlib"),
    "numba": ("numba",),
    "numpy_groupies": ("numpy_groupies", "numba"),
    "numbagg": ("numbagg",),
    "pandas": ("pandas",),
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
    if "jax" in peers:
        versions["jax"] = _jax().__version__
    if "numba" in peers or "numpy_groupies" in peers:
        import numba
        versions["numba"] = numba.__version__
        # numpy_groupies' numba backend has a parallel path (per-thread partial sums) on
        # numba's thread pool, all CPUs unless told: it runs at the row's thread count too
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    if "numpy_groupies" in peers:
        import numpy_groupies
        versions["numpy_groupies"] = numpy_groupies.__version__
    for name in ("numbagg", "pandas"):         # the group reductions' peers (-k groups)
        if name in peers:
            versions[name] = importlib.import_module(name).__version__
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


# ---------------------------------------------------------------------------------------------
# JAX


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)       # int64 indices and data stay 64-bit
    try:
        jax.config.update("jax_platforms", "cpu")
    except Exception:                                 # the backend is already up: it is the CPU
        pass
    return jax


_JITTED: Dict[str, object] = {}


def jax_call(op: str, arrays: Sequence[np.ndarray], **kw):
    """A callable running ``jax.jit(op)`` on ``arrays`` put on the CPU device once; ``op`` is one
    of ``JAX_OPS``.  The first call (the trace and compile) is made here, untimed."""
    jax = _jax()
    key = op + repr(sorted(kw.items()))
    fn = _JITTED.get(key)
    if fn is None:
        fn = _JITTED[key] = jax.jit(_jax_op(op, **kw))
    dev = [jax.device_put(a) for a in arrays]

    def run():
        return fn(*dev).block_until_ready()
    run()
    return run


def _jax_op(op: str, **kw):
    import jax.numpy as jnp
    if op in ("add", "max", "min"):
        return lambda d, i, u: getattr(d.at[i], op)(u, **kw)
    if op == "mean":            # include_self: (data + sum) / (count + 1), divided in float64
        def mean(d, i, u):
            s = d.at[i].add(u, **kw)
            c = jnp.zeros(d.shape[0], jnp.int64).at[i].add(1, **kw)
            c = c.reshape(c.shape + (1,) * (d.ndim - 1))
            return jnp.where(c > 0, (s.astype(jnp.float64) / (c + 1)).astype(d.dtype), d)
        return mean
    raise ValueError(op)


# ---------------------------------------------------------------------------------------------
# numba: the serial loops a user writes by hand

_LOOPS: Dict[str, object] = {}


def numba_loop(op: str):
    """The serial ``@njit`` loop for ``op`` -- ``add``, ``max``, ``min`` or ``mean`` of 1-D updates
    into a 1-D ``o`` (``o[ix[i]] += u[i]``), or ``add_rows`` of (m, F) rows into (n, F)
    (``o[ix[i], j] += u[i, j]``) -- in place on ``o``.  Compiled once per dtype, at its first call."""
    if op in _LOOPS:
        return _LOOPS[op]
    import numba
    jit = numba.njit(nogil=True)
    if op == "add":
        def loop(o, ix, u):
            for i in range(ix.shape[0]):
                o[ix[i]] += u[i]
    elif op == "max":
        def loop(o, ix, u):
            for i in range(ix.shape[0]):
                if u[i] > o[ix[i]]:
                    o[ix[i]] = u[i]
    elif op == "min":
        def loop(o, ix, u):
            for i in range(ix.shape[0]):
                if u[i] < o[ix[i]]:
                    o[ix[i]] = u[i]
    elif op == "mean":          # include_self: (data + sum) / (count + 1), divided in float64
        def loop(o, ix, u):
            c = np.zeros(o.shape[0], np.int64)
            for i in range(ix.shape[0]):
                o[ix[i]] += u[i]
                c[ix[i]] += 1
            for j in range(o.shape[0]):
                if c[j]:
                    o[j] = np.float64(o[j]) / (c[j] + 1)
    elif op == "add_rows":
        def loop(o, ix, u):
            for i in range(ix.shape[0]):
                r = ix[i]
                for j in range(u.shape[1]):
                    o[r, j] += u[i, j]
    else:
        raise ValueError(op)
    _LOOPS[op] = jit(loop)
    return _LOOPS[op]


def numba_call(op: str, d: np.ndarray, ix: np.ndarray, u: np.ndarray, inplace: bool):
    """A callable running ``numba_loop(op)`` on ``d`` (in place) or on ``d.copy()``; the first
    call (the compile for these dtypes) is made here, on a copy, untimed."""
    loop = numba_loop(op)
    loop(d.copy(), ix, u)
    if inplace:
        return lambda: (loop(d, ix, u), d)[1]

    def run():
        o = d.copy()
        loop(o, ix, u)
        return o
    return run


# ---------------------------------------------------------------------------------------------
# numpy_groupies


def npg_call(func: str, d: np.ndarray, ix: np.ndarray, u: np.ndarray, inplace: bool,
             backend: str = "numba"):
    """A callable doing a 1-D scatter with ``reduction=func`` (add, max, min, mean) through
    ``numpy_groupies`` (``aggregate``: its numba backend; ``"numpy"``: ``aggregate_np``): the
    aggregate over a range of ``d.size``, then combined with ``d`` (on ``d`` itself in place)."""
    import numpy_groupies as npg
    agg = npg.aggregate if backend == "numba" else npg.aggregate_np
    n, dt = d.shape[0], d.dtype
    if func in ("max", "min"):
        fill = (np.iinfo(dt).min if func == "max" else np.iinfo(dt).max) if dt.kind in "iu" else \
            (-np.inf if func == "max" else np.inf)
        comb = np.maximum if func == "max" else np.minimum

        def run():
            a = agg(ix, u, func, size=n, fill_value=fill, dtype=dt)
            return comb(d, a, out=d) if inplace else comb(d, a)
    elif func == "add":
        def run():
            a = agg(ix, u, "sum", size=n, dtype=dt)
            return np.add(d, a, out=d) if inplace else d + a
    elif func == "mean":            # include_self: (data + sum) / (count + 1)
        def run():
            s = agg(ix, u, "sum", size=n, dtype=dt)
            c = agg(ix, 1, "len", size=n, dtype=np.int64)
            o = d if inplace else d.copy()
            hit = c > 0
            o[hit] = ((o[hit] + s[hit]) / (c[hit] + 1)).astype(dt)
            return o
    else:
        raise ValueError(func)
    agg(ix, u, "sum" if func in ("add", "mean") else func, size=n)    # compiles, leaves d alone
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

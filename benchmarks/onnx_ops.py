"""Time ONNX's reference evaluator on a one-node ScatterND model, with and without scatterops' ops.

    python -m benchmarks.onnx_ops [--n N] [--updates M] [--repeat R] [--reduction add]

The model is one ScatterND node (opset 18): ``data`` float32 of N elements (default 10^6),
``indices`` int64 of shape (M, 1) (default 10^6 random positions, duplicates included) and
``updates`` float32 of M, with ``reduction`` (default ``add``).  Each evaluator,
``ReferenceEvaluator(model)`` and ``ReferenceEvaluator(model, new_ops=scatterops.onnx.ops)``,
is built once, untimed, run once to check that both give the same result (bit for bit), and
then timed: the median (and the spread) of ``--repeat`` runs of ``session.run``, each a whole
evaluation, the copy of ``data`` included.  Nothing is asserted about a time.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def model(reduction: str):
    """The one-node opset-18 model: out = ScatterND(data, indices, updates)."""
    from onnx import TensorProto, helper
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["out"],
                            **({} if reduction == "none" else {"reduction": reduction}))
    graph = helper.make_graph(
        [node], "scatternd",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [None]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [None, 1]),
         helper.make_tensor_value_info("updates", TensorProto.FLOAT, [None])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def feeds(n: int, m: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"data": rng.standard_normal(n).astype(np.float32),
            "indices": rng.integers(0, n, (m, 1)),
            "updates": rng.standard_normal(m).astype(np.float32)}


def time_runs(session, inputs: dict, repeat: int) -> list:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, inputs)
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.onnx_ops", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e6, help="elements of data (default 1e6)")
    parser.add_argument("--updates", type=float, default=1e6, help="updates (default 1e6)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (default 3)")
    parser.add_argument("--reduction", default="add", choices=["none", "add", "mul", "max", "min"])
    args = parser.parse_args(argv)
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        print("needs onnx: pip install onnx", file=sys.stderr)
        return 1
    import scatterops
    import scatterops.onnx

    n, m = int(args.n), int(args.updates)
    onnx_model = model(args.reduction)
    inputs = feeds(n, m)
    sessions = {"onnx reference": ReferenceEvaluator(onnx_model),
                "with scatterops.onnx.ops": ReferenceEvaluator(onnx_model, new_ops=scatterops.onnx.ops)}
    results = {name: s.run(None, inputs)[0] for name, s in sessions.items()}
    ours, theirs = results["with scatterops.onnx.ops"], results["onnx reference"]
    same = ours.tobytes() == theirs.tobytes()
    print(f"ScatterND reduction={args.reduction}: {m:.0e} updates into {n:.0e} float32, "
          f"{args.repeat} runs each, {scatterops.get_num_threads()} scatterops thread(s); "
          f"results {'bit-identical' if same else 'DIFFER'}")
    medians = {}
    for name, session in sessions.items():
        times = time_runs(session, inputs, args.repeat)
        medians[name] = statistics.median(times)
        print(f"  {name:26s} median {medians[name] * 1e3:10.2f} ms  "
              f"(min {min(times) * 1e3:.2f}, max {max(times) * 1e3:.2f})")
    ratio = medians["onnx reference"] / medians["with scatterops.onnx.ops"]
    print(f"  speed-up: {ratio:.0f}x")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

"""``python -m scatterops``: run the worked examples of the specifications scatterops implements.

For every example in the documents scatterops was built from (OpenVINO ScatterUpdate-3 and
ScatterNDUpdate-3, ONNX Scatter / ScatterElements) this prints where it comes from, the inputs, the
result scatterops computes, the result the document gives, and OK or MISMATCH.  The two large
examples report shapes and time, and their values are checked against plain NumPy.  They run
with their first axis cut from the document's 1000 to 40, so the whole run needs about 120 MB;
``--full`` gives them the document's size (a 1.5 GB ``updates`` array, about 2.1 GB in all).  A
last section shows what happens to duplicate indices under each reduction.

The exit status is 1 if any result differs from the document, so this doubles as a smoke test.
"""
from __future__ import annotations

import argparse
import sys
import textwrap
import time

import numpy as np

import scatterops
from scatterops import scatter_elements, scatter_nd, scatter_update

_failures: list = []
_count = 0


def _header(title: str, source: str, call: str) -> None:
    global _count
    _count += 1
    print()
    print(f"[{_count}] {title}")
    print(f"    source: {source}")
    print(f"    call:   {call}")


def _show(name: str, value) -> None:
    a = np.asarray(value)
    label = f"{name} ({a.dtype}, shape {a.shape})"
    print(f"    {label}:")
    print(textwrap.indent(np.array2string(a, separator=", "), " " * 8))


def _verdict(title: str, ok: bool, detail: str = "") -> None:
    print(f"    => {'OK' if ok else 'MISMATCH'}{(' ' + detail) if detail else ''}")
    if not ok:
        _failures.append(title)


def _same(result: np.ndarray, expected: np.ndarray) -> bool:
    return result.shape == expected.shape and result.dtype == expected.dtype \
        and bool(np.array_equal(result, expected))


def _example(title: str, source: str, call: str, func, inputs: dict, kwargs: dict, expected) -> None:
    """A small example: show everything, compare with the document's output."""
    _header(title, source, call)
    for name, value in inputs.items():
        _show(name, value)
    try:
        result = func(*inputs.values(), **kwargs)
    except Exception as exc:  # report and go on: one broken example should not hide the others
        print(f"    scatterops raised {type(exc).__name__}: {exc}")
        _verdict(title, False)
        return
    _show("result", result)
    _show("expected (from the document)", expected)
    _verdict(title, _same(result, expected))


def _timed(func, *args, **kwargs):
    t0 = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - t0


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


# --------------------------------------------------------------------------------------------
# The examples


#: the first axis of the two large examples: the document's, or cut to keep memory small
FULL_BATCH, SMALL_BATCH = 1000, 40


def _batch_note(batch: int) -> str:
    return "" if batch == FULL_BATCH else f" (first axis {batch} of the document's {FULL_BATCH}; --full for all)"


def scatter_update_examples(batch: int) -> None:
    title = "OpenVINO ScatterUpdate-3, Example 2"
    f32 = np.float32
    _example(
        title, "OpenVINO opset docs, ScatterUpdate-3 (docs/ops/movement/ScatterUpdate_3)",
        "scatter_update(data, indices, updates, axis=1)",
        scatter_update,
        {"data": np.array([[-1.0, 1.0, -1.0, 3.0, 4.0],
                           [-1.0, 6.0, -1.0, 8.0, 9.0],
                           [-1.0, 11.0, 1.0, 13.0, 14.0]], f32),
         "indices": np.array([0, 2]),
         "updates": np.array([[1.0, 1.0],
                              [1.0, 1.0],
                              [1.0, 2.0]], f32)},
        {"axis": 1},
        np.array([[1.0, 1.0, 1.0, 3.0, 4.0],
                  [1.0, 6.0, 1.0, 8.0, 9.0],
                  [1.0, 11.0, 2.0, 13.0, 14.0]], f32))

    size = "full size: updates are 1.5 GB" if batch == FULL_BATCH else f"first axis {batch}"
    title = f"OpenVINO ScatterUpdate-3, Example 1 ({size})"
    _header(title, "OpenVINO opset docs, ScatterUpdate-3",
            "scatter_update(data, indices, updates, axis=1)")
    rng = np.random.default_rng(0)
    try:
        data = rng.random((batch, 256, 10, 15), dtype=np.float32)
        indices = rng.integers(0, 256, size=(125, 20))
        updates = rng.random((batch, 125, 20, 10, 15), dtype=np.float32)
    except MemoryError:
        print(f"    skipped: not enough memory for the {updates_mb(batch)} MB updates array")
        return
    print(f"    data    {data.dtype} {data.shape}")
    print(f"    indices {indices.dtype} {indices.shape}, values in [0, 256) "
          f"({np.unique(indices).size} distinct of {indices.size}: duplicates, the last wins)")
    print(f"    updates {updates.dtype} {updates.shape}")
    try:
        result, seconds = _timed(scatter_update, data, indices, updates, axis=1)
    except Exception as exc:
        print(f"    scatterops raised {type(exc).__name__}: {exc}")
        _verdict(title, False)
        return
    print(f"    result  {result.dtype} {result.shape}   in {_ms(seconds)} (one call)")
    print(f"    expected (from the document): float32 (1000, 256, 10, 15){_batch_note(batch)}")
    # The values, checked against NumPy: for each distinct index, the update at its last
    # position in C order of indices.
    flat = indices.reshape(-1)
    distinct, first_rev = np.unique(flat[::-1], return_index=True)
    last = flat.size - 1 - first_rev
    expected = data.copy()
    expected[:, distinct] = updates.reshape(batch, -1, 10, 15)[:, last]
    del updates
    shape_ok = result.shape == (batch, 256, 10, 15) and result.dtype == np.float32
    values_ok = bool(np.array_equal(result, expected))
    print(f"    values equal NumPy's (last update wins): {values_ok}")
    _verdict(title, shape_ok and values_ok)


def updates_mb(batch: int) -> int:
    return batch * 125 * 20 * 10 * 15 * 4 // 10**6


def scatter_nd_examples(batch: int) -> None:
    source = "OpenVINO opset docs, ScatterNDUpdate-3 (docs/ops/movement/ScatterNDUpdate_3.md)"
    _example(
        "OpenVINO ScatterNDUpdate-3, Example 1 (four single elements)", source,
        "scatter_nd(data, indices, updates)",
        scatter_nd,
        {"data": np.array([1, 2, 3, 4, 5, 6, 7, 8]),
         "indices": np.array([[4], [3], [1], [7]]),
         "updates": np.array([9, 10, 11, 12])},
        {},
        np.array([1, 11, 3, 10, 9, 6, 7, 12]))

    _example(
        "OpenVINO ScatterNDUpdate-3, Example 2 (two 4x4 slices)", source,
        "scatter_nd(data, indices, updates)",
        scatter_nd,
        {"data": np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
                           [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
                           [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
                           [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]]),
         "indices": np.array([[0], [2]]),
         "updates": np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
                              [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]])},
        {},
        np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
                  [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
                  [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]],
                  [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]]))

    title = "OpenVINO ScatterNDUpdate-3, layer example (3-tuples into a 4-D tensor)"
    _header(title, source, "scatter_nd(data, indices, updates)")
    rng = np.random.default_rng(1)
    data = rng.random((batch, 256, 10, 15), dtype=np.float32)
    # 25 x 125 distinct (i, j, k) triples: the document forbids duplicates under ScatterNDUpdate-3
    flat = rng.choice(batch * 256 * 10, size=25 * 125, replace=False)
    indices = np.stack(np.unravel_index(flat, (batch, 256, 10)), axis=-1).reshape(25, 125, 3)
    updates = rng.random((25, 125, 15), dtype=np.float32)
    print(f"    data    {data.dtype} {data.shape}")
    print(f"    indices {indices.dtype} {indices.shape} (each row an (i, j, k) into data's first 3 axes)")
    print(f"    updates {updates.dtype} {updates.shape} (each a row of 15 elements)")
    try:
        result, seconds = _timed(scatter_nd, data, indices, updates)
    except Exception as exc:
        print(f"    scatterops raised {type(exc).__name__}: {exc}")
        _verdict(title, False)
        return
    print(f"    result  {result.dtype} {result.shape}   in {_ms(seconds)} (one call)")
    print(f"    expected (from the document): (1000, 256, 10, 15){_batch_note(batch)}")
    expected = data.copy()
    expected[indices[..., 0], indices[..., 1], indices[..., 2]] = updates
    values_ok = bool(np.array_equal(result, expected))
    print(f"    values equal NumPy's data[i, j, k] = updates: {values_ok}")
    _verdict(title, result.shape == (batch, 256, 10, 15) and values_ok)


def scatter_elements_examples() -> None:
    source = "ONNX operator docs, Scatter-9 / Scatter-11 (today's ScatterElements)"
    f32 = np.float32
    _example(
        "ONNX Scatter / ScatterElements, Example 1 (axis 0)", source,
        "scatter_elements(data, indices, updates)   # axis=0",
        scatter_elements,
        {"data": np.zeros((3, 3), f32),
         "indices": np.array([[1, 0, 2],
                              [0, 2, 1]]),
         "updates": np.array([[1.0, 1.1, 1.2],
                              [2.0, 2.1, 2.2]], f32)},
        {},
        np.array([[2.0, 1.1, 0.0],
                  [1.0, 0.0, 2.2],
                  [0.0, 2.1, 1.2]], f32))

    _example(
        "ONNX Scatter / ScatterElements, Example 2 (axis 1)", source,
        "scatter_elements(data, indices, updates, axis=1)",
        scatter_elements,
        {"data": np.array([[1.0, 2.0, 3.0, 4.0, 5.0]], f32),
         "indices": np.array([[1, 3]]),
         "updates": np.array([[1.1, 2.1]], f32)},
        {"axis": 1},
        np.array([[1.0, 1.1, 3.0, 2.1, 5.0]], f32))


def duplicates_example() -> None:
    """Several updates on one element: what each reduction makes of them, next to NumPy."""
    title = "Duplicate indices under each reduction"
    data = np.array([2.0, 0.0, 5.0, 1.0])
    indices = np.array([0, 2, 0, 0, 3])
    updates = np.array([1.0, 7.0, 5.0, 3.0, 4.0])
    _header(title, "scatterops README, 'Duplicates': updates are applied in C order",
            "scatter_elements(data, indices, updates, reduction=...)")
    _show("data", data)
    _show("indices", indices)
    _show("updates", updates)

    def numpy_at(ufunc):
        o = data.copy()
        ufunc.at(o, indices, updates)
        return o

    last_wins = data.copy()
    for i, u in zip(indices, updates):  # the order the contract promises, spelled out
        last_wins[i] = u
    hits = np.bincount(indices, minlength=data.size)
    sums = numpy_at(np.add)
    mean = np.where(hits > 0, sums / (hits + 1), data)
    sums_only = data.copy()
    sums_only[hits > 0] = 0
    np.add.at(sums_only, indices, updates)
    mean_updates_only = np.where(hits > 0, sums_only / np.maximum(hits, 1), data)

    rows = [
        ('"none" (the last update wins)', {}, last_wins, "a Python loop in order"),
        ('"add"', {"reduction": "add"}, numpy_at(np.add), "np.add.at"),
        ('"max"', {"reduction": "max"}, numpy_at(np.maximum), "np.maximum.at"),
        ('"mean"', {"reduction": "mean"}, mean, "np.add.at / (count + 1)"),
        ('"mean", include_self=False', {"reduction": "mean", "include_self": False},
         mean_updates_only, "sum of updates / count"),
    ]
    ok = True
    print("    reduction                       result                   NumPy"
          "                    (NumPy spelling)")
    for label, kwargs, expected, spelled in rows:
        try:
            result = scatter_elements(data, indices, updates, **kwargs)
            text = np.array2string(result, separator=", ")
            same = _same(result, expected)
        except Exception as exc:
            text, same = f"{type(exc).__name__}: {exc}", False
        ok &= same
        mark = "" if same else "   <-- MISMATCH"
        print(f"    {label:<31} {text:<24} {np.array2string(expected, separator=', '):<24} "
              f"({spelled}){mark}")
    _verdict(title, ok)


def parse_args(argv=None) -> argparse.Namespace:
    doc = (__doc__ or "").split("\n\n")
    parser = argparse.ArgumentParser(
        prog="python -m scatterops", description="\n\n".join(doc[1:3]),
        epilog=doc[3] if len(doc) > 3 else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help=f"run the two large examples at the document's size (first axis "
                             f"{FULL_BATCH}, a {updates_mb(FULL_BATCH)} MB updates array, about "
                             f"2.1 GB in all) instead of a first axis of {SMALL_BATCH}")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    batch = FULL_BATCH if parse_args(argv).full else SMALL_BATCH
    threads = scatterops.get_num_threads() if hasattr(scatterops, "get_num_threads") else None
    print(f"scatterops {scatterops.__version__} (numpy {np.__version__}"
          + (f", {threads} threads" if threads else "") + ")")
    print(f"imported from {scatterops.__file__}")
    print("The worked examples of the specifications scatterops implements, computed by scatterops.")
    with np.printoptions(precision=4, suppress=True, linewidth=88, floatmode="maxprec"):
        scatter_update_examples(batch)
        scatter_nd_examples(batch)
        scatter_elements_examples()
        duplicates_example()
    print()
    if _failures:
        print(f"{len(_failures)} of {_count} examples MISMATCH:")
        for title in _failures:
            print(f"  - {title}")
        return 1
    print(f"all {_count} examples OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every worked example of the specifications scatterops implements (OpenVINO ScatterUpdate-3
and ScatterNDUpdate-3, ONNX Scatter / ScatterElements and ScatterND), literally.

Each example runs through the C-backed function and through
``scatterops.reference`` and is compared, values and dtype, with the output the
document prints.  Two examples only give shapes (ScatterUpdate-3 Example 1 and
ScatterNDUpdate-3's 1000x256x10x15 layer): they run at their full size and are
checked against NumPy fancy assignment.

Seed 003 (ONNX ScatterND with reductions, from a toolkit's operator reference)
has no numeric example, only the defining loop; that loop is run literally
below.  The ONNX operator documentation's own ScatterND and ScatterElements
examples (ScatterND-16, ScatterElements-16: the same two plus the add / mul /
negative-index / duplicate-index ones) are included too.
"""
from __future__ import annotations

import numpy as np
import pytest

import scatterops
from scatterops import reference

MODULES = [pytest.param(scatterops, id="c"), pytest.param(reference, id="reference")]


@pytest.fixture(params=MODULES)
def mod(request):
    return request.param


def assert_output(result, expected):
    np.testing.assert_array_equal(result, expected, strict=True)
    assert result.dtype == expected.dtype
    assert result.shape == expected.shape


# --------------------------------------------------------------------------------------
# OpenVINO ScatterUpdate-3 (000_5585ab56944932a6.txt, 004_c05a08ab34d318b7.txt)
# --------------------------------------------------------------------------------------

SU3_EX2_DATA = [[-1.0, 1.0, -1.0, 3.0, 4.0],
                [-1.0, 6.0, -1.0, 8.0, 9.0],
                [-1.0, 11.0, 1.0, 13.0, 14.0]]
SU3_EX2_INDICES = [0, 2]
SU3_EX2_UPDATES = [[1.0, 1.0],
                   [1.0, 1.0],
                   [1.0, 2.0]]
SU3_EX2_OUTPUT = [[1.0, 1.0, 1.0, 3.0, 4.0],
                  [1.0, 6.0, 1.0, 8.0, 9.0],
                  [1.0, 11.0, 2.0, 13.0, 14.0]]


@pytest.mark.parametrize("axis", [1, -1, np.array([1]), np.array(1, dtype=np.int32)])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint8])
def test_scatter_update_3_example_2(mod, axis, index_dtype):
    # "1.0f": f32 data and updates; axis is "a 1D tensor with one element" {1}
    data = np.array(SU3_EX2_DATA, dtype=np.float32)
    result = mod.scatter_update(data, np.array(SU3_EX2_INDICES, dtype=index_dtype),
                                np.array(SU3_EX2_UPDATES, dtype=np.float32), axis)
    assert_output(result, np.array(SU3_EX2_OUTPUT, dtype=np.float32))
    np.testing.assert_array_equal(data, np.array(SU3_EX2_DATA, dtype=np.float32))  # a copy


def test_scatter_update_3_example_2_as_lists(mod):
    result = mod.scatter_update(SU3_EX2_DATA, SU3_EX2_INDICES, SU3_EX2_UPDATES, 1)
    assert_output(result, np.array(SU3_EX2_OUTPUT, dtype=np.float64))


def test_scatter_update_3_example_2_in_place(mod):
    data = np.array(SU3_EX2_DATA, dtype=np.float32)
    result = mod.scatter_update(data, SU3_EX2_INDICES, np.array(SU3_EX2_UPDATES, np.float32), 1, out=data)
    assert result is data
    assert_output(result, np.array(SU3_EX2_OUTPUT, dtype=np.float32))


# 1.5 GB of updates: left out of the sanitizer run (about 10 s there), where the examples at
# their own small sizes run the same code
@pytest.mark.slow
def test_scatter_update_3_example_1_full_size():
    # data [1000, 256, 10, 15] FP32, indices [125, 20], updates [1000, 125, 20, 10, 15],
    # axis [1]: 2500 indices on an axis of 256, so duplicates; the last update wins.
    # The indices hit columns 0..199; 200..255 keep data's values.
    # The reference's Python loop cannot do 375 million elements; the C-backed function
    # is held to NumPy fancy assignment with the winners made explicit.
    data = np.arange(1000 * 256 * 10 * 15, dtype=np.float32).reshape(1000, 256, 10, 15)
    data_before = data[::97, ::31].copy()
    indices = ((np.arange(125 * 20, dtype=np.int64) * 37 + 11) % 200).reshape(125, 20)
    updates = np.empty((1000, 125, 20, 10, 15), dtype=np.float32)
    np.add(np.arange(1000, dtype=np.float32).reshape(1000, 1, 1, 1, 1) * np.float32(-0.5),
           np.arange(125 * 20 * 150, dtype=np.float32).reshape(1, 125, 20, 10, 15), out=updates)

    result = scatterops.scatter_update(data, indices, updates, np.array([1]))

    assert result.shape == (1000, 256, 10, 15)
    assert result.dtype == np.float32
    flat = indices.reshape(-1)
    last = {int(t): m for m, t in enumerate(flat)}          # target -> last update position
    targets = np.array(sorted(last))
    sources = np.array([last[t] for t in targets])
    untouched = np.setdiff1d(np.arange(256), targets)
    assert untouched.size > 0                                # some columns keep data's values
    # spot values
    for i, t, k, l in [(0, 11, 0, 0), (999, 48, 9, 14), (500, int(targets[-1]), 3, 7),
                       (1, int(targets[0]), 5, 5)]:
        m = last[t]
        assert result[i, t, k, l] == updates[i, m // 20, m % 20, k, l]
    for i, t in [(0, int(untouched[0])), (999, int(untouched[-1]))]:
        np.testing.assert_array_equal(result[i, t], data[i, t])
    # everything, against NumPy fancy assignment (no duplicate targets left)
    expected = data.copy()
    expected[:, targets] = updates.reshape(1000, 2500, 10, 15)[:, sources]
    np.testing.assert_array_equal(result, expected, strict=True)
    np.testing.assert_array_equal(data[::97, ::31], data_before)


# --------------------------------------------------------------------------------------
# OpenVINO ScatterNDUpdate-3 (001_7680031584dbf377.txt) -- and ONNX ScatterND's docs
# --------------------------------------------------------------------------------------

ND_EX1 = dict(data=[1, 2, 3, 4, 5, 6, 7, 8],
              indices=[[4], [3], [1], [7]],
              updates=[9, 10, 11, 12],
              output=[1, 11, 3, 10, 9, 6, 7, 12])

ND_EX2 = dict(
    data=[[[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
          [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
          [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
          [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]],
    indices=[[0], [2]],
    updates=[[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
             [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]],
    output=[[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
            [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
            [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]],
            [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]])


@pytest.mark.parametrize("example", [ND_EX1, ND_EX2], ids=["example1", "example2"])
def test_scatter_nd_update_3_examples_as_lists(mod, example):
    result = mod.scatter_nd(example["data"], example["indices"], example["updates"])
    assert_output(result, np.array(example["output"]))          # int64, as np.asarray makes it


@pytest.mark.parametrize("example", [ND_EX1, ND_EX2], ids=["example1", "example2"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8, np.int64, np.float16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_scatter_nd_update_3_examples(mod, example, dtype, index_dtype):
    result = mod.scatter_nd(np.array(example["data"], dtype=dtype),
                            np.array(example["indices"], dtype=index_dtype),
                            np.array(example["updates"], dtype=dtype))
    assert_output(result, np.array(example["output"], dtype=dtype))


def test_scatter_nd_update_3_layer_example_full_size(mod):
    # data [1000, 256, 10, 15], indices [25, 125, 3], updates [25, 125, 15]: each 3-tuple
    # addresses a row of 15.  "indices must not have duplicate entries": distinct tuples.
    rng = np.random.default_rng(3)
    data = np.arange(1000 * 256 * 10 * 15, dtype=np.float32).reshape(1000, 256, 10, 15)
    flat = rng.choice(1000 * 256 * 10, size=25 * 125, replace=False)
    indices = np.stack(np.unravel_index(flat, (1000, 256, 10)), axis=-1).reshape(25, 125, 3)
    updates = -rng.random((25, 125, 15), dtype=np.float32)

    result = mod.scatter_nd(data, indices, updates)

    assert result.shape == (1000, 256, 10, 15)
    assert result.dtype == np.float32
    i, j, k = indices[7, 100]
    np.testing.assert_array_equal(result[i, j, k], updates[7, 100])
    i, j, k = indices[-1, -1]
    np.testing.assert_array_equal(result[i, j, k], updates[-1, -1])
    expected = data.copy()
    tuples = indices.reshape(-1, 3)
    expected[tuples[:, 0], tuples[:, 1], tuples[:, 2]] = updates.reshape(-1, 15)
    np.testing.assert_array_equal(result, expected, strict=True)


# ONNX ScatterND-16 documentation, "scatternd_add" / "scatternd_multiply": both updates hit
# slice 0.  The docs' "Expecting output" comments print slice 0 as below; their slice 2 is
# a copy-paste slip from the first example ([[1, 1, 1, 1], [2, 2, 2, 2], ...]) -- the
# ONNX test data itself is computed by a loop, and slices 1..3 are untouched data.
ND_DUP = dict(data=ND_EX2["data"], indices=[[0], [0]], updates=ND_EX2["updates"])
ND_ADD_SLICE0 = [[7, 8, 9, 10], [13, 14, 15, 16], [18, 17, 16, 15], [16, 15, 14, 13]]
ND_MUL_SLICE0 = [[5, 10, 15, 20], [60, 72, 84, 96], [168, 147, 126, 105], [128, 96, 64, 32]]


@pytest.mark.parametrize("reduction,slice0", [("add", ND_ADD_SLICE0), ("mul", ND_MUL_SLICE0)])
def test_onnx_scatternd_16_add_and_multiply_examples(mod, reduction, slice0):
    f32 = np.float32
    result = mod.scatter_nd(np.array(ND_DUP["data"], f32), np.array(ND_DUP["indices"], np.int64),
                            np.array(ND_DUP["updates"], f32), reduction=reduction)
    expected = np.array([slice0] + ND_DUP["data"][1:], dtype=f32)
    assert_output(result, expected)


# --------------------------------------------------------------------------------------
# ONNX ScatterND with reductions (003_73e2025bdea0a4d2.txt): the defining loop, literally
# --------------------------------------------------------------------------------------

def seed_003_loop(data, indices, updates, f=None):
    """The seed's pseudo-code.  Its ``output[indices[idx]]`` indexes with the k-tuple:
    in NumPy that needs ``tuple(...)`` (an array there would be fancy indexing of axis 0)."""
    output = np.copy(data)
    update_indices = indices.shape[:-1]
    for idx in np.ndindex(update_indices):
        if f is None:
            output[tuple(indices[idx])] = updates[idx]
        else:
            output[tuple(indices[idx])] = f(output[tuple(indices[idx])], updates[idx])
    return output


SEED_003_F = {"none": None, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("reduction", list(SEED_003_F))
@pytest.mark.parametrize("shape,k", [((6,), 1), ((4, 5), 1), ((4, 5), 2), ((3, 4, 2), 2), ((3, 4, 2), 3),
                                     ((3, 4, 2), 0)])
def test_onnx_scatternd_seed_003_loop(mod, reduction, shape, k):
    rng = np.random.default_rng(sum(shape) * 10 + k)
    data = rng.integers(-20, 20, shape, dtype=np.int64)
    n = 5
    if reduction == "none":      # "indices should not have duplicate entries"
        n = min(n, int(np.prod(shape[:k])))
        flat = rng.choice(int(np.prod(shape[:k])), size=n, replace=False)
        indices = np.stack(np.unravel_index(flat, shape[:k]), axis=-1).reshape(n, k) if k else \
            np.zeros((1, 0), np.int64)
    else:
        indices = np.stack([rng.integers(0, s, n) for s in shape[:k]], axis=-1) if k else \
            np.zeros((n, 0), np.int64)
    indices = indices.astype(np.int64)
    updates = rng.integers(-5, 6, indices.shape[:-1] + shape[k:], dtype=np.int64)
    expected = seed_003_loop(data, indices, updates, SEED_003_F[reduction])
    assert_output(mod.scatter_nd(data, indices, updates, reduction=reduction), expected)


# --------------------------------------------------------------------------------------
# ONNX Scatter-9 / Scatter-11 (002_176659f7eb35cb12.txt) via scatter_elements
# --------------------------------------------------------------------------------------

SC_EX1 = dict(data=[[0.0, 0.0, 0.0],
                    [0.0, 0.0, 0.0],
                    [0.0, 0.0, 0.0]],
              indices=[[1, 0, 2],
                       [0, 2, 1]],
              updates=[[1.0, 1.1, 1.2],
                       [2.0, 2.1, 2.2]],
              output=[[2.0, 1.1, 0.0],
                      [1.0, 0.0, 2.2],
                      [0.0, 2.1, 1.2]])
SC_EX2 = dict(data=[[1.0, 2.0, 3.0, 4.0, 5.0]],
              indices=[[1, 3]],
              updates=[[1.1, 2.1]],
              axis=1,
              output=[[1.0, 1.1, 3.0, 2.1, 5.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_onnx_scatter_example_1(mod, dtype, index_dtype):
    result = mod.scatter_elements(np.array(SC_EX1["data"], dtype), np.array(SC_EX1["indices"], index_dtype),
                                  np.array(SC_EX1["updates"], dtype))          # axis defaults to 0
    assert_output(result, np.array(SC_EX1["output"], dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("axis", [1, -1])
def test_onnx_scatter_example_2(mod, dtype, index_dtype, axis):
    result = mod.scatter_elements(np.array(SC_EX2["data"], dtype), np.array(SC_EX2["indices"], index_dtype),
                                  np.array(SC_EX2["updates"], dtype), axis)
    assert_output(result, np.array(SC_EX2["output"], dtype))


@pytest.mark.parametrize("example", [SC_EX1, SC_EX2], ids=["example1", "example2"])
def test_onnx_scatter_examples_as_lists(mod, example):
    result = mod.scatter_elements(example["data"], example["indices"], example["updates"],
                                  example.get("axis", 0))
    assert_output(result, np.array(example["output"]))


# ONNX ScatterElements-16 documentation: negative indices and duplicate indices with add
def test_onnx_scatter_elements_with_negative_indices(mod):
    result = mod.scatter_elements(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]], np.float32),
                                  np.array([[1, -3]], np.int64), np.array([[1.1, 2.1]], np.float32), 1)
    assert_output(result, np.array([[1.0, 1.1, 2.1, 4.0, 5.0]], np.float32))


def test_onnx_scatter_elements_with_duplicate_indices_add(mod):
    result = mod.scatter_elements(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]], np.float32),
                                  np.array([[1, 1]], np.int64), np.array([[1.1, 2.1]], np.float32), 1,
                                  reduction="add")
    # "print(y) produces [[1.0, 5.2, 3.0, 4.0, 5.0]]": 2 + 1.1 + 2.1 in float32 is float32(5.2)
    assert_output(result, np.array([[1.0, 5.2, 3.0, 4.0, 5.0]], np.float32))

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

_Reduction = Literal["none", "add", "sum", "sub", "mul", "prod", "multiply",
                     "max", "amax", "min", "amin", "mean"]
_Mode = Literal["raise", "wrap", "clip", "drop"]
_Axis = int | np.integer[Any] | npt.NDArray[np.integer[Any]]

def scatter_update(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike,
                   axis: _Axis = ..., *, reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
                   out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[Any]: ...
def scatter_nd(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike, *,
               reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
               out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[Any]: ...
def scatter_elements(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike,
                     axis: _Axis = ..., *, reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
                     out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[Any]: ...

_Func = str | Any
_GroupMode = Literal["raise", "drop"]

def group_reduce(values: npt.ArrayLike, groups: npt.ArrayLike, func: _Func = ..., *,
                 size: int | None = ..., axis: int = ..., fill_value: Any = ..., ddof: int = ...,
                 dtype: npt.DTypeLike = ..., mode: _GroupMode = ...,
                 out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[Any]: ...
def segment_reduce(values: npt.ArrayLike, indptr: npt.ArrayLike, func: _Func = ..., *,
                   axis: int = ..., fill_value: Any = ..., ddof: int = ...,
                   dtype: npt.DTypeLike = ...,
                   out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[Any]: ...
def group_softmax(values: npt.ArrayLike, groups: npt.ArrayLike, *, size: int | None = ...,
                  axis: int = ..., log: bool = ...,
                  out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[np.floating[Any]]: ...
def segment_softmax(values: npt.ArrayLike, indptr: npt.ArrayLike, *, axis: int = ...,
                    log: bool = ...,
                    out: np.ndarray[Any, Any] | None = ...) -> npt.NDArray[np.floating[Any]]: ...

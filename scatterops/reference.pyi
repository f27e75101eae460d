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

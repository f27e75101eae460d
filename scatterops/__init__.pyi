from typing import Any, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

__version__: str

_Out = TypeVar("_Out", bound=np.ndarray[Any, Any])
_Reduction = Literal["none", "add", "sum", "sub", "mul", "prod", "multiply",
                     "max", "amax", "min", "amin", "mean"]
_Mode = Literal["raise", "wrap", "clip", "drop"]
_Axis = int | np.integer[Any] | npt.NDArray[np.integer[Any]]

@overload
def scatter_update(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike,
                   axis: _Axis = ..., *, reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
                   out: None = ...) -> npt.NDArray[Any]: ...
@overload
def scatter_update(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike,
                   axis: _Axis = ..., *, reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
                   out: _Out) -> _Out: ...
@overload
def scatter_nd(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike, *,
               reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
               out: None = ...) -> npt.NDArray[Any]: ...
@overload
def scatter_nd(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike, *,
               reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ..., out: _Out) -> _Out: ...
@overload
def scatter_elements(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike,
                     axis: _Axis = ..., *, reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
                     out: None = ...) -> npt.NDArray[Any]: ...
@overload
def scatter_elements(data: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike,
                     axis: _Axis = ..., *, reduction: _Reduction = ..., include_self: bool = ..., mode: _Mode = ...,
                     out: _Out) -> _Out: ...
def at(ufunc: np.ufunc, a: npt.NDArray[Any], indices: Any,
       b: npt.ArrayLike | None = ...) -> None: ...
def set_num_threads(n: int) -> None: ...
def get_num_threads() -> int: ...

class threads:
    n: int
    def __init__(self, n: int) -> None: ...
    def __enter__(self) -> threads: ...
    def __exit__(self, *exc: object) -> None: ...
def aggregate(group_idx: npt.ArrayLike, a: npt.ArrayLike, func: str | Any = ...,
              size: int | tuple[int, ...] | None = ..., fill_value: Any = ..., order: Literal["C", "F"] = ...,
              dtype: npt.DTypeLike = ..., axis: int | None = ..., out: np.ndarray[Any, Any] | None = ...,
              **kwargs: Any) -> npt.NDArray[Any]: ...

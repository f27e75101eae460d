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

_GroupFunc = Literal["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin",
                     "first", "last", "any", "all", "count", "logsumexp", "nansum", "nanprod",
                     "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
                     "nanargmin", "nanfirst", "nanlast", "nancount"]
_GroupMode = Literal["raise", "drop"]

@overload
def group_reduce(values: npt.ArrayLike, groups: npt.ArrayLike, func: _GroupFunc | Any = ..., *,
                 size: int | None = ..., axis: int = ..., fill_value: Any = ..., ddof: int = ...,
                 dtype: npt.DTypeLike = ..., mode: _GroupMode = ..., out: None = ...) -> npt.NDArray[Any]: ...
@overload
def group_reduce(values: npt.ArrayLike, groups: npt.ArrayLike, func: _GroupFunc | Any = ..., *,
                 size: int | None = ..., axis: int = ..., fill_value: Any = ..., ddof: int = ...,
                 dtype: npt.DTypeLike = ..., mode: _GroupMode = ..., out: _Out) -> _Out: ...
@overload
def segment_reduce(values: npt.ArrayLike, indptr: npt.ArrayLike, func: _GroupFunc | Any = ..., *,
                   axis: int = ..., fill_value: Any = ..., ddof: int = ..., dtype: npt.DTypeLike = ...,
                   out: None = ...) -> npt.NDArray[Any]: ...
@overload
def segment_reduce(values: npt.ArrayLike, indptr: npt.ArrayLike, func: _GroupFunc | Any = ..., *,
                   axis: int = ..., fill_value: Any = ..., ddof: int = ..., dtype: npt.DTypeLike = ...,
                   out: _Out) -> _Out: ...
@overload
def group_softmax(values: npt.ArrayLike, groups: npt.ArrayLike, *, size: int | None = ...,
                  axis: int = ..., log: bool = ..., out: None = ...) -> npt.NDArray[Any]: ...
@overload
def group_softmax(values: npt.ArrayLike, groups: npt.ArrayLike, *, size: int | None = ...,
                  axis: int = ..., log: bool = ..., out: _Out) -> _Out: ...
@overload
def segment_softmax(values: npt.ArrayLike, indptr: npt.ArrayLike, *, axis: int = ...,
                    log: bool = ..., out: None = ...) -> npt.NDArray[Any]: ...
@overload
def segment_softmax(values: npt.ArrayLike, indptr: npt.ArrayLike, *, axis: int = ...,
                    log: bool = ..., out: _Out) -> _Out: ...

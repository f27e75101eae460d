"""How many threads a large call uses: ``set_num_threads``, ``get_num_threads``
and the environment variable ``SCATTEROPS_NUM_THREADS`` (read at import)."""
from __future__ import annotations

import operator
import os
import warnings

from . import _core

__all__ = ["set_num_threads", "get_num_threads"]


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def set_num_threads(n: int) -> None:
    """Set how many threads a large call may use.

    The setting is for the whole process and takes effect at the next call.
    Results are bit-identical for every thread count; small calls always run on
    the calling thread. At import the count is ``SCATTEROPS_NUM_THREADS`` if
    set, else the number of CPUs the process may use.

    Parameters
    ----------
    n : int
        The number of threads, from 1 to 1024 (any integer type with
        ``__index__``; not a bool).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``n`` is not an integer, or is a bool.
    ValueError
        ``n`` is outside ``[1, 1024]``.

    See Also
    --------
    get_num_threads : The count in force.

    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> before = so.get_num_threads()
    >>> so.set_num_threads(1)
    >>> so.get_num_threads()
    1
    >>> so.scatter_elements(np.zeros(3), [0, 0, 2], [1.0, 2.0, 3.0], reduction="add")
    array([3., 0., 3.])
    >>> so.set_num_threads(before)
    """
    if isinstance(n, bool):
        raise TypeError("set_num_threads: n must be an int >= 1, got bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"set_num_threads: n must be an int >= 1, got {type(n).__name__}") from None
    if not 1 <= n <= 1024:
        raise ValueError(f"set_num_threads: n must be in [1, 1024], got {n}")
    _core.set_num_threads(n)


def get_num_threads() -> int:
    """Return how many threads a large call may use.

    Returns
    -------
    int
        The count set by `set_num_threads`, or at import by
        ``SCATTEROPS_NUM_THREADS`` or the number of CPUs the process may use.

    See Also
    --------
    set_num_threads : Change it.

    Examples
    --------
    >>> import scatterops as so
    >>> so.get_num_threads() >= 1
    True
    """
    return _core.get_num_threads()


def _init_from_environment() -> None:
    default = _available_cpus()
    env = os.environ.get("SCATTEROPS_NUM_THREADS", "").strip()
    if env:
        try:
            value = int(env)
            if value < 1:
                raise ValueError
            default = min(value, 1024)
        except ValueError:
            warnings.warn(f"SCATTEROPS_NUM_THREADS={env!r} is not an int >= 1; "
                          f"using {default} threads", RuntimeWarning, stacklevel=3)
    _core.set_num_threads(default)


_init_from_environment()

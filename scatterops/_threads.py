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
    """Set how many threads a large call may use (an int >= 1).

    Results are bit-identical for every thread count; small calls always run on
    the calling thread.
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
    """How many threads a large call may use."""
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

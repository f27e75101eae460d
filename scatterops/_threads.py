"""How many threads a call uses: ``set_num_threads``, ``get_num_threads``,
``threads(n)`` (this thread only, inside a ``with`` block), the environment
variable ``SCATTEROPS_NUM_THREADS`` (read at import) and threadpoolctl's
``threadpool_limits``.

No call uses more threads than the CPUs this process may use (``_usable_cpus``:
the affinity mask, and a cgroup CPU quota, counted at import); asking for more
warns once and uses that many.  The C core holds the counts
(``csrc/py/settings.c``): the process-wide one, and the one of each thread
inside ``threads(n)``, which the public functions read once per call.
"""
from __future__ import annotations

import operator
import os
import threading
from importlib.util import find_spec
from typing import List, Optional, Type

from . import _core
from ._env import env_int, runtime_warning

__all__ = ["set_num_threads", "get_num_threads", "threads"]


# ---- the CPUs this process may use ------------------------------------------


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _quota(quota: Optional[str], period: Optional[str]) -> Optional[int]:
    """A CFS quota as whole CPUs (rounded down, at least 1); None: no limit or unreadable."""
    try:
        q, p = int(quota or ""), int(period or "")
    except ValueError:
        return None
    if q <= 0 or p <= 0:                      # cgroup v1 writes -1 for no limit
        return None
    return max(1, q // p)


def _up_from(base: str, path: str) -> List[str]:
    """The folder of cgroup path under the mount base, then its parents up to base.
    When that folder is not there (a container whose cgroup namespace shows a path
    of the host), base alone."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    dirs = [os.path.join(base, *parts[:k]) for k in range(len(parts), 0, -1)]
    return [d for d in dirs if os.path.isdir(d)] + [base] if dirs and os.path.isdir(dirs[0]) \
        else [base]


def _cgroup_cpu_limit(root: str = "/sys/fs/cgroup",
                      proc_cgroup: str = "/proc/self/cgroup") -> Optional[int]:
    """The CPUs a cgroup CPU quota allows this process (the smallest along its cgroup
    and their parents), rounded down and at least 1; None without a quota.

    cgroup v2: ``cpu.max`` ("max 100000" or "QUOTA PERIOD") under root (or
    root/unified on a hybrid host); v1: ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``
    under root/cpu (or root/cpu,cpuacct).  proc_cgroup lists the cgroups of the
    process ("0::/path" for v2, "N:cpu,cpuacct:/path" for v1).  Both are parameters so
    the tests can give a fake folder.
    """
    v1_path = v2_path = None
    for line in (_read(proc_cgroup) or "").splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        if fields[0] == "0" and fields[1] == "":
            v2_path = fields[2]
        elif "cpu" in fields[1].split(","):
            v1_path = fields[2]
    limits = []
    if v2_path is not None:
        for base in (root, os.path.join(root, "unified")):
            for d in _up_from(base, v2_path):
                words = (_read(os.path.join(d, "cpu.max")) or "").split()
                if len(words) == 2 and words[0] != "max":
                    limits.append(_quota(*words))
    if v1_path is not None:
        for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
            base = os.path.join(root, mount)
            if os.path.isdir(base):
                for d in _up_from(base, v1_path):
                    limits.append(_quota(_read(os.path.join(d, "cpu.cfs_quota_us")),
                                         _read(os.path.join(d, "cpu.cfs_period_us"))))
                break
    found = [n for n in limits if n is not None]
    return min(found) if found else None


def _usable_cpus(root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup") -> int:
    """The CPUs this process may use: its affinity mask, capped by a cgroup CPU
    quota; at least 1, at most the C core's pool."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):         # not Linux
        n = os.cpu_count() or 1
    quota = _cgroup_cpu_limit(root, proc_cgroup)
    if quota is not None:
        n = min(n, quota)
    return max(1, min(n, _core.POOL_MAX))


# ---- the counts ---------------------------------------------------------------

_warned_over_cap = False


def _count(func: str, n: object) -> int:
    if isinstance(n, bool):
        raise TypeError(f"{func}: n must be an int >= 1, got bool")
    try:
        value = operator.index(n)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{func}: n must be an int >= 1, got {type(n).__name__}") from None
    if value < 1:
        raise ValueError(f"{func}: n must be an int >= 1, got {value}")
    return value


def _warn_if_capped(asked: str, n: int, used: int) -> None:
    global _warned_over_cap
    if used < n and not _warned_over_cap:
        _warned_over_cap = True
        runtime_warning(f"scatterops: {asked} asks for {n} threads, more than the {used} CPUs "
                        f"this process may use; calls use {used} (this warning is shown once)")


def set_num_threads(n: int) -> None:
    """Set how many threads a large call may use, for every thread of the process.

    The setting takes effect at the next call; ``threads(n)`` sets the count
    for one thread, inside a block. The count is at most the number of CPUs
    this process may use (its affinity mask and a cgroup CPU quota): a larger
    ``n`` warns once and uses that many. Results are bit-identical for every
    thread count; small calls always run on the calling thread. At import the
    count is ``SCATTEROPS_NUM_THREADS`` if set, else the number of CPUs the
    process may use.

    Parameters
    ----------
    n : int
        The number of threads, an integer >= 1 (any integer type with
        ``__index__``; not a bool).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``n`` is not an integer, or is a bool.
    ValueError
        ``n`` is below 1.

    See Also
    --------
    get_num_threads : The count in force.
    threads : The count for the calls of one thread, inside a block.

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
    n = _count("set_num_threads", n)
    _warn_if_capped(f"set_num_threads({n})", n, _core.set_num_threads(n))


def get_num_threads() -> int:
    """Return how many threads a large call made now by this thread uses.

    Returns
    -------
    int
        Inside a ``threads(n)`` block, that block's count; otherwise the count
        set by `set_num_threads`, or at import by ``SCATTEROPS_NUM_THREADS`` or
        the number of CPUs the process may use -- always at most that number of
        CPUs.

    See Also
    --------
    set_num_threads : Change it for the process.
    threads : Change it for one thread, inside a block.

    Examples
    --------
    >>> import scatterops as so
    >>> so.get_num_threads() >= 1
    True
    """
    return _core.get_num_threads(False)


class threads:
    """Set the thread count of the calls this thread makes inside a block.

    ``with scatterops.threads(n):`` -- the calls the current thread makes inside
    the block use ``n`` threads (at most the CPUs this process may use, as
    `set_num_threads`); other threads keep theirs. Blocks nest, and the count
    before the block comes back when it ends, by an exception too (each
    thread's own, when several enter one object at once). For a Dask
    task, a joblib worker or a web request thread that must not start more
    threads of its own: ``with scatterops.threads(1): ...``.

    Parameters
    ----------
    n : int
        The number of threads, an integer >= 1 (not a bool).

    Returns
    -------
    threads
        A context manager.

    Raises
    ------
    TypeError
        ``n`` is not an integer, or is a bool.
    ValueError
        ``n`` is below 1.

    See Also
    --------
    set_num_threads : The count for every thread of the process.

    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> with so.threads(1):
    ...     so.get_num_threads()
    1
    >>> with so.threads(1):
    ...     so.scatter_elements(np.zeros(3), [2, 2], [1.0, 2.0], reduction="add")
    array([0., 0., 3.])
    """

    def __init__(self, n: int) -> None:
        self.n = _count("threads", n)
        # the counts before each entry, per thread: the count is the entering thread's
        # own, and one object may be entered by several threads at once
        self._local = threading.local()

    def __enter__(self) -> "threads":
        before = _core.swap_local_threads(self.n)
        stack: Optional[List[int]] = getattr(self._local, "before", None)
        if stack is None:
            stack = self._local.before = []
        stack.append(before)
        _warn_if_capped(f"threads({self.n})", self.n, _core.get_num_threads(False))
        return self

    def __exit__(self, *exc: object) -> None:
        _core.swap_local_threads(self._local.before.pop())


# ---- threadpoolctl -------------------------------------------------------------


def _threadpoolctl_controller() -> Optional[Type[object]]:
    """The threadpoolctl controller of scatterops, where threadpoolctl (3.2 or later:
    ``register``) is installed: ``threadpool_limits(n)`` then sets the process-wide
    count, as it does BLAS's, at most the cap and without a warning (a limit is an
    upper bound).  threadpoolctl finds the C core among the loaded libraries by its
    file name and an exported symbol of its own."""
    if find_spec("threadpoolctl") is None:
        return None
    import threadpoolctl
    if not hasattr(threadpoolctl, "register"):
        return None
    from ._version import __version__

    class ScatteropsController(threadpoolctl.LibController):
        user_api = "scatterops"
        internal_api = "scatterops"
        filename_prefixes = ("_core",)
        check_symbols = ("scatterops_num_threads",)

        def get_num_threads(self) -> int:
            return int(_core.get_num_threads(True))

        def set_num_threads(self, num_threads: int) -> None:
            _core.set_num_threads(max(1, int(num_threads)))

        def get_version(self) -> str:
            return __version__

    threadpoolctl.register(ScatteropsController)
    return ScatteropsController


# ---- at import -------------------------------------------------------------------


def _init() -> None:
    cap = _core.set_thread_cap(_usable_cpus())
    n = env_int("SCATTEROPS_NUM_THREADS", cap, 1, 2 ** 31 - 1, "a thread count")
    _warn_if_capped(f"SCATTEROPS_NUM_THREADS={n}", n, _core.set_num_threads(n))


_init()
_controller = _threadpoolctl_controller()

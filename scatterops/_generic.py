"""The NumPy fallback for the dtypes that have no C loop.

The reductions on longdouble, clongdouble, byte-swapped, datetime64 / timedelta64,
object and user dtypes (``ml_dtypes``' types other than bfloat16, which has C loops), the
mean of complex numbers, and
``reduction="none"`` on structured dtypes holding objects run NumPy's own ``ufunc.at``
here.  Everything else about the call is the C core's: it has checked every argument
and every index, made the output, and computed ``targets``, the flat C-order position
in ``out`` of every update element, in update order, from the same plan the C walk
uses (``_core`` counts these calls: ``_core.generic_calls()``).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator, List

import numpy as np

# ufunc.at runs on this many updates at a time: Ctrl-C is noticed between two runs
_CHUNK = 1 << 20


def apply(out: np.ndarray, targets: np.ndarray, updates: np.ndarray, ufunc, include_self: bool,
          mean: bool) -> None:
    """Apply the updates to ``out`` (C-contiguous, holding data) in update order: assign
    them (``ufunc`` None, reduction "none"), or combine them with ``ufunc`` (the C core
    passes the NumPy ufunc the reduction agrees with; a mean sums with ``np.add``).
    Like the C kernels, it raises no floating-point warnings.

    Interrupted (Ctrl-C), it stops between two runs of ``_CHUNK`` updates, having applied
    the updates before, and a mean divides what it has summed: no element keeps an
    undivided sum (docs/contract.md)."""
    with np.errstate(all="ignore"):
        _apply(out.reshape(-1), targets.reshape(-1), updates.reshape(-1), ufunc,
               include_self, mean)


@contextmanager
def _signals_deferred(wanted: bool) -> Iterator[List[tuple]]:
    """While the body runs, a SIGINT only records itself (in the list yielded); the
    handler it found then runs, after the body (raising KeyboardInterrupt).  Only when
    wanted, on the main thread (where Python runs signal handlers), and if a Python
    handler is installed."""
    handler = signal.getsignal(signal.SIGINT) if wanted else None
    if not callable(handler) or threading.current_thread() is not threading.main_thread():
        yield []
        return
    pending: List[tuple] = []
    signal.signal(signal.SIGINT, lambda signum, frame: pending.append((signum, frame)))
    try:
        yield pending
    finally:
        signal.signal(signal.SIGINT, handler)
    if pending:
        handler(*pending[0])


def _apply(flat: np.ndarray, dest: np.ndarray, upd: np.ndarray, ufunc, include_self: bool,
           mean: bool) -> None:
    if ufunc is None:
        # the last write to an element wins: keep each destination's last update
        _, first_rev = np.unique(dest[::-1], return_index=True)
        last = dest.size - 1 - first_rev
        flat[dest[last]] = upd[last]
        return
    first = None
    if not include_self:
        # an element's first update is assigned, the next ones combined
        first = np.zeros(dest.size, dtype=bool)
        first[np.unique(dest, return_index=True)[1]] = True
    applied = 0
    # a mean defers Ctrl-C even for one run: between the sums and the division it
    # would leave undivided sums
    with _signals_deferred(mean or dest.size > _CHUNK) as interrupted:
        for lo in range(0, dest.size, _CHUNK):
            if interrupted:
                break
            hi = min(lo + _CHUNK, dest.size)
            d, u = dest[lo:hi], upd[lo:hi]
            if first is None:
                ufunc.at(flat, d, u)
            else:
                f = first[lo:hi]
                flat[d[f]] = u[f]
                ufunc.at(flat, d[~f], u[~f])
            applied = hi
        if mean:
            # the updates applied so far (all of them unless interrupted), divided
            counts = np.bincount(dest[:applied], minlength=flat.size)
            hit = counts > 0
            flat[hit] = mean_divide(flat[hit], counts[hit] + int(include_self), flat.dtype)


def mean_divide(sums: np.ndarray, counts: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Finish a mean: ``sums`` (in data's dtype) divided by ``counts`` (>= 1), as the
    contract says: inexact dtypes in the widest float of their kind, rounded once;
    integers (and timedelta64) by floor division; object by true division."""
    kind = dtype.kind
    if kind in "iu":
        wide = np.int64 if kind == "i" else np.uint64
        res = np.floor_divide(sums.astype(wide), counts.astype(wide))
    elif kind == "f":
        wide = np.longdouble if dtype.itemsize > 8 else np.float64
        res = np.true_divide(sums.astype(wide), counts.astype(wide))
    elif kind == "c":
        wide, real = ((np.clongdouble, np.longdouble) if dtype.itemsize > 16
                      else (np.complex128, np.float64))
        res = np.true_divide(sums.astype(wide), counts.astype(real))
    elif kind == "m":
        res = np.floor_divide(sums, counts.astype(np.int64))
    else:  # object
        res = np.true_divide(sums, counts.astype(object))
    return res.astype(dtype)

"""The small calls on float32 (``s-f32-FORM-N``) and one row per ``mode=`` (``s-mode-MODE-N``).

Both are part of ``-k s`` and of its table (``run.small_table``).  Each call puts ``n`` = 4, 64 or
1000 updates into a float32 ``data`` of 1000 elements (random int64 indices, all in range, the last
one repeating the first, so there is always a duplicate), in one call form, against NumPy's own
spelling of the same call: ``o = d.copy(); np.add.at(o, i, u)`` out of place, ``np.add.at(d, i,
u)`` in place.  Whatever a form needs (a list, an int32 index, an output, ``indices[:, None]``) is
made once, untimed; the timed calls of both libraries get the same objects.

Targets (NumPy time / scatterops time, reported, never asserted): at least 2 where the arguments are
arrays or scalars, at least 1 where a Python list has to be converted, and at least 1 in place.

* ``cast``: float64 updates into float32 data.  scatterops casts each update to float32 and adds
  in float32; ``np.add.at`` adds in float64 and rounds the sum, so its result may differ in the
  last bit (``~``).
* ``mean`` and ``noself-max`` (``include_self=False`` max) have no NumPy call: their bar is the
  reduction NumPy has (``np.add.at``, ``np.maximum.at`` on a copy), and a NumPy spelling of the
  whole operation is timed on the line below.
* ``s-mode-MODE-N``: ``mode="raise"``, ``"wrap"``, ``"clip"`` and ``"drop"`` on a call whose
  indices are all in range, against ``np.add.at``; the same call with ``mode="raise"`` is timed in
  the same rounds (peer ``MODE_RAISE``) and shown on the line below, so that what a mode costs over
  ``"raise"`` is read within one row.
"""
from __future__ import annotations

from typing import List

import numpy as np

from .core import Case, Impl, Target

SIZE = 1000                     # data's elements
SIZES = (4, 64, 1000)           # updates per call
MODES = ("raise", "wrap", "clip", "drop")
MODE_RAISE = "scatterops, mode=raise"   # the mode rows' same call with mode="raise", same rounds

#: (form key, form as printed, target ratio NumPy / scatterops)
FORMS = [
    ("arrays", "f32: arrays", 2.0),
    ("scalar", "f32: updates a Python float", 2.0),
    ("list-idx", "f32: indices a Python list", 1.0),
    ("list-upd", "f32: updates a Python list", 1.0),
    ("int32", "f32: int32 indices", 2.0),
    ("cast", "f32: float64 updates (a cast)", 2.0),
    ("mean", 'f32: reduction="mean"', 2.0),
    ("noself-max", "f32: include_self=False max", 2.0),
    ("out", "f32: out= a separate array", 2.0),
    ("nd", "f32: scatter_nd, indices[:, None]", 2.0),
    ("inplace", "f32: in place, out=data", 1.0),
]


def _so():
    import scatterops
    return scatterops


def _inputs(n: int, seed: int = 108) -> dict:
    rng = np.random.default_rng(seed)
    i = rng.integers(0, SIZE, size=n)
    i[-1] = i[0]
    return {"data": rng.standard_normal(SIZE).astype(np.float32), "indices": i,
            "updates": rng.standard_normal(n).astype(np.float32)}


def so_call(x, form: str, reduction: str):
    """scatterops' call of a small-call form: ``scatter_elements(data, indices, updates, 0,
    reduction=reduction)``, with ``include_self=False`` (``noself``, ``noself-max``), into a
    separate output made here (``out``) or into data (``inplace``)."""
    f, d, i, u = _so().scatter_elements, x["data"], x["indices"], x["updates"]
    if form in ("noself", "noself-max"):
        return lambda: f(d, i, u, 0, reduction=reduction, include_self=False)
    if form == "out":
        o = np.empty_like(d)
        return lambda: f(d, i, u, 0, reduction=reduction, out=o)
    if form == "inplace":
        return lambda: f(d, i, u, 0, reduction=reduction, out=d)
    return lambda: f(d, i, u, 0, reduction=reduction)


def np_at(ufunc, inplace: bool = False, out: bool = False):
    """NumPy's spelling: ``ufunc.at`` on a copy of data, into a separate output, or in place."""
    def build(x):
        d, i, u = x["data"], x["indices"], x["updates"]
        if inplace:
            def run():
                ufunc.at(d, i, u)
                return d
        elif out:
            o = np.empty_like(d)

            def run():
                np.copyto(o, d)
                ufunc.at(o, i, u)
                return o
        else:
            def run():
                o = d.copy()
                ufunc.at(o, i, u)
                return o
        return run
    return build


def np_mean(size: int):
    """NumPy's spelling of ``reduction="mean"`` with include_self: ``np.add.at`` sums,
    ``np.bincount`` counts, one division (in float64, rounded once to data's dtype)."""
    def build(x):
        d, i, u = x["data"], x["indices"], x["updates"]

        def run():
            o = d.copy()
            np.add.at(o, i, u)
            c = np.bincount(i, minlength=size)
            hit = c > 0
            o[hit] = o[hit] / (c[hit] + 1)          # + 1: data counts once
            return o
        return run
    return build


def case_f32(form: str, n: int) -> Case:
    label, ratio = {k: (lbl, r) for k, lbl, r in FORMS}[form]
    reduction = {"mean": "mean", "noself-max": "max"}.get(form, "add")

    def make():
        x = _inputs(n)
        if form == "scalar":
            x["updates"] = 1.5
        elif form == "list-idx":
            x["indices"] = x["indices"].tolist()
        elif form == "list-upd":
            x["updates"] = x["updates"].tolist()
        elif form == "int32":
            x["indices"] = x["indices"].astype(np.int32)
        elif form == "cast":
            x["updates"] = x["updates"].astype(np.float64)
        elif form == "nd":
            x["nd_indices"] = x["indices"][:, None]
        return x

    def so(x):
        if form == "nd":
            f, d, ii, u = _so().scatter_nd, x["data"], x["nd_indices"], x["updates"]
            return lambda: f(d, ii, u, reduction="add")
        return so_call(x, form, reduction)

    def so_bar(x):              # what the bar must give, as scatterops gives it
        r = "max" if form == "noself-max" else "add"
        return _so().scatter_elements(x["data"], x["indices"], x["updates"], 0, reduction=r)

    def np_noself(x):
        d, i, u = x["data"], x["indices"], x["updates"]

        def run():
            o = d.copy()
            o[i] = -np.inf
            np.maximum.at(o, i, u)
            return o
        return run

    so_label = {"nd": 'scatter_nd(data, indices[:, None], updates, reduction="add")',
                "noself-max": 'scatter_elements(reduction="max", include_self=False)',
                "mean": 'scatter_elements(reduction="mean")',
                "out": 'scatter_elements(reduction="add", out=o)',
                "inplace": 'scatter_elements(reduction="add", out=data)'}.get(
                    form, 'scatter_elements(reduction="add")')
    impls = [Impl("scatterops", so_label, so)]
    if form == "inplace":
        bar = "np.add.at(d, i, u)"
        impls.append(Impl("numpy", bar, np_at(np.add, inplace=True)))
    elif form == "out":
        bar = "np.copyto(o, d); np.add.at(o, i, u)"
        impls.append(Impl("numpy", bar, np_at(np.add, out=True)))
    elif form in ("mean", "noself-max"):
        ufunc = np.maximum if form == "noself-max" else np.add
        bar = f"o = d.copy(); np.{ufunc.__name__}.at(o, i, u) (the bar)"
        impls.append(Impl("numpy", bar, np_at(ufunc), ref=so_bar))
        if form == "mean":
            impls.append(Impl("numpy", "np.add.at + np.bincount + a division", np_mean(SIZE),
                              "close", rtol=1e-5, atol=0.0))
        else:
            impls.append(Impl("numpy", "o[i] = -inf; np.maximum.at(o, i, u)", np_noself, "close",
                              rtol=0.0, atol=0.0))
    else:
        bar = "o = d.copy(); np.add.at(o, i, u)"
        impls.append(Impl("numpy", bar, np_at(np.add), "close" if form == "cast" else "exact",
                          rtol=1e-6, atol=1e-6))
    return Case(
        key=f"s-f32-{form}-{n}", name=f"s: small call, {label}, {n} updates into {SIZE} f32",
        make=make, impls=impls, floor=None, inplace=form == "inplace", time_copy=False,
        target=Target(form=label, n=n, ratio=ratio, bar=bar),
        na={p: "not timed for small calls" for p in ("torch", "onnxruntime", "openvino")})


def case_mode(mode: str, n: int) -> Case:
    def so(m):
        def build(x):
            f, d, i, u = _so().scatter_elements, x["data"], x["indices"], x["updates"]
            return lambda: f(d, i, u, 0, reduction="add", mode=m)
        return build

    bar = "o = d.copy(); np.add.at(o, i, u)"
    label = f'f32: mode="{mode}", indices in range'
    return Case(
        key=f"s-mode-{mode}-{n}", name=f"s: small call, {label}, {n} updates into {SIZE} f32",
        make=lambda: _inputs(n), floor=None, time_copy=False,
        impls=[Impl("scatterops", f'scatter_elements(reduction="add", mode="{mode}")', so(mode)),
               Impl("numpy", bar, np_at(np.add)),
               Impl(MODE_RAISE, 'scatter_elements(reduction="add", mode="raise")', so("raise"))],
        target=Target(form=label, n=n, ratio=2.0, bar=bar),
        na={p: "not timed for small calls" for p in ("torch", "onnxruntime", "openvino")})


def small_cases() -> List[Case]:
    return ([case_f32(form, n) for form, _, _ in FORMS for n in SIZES]
            + [case_mode(mode, n) for mode in MODES for n in SIZES])

"""scatterops on Dask arrays: the three scatters and ``group_reduce`` as lazy
``dask.array.Array`` results (``group_reduce`` lives in ``scatterops._dask_groups``).

``scatter_update``, ``scatter_nd`` and ``scatter_elements`` here take the arguments of the
top-level functions (``out=`` aside: a lazy result has no place to write) and return a lazy
array with ``data``'s chunks.  Computed, the result has the bits of the top-level function
on the computed inputs, for every chunking.

How it runs (docs/contract.md, "scatterops.dask", says the same for users):

* **Alignment.**  ``updates`` is broadcast to its required shape and rechunked so that its
  dimensions that follow a dimension of ``data`` have ``data``'s chunks there; ``indices``
  keeps its chunks along the update index space (``scatter_nd``: one chunk along the
  tuple dimension; ``scatter_elements``: ``data``'s chunks on every axis but ``axis``).
* **Routing** (one task per chunk of ``updates``): ``_core.route`` (csrc/py/route.c) checks
  the index values of the chunk in their own dtype and turns each into a block of ``data``
  and an index local to that block; the chunk's local indices and updates are grouped by
  block in a stable counting sort (two passes, without the GIL), each piece in the chunk's
  C order.
* **Apply** (one task per block of ``data``): the pieces routed to the block are put in
  the global C order of the update index space (concatenated in update-chunk order, or
  merged by global position when the chunking of the update index space is not
  C-contiguous) and the block makes ONE call of the C core on a copy of itself.  So
  ``"none"``, ``include_self=False`` and ``"mean"`` see the updates of an element in the
  order, and all at once, as the top-level call does.
* **mode=** (``"raise"``, ``"wrap"``, ``"clip"``, ``"drop"``) is applied by the routing:
  a wrapped or clipped index goes to the block of its new position, a dropped update to none.
* **Errors** that shapes, dtypes, axis, reduction and mode reveal are raised at call time by the
  C core itself (``_core.check_call``, which also gives the shape updates is broadcast to),
  on zero-stride stand-ins of the dask arguments; an index value out of
  range raises the top-level IndexError (the first one in C order of ``indices``) when
  the result is computed, and no block is returned.

Graph size, in tasks, beyond the tasks that make the input chunks (``U``: chunks of the
aligned ``updates``, ``B``: blocks of ``data``, ``R``: blocks of ``data`` along the routed
axes -- ``axis`` for ``scatter_update`` / ``scatter_elements``, the first k axes for
``scatter_nd``):

* dask ``indices``:   ``U`` routing + ``U`` error summaries + 1 check + ``U * R`` pieces + ``B``
  applies (nothing is computed to build the graph);
* NumPy ``indices``:  ``U'`` routing + ``P`` pieces + ``B`` blocks (applies or aliases),
  where ``U'`` counts the update chunks that carry an update and ``P`` the
  (update chunk, block) pairs that do: the routing is computed once at call time
  to find them.

Memory: a routing task holds one chunk of ``indices`` and ``updates`` and its grouped copy
(the local indices, int32 while a block has fewer than 2**31 elements, and the updates: 8
bytes an update for float32); an apply task holds its block, the pieces routed to it, their
concatenation (the local indices as intp, the core's index type) and the result.

Threads: each task's core call runs on the task's own thread (``scatterops.threads(1)``).
A user opts into more threads per task with the Dask config key
``scatterops.threads-per-task`` (read when the result is built)::

    with dask.config.set({"scatterops.threads-per-task": 2}):
        result = scatterops.dask.scatter_nd(data, indices, updates, reduction="add")
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

try:
    import dask
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph
    from dask.base import tokenize
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("scatterops.dask needs dask: pip install dask distributed (or, from a "
                      "checkout of scatterops, pip install -e '.[dask]') "
                      f"(import failed: {exc})") from exc

import scatterops
from . import _core, _messages

__all__ = ["scatter_update", "scatter_nd", "scatter_elements", "group_reduce", "group_softmax"]

# the core's kinds of call
_UPDATE = _core.KINDS["scatter_update"]
_ND = _core.KINDS["scatter_nd"]
_ELEMENTS = _core.KINDS["scatter_elements"]


# ----------------------------------------------------------------------------- threads

def _threads_context(n: int):
    """The thread-local thread count for the task's core call (scatterops.threads)."""
    return scatterops.threads(n)


# ----------------------------------------------------------------------------- call-time checks

def _zero_strided(shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` that holds one element: the stand-in of a lazy
    array."""
    return as_strided(np.zeros(1, dtype=dtype), shape=shape, strides=(0,) * len(shape),
                      writeable=False)


def _is_dask(x: Any) -> bool:
    return isinstance(x, da.Array)


def _check(name: str, data: Any, indices: Any, updates: Any, axis: Any, reduction: Any,
           include_self: Any, mode: Any) -> Tuple[Tuple[int, ...], int]:
    """Every rule of the call but the range of its index values, by the C core itself
    (``_core.check_call``: the checks the top-level call makes, with its errors, and
    nothing run), on the arguments as given or, for a dask array, a zero-stride stand-in
    of its shape and dtype.  Returns (the shape updates is broadcast to, the axis in
    [0, data.ndim), 0 for scatter_nd)."""
    stand = [_zero_strided(x.shape, x.dtype) if _is_dask(x) else x
             for x in (data, indices, updates)]
    return _core.check_call(_core.KINDS[name], *stand, axis, reduction, include_self, mode)


# ----------------------------------------------------------------------------- geometry

def _starts(chunks: Sequence[int]) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(chunks, dtype=np.int64)))


def _truncated(chunks: Sequence[int], length: int) -> Tuple[int, ...]:
    """``chunks`` cut to cover ``length`` elements (chunk i stays inside chunk i)."""
    out: List[int] = []
    left = length
    for c in chunks:
        if left <= 0:
            break
        out.append(min(c, left))
        left -= c
    return tuple(out) or (0,)


def _c_contiguous(chunks: Sequence[Sequence[int]]) -> bool:
    """Whether the chunks of a grid, concatenated in C order of chunk ids, each in its own
    C order, give the whole grid in C order."""
    shape = [sum(c) for c in chunks]
    if 0 in shape:
        return True
    split = [d for d, c in enumerate(chunks) if len(c) > 1]
    if not split:
        return True
    first = split[0]
    return all(shape[d] == 1 for d in range(first)) and split == [first]


class _Geometry:
    """Where the updates of one call go: the routed axes of ``data`` and how each chunk of
    the aligned ``updates`` maps to a slab of blocks."""

    def __init__(self, name: str, data_shape: Tuple[int, ...],
                 data_chunks: Tuple[Tuple[int, ...], ...], idx_shape: Tuple[int, ...],
                 axis: int, upd_shape: Tuple[int, ...]):
        self.name = name
        self.kind = _core.KINDS[name]
        self.data_shape = data_shape
        self.data_chunks = data_chunks
        self.upd_shape = upd_shape          # as the core's check_call found it
        r = len(data_shape)
        if self.kind == _UPDATE:
            q = len(idx_shape)
            self.routed = (axis,)
            # updates dim -> data dim it follows (None: an index-space dim)
            self.upd_to_data: Tuple[Optional[int], ...] = tuple(range(axis)) + (None,) * q + \
                tuple(range(axis + 1, r))
            self.space_dims = tuple(range(axis, axis + q))   # index-space dims of updates
        elif self.kind == _ND:
            k = idx_shape[-1]
            q = len(idx_shape) - 1
            self.routed = tuple(range(k))
            self.upd_to_data = (None,) * q + tuple(range(k, r))
            self.space_dims = tuple(range(q))
        else:
            self.routed = (axis,)
            self.upd_to_data = tuple(None if d == axis else d for d in range(r))
            self.space_dims = tuple(range(r))
        self.axis = axis

    def update_chunks(self, idx_chunks: Tuple[Tuple[int, ...], ...]) -> Tuple[Tuple[int, ...], ...]:
        """The chunks of the aligned updates (and, on the index-space dims, of indices)."""
        out = []
        space = iter(idx_chunks)
        for d, dd in enumerate(self.upd_to_data):
            if dd is None:
                out.append(tuple(next(space)))
            elif self.kind == _ELEMENTS:
                out.append(_truncated(self.data_chunks[dd], self.upd_shape[d]))
            else:
                out.append(tuple(self.data_chunks[dd]))
        return tuple(out)

    def slab(self, ucoord: Tuple[int, ...]) -> Dict[int, int]:
        """data dim -> block coordinate fixed by the update chunk at ``ucoord``."""
        return {dd: ucoord[d] for d, dd in enumerate(self.upd_to_data) if dd is not None}

    def idx_coord(self, ucoord: Tuple[int, ...]) -> Tuple[int, ...]:
        """The chunk of (aligned) indices that update chunk ``ucoord`` reads."""
        if self.kind == _UPDATE:
            return tuple(ucoord[d] for d in self.space_dims)
        if self.kind == _ND:
            return tuple(ucoord[d] for d in self.space_dims) + (0,)
        return tuple(ucoord)

    def block_of(self, slab: Dict[int, int], routed_coord: Tuple[int, ...]) -> Tuple[int, ...]:
        full = dict(slab)
        full.update(zip(self.routed, routed_coord))
        return tuple(full[d] for d in range(len(self.data_shape)))


# ----------------------------------------------------------------------------- tasks


def _prod(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _block_offsets(chunk_shape: Tuple[int, ...], block_shape: Tuple[int, ...]) -> np.ndarray:
    """The flat offset in a block of each position of a chunk that starts where the block
    starts (the chunk may be smaller), in C order of the chunk."""
    if not chunk_shape:
        return np.zeros(1, np.intp)
    coords = np.indices(chunk_shape, dtype=np.intp).reshape(len(chunk_shape), -1)
    return np.ravel_multi_index(tuple(coords), block_shape).astype(np.intp, copy=False)


def _locate(kind: int, idx: np.ndarray, geo: Dict[str, Any], payloads: Tuple[Any, ...] = (),
            count_only: bool = False):
    """Route one chunk of indices in C (``_core.route``, csrc/py/route.c): each value
    checked and mapped by ``mode=``, the rows (index tuples) grouped by the block they land
    in -- a flat number over the routed axes --, each group in the chunk's C order, with
    their local index (a row of k components, or for ``scatter_elements`` a flat offset in
    the block) and the rows of each payload ((pre, n, post) arrays) in the same order.

    Returns (counts per block, local, grouped payloads, None), or (None, None, None, error)
    for the first bad value in C order of indices."""
    space = idx.shape[:-1] if kind == _ND else idx.shape
    n = _prod(space)
    k = idx.shape[-1] if kind == _ND else 1
    rows = idx.reshape(n, k)
    if rows.size == 0 and rows.dtype.kind not in "iu":
        rows = rows.astype(np.intp)         # an empty index array of any dtype holds no index
    if not rows.dtype.isnative:
        rows = rows.astype(rows.dtype.newbyteorder("="))
    elements = None
    if kind == _ELEMENTS and not count_only:
        # the flat offset of each update in its block: on the axes but axis, the update
        # chunk starts where its block starts, so its coordinates there are its position
        ax, shapes = geo["axis"], geo["block_shapes"]
        elements = (_block_offsets(idx.shape[:ax], shapes[:ax]), idx.shape[ax],
                    _block_offsets(idx.shape[ax + 1:], shapes[ax + 1:]), shapes[ax],
                    _prod(shapes[ax + 1:]))
    error, counts, local, grouped = _core.route(
        rows, geo["sizes"], geo["starts"], _core.MODES[geo["mode"]],
        None if count_only else geo["local_dtype"], payloads, elements)
    if error is None:
        return counts, local, grouped, None
    row, j, value = error
    where = tuple(int(w) + o for w, o in zip(np.unravel_index(row, space), geo["idx_offset"]))
    if kind == _ND:
        where += (j,)
    return None, None, None, (where, value, j if kind == _ND else geo["routed"][0],
                              int(geo["sizes"][j]))


def _route(kind: int, idx: np.ndarray, upd: Any, geo: Dict[str, Any], targets: Sequence[int]):
    """Split one chunk of updates by the block it goes to: {target: piece} plus "error".

    A piece is (local indices, updates, global positions or None), in the chunk's C order."""
    space = idx.shape[:-1] if kind == _ND else idx.shape
    n = _prod(space)
    upd_axis, nspace = geo["upd_axis"], geo["nspace"]
    payloads = []
    if upd is not None:          # as (pre, n, post): the rows an index tuple carries
        lead = upd.shape[:upd_axis] if kind == _UPDATE else ()
        tail = upd.shape[upd_axis + nspace:] if kind == _UPDATE else \
            upd.shape[geo["nspace"]:] if kind == _ND else ()
        payloads.append(upd.reshape(_prod(lead), n, _prod(tail)))
    if geo["positions"]:
        pos = np.indices(space, dtype=np.intp).reshape(len(space), -1)
        gpos = tuple(pos[d] + geo["idx_offset"][d] for d in range(len(space)))
        positions = np.ravel_multi_index(gpos, geo["space_shape"]) if gpos else \
            np.zeros(n, np.intp)
        payloads.append(positions.astype(np.intp, copy=False).reshape(1, n, 1))
    counts, local, grouped, error = _locate(kind, idx, geo, tuple(payloads))
    out: Dict[Any, Any] = {"error": error}
    if error is not None:
        return out
    ends = np.cumsum(counts)
    for t in targets:
        lo, hi = int(ends[t] - counts[t]), int(ends[t])
        piece_upd = piece_pos = None
        if upd is not None:
            g = grouped[0][:, lo:hi]
            piece_upd = g.reshape(lead + (hi - lo,) + tail) if kind == _UPDATE else \
                g.reshape((hi - lo,) + tail)
        if geo["positions"]:
            piece_pos = grouped[-1][0, lo:hi, 0]
        out[t] = (local[lo:hi], piece_upd, piece_pos)
    return out


def _pick(routed: Dict[Any, Any], key: Any):
    """One item of a routing task's output (None when the chunk held a bad index)."""
    return routed.get(key)


def _first_error(name: str, *errors):
    """Raise the top-level IndexError for the first bad index in C order of indices."""
    found = [e for e in errors if e is not None]
    if found:
        where, value, axis, size = min(found, key=lambda e: e[0])
        raise _messages.error("index_range", name,
                              {"where": where, "value": value, "axis": axis, "size": size})
    return None


def _raise(exc: BaseException):
    raise exc


def _apply(name: str, kind: int, block: np.ndarray, checked: Any, upd_axis: int,
           scalar: Any, kwargs: Dict[str, Any], threads: int, axis: int, *pieces):
    """One block: its routed pieces in the global order, then ONE core call."""
    pieces = tuple(p for p in pieces if p is not None and p[0].shape[0])
    if not pieces:
        return block
    local = np.concatenate([p[0] for p in pieces], dtype=np.intp)   # the core's index type
    has_upd = pieces[0][1] is not None
    cat_axis = upd_axis if kind == _UPDATE else 0
    upd = np.concatenate([p[1] for p in pieces], axis=cat_axis) if has_upd else scalar
    if pieces[0][2] is not None and len(pieces) > 1:
        order = np.argsort(np.concatenate([p[2] for p in pieces]), kind="stable")
        local = local[order]
        if has_upd:
            upd = np.take(upd, order, axis=cat_axis)
    with _threads_context(threads):
        if kind == _UPDATE:
            return scatterops.scatter_update(block, local[:, 0], upd, axis, **kwargs)
        if kind == _ND:
            return scatterops.scatter_nd(block, local, upd, **kwargs)
        flat = scatterops.scatter_elements(block.reshape(-1), local, upd, 0, **kwargs)
        return flat.reshape(block.shape)


# ----------------------------------------------------------------------------- the graph

def _as_dask_data(data: Any, chunks: Any, name: str, arg: str = "data"):
    """``data`` (the argument ``arg``) as a dask array: a NumPy one cut into ``chunks``."""
    if _is_dask(data):
        if not (isinstance(chunks, str) and chunks == "auto"):
            raise TypeError(f"{name}: chunks= applies to a NumPy {arg}; rechunk a dask {arg} "
                            f"with {arg}.rechunk(...)")
        return data
    return da.from_array(np.asarray(data), chunks=chunks, name=False)


def _numpy_space_chunks(geo: "_Geometry", space_shape: Tuple[int, ...], ddata) -> Tuple[Tuple[int, ...], ...]:
    """Chunks of the update index space for a NumPy indices: cut along the first dimension
    only (so the chunks are C-contiguous), each update chunk about one block of data."""
    if geo.kind == _ELEMENTS:           # only the chunks along axis are read
        return tuple(da.core.normalize_chunks(max(1, max(ddata.chunks[d])), (s,))[0]
                     if d == geo.axis else (s,) for d, s in enumerate(space_shape))
    if not space_shape:
        return ()
    block = max(1, int(np.prod([max(c) if c else 1 for c in ddata.chunks], dtype=np.int64)))
    slice_elems = max(1, int(np.prod([max(c) if c else 1 for d, c in enumerate(
        geo.update_chunks(tuple((s,) for s in space_shape))) if geo.upd_to_data[d] is not None],
        dtype=np.int64)))
    per_row = max(1, int(np.prod(space_shape[1:], dtype=np.int64)))
    rows = max(1, block // (slice_elems * per_row))
    return da.core.normalize_chunks((rows,) + space_shape[1:], space_shape)


def _aligned(x: Any, shape: Tuple[int, ...], chunks: Tuple[Tuple[int, ...], ...]):
    """x broadcast to shape, as a dask array with chunks."""
    if _is_dask(x):
        if x.shape != shape:
            x = da.broadcast_to(x, shape)
        return x.rechunk(chunks)
    arr = np.asarray(x)
    if arr.shape != shape:
        arr = np.broadcast_to(arr, shape)
    return da.from_array(arr, chunks=chunks, name=False)


def _require_known_chunks(name: str, arg: str, x: Any) -> None:
    """A dask argument whose chunk sizes are unknown (``x[x > 3]``, say) is a ValueError
    naming it: its shape decides the call, and dask learns it only by computing."""
    if _is_dask(x) and any(c != c for dim in x.chunks for c in dim):     # NaN: unknown
        raise ValueError(f"scatterops.dask.{name}: {arg} has unknown chunk sizes (shape "
                         f"{x.shape}); its shape decides the call: call "
                         f"{arg}.compute_chunk_sizes() first, as dask asks")


def _scatter(name: str, data: Any, indices: Any, updates: Any, axis: Any, reduction: Any,
             include_self: Any, mode: Any, out: Any, chunks: Any):
    if out is not None:
        raise TypeError(f"scatterops.dask.{name}: out= is not supported: a lazy result has "
                        "no place to write (compute the result, or use scatterops."
                        f"{name} with out= on NumPy arrays)")
    for arg, x in (("data", data), ("indices", indices), ("updates", updates)):
        _require_known_chunks(name, arg, x)
    kwargs = {"reduction": reduction, "include_self": include_self}
    # lists and tuples as given: the core words their errors (a tuple of arrays in scatter_nd)
    upd_shape, ax = _check(name, data, indices, updates, axis, reduction, include_self, mode)
    scalar_updates = not _is_dask(updates) and not isinstance(updates, np.ndarray) and \
        np.ndim(updates) == 0       # a Python scalar goes to every block call as it is
    if not _is_dask(indices) and not isinstance(indices, np.ndarray):
        indices = np.asarray(indices)
    if not scalar_updates and not _is_dask(updates):
        updates = np.asarray(updates)

    ddata = _as_dask_data(data, chunks, name)
    if indices.size == 0 and 0 in upd_shape:
        # no index value and no update: the result is data, as the top-level function's
        # is (the call's arguments are checked above; there is nothing to route)
        return ddata.copy()
    shape, r = ddata.shape, ddata.ndim
    kind = _core.KINDS[name]
    if kind == _ND:
        k = indices.shape[-1]
        if k > 0 and _is_dask(indices) and len(indices.chunks[-1]) > 1:
            indices = indices.rechunk({indices.ndim - 1: -1})
    geo = _Geometry(name, shape, ddata.chunks, tuple(indices.shape), ax, upd_shape)

    # the index space's chunks: a dask indices keeps its own; a NumPy one is cut along its
    # first dimension (C-contiguous chunks) into update chunks about the size of a block
    space_shape = tuple(indices.shape[:-1]) if kind == _ND else tuple(indices.shape)
    if _is_dask(indices):
        space_chunks = tuple(indices.chunks[:-1] if kind == _ND else indices.chunks)
    else:
        space_chunks = _numpy_space_chunks(geo, space_shape, ddata)
    if kind == _ELEMENTS:
        upd_chunks = geo.update_chunks((space_chunks[ax],))
        idx_chunks = upd_chunks
    else:
        upd_chunks = geo.update_chunks(space_chunks)
        idx_chunks = space_chunks + (((indices.shape[-1],),) if kind == _ND else ())
    dindices = _aligned(indices, tuple(indices.shape), idx_chunks)
    dupdates = None if scalar_updates else _aligned(updates, geo.upd_shape, upd_chunks)

    routed = geo.routed
    nblocks = tuple(ddata.numblocks[d] for d in routed)
    starts = tuple(_starts(ddata.chunks[d]) for d in routed)
    sizes = tuple(shape[d] for d in routed)
    # local indices travel to the blocks: 4 bytes each where a block is small enough
    largest = max([int(np.prod([max(c) for c in ddata.chunks], dtype=np.int64))] +
                  [max(ddata.chunks[d]) for d in routed])
    local_dtype = np.dtype(np.int32 if largest < 2**31 else np.intp)
    space_grid = tuple(upd_chunks[d] for d in geo.space_dims) if kind != _ELEMENTS else ()
    positions = kind != _ELEMENTS and not _c_contiguous(space_grid)
    threads = int(dask.config.get("scatterops.threads-per-task", 1))
    token = tokenize(name, ddata, dindices, dupdates, updates if scalar_updates else None,
                     ax, reduction, include_self, mode, threads)
    out_name = f"{name}-dask-{token}"
    route_name = f"{name}-route-{token}"
    piece_name = f"{name}-piece-{token}"
    err_name = f"{name}-error-{token}"
    check_name = f"{name}-check-{token}"
    upd_axis = ax if kind == _UPDATE else 0
    nspace = len(geo.space_dims)

    dsk: Dict[Any, Any] = {}
    pieces_of: Dict[Tuple[int, ...], List[Any]] = {}
    ugrid = [range(len(c)) for c in upd_chunks]
    idx_offsets = [_starts(c) for c in idx_chunks]
    eager = not _is_dask(indices)
    errors: List[Any] = []
    for ucoord in np.ndindex(*[len(c) for c in upd_chunks]) if all(ugrid) else ():
        slab = geo.slab(ucoord)
        icoord = geo.idx_coord(ucoord)
        block_shapes = None
        if kind == _ELEMENTS:
            block_shapes = tuple(np.asarray(ddata.chunks[d], dtype=np.intp) if d == ax
                                 else ddata.chunks[d][slab[d]] for d in range(r))
        g = {"idx_offset": tuple(int(idx_offsets[d][c]) for d, c in enumerate(icoord)),
             "routed": routed, "sizes": sizes, "starts": starts,
             "local_dtype": local_dtype, "mode": mode,
             "block_shapes": block_shapes, "axis": ax, "positions": positions,
             "space_shape": tuple(sum(c) for c in space_grid), "upd_axis": upd_axis,
             "nspace": nspace}
        if eager:
            ichunk = indices[tuple(slice(int(idx_offsets[d][c]), int(idx_offsets[d][c + 1]))
                                   for d, c in enumerate(icoord))]
            counts, _, _, error = _locate(kind, ichunk, g, count_only=True)
            if error is not None:
                errors.append(error)
                continue
            targets = [int(t) for t in np.flatnonzero(counts)]
        else:
            targets = list(range(int(np.prod(nblocks, dtype=np.int64))))
        if not targets:
            continue
        rkey = (route_name,) + ucoord
        upd_key = None if dupdates is None else (dupdates.name,) + ucoord
        dsk[rkey] = (_route, kind, (dindices.name,) + icoord, upd_key, g, targets)
        if not eager:
            dsk[(err_name,) + ucoord] = (_pick, rkey, "error")
            errors.append((err_name,) + ucoord)
        for t in targets:
            pkey = (piece_name,) + ucoord + (t,)
            dsk[pkey] = (_pick, rkey, t)
            rcoord = np.unravel_index(t, nblocks) if nblocks else ()
            block = geo.block_of(slab, tuple(int(c) for c in rcoord))
            pieces_of.setdefault(block, []).append(pkey)

    if eager and errors:
        first = min(errors, key=lambda e: e[0])
        exc = _messages.error("index_range", name, {"where": first[0], "value": first[1],
                                                    "axis": first[2], "size": first[3]})
        dsk = {(check_name,): (_raise, exc)}
        check: Any = (check_name,)
        pieces_of = {}
    elif eager:
        check = None
    else:
        dsk[(check_name,)] = (_first_error, name) + tuple(errors)
        check = (check_name,)
    for bcoord in np.ndindex(*ddata.numblocks):
        pieces = pieces_of.get(bcoord, [])
        if not pieces and check is None:
            dsk[(out_name,) + bcoord] = (ddata.name,) + bcoord          # an alias
        else:
            dsk[(out_name,) + bcoord] = (_apply, name, kind, (ddata.name,) + bcoord, check,
                                         upd_axis, updates if scalar_updates else None,
                                         kwargs, threads, ax) + tuple(pieces)
    deps = [ddata, dindices] + ([] if dupdates is None else [dupdates])
    graph = HighLevelGraph.from_collections(out_name, dsk, dependencies=deps)
    return da.Array(graph, out_name, chunks=ddata.chunks, dtype=ddata.dtype,
                    meta=ddata._meta)


def scatter_update(data, indices, updates, axis=0, *, reduction="none", include_self=True,
                   mode="raise", out=None, chunks="auto"):
    """``scatterops.scatter_update`` on Dask arrays: a lazy array with ``data``'s chunks.

    Same arguments and result bits as the top-level function; ``out=`` is a TypeError and
    a NumPy ``data`` is cut into ``chunks`` (default ``"auto"``).  See the module docstring
    for the routing, the graph size and the memory per task."""
    return _scatter("scatter_update", data, indices, updates, axis, reduction, include_self,
                    mode, out, chunks)


def scatter_nd(data, indices, updates, *, reduction="none", include_self=True, mode="raise",
               out=None, chunks="auto"):
    """``scatterops.scatter_nd`` on Dask arrays: a lazy array with ``data``'s chunks.

    Same arguments and result bits as the top-level function; ``out=`` is a TypeError and
    a NumPy ``data`` is cut into ``chunks`` (default ``"auto"``).  See the module docstring
    for the routing, the graph size and the memory per task."""
    return _scatter("scatter_nd", data, indices, updates, 0, reduction, include_self, mode,
                    out, chunks)


def scatter_elements(data, indices, updates, axis=0, *, reduction="none", include_self=True,
                     mode="raise", out=None, chunks="auto"):
    """``scatterops.scatter_elements`` on Dask arrays: a lazy array with ``data``'s chunks.

    Same arguments and result bits as the top-level function; ``out=`` is a TypeError and
    a NumPy ``data`` is cut into ``chunks`` (default ``"auto"``).  See the module docstring
    for the routing, the graph size and the memory per task."""
    return _scatter("scatter_elements", data, indices, updates, axis, reduction,
                    include_self, mode, out, chunks)


def __getattr__(name):
    # group_reduce (scatterops/_dask_groups.py) builds on the routing helpers above and is
    # imported on first use, not here: a worker that unpickles one of its tasks imports that
    # module first, which imports this one, which must then not import it back half-made
    if name in ("group_reduce", "group_softmax"):
        from . import _dask_groups
        return getattr(_dask_groups, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"group_reduce", "group_softmax"})

"""scatterops.at: ``ufunc.at(a, indices, b)`` on the C core where it has the loop.

``ufunc.at`` applies ``a[e] = ufunc(a[e], b[p])`` for every position ``p`` of the
indexing result ``a[indices]``, in order, so that repeated elements combine.  For
add, subtract, multiply, maximum and minimum that is a scatterops reduction, and
each element sees its updates in the same order whichever way the update index
space is laid out (the advanced-index dimensions keep their C order).  So the
index is read here the way NumPy reads it -- ints, slices, None, Ellipsis,
integer and boolean arrays, with NumPy's rule for where the broadcast advanced
dimensions go -- and turned into one in-place call on a view of ``a``:

* no advanced index: ``scatter_nd`` with k = 0 on the view ``a[indices]``;
* one index array: ``scatter_update`` on the basic view, along that array's axis
  (``scatter_elements``, the same call, when both are 1-d);
* several arrays addressing every axis of the view: ``_core.at_apply`` on a flat
  1-d view of the view's memory, which checks every index value in one pass and
  applies the updates in a second, making the element offsets chunk by chunk;
* several arrays and some slices: ``scatter_nd`` on the view with the indexed
  axes moved first.

``b`` is broadcast to the shape of ``a[indices]`` as NumPy broadcasts it, then
its axes are permuted into the order of the call's update index space.

The commonest calls never reach this module's reading: ``_core.at`` (the C entry,
csrc/py/at_entry.c) reads and runs an integer array or list of ints, ``:``s around
one integer array, or (small) an integer array on every axis, with b of a's dtype
or a Python scalar that keeps it, and returns NotImplemented for every other call
before anything is written; those are read here.

Small calls are mostly planning, so the commonest forms (_simple_call: an int
array or list, ``:``s around one array, an array on every axis, ints and ``:``s,
a boolean mask of a's shape) are recognised with a few type checks and go
straight to the same call the general reading (_read_index, _Index) would make;
everything else takes the general reading.  The error modes are read once per
errstate, and the flat view's layout once per shape and strides.

Whatever is not certain to be bit-identical runs NumPy's own ``ufunc.at``: other
ufuncs, dtypes without a C loop, a loop dtype other than ``a``'s (the ufunc would
compute in the wider type and cast back), subclasses that override ufuncs, index
forms not listed above, an ``a`` whose elements share memory, and floating-point
error modes that raise or call; so does a call whose b does not broadcast to
a[indices] (NumPy raises its own error).  Each of these is decided before
anything runs: a call is run once, by one of the two.  Where NumPy 2.4's ufunc.at
reads past a 1-d b (an N-d index array broadcasting it into a 1-d a), b is
broadcast to a[indices]'s shape before NumPy gets the call (_b_for_numpy), so the
result is the one every other spelling of the index gives.  An index array is
read as NumPy's indexing reads it, as intp (a uint64 value past intp's range
wraps: _as_index); the C core checks every value before its first write, and its
IndexError is final.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _core
from ._api import scatter_elements, scatter_nd, scatter_update

__all__ = ["at"]


class _NoB:
    """The default of at's b: b left out, which ufunc.at tells from b=None."""
    __slots__ = ()

    def __repr__(self):
        return "<no b>"


_NO_B = _NoB()
_core_at = _core.at

# the ufuncs with a C reduction, {ufunc: reduction} (the core's table): each is
# bit-identical to ufunc.at in C order
_REDUCTION = dict(_core.UFUNC_REDUCTIONS)
# wrap-around integer arithmetic: computing in a wider integer type and casting
# back (unsafe, as ufunc.at casts) gives the result of computing in a's type
_MODULAR = frozenset(("add", "sub", "mul"))
# {reduction: the type characters of the native dtypes the core has its loop for}
# (no boolean subtract, as in NumPy: its ufunc.at says so)
_TYPED = {name: frozenset(_core.TYPED_DTYPES[name]) for name in _REDUCTION.values()}
# ufunc.at converts b with numpy.asarray; these are taken as it takes them
_PLAIN_B = (int, float, complex, bool, list, tuple, np.ndarray)
_SCALAR_B = frozenset((int, float, complex, bool, np.ndarray))   # the commonest, by type
_NO_INDEX = np.empty(0, dtype=np.intp)   # scatter_nd with k = 0: the whole array
# a 1-d a and one 1-d index array with fewer values than this: NumPy's own ufunc.at (its
# loop for that form is as fast as the C core's, with less to set up)
_SMALL_1D = 1024


def at(ufunc, a, indices, b=_NO_B):
    """Apply ``ufunc`` in place at the elements of ``a`` that ``indices`` select.

    A drop-in for ``ufunc.at(a, indices, b)``: the same arguments, the same
    result bit for bit, the same exception classes.  For every position ``p`` of
    ``a[indices]`` in order, ``a[e] = ufunc(a[e], b[p])`` where ``e`` is the
    element ``p`` selects, so an element selected several times takes every
    update (``a[indices] += b`` would take only one).  ``np.add``,
    ``np.subtract``, ``np.multiply``, ``np.maximum`` and ``np.minimum`` on
    bool, integer, float16/32/64 and complex64/128 arrays (and
    ``ml_dtypes.bfloat16`` for the commonest index forms) run in the C core
    (on several threads when large), as does a Python float ``b`` on a
    float32, float16 or bfloat16 ``a``, computed in float64 and rounded once
    per update as ``ufunc.at`` computes it; everything else runs NumPy's own
    ``ufunc.at``.

    Parameters
    ----------
    ufunc : numpy.ufunc
        A unary or binary ufunc with one output.
    a : ndarray
        The array updated in place (any strides).
    indices : index
        Anything NumPy's ``ufunc.at`` accepts: an int, a slice, ``Ellipsis``,
        ``None``, an integer or boolean array (or a list), or a tuple of these,
        read with NumPy's indexing rules (negative values count from the end;
        advanced indices separated by a slice, ``None`` or ``Ellipsis`` put
        their broadcast dimensions first).
    b : array_like, optional
        The second operand of a binary ufunc, broadcast to the shape of
        ``a[indices]``.  Leave it out for a unary ufunc (``np.negative``,
        ``np.invert``, ...).  As in NumPy, ``None`` is not leaving it out:
        it is an operand (an object array), which a unary ufunc refuses.

    Returns
    -------
    None
        As ``ufunc.at``: ``a`` holds the result.

    Raises
    ------
    IndexError
        An index out of range, or not an integer or boolean; nothing has been
        written (NumPy also checks every index before its first write).
    ValueError
        ``b`` does not broadcast to ``a[indices]``, ``b`` missing for a
        binary ufunc or given (``None`` too) for a unary one; a read-only ``a``, for every
        index (NumPy 2.4's ``ufunc.at`` raises this only where each update meets
        a slice of ``a``, and otherwise writes into the read-only ``a``).
    TypeError
        ``a`` is not an ndarray, or the ufunc has no loop for the dtypes or
        its result cannot be cast back to ``a.dtype`` (``b=None`` for a
        binary ufunc: NumPy's object loop meets ``None``).

    Notes
    -----
    Floating-point errors: where the C core runs (the five ufuncs above on
    its dtypes), it emits no floating-point warnings, so under NumPy's
    default error mode ("warn") an overflow gives ``inf`` and an invalid
    operation NaN without the ``RuntimeWarning`` NumPy's ``ufunc.at`` emits.
    Under an error mode that raises, calls or logs for overflow, invalid or
    divide, the call runs NumPy's ``ufunc.at`` instead, so those modes
    behave as in NumPy (``FloatingPointError`` under "raise"), and so does
    every call NumPy's ``ufunc.at`` runs.

    Examples
    --------
    >>> import numpy as np, scatterops as so
    >>> a = np.zeros((2, 4))
    >>> so.at(np.add, a, (np.array([0, 1, 1]), np.array([3, 0, 0])), 1.5)
    >>> a
    array([[0. , 0. , 0. , 1.5],
           [3. , 0. , 0. , 0. ]])
    >>> so.at(np.maximum, a, (slice(None), [2, 2]), [[4.0, 7.0], [5.0, 1.0]])
    >>> a
    array([[0. , 0. , 7. , 1.5],
           [3. , 0. , 5. , 0. ]])
    """
    if _core_at(ufunc, a, indices, b) is None:
        return None       # read and run in C (_core.at: the commonest forms)
    if isinstance(a, np.ndarray) and not a.flags.writeable:
        _read_only_at(ufunc, a, indices, b)
        return None
    if (type(indices) is np.ndarray and indices.ndim <= 1 and indices.size < _SMALL_1D
            and type(a) is np.ndarray and a.ndim == 1):
        # a 1-d index array into a 1-d a that the C entry declined (a dtype or b it does
        # not take): NumPy's own loop, which reads b right for that form
        _numpy_at(ufunc, a, indices, b)
        return None
    call = _plan(ufunc, a, indices, b)
    if call is None:
        _numpy_at(ufunc, a, indices, b)
        return None
    func, args, kwargs = call
    try:
        func(*args, **kwargs)
    except IndexError:
        # the C core checked every value before its first write: nothing is written.  Its
        # message names the call it made on a view of a; this one names at's arguments.
        raise IndexError(f"at: an index in indices is out of bounds for a of shape "
                         f"{a.shape} (valid on an axis of size n: -n <= index < n); "
                         f"nothing was written") from None
    return None


def _read_only_at(ufunc, a, indices, b):
    """A read-only a is refused before anything is read or written.  NumPy's ufunc.at
    refuses it only where each update meets a slice of a; where every update lands on one
    element it writes through the flag, and into a read-only memory map (np.memmap with
    mode="r") that write kills the process with a segmentation fault."""
    raise ValueError("at: a is read-only (its flags.writeable is False); ufunc.at updates a "
                     "in place, so pass a writeable array (a.copy(), or np.memmap with "
                     "mode='r+')")


def _numpy_at(ufunc, a, indices, b):
    """NumPy's own ufunc.at (b left out when not given, as a unary ufunc wants; None passed
    on as NumPy takes it), with b broadcast first where NumPy would read past it."""
    if b is _NO_B:
        ufunc.at(a, indices)
        return
    if (type(indices) is not np.ndarray or indices.ndim > 1) and type(b) in _ARRAY_B:
        b = _b_for_numpy(a, indices, b)
    ufunc.at(a, indices, b)


# b of these types is made an array by ufunc.at as numpy.asarray makes it
_ARRAY_B = (list, tuple, np.ndarray)


def _b_for_numpy(a, indices, b):
    """b for NumPy's ufunc.at on a 1-d a: broadcast to a[indices]'s shape when it is 1-d
    and that shape has more dimensions.  NumPy 2.4's loop for a 1-d a and one index array
    steps through a 1-d b as if it had one value per index, reading past its end when an
    N-d index array broadcasts it; the explicit broadcast gives the result ufunc.at gives
    any other spelling of the call.  b as it was wherever that is not the case, or where
    NumPy raises its own error (the index or b refused)."""
    if not (isinstance(a, np.ndarray) and a.ndim == 1):
        return b
    try:
        arr = np.asarray(b)
    except (TypeError, ValueError):
        return b
    if arr.ndim != 1:
        return b
    if type(indices) is np.ndarray and indices.dtype.kind in "iu":
        shape = indices.shape
    else:
        try:    # a[indices]'s shape, read on a one-byte stand-in of a
            shape = np.broadcast_to(np.zeros((), np.uint8), a.shape)[indices].shape
        except (IndexError, ValueError, TypeError, OverflowError):
            return b
    if len(shape) <= 1:
        return b
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        return b


def _plan(ufunc, a, indices, b):
    """The C-core call (function, args, kwargs) that does ``ufunc.at(a, indices, b)``,
    or None when NumPy's ufunc.at must run it."""
    try:
        reduction = _REDUCTION.get(ufunc)
    except TypeError:          # an unhashable "ufunc": NumPy says what is wrong
        return None
    if reduction is None or b is _NO_B or b is None or not (type(a) is np.ndarray or _plain_array(a)):
        return None
    if type(b) not in _SCALAR_B:
        if not isinstance(b, _PLAIN_B) and not isinstance(b, np.generic):
            return None
        if isinstance(b, np.ndarray) and type(b) is not np.ndarray:
            return None
    dt = a.dtype
    if not (dt.isnative and dt.char in _TYPED[reduction] and a.ndim >= 1):
        return None
    flags = a.flags
    if not (flags.aligned and (flags.c_contiguous or flags.f_contiguous or _elements_apart(a))):
        return None
    try:
        b_arr = np.asarray(b)
        # the ufunc's loop: the types promoted as ufunc.at promotes them (b as an array)
        loop = np.result_type(a, b_arr)
    except (TypeError, ValueError):    # a ragged list, say: NumPy's error
        return None
    if loop != dt and not (reduction in _MODULAR and dt.kind in "iu" and loop.kind in "iu"):
        return None
    if dt.kind in "fc" and _fp_errors_act():
        return None
    a_view = a if type(a) is np.ndarray else a.view(np.ndarray)
    call = _simple_call(a_view, indices, b_arr, reduction)
    if call is not _NOT_SIMPLE:
        return call
    try:
        index = _read_index(a_view, indices)
    except (IndexError, ValueError, TypeError, OverflowError):
        return None
    if index is None or index.size == 0 or not _b_fits(b_arr, index.shape):
        return None
    if b_arr.dtype != dt:
        b_arr = b_arr.astype(dt)       # exact, or wrap-around for the integer _MODULAR case
    return index.call(index.arrange(b_arr), reduction)


_NOT_SIMPLE = object()


def _simple_call(a, indices, b, reduction):
    """The call for the commonest forms, read with a few cheap checks: the same call
    _read_index and _Index.call make of them.  The forms: an int, a list or an integer
    array of one or more dimensions, or a tuple of no more items than a has axes, each a
    full slice ``:`` or an int (basic: the call on the view), or each ``:`` but one integer
    array (the call along that axis), or each an integer array (the call on every axis);
    or a boolean mask of a's shape (its nonzero() arrays, one on every axis).
    In each, the update space is a[indices]'s shape in its own order, so b needs no
    arranging.  None for NumPy's ufunc.at, _NOT_SIMPLE for the general reading."""
    items = indices if type(indices) is tuple else (indices,)
    if not items or len(items) > a.ndim:
        return _NOT_SIMPLE
    arrays, axes, ints = [], [], False
    for axis, x in enumerate(items):
        kind = type(x)
        if kind is slice:
            if x.start is None and x.stop is None and x.step is None:
                continue
            return _NOT_SIMPLE
        if kind is int:
            n = a.shape[axis]
            if not -n <= x < n:
                return None          # out of range: NumPy's IndexError
            ints = True
            continue
        if kind is list:
            x = _list_array(x)
        elif kind is not np.ndarray:
            return _NOT_SIMPLE
        if x is None or x.ndim == 0:
            return _NOT_SIMPLE
        kind = x.dtype.kind
        if kind == "b" and len(items) == 1 and x.shape == a.shape:
            arrays.extend(x.nonzero())       # a mask of a: an index array on every axis
            axes.extend(range(a.ndim))
            continue
        if kind not in "iu":
            return _NOT_SIMPLE
        arrays.append(_as_index(x))
        axes.append(axis)
    if ints:
        if arrays:
            return _NOT_SIMPLE       # ints among arrays broadcast with them
        return _basic_call(a[items + (Ellipsis,)], b, reduction, a.dtype)
    if len(arrays) == 1:
        return _one_array_call(a, arrays[0], axes[0], b, reduction)
    if len(arrays) == a.ndim:
        return _every_axis_call(a, arrays, b, reduction)
    return _NOT_SIMPLE


def _basic_call(view, b, reduction, dtype):
    """scatter_nd with k = 0 on view, a basic view of a; None when empty or b has more
    dimensions than view."""
    if view.size == 0 or not _b_fits(b, view.shape):
        return None
    if b.dtype != dtype:
        b = b.astype(dtype)
    if view.ndim == 0:
        view, b = view.reshape(1), b.reshape(1)
    return scatter_nd, (view, _NO_INDEX, b), {"reduction": reduction, "out": view}


def _one_array_call(a, x, axis, b, reduction):
    """scatter_update (scatter_elements for two 1-d arrays) of x along axis of a; None
    when a[indices] is empty or b has more dimensions."""
    shape = a.shape[:axis] + x.shape + a.shape[axis + 1:]      # a[indices]'s
    if 0 in shape or not _b_fits(b, shape):
        return None
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    if a.ndim == 1 and x.ndim == 1:
        return scatter_elements, (a, x, b), {"reduction": reduction, "out": a}
    return scatter_update, (a, x, b), {"reduction": reduction, "axis": axis, "out": a}


def _every_axis_call(a, arrays, b, reduction):
    """_core.at_apply with an index array on every axis of a; None when they do not
    broadcast (NumPy's error), when a[indices] is empty or b has more dimensions."""
    shape = arrays[0].shape
    for x in arrays:
        if x.shape != shape:
            try:
                shape = np.broadcast(*arrays).shape
            except ValueError:
                return None
            break
    if 0 in shape or not _b_fits(b, shape):
        return None
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    flat = _flat_call(a, arrays, shape, b, reduction)
    if flat is None:
        return _NOT_SIMPLE
    return _core.at_apply, flat, {}


_INTP_SIZE = np.dtype(np.intp).itemsize


def _as_index(x):
    """An integer index array as NumPy's indexing reads it: an unsigned one as wide as
    intp cast to intp (unsafe: a value past intp's range wraps, 2**64 - 1 being -1), the
    others as they are (every value fits in intp)."""
    if x.dtype.kind == "u" and x.dtype.itemsize >= _INTP_SIZE:
        return x.astype(np.intp)
    return x


def _b_fits(b, shape):
    """b broadcasts to shape (NumPy's rule); where it does not, NumPy's ufunc.at gets the
    call and raises its own error before it writes."""
    if b.ndim > len(shape):
        return False
    return all(m == 1 or m == n for m, n in zip(b.shape[::-1], shape[::-1]))


def _list_array(x):
    """The list x made an array as NumPy makes it, or None where that fails."""
    try:
        return np.asarray(x)
    except (IndexError, ValueError, TypeError, OverflowError):
        return None      # _read_index meets the same error, and hands the call to NumPy


def _plain_array(a):
    """a is an ndarray whose class does not override ufuncs (ufunc.at would dispatch)."""
    return isinstance(a, np.ndarray) and (
        type(a) is np.ndarray or type(a).__array_ufunc__ is np.ndarray.__array_ufunc__)


def _elements_apart(a):
    """No two elements of a share memory (a view made with as_strided may break this,
    and then the order of the writes across elements would matter)."""
    reach = a.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n > 1):
        if stride < reach:
            return False
        reach += stride * (n - 1)
    return True


def _fp_errors_act():
    """A floating-point error mode other than ignore or warn (the C core raises nothing)."""
    state = _errstate_var.get() if _errstate_var is not None else None
    acts = _fp_acts_seen.get(state) if state is not None else None
    if acts is None:
        err = np.geterr()
        acts = any(err[k] not in ("ignore", "warn") for k in ("over", "invalid", "divide"))
        if state is not None:
            if len(_fp_acts_seen) >= 16:
                _fp_acts_seen.clear()
            _fp_acts_seen[state] = acts   # the state object is kept, so its id stays its own
    return acts


# NumPy 2 keeps the error modes in a context variable holding an immutable object that
# np.seterr and np.errstate replace: what np.geterr says of one is known once read
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _errstate_var
except ImportError:          # NumPy 1.x: np.geterr on every call
    _errstate_var = None
_fp_acts_seen = {}


class _Index:
    """An index read as NumPy reads it, against a view of a.

    ``view``: a with the basic part of the index applied (ints, slices, None,
    Ellipsis), every index array replaced by a full slice; ``arrays``: the index
    arrays (booleans as their nonzero() arrays) with ``axes``, the axis of view
    each addresses; ``shape``: the shape of ``a[indices]``; ``labels``: for each
    axis of that shape, ``("b", i)`` (axis i of the broadcast index arrays) or
    ``("v", j)`` (axis j of view).
    """

    def __init__(self, view, arrays, axes, bshape, consecutive):
        self.view, self.arrays, self.axes = view, arrays, axes
        rest = [("v", j) for j in range(view.ndim) if j not in axes]
        blabels = [("b", i) for i in range(len(bshape))]
        if not arrays:
            self.labels = rest
        elif consecutive:
            # the broadcast dimensions replace the indexed axes, where they stand
            first = axes[0]
            self.labels = ([lab for lab in rest if lab[1] < first] + blabels
                           + [lab for lab in rest if lab[1] > first])
        else:
            self.labels = blabels + rest
        sizes = {("b", i): n for i, n in enumerate(bshape)}
        sizes.update((("v", j), n) for j, n in enumerate(view.shape))
        self.shape = tuple(sizes[lab] for lab in self.labels)
        self.size = 1
        for n in self.shape:
            self.size *= n
        self.bshape = bshape
        # the call's update index space, in the order of its axes
        if len(arrays) == 1:
            first = axes[0]
            self.space = ([lab for lab in rest if lab[1] < first] + blabels
                          + [lab for lab in rest if lab[1] > first])
        else:
            self.space = blabels + rest

    def arrange(self, b):
        """b as the call's updates: broadcast to a[indices]'s shape with its axes in the
        order of the update space (as it is when the two orders agree: the C core
        broadcasts it)."""
        if self.labels == self.space or b.ndim == 0:
            return b
        perm = [self.labels.index(lab) for lab in self.space]
        return np.broadcast_to(b, self.shape).transpose(perm)

    def call(self, updates, reduction):
        """The C-core call, in place on a view of a."""
        view, arrays, axes = self.view, self.arrays, self.axes
        kw = {"reduction": reduction}
        if not arrays:
            if view.ndim == 0:
                view, updates = view.reshape(1), updates.reshape(1)
            return scatter_nd, (view, _NO_INDEX, updates), dict(kw, out=view)
        if len(arrays) == 1:
            if view.ndim == 1 and arrays[0].ndim == 1:
                # the same call as scatter_update's, whose in-place walk is slower
                # (docs/design.md, "scatterops.at on index arrays")
                return scatter_elements, (view, arrays[0], updates), dict(kw, out=view)
            return scatter_update, (view, arrays[0], updates), dict(kw, axis=axes[0], out=view)
        if len(arrays) == view.ndim:
            flat = _flat_call(view, arrays, self.bshape, updates, reduction)
            if flat is not None:
                return _core.at_apply, flat, {}
        moved = view.transpose(list(axes) + [j for j in range(view.ndim) if j not in axes])
        tuples = np.stack([x.astype(np.intp, copy=False)
                           for x in np.broadcast_arrays(*arrays)], axis=-1)
        return scatter_nd, (moved, tuples, updates), dict(kw, out=moved)


def _flat_call(view, arrays, shape, updates, reduction):
    """The arguments of ``_core.at_apply`` for an index array on every axis of view (in
    order): a writeable 1-d view over view's elements from its lowest (memory), the size
    and the step in elements of each axis; None if a stride is not a multiple of the
    item size."""
    key = (view.shape, view.strides, view.itemsize)
    layout = _flat_layouts.get(key)
    if layout is None:
        layout = _flat_layout(*key)
        if len(_flat_layouts) >= 64:
            _flat_layouts.clear()
        _flat_layouts[key] = layout
    if layout is _NO_LAYOUT:
        return None
    sizes, steps, span, reach = layout
    if reach == "C":
        memory = view.reshape(span)           # starts at its lowest element: no copy
    elif reach == "F":
        memory = view.T.reshape(span)
    else:
        memory = as_strided(view[reach], shape=(span,), strides=(view.itemsize,))
    return memory, tuple(arrays), sizes, steps, shape, updates, reduction


_NO_LAYOUT = object()
_flat_layouts = {}      # (shape, strides, itemsize) -> _flat_layout's answer


def _flat_layout(shape, strides, item):
    """For a view of this shape, strides and item size: the sizes and the steps in
    elements of its axes, the span in elements from its lowest element to its highest,
    and how to reach its memory: "C" or "F" (contiguous: a reshape), else the index
    that reverses the axes with a negative stride, so that the view starts at its
    lowest element; _NO_LAYOUT if a stride is not a multiple of the item size."""
    steps, span = [], 1
    for n, stride in zip(shape, strides):
        step, rest = divmod(stride, item)
        if rest:
            return _NO_LAYOUT
        steps.append(step)
        span += (n - 1) * abs(step)
    if 0 in shape:
        reach = None
    elif _contiguous(shape, strides, item):
        reach = "C"
    elif _contiguous(shape[::-1], strides[::-1], item):
        reach = "F"
    else:
        reach = None
    if reach is None:
        reach = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)
    return tuple(shape), tuple(steps), span, reach


def _contiguous(shape, strides, item):
    """The elements are in C order one after the other (NumPy's rule: a stride of an
    axis of size 1 does not count)."""
    expected = item
    for n, stride in zip(shape[::-1], strides[::-1]):
        if n != 1:
            if stride != expected:
                return False
            expected *= n
    return True


def _read_index(a, indices):
    """indices read against a as NumPy's indexing reads it (an _Index), or None for
    a form handled by NumPy's ufunc.at (0-d booleans, unusual objects, anything
    NumPy would refuse)."""
    items = indices if type(indices) is tuple else (indices,)
    entries = []        # ("int", i) ("slice", s) ("none",) ("ellipsis",) ("array", x) ("bool", x)
    used = 0
    ellipses = 0
    for x in items:
        if type(x) is slice:
            entries.append(("slice", x))
            used += 1
        elif x is None:
            entries.append(("none",))
        elif x is Ellipsis:
            entries.append(("ellipsis",))
            ellipses += 1
        elif type(x) is int or isinstance(x, np.integer):
            entries.append(("int", operator.index(x)))
            used += 1
        else:
            if type(x) in (list, tuple):
                x = np.asarray(x)
            elif type(x) is not np.ndarray:
                return None
            kind = x.dtype.kind
            if kind == "b" and x.ndim > 0:
                entries.append(("bool", x))
                used += x.ndim
            elif kind in "iu" and not (x.ndim == 0 and x.dtype.itemsize >= _INTP_SIZE
                                       and kind == "u"):
                entries.append(("array", _as_index(x)))
                used += 1
            else:
                return None
    if ellipses > 1 or used > a.ndim:
        return None
    has_array = any(e[0] in ("array", "bool") for e in entries)

    basic = []          # the index of the view
    arrays, axes = [], []
    advanced_at = []    # positions in the index of the advanced entries (NumPy's placement rule)
    dim = 0             # the axis of a the next entry indexes
    vaxis = 0           # the axis of the view the next entry makes
    pos = 0             # the position in the index, a boolean of n dims counting n
    for e in entries:
        tag = e[0]
        if tag == "int":
            n = a.shape[dim]
            if not -n <= e[1] < n:
                return None
            basic.append(e[1])
            if has_array:
                advanced_at.append(pos)
            dim += 1
        elif tag == "slice":
            basic.append(e[1])
            dim += 1
            vaxis += 1
        elif tag == "none":
            basic.append(None)
            vaxis += 1
        elif tag == "ellipsis":
            basic.append(Ellipsis)
            dim += a.ndim - used
            vaxis += a.ndim - used
        elif tag == "array":
            basic.append(slice(None))
            arrays.append(e[1])
            axes.append(vaxis)
            advanced_at.append(pos)
            dim += 1
            vaxis += 1
        else:  # bool: its nonzero() arrays, one per axis it covers
            x = e[1]
            if x.shape != a.shape[dim:dim + x.ndim]:
                return None
            for i, nz in enumerate(x.nonzero()):
                basic.append(slice(None))
                arrays.append(nz)
                axes.append(vaxis)
                advanced_at.append(pos + i)
                dim += 1
                vaxis += 1
            pos += x.ndim - 1
        pos += 1
    if Ellipsis not in basic:
        basic.append(Ellipsis)        # a view even when every axis gets an int
    view = a[tuple(basic)]
    bshape = (arrays[0].shape if len(arrays) == 1 else
              np.broadcast(*arrays).shape if arrays else ())
    consecutive = not advanced_at or advanced_at[-1] - advanced_at[0] == len(advanced_at) - 1
    return _Index(view, arrays, axes, bshape, consecutive)

"""The text of every error a public call raises.

The C core (``csrc/py/args.c`` and ``csrc/py/public.c``) owns the rules: it decides that a
call is wrong and names the error by a code, with the fields of its message.  This
module turns the code into the exception to raise (``error``, the hook ``_core`` calls):
the class the contract names and a message that says which argument is wrong and what
was expected, with the shapes involved.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    from numpy import AxisError  # type: ignore[attr-defined,no-redef]

from . import _core


def _names() -> str:
    return str(sorted(_core.REDUCTIONS))


def _missing(f: Dict[str, Any]) -> str:
    names = [f"'{n}'" for n, g in zip(("data", "indices", "updates"), f["given"]) if not g]
    if len(names) == 1:
        listed = names[0]
    elif len(names) == 2:
        listed = " and ".join(names)
    else:
        listed = ", ".join(names[:-1]) + ", and " + names[-1]
    plural = "s" if len(names) > 1 else ""
    return f"missing {len(names)} required positional argument{plural}: {listed}"


def _takes(f: Dict[str, Any]) -> str:
    n = f["given"]
    if f["takes"] == 3:
        return f"takes 3 positional arguments but {n} were given"
    return f"takes from 3 to 4 positional arguments but {n} were given"


def _what(f: Dict[str, Any]) -> str:
    """Where the required shape of updates comes from, for the shape error."""
    kind, data, idx, axis = f["kind"], f["data_shape"], f["indices_shape"], f["axis"]
    if kind == _core.KINDS["scatter_update"]:
        return (f"data.shape[:{axis}] + indices.shape + data.shape[{axis + 1}:] with data "
                f"{data}, indices {idx}")
    if kind == _core.KINDS["scatter_nd"]:
        return f"indices.shape[:-1] + data.shape[{idx[-1]}:] with indices {idx}, data {data}"
    return f"indices.shape = {idx}"


def _reduction_dtype(f: Dict[str, Any]) -> str:
    red, given = f["reduction"], f["given"]
    shown = repr(red) if given == red else f"{given!r} (that is, {red!r})"
    what = ("NumPy has no add loop or no division rule for it" if f["mean"]
            else f"NumPy has no numpy.{f['ufunc'].__name__} loop for it")
    return f"reduction={shown} is not defined for dtype {f['dtype']} ({what})"


_GROUP_FUNCS = ("sum, prod, max, min, mean, var, std, argmax, argmin, first, last, any, all, "
                "count, logsumexp, the nan-variants nansum ... nanlast and nancount")


def _indptr_value(f: Dict[str, Any]) -> str:
    rule = ("indptr[0] == 0, non-decreasing, indptr[-1] == values.shape[axis]" if f["cover"]
            else "0 <= indptr[0], non-decreasing, indptr[-1] <= values.shape[axis]")
    return (f"indptr[{f['pos']}] = {f['value']} breaks the rule {rule} "
            f"(values.shape[axis] = {f['n']})")


# code -> (exception class, message after "func: " or "func()", from the fields)
_Text = Callable[[Dict[str, Any]], str]
MESSAGES: Dict[str, Tuple[type, _Text]] = {
    # binding the argument list, as Python words it for a Python function
    "too_many_positional": (TypeError, _takes),
    "missing_positional": (TypeError, _missing),
    "unexpected_keyword": (TypeError, lambda f: f"got an unexpected keyword argument '{f['name']}'"),
    "multiple_values": (TypeError, lambda f: f"got multiple values for argument '{f['name']}'"),
    # the arguments
    "reduction_type": (TypeError, lambda f: f"reduction must be a str, one of {_names()}, "
                                            f"got {f['got'].__name__}"),
    "reduction_value": (ValueError, lambda f: f"reduction must be one of {_names()}, "
                                              f"got {f['got']!r}"),
    "include_self_type": (TypeError, lambda f: f"include_self must be a bool, got "
                                               f"{f['got'].__name__}"),
    "mode_type": (TypeError, lambda f: "mode must be a str, one of 'raise', 'wrap', 'clip', "
                                       f"'drop', got {f['got'].__name__}"),
    "mode_value": (ValueError, lambda f: "mode must be one of 'raise', 'wrap', 'clip', 'drop', "
                                         f"got {f['got']!r}"),
    "data_0d": (ValueError, lambda f: "data must have rank >= 1, got a 0-d array"),
    "axis_array": (TypeError, lambda f: "axis must be an int or a 0-d / 1-element integer array, "
                                        f"got an array of dtype {f['dtype']} and shape {f['shape']}"),
    "axis_bool": (TypeError, lambda f: "axis must be an int, got bool"),
    "axis_type": (TypeError, lambda f: f"axis must be an int, got {f['got'].__name__}"),
    "indices_dtype": (TypeError, lambda f: "indices must have an integer dtype (int8 to uint64), "
                                           f"got {f['dtype']}"),
    "nd_tuple": (TypeError, lambda f: f"indices is a tuple of {f['n']} arrays or sequences, "
                                      "np.add.at's (rows, cols) spelling, which scatter_nd "
                                      f"would read as {f['n']} index tuples, one per item; for "
                                      "np.add.at's meaning pass np.stack((rows, cols), axis=-1), "
                                      "one index tuple per row (a list or an array is taken as "
                                      "it is)"),
    "nd_indices_rank": (ValueError, lambda f: "indices must have rank >= 1 (the last dimension "
                                              "holds the index tuples), got a 0-d array"),
    "nd_k": (ValueError, lambda f: f"indices.shape[-1] = {f['k']} (indices shape "
                                   f"{f['indices_shape']}) must be <= rank of data {f['r']} "
                                   f"(data shape {f['data_shape']})"),
    "elements_rank": (ValueError, lambda f: f"indices must have the rank of data ({f['r']}, data "
                                            f"shape {f['data_shape']}), got rank {f['q']} (shape "
                                            f"{f['indices_shape']})"),
    "elements_shape": (ValueError, lambda f: f"indices.shape[{f['d']}] = {f['n']} exceeds "
                                             f"data.shape[{f['d']}] = {f['size']} (indices "
                                             f"{f['indices_shape']}, data {f['data_shape']}, "
                                             f"axis {f['axis']})"),
    "updates_rank": (ValueError, lambda f: f"the required shape of updates would have more than "
                                           f"{f['maxdims']} dimensions, more than NumPy can hold "
                                           f"(data {f['data_shape']}, indices {f['indices_shape']})"),
    "updates_int_range": (TypeError, lambda f: f"updates {f['value']} is out of range for data's "
                                               f"dtype {f['dtype']} (a Python int is cast only "
                                               "where it fits)"),
    "updates_cast": (TypeError, lambda f: f"updates of dtype {f['from']} cannot be cast to data's "
                                          f"dtype {f['to']} under the 'same_kind' rule"),
    "updates_unicode": (TypeError, lambda f: f"updates of dtype {f['from']} cannot be cast to "
                                             f"data's dtype {f['to']}: {f['exc']}"),
    "updates_shape": (ValueError, lambda f: f"updates has shape {f['got']}, which does not "
                                            f"broadcast to the required shape {f['want']} "
                                            f"({_what(f)})"),
    "updates_size": (ValueError, lambda f: f"updates would have the required shape {f['want']}, "
                                           f"which is too large: {f['exc']}"),
    "masked": (TypeError, lambda f: f"{f['name']} is a numpy.ma.MaskedArray, whose mask a "
                                    f"scatter cannot honour; pass {f['name']}.filled(value) "
                                    f"(masked elements as value) or {f['name']}.data (the "
                                    "values under the mask)"),
    "out_type": (TypeError, lambda f: f"out must be a numpy.ndarray, got {f['got'].__name__}"),
    "out_shape": (ValueError, lambda f: f"out has shape {f['got']}, expected data's shape "
                                        f"{f['want']}"),
    "out_dtype": (TypeError, lambda f: f"out has dtype {f['got']}, expected data's dtype "
                                       f"{f['want']}"),
    "out_readonly": (ValueError, lambda f: "out is read-only; it must be a writeable array"),
    "reduction_dtype": (TypeError, _reduction_dtype),
    "indices_intp": (ValueError, lambda f: f"indices of dtype {f['dtype']} and shape {f['shape']} "
                                           f"({f['size']} elements) cannot be converted to intp: "
                                           f"{f['exc']}"),
    "index_range": (IndexError, lambda f: f"indices[{', '.join(str(p) for p in f['where'])}] = "
                                          f"{f['value']} is out of bounds for axis {f['axis']} of "
                                          f"data with size {f['size']} (valid: -{f['size']} <= "
                                          f"index < {f['size']})"),
    # the group reductions (csrc/py/groups_args.c, groups.c)
    "group_values_0d": (ValueError, lambda f: "values must have rank >= 1, got a 0-d array"),
    "group_func_type": (TypeError, lambda f: f"func must be a str, one of {_GROUP_FUNCS}, or "
                                             f"the NumPy function of one (numpy.sum, "
                                             f"numpy.nanmax, ...), got {f['got']!r}"),
    "group_func_value": (ValueError, lambda f: f"func must be one of {_GROUP_FUNCS}, or its "
                                               f"NumPy function, got {f['got']!r}"),
    "group_func_dtype": (TypeError, lambda f: f"func={f['func']!r} is not defined for values of "
                                              f"dtype {f['dtype']}"),
    "group_dtype": (TypeError, lambda f: f"func={f['func']!r} takes no dtype={f['dtype']} "
                                         "(argmax, argmin, count, any and all have a fixed "
                                         "result dtype; mean, var, std and logsumexp compute in "
                                         "float32, float64 or longdouble)"),
    "group_dtype_cast": (TypeError, lambda f: f"values of dtype {f['from']} cannot be cast to "
                                              f"dtype={f['to']} under the 'same_kind' rule"),
    "group_log_type": (TypeError, lambda f: f"log must be a bool, got {f['got'].__name__}"),
    "group_int_type": (TypeError, lambda f: f"{f['name']} must be an int, got "
                                            f"{f['got'].__name__}"),
    "group_int_value": (ValueError, lambda f: f"{f['name']} must be a non-negative int, got "
                                              f"{f['got']!r}"),
    "group_ids_dtype": (TypeError, lambda f: f"{f['name']} must have an integer dtype (int8 to "
                                             f"uint64), got {f['dtype']}"),
    "group_ids_rank": (ValueError, lambda f: f"{f['name']} must be 1-D, got shape {f['shape']}"),
    "group_ids_length": (ValueError, lambda f: f"groups has {f['got']} ids, expected one per slice "
                                               f"of values along axis {f['axis']}: {f['want']}"),
    "group_id_range": (IndexError, lambda f: f"groups[{f['pos']}] = {f['value']} is outside "
                                             f"[0, {f['size']}) (size={f['size']})"
                                             + ("; mode='drop' leaves such slices out"
                                                if f["has_mode"] else "")),
    "group_indptr_empty": (ValueError, lambda f: "indptr must hold at least one offset"),
    "group_table_size": (ValueError, lambda f: f"size={f['size']} "
                                               + ("" if f["given"] else "(the largest id + 1) ")
                                               + "groups times the positions of the other axes "
                                               f"is more than {f['max']} cells"),
    "group_indptr_value": (ValueError, _indptr_value),
    "group_mode_type": (TypeError, lambda f: "mode must be a str, 'raise' or 'drop', got "
                                             f"{f['got'].__name__}"),
    "group_mode_value": (ValueError, lambda f: f"mode must be 'raise' or 'drop', got "
                                               f"{f['got']!r}"),
    "group_out_shape": (ValueError, lambda f: f"out has shape {f['got']}, expected the result's "
                                              f"shape {f['want']}"),
    "group_out_dtype": (TypeError, lambda f: f"out has dtype {f['got']}, expected the result's "
                                             f"dtype {f['want']}"),
    "group_fill_value": (ValueError, lambda f: f"fill_value={f['got']!r} cannot be held by the "
                                               f"result's integer dtype {f['dtype']}"),
    "group_fill_shape": (ValueError, lambda f: f"fill_value must be a scalar, got shape "
                                               f"{f['shape']}"),
}

# the errors of binding the argument list read "func() ...", as Python's own do
_BINDING = {"too_many_positional", "missing_positional", "unexpected_keyword", "multiple_values"}


def rewrapped(exc: BaseException, msg: str) -> BaseException:
    """exc's class with msg -- or plain ValueError / TypeError for a subclass that is not
    built from one message (UnicodeDecodeError)."""
    try:
        return type(exc)(msg)
    except Exception:
        return (ValueError if isinstance(exc, ValueError) else TypeError)(msg)


def _converting(func: str, name: str, exc: BaseException) -> BaseException:
    """An argument that numpy.asarray refused: its ValueError or TypeError said again with
    the argument's name; any other exception (the caller's own, from ``__array__``,
    ``__len__``, ...) is raised as it is, with a note that says which argument raised it."""
    if isinstance(exc, (ValueError, TypeError)):
        return rewrapped(exc, f"{func}: {name} could not be converted to an array: {exc}")
    if hasattr(exc, "add_note"):        # Python >= 3.11
        exc.add_note(f"{func}: raised while converting {name} to an array")
    return exc


# the note on an interrupt (Ctrl-C) of a call that writes into out (docs/contract.md)
INTERRUPTED_NOTE = (
    "{func}: interrupted while writing into out, which may now hold part of the updates: "
    "each element holds what the updates that address it give when applied in order up to "
    "some point of its own (none, some or all of them), each update element applied whole; "
    "under reduction='mean' an element holds the mean of the updates applied to it, never "
    "an undivided sum. If out is not data, an element the copy of data had not reached "
    "still holds its earlier value.")


def error(code: str, func: str, fields: Dict[str, Any]) -> BaseException:
    """The exception for error ``code`` of the public function ``func``."""
    if code == "interrupted":
        # the interrupt itself, noted: raised again as it was
        fields["exc"].add_note(INTERRUPTED_NOTE.format(func=func))
        return fields["exc"]
    if code == "converting":
        return _converting(func, fields["name"], fields["exc"])
    if code == "axis_range":
        return AxisError(fields["axis"], fields["ndim"], msg_prefix=f"{func}: axis")
    if code == "indices_intp" and isinstance(fields.get("exc"), MemoryError):
        cls: type = MemoryError
    else:
        cls = MESSAGES[code][0]
    sep = "() " if code in _BINDING else ": "
    return cls(f"{func}{sep}{MESSAGES[code][1](fields)}")

"""The one reading of the SCATTEROPS_* environment variables: how a boolean
switch, a count and a list of flags are parsed, and what a bad value becomes.

Used at run time (``_settings.py``, ``_threads.py``: a ``RuntimeWarning``) and
at build time (``setup.py`` loads this file by its path, before the package is
built: a printed warning), so the rule is written once.  This module imports
nothing of the package.

* A boolean switch is ``1/0``, ``true/false``, ``yes/no`` or ``on/off``, in any
  case, with surrounding whitespace.
* A count is decimal digits (a ``+`` allowed), at least ``lo`` and at most
  ``hi``; no unit suffix, sign of minus, underscore or base prefix.
* Unset or empty (whitespace only): the default, silently.  Anything else that
  does not parse: a warning naming the variable, its value and the value used
  instead (the default).
"""
from __future__ import annotations

import os
import re
import shlex
import warnings
from typing import Callable, List, Mapping, Optional

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")
_DIGITS = re.compile(r"\+?[0-9]+")

Warn = Callable[[str], None]


def runtime_warning(message: str) -> None:
    """How a bad value is reported at run time."""
    warnings.warn(message, RuntimeWarning, stacklevel=4)


def _raw(name: str, environ: Optional[Mapping[str, str]]) -> Optional[str]:
    value = (os.environ if environ is None else environ).get(name)
    return None if value is None or not value.strip() else value


def env_bool(name: str, default: bool, environ: Optional[Mapping[str, str]] = None,
             warn: Warn = runtime_warning) -> bool:
    """The boolean switch name (see the module docstring)."""
    value = _raw(name, environ)
    if value is None:
        return default
    word = value.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    warn(f"{name}={value!r} is not a boolean switch (1/0, true/false, yes/no, on/off); "
         f"using {int(default)}")
    return default


def env_int(name: str, default: int, lo: int, hi: int, what: str,
            environ: Optional[Mapping[str, str]] = None, warn: Warn = runtime_warning) -> int:
    """The count name, in [lo, hi]; what says what it counts, for the warning."""
    value = _raw(name, environ)
    if value is None:
        return default
    text = value.strip()
    if _DIGITS.fullmatch(text) and lo <= int(text) <= hi:
        return int(text)
    if _DIGITS.fullmatch(text):
        problem = "too large" if int(text) > hi else "too small"
    elif text.startswith("-") and _DIGITS.fullmatch(text[1:]):
        problem = "negative"
    else:
        problem = "not a whole number"
    warn(f"{name}={value!r} is {problem}: expected {what}, an integer from {lo} to {hi}; "
         f"using {default}")
    return default


def env_flags(name: str, environ: Optional[Mapping[str, str]] = None,
              warn: Warn = runtime_warning) -> List[str]:
    """The list of compiler flags name, split as a shell would."""
    value = _raw(name, environ)
    if value is None:
        return []
    try:
        return shlex.split(value)
    except ValueError as e:
        warn(f"{name}={value!r} cannot be split into flags ({e}); using none")
        return []

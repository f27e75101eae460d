"""The run-time settings other than the thread count (``_threads.py``), read
from the environment once, at import, and set in the C core before any call:
``SCATTEROPS_OUTPUT_CACHE`` (bytes the output cache keeps) and the CPU switches
``SCATTEROPS_NO_F16C``, ``SCATTEROPS_NO_AVX512``, ``SCATTEROPS_NO_AVX2``.  Their
parsing rule is ``_env.py``'s."""
from __future__ import annotations

import sys

from . import _core
from ._env import env_bool, env_int

OUTPUT_CACHE_DEFAULT = 256 << 20


def _apply_environment() -> None:
    _core.set_output_cache_limit(env_int(
        "SCATTEROPS_OUTPUT_CACHE", OUTPUT_CACHE_DEFAULT, 0, sys.maxsize, "bytes (0: no cache)"))
    for i, feature in enumerate(_core.CPU_FEATURES):
        if env_bool(f"SCATTEROPS_NO_{feature.upper()}", False):
            _core.disable_cpu_feature(i)


_apply_environment()

"""Build the one C extension, scatterops._core, from csrc/.

The sources are every .c file under csrc/, found by folder (one folder a layer:
base, kernels, plan, walk, py), so a new file needs no edit here; includes are
written relative to csrc/ ("base/base.h").

NPY_TARGET_VERSION is pinned to NumPy 1.25 so a wheel built against NumPy 2.x
imports under the oldest NumPy that pyproject.toml claims.  Set
SCATTEROPS_WERROR=1 to turn warnings into errors (CI does; the shipped build
does not), SCATTEROPS_CFLAGS / SCATTEROPS_LDFLAGS to add flags (for example the
sanitizers), SCATTEROPS_LTO=0 to build without link-time optimisation.
"""
import os
import shlex
import sysconfig
from glob import glob

import numpy as np
import setuptools
from setuptools import Extension, setup

# pyproject.toml gives the license as an SPDX expression (PEP 639), which older
# setuptools rejects with a schema error that does not say why.  pip's isolated
# builds get a new one from [build-system]; `python setup.py ...` uses whatever
# is installed, so say what to do.
if int(setuptools.__version__.split(".")[0]) < 77:
    raise SystemExit(f"scatterops needs setuptools>=77 to build (this is {setuptools.__version__}): "
                     "pip install --upgrade 'setuptools>=77'")

npymath_dir = os.path.join(os.path.dirname(np.get_include()), "lib")

# -fvisibility=hidden and -flto: the C core is many small files in layers; hidden
# symbols make the calls between them direct (no PLT) and link-time optimisation
# inlines across them, which the per-call cost of a small call depends on (a
# 4-update in-place add: 131 ns as separate objects, 108 ns like this; PyInit__core
# is exported by PyMODINIT_FUNC)
_cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""
lto = ([] if os.environ.get("SCATTEROPS_LTO", "1") == "0"
       else ["-flto"] if "clang" in _cc else ["-flto=auto"])
cflags = ["-std=c11", "-O3", "-ffp-contract=off", "-fno-strict-aliasing", "-fvisibility=hidden",
          "-Wall", "-Wextra", "-Wno-unused-parameter"] + lto
if os.environ.get("SCATTEROPS_WERROR"):
    cflags.append("-Werror")
cflags += shlex.split(os.environ.get("SCATTEROPS_CFLAGS", ""))
ldflags = (["-O3"] + lto if lto else []) + shlex.split(os.environ.get("SCATTEROPS_LDFLAGS", ""))

core = Extension(
    "scatterops._core",
    sources=sorted(glob("csrc/**/*.c", recursive=True)),
    depends=sorted(glob("csrc/**/*.h", recursive=True)),
    include_dirs=[np.get_include(), "csrc"],
    library_dirs=[npymath_dir],
    libraries=["npymath", "m"],
    define_macros=[
        ("NPY_NO_DEPRECATED_API", "NPY_1_25_API_VERSION"),
        ("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION"),
    ],
    extra_compile_args=cflags,
    extra_link_args=ldflags,
)

setup(ext_modules=[core])

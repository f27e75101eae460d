"""Build the one C extension, scatterops._core, from csrc/.

The sources are every .c file under csrc/, found by folder (one folder a layer:
base, kernels, plan, walk, call, py), so a new file needs no edit here; includes are
written relative to csrc/ ("base/base.h").

NPY_TARGET_VERSION is pinned to NumPy 1.25 so a wheel built against NumPy 2.x
imports under the oldest NumPy that pyproject.toml claims.

The build settings, parsed as the run-time ones are (scatterops/_env.py: a
switch is 1/0, true/false, yes/no, on/off; a bad value is a printed warning
and the default):

* SCATTEROPS_WERROR=1: compiler warnings are errors (CI sets it; default off);
* SCATTEROPS_LTO=0: no link-time optimisation (default on);
* SCATTEROPS_PORTABLE=1: no x86-64 vector path (AVX-512, AVX2, F16C, CPUID),
  only the scalar loops, as on any other machine (default off; off x86-64 the
  C code has none anyway);
* SCATTEROPS_CFLAGS / SCATTEROPS_LDFLAGS: more flags (for example the
  sanitizers), split as a shell would.

The C core runs its threads on POSIX threads: on Windows the build stops and
says so.
"""
import importlib.util
import os
import shutil
import sys
import sysconfig
from glob import glob

import setuptools
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_env_rules():
    """scatterops/_env.py, by its path: the package itself is not built yet."""
    spec = importlib.util.spec_from_file_location(
        "_scatterops_build_env", os.path.join(HERE, "scatterops", "_env.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _print_warning(message):
    print(f"warning: {message}", file=sys.stderr)


def build_flags(environ=None, cc=None, warn=_print_warning):
    """(compile flags, link flags, macros) for the environment environ (default
    os.environ) and the compiler command cc."""
    env = _load_env_rules()
    environ = os.environ if environ is None else environ
    if cc is None:
        cc = environ.get("CC") or sysconfig.get_config_var("CC") or ""
    # -fvisibility=hidden and -flto: the C core is many small files in layers; hidden
    # symbols make the calls between them direct (no PLT) and link-time optimisation
    # inlines across them, which the per-call cost of a small call depends on (a
    # 4-update in-place add: 131 ns as separate objects, 108 ns like this; PyInit__core
    # is exported by PyMODINIT_FUNC)
    lto = (["-flto"] if "clang" in cc else ["-flto=auto"]) \
        if env.env_bool("SCATTEROPS_LTO", True, environ, warn) else []
    # -g0: no debug information.  Python's own CFLAGS (which setuptools puts first) ask
    # for -g, and writing it out for the many specialised loops of kernels/indexed.c
    # and kernels/rows.c costs build time and nothing at run time; SCATTEROPS_CFLAGS=-g
    # comes later and puts it back.
    cflags = ["-std=c11", "-O3", "-g0", "-ffp-contract=off", "-fno-strict-aliasing",
              "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"] + lto
    if env.env_bool("SCATTEROPS_WERROR", False, environ, warn):
        cflags.append("-Werror")
    cflags += env.env_flags("SCATTEROPS_CFLAGS", environ, warn)
    ldflags = (["-O3"] + lto if lto else []) + env.env_flags("SCATTEROPS_LDFLAGS", environ, warn)
    macros = [("NPY_NO_DEPRECATED_API", "NPY_1_25_API_VERSION"),
              ("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION")]
    if env.env_bool("SCATTEROPS_PORTABLE", False, environ, warn):
        macros.append(("SCATTEROPS_PORTABLE", "1"))
    return cflags, ldflags, macros


class ParallelBuildExt(build_ext):
    """build_ext that compiles the C core's files on every CPU this process may use (the one
    extension has some forty files; setuptools' own --parallel runs extensions, not files).  The
    object folders are made first, so the compiles only write their own files."""

    def build_extensions(self):
        from concurrent.futures import ThreadPoolExecutor

        compile_one = self.compiler.compile
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

        def compile_all(sources, output_dir=None, *args, **kwargs):
            if jobs < 2 or len(sources) < 2:
                return compile_one(sources, output_dir, *args, **kwargs)
            for obj in self.compiler.object_filenames(sources, output_dir=output_dir or ""):
                os.makedirs(os.path.dirname(obj) or ".", exist_ok=True)
            with ThreadPoolExecutor(jobs) as pool:
                parts = list(pool.map(lambda src: compile_one([src], output_dir, *args, **kwargs),
                                      sources))
            return [obj for part in parts for obj in part]

        self.compiler.compile = compile_all
        super().build_extensions()

    def build_extension(self, ext):
        """Build ext, or take the library an earlier build made of the same inputs.

        `pip install -e .` then `pip install -e '.[test]'` (the README's two commands) each
        build in a new temporary folder, so the second compiled the same sources again (about a
        minute on a 2-core machine).  The library is kept under the name core_cache_key gives
        it; build/ keeps the last few; `build_ext --force` or SCATTEROPS_BUILD_CACHE=0 builds
        anew."""
        if self.force or not _load_env_rules().env_bool(
                "SCATTEROPS_BUILD_CACHE", True, os.environ, _print_warning):
            super().build_extension(ext)
            return
        cache = os.path.join(HERE, "build", "core-cache")
        cached = os.path.join(cache, self._cache_key(ext) + sysconfig.get_config_var("EXT_SUFFIX"))
        target = self.get_ext_fullpath(ext.name)
        if os.path.isfile(cached):
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            partial = f"{target}.{os.getpid()}.tmp"
            shutil.copy(cached, partial)
            os.replace(partial, target)  # a process that has the old one loaded keeps it
            print(f"scatterops._core: the same inputs were built before; taken from {cached}")
            return
        super().build_extension(ext)
        try:
            os.makedirs(cache, exist_ok=True)
            partial = f"{cached}.{os.getpid()}.tmp"
            shutil.copy(target, partial)
            os.replace(partial, cached)
            kept = sorted((os.path.join(cache, name) for name in os.listdir(cache)
                           if not name.endswith(".tmp")), key=os.path.getmtime)
            for old in kept[:-4]:
                os.remove(old)
        except OSError as exc:  # a read-only checkout still builds; it only caches nothing
            _print_warning(f"the built library was not kept in {cache}: {exc}")

    def _cache_key(self, ext):
        import subprocess

        import numpy as np

        commands = [getattr(self.compiler, name, None) for name in ("compiler_so", "linker_so")]
        try:
            version = subprocess.run([commands[0][0], "--version"], capture_output=True,
                                     text=True, check=False).stdout
        except (OSError, TypeError, IndexError):
            version = "unknown"
        return core_cache_key(ext, commands, version, np.__version__)


def core_cache_key(ext, commands, compiler_version, numpy_version, root=HERE):
    """The build cache's name for what ext builds into: a digest of the bytes of its sources and
    headers and of setup.py, its flags and macros, the compile and link commands, the
    compiler's version, the Python ABI and the NumPy version.  The folders of NumPy's headers
    are left out: pip's isolated builds put the same NumPy in a new folder each time."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(set(ext.sources) | set(ext.depends)) + [os.path.abspath(__file__)]:
        digest.update(path.encode() + b"\0")
        with open(os.path.join(root, path), "rb") as f:
            digest.update(f.read() + b"\0")
    numpy_dirs = [d for d in ext.include_dirs if "numpy" in d]
    digest.update(repr((commands, compiler_version, ext.extra_compile_args, ext.extra_link_args,
                        ext.define_macros, ext.libraries, sys.version,
                        sysconfig.get_config_var("EXT_SUFFIX"), numpy_version,
                        [d for d in ext.include_dirs if d not in numpy_dirs])).encode())
    return digest.hexdigest()[:24]


def main():
    # pyproject.toml gives the license as an SPDX expression (PEP 639), which older
    # setuptools rejects with a schema error that does not say why.  pip's isolated
    # builds get a new one from [build-system]; `python setup.py ...` uses whatever
    # is installed, so say what to do.
    if int(setuptools.__version__.split(".")[0]) < 77:
        raise SystemExit(f"scatterops needs setuptools>=77 to build (this is "
                         f"{setuptools.__version__}): pip install --upgrade 'setuptools>=77'")
    if os.name == "nt":
        raise SystemExit("scatterops cannot be built on Windows: its C core runs its threads "
                         "on POSIX threads (pthread.h), which this platform does not have; "
                         "build it on Linux or macOS, or under WSL")
    import numpy as np

    cflags, ldflags, macros = build_flags()
    core = Extension(
        "scatterops._core",
        sources=sorted(glob("csrc/**/*.c", recursive=True)),
        depends=sorted(glob("csrc/**/*.h", recursive=True)),
        include_dirs=[np.get_include(), "csrc"],
        library_dirs=[os.path.join(os.path.dirname(np.get_include()), "lib")],
        libraries=["npymath", "m"],
        define_macros=macros,
        extra_compile_args=cflags,
        extra_link_args=ldflags,
    )
    setup(ext_modules=[core], cmdclass={"build_ext": ParallelBuildExt})


if __name__ == "__main__":
    main()

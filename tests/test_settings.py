"""Settings: the CPUs a call may use (affinity and cgroup CPU quota), and the strict reading of
every SCATTEROPS_* variable, at run time (a RuntimeWarning naming the variable and the value used
instead) and at build time (setup.py: a printed warning), as docs/contract.md says."""
import glob
import os
import runpy
import subprocess
import sys

import pytest

import scatterops
from scatterops import _core, _env, _threads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- the cgroup CPU quota, read from a fake /sys/fs/cgroup and /proc/self/cgroup ----------


def _fake_cgroup(tmp_path, proc, files):
    """A fake cgroup folder holding files {relative path: text}, and a fake
    /proc/self/cgroup holding proc; their paths."""
    root = tmp_path / "cgroup"
    root.mkdir(parents=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    proc_file = tmp_path / "proc_self_cgroup"
    proc_file.write_text(proc)
    return str(root), str(proc_file)


@pytest.mark.parametrize("cpu_max, cpus", [
    ("max 100000\n", None),
    ("150000 100000\n", 1),          # 1.5 CPUs: rounded down
    ("250000 100000\n", 2),
    ("50000 100000\n", 1),           # half a CPU: at least 1
    ("800000 100000", 8),
    ("lots of CPUs\n", None),        # garbage: no limit
    ("", None),
    ("-5 100000", None),
    ("100000 0", None),
])
def test_cgroup_v2_cpu_max(tmp_path, cpu_max, cpus):
    root, proc = _fake_cgroup(tmp_path, "0::/\n", {"cpu.max": cpu_max})
    assert _threads._cgroup_cpu_limit(root, proc) == cpus


def test_cgroup_v2_the_smallest_quota_along_the_path(tmp_path):
    root, proc = _fake_cgroup(tmp_path, "0::/user.slice/job\n", {
        "cpu.max": "max 100000", "user.slice/cpu.max": "300000 100000",
        "user.slice/job/cpu.max": "max 100000"})
    assert _threads._cgroup_cpu_limit(root, proc) == 3
    # a hybrid host: v2 mounted at root/unified
    root, proc = _fake_cgroup(tmp_path / "h", "0::/\n", {"unified/cpu.max": "200000 100000"})
    assert _threads._cgroup_cpu_limit(root, proc) == 2


@pytest.mark.parametrize("quota, period, cpus", [
    ("-1", "100000", None),           # v1's "no limit"
    ("250000", "100000", 2),
    ("150000", "100000", 1),
    ("garbage", "100000", None),
    ("200000", "", None),
])
def test_cgroup_v1_cfs_quota(tmp_path, quota, period, cpus):
    root, proc = _fake_cgroup(tmp_path, "2:cpuacct:/\n1:cpu:/\n0::/\n", {
        "cpu/cpu.cfs_quota_us": quota, "cpu/cpu.cfs_period_us": period})
    assert _threads._cgroup_cpu_limit(root, proc) == cpus


def test_cgroup_v1_combined_mount_and_a_host_path_that_is_not_there(tmp_path):
    # inside a container /proc/self/cgroup may show the host's path: the mount's own files count
    root, proc = _fake_cgroup(tmp_path, "4:cpu,cpuacct:/docker/abc123\n", {
        "cpu,cpuacct/cpu.cfs_quota_us": "400000", "cpu,cpuacct/cpu.cfs_period_us": "100000"})
    assert _threads._cgroup_cpu_limit(root, proc) == 4


def test_usable_cpus_is_the_affinity_capped_by_the_quota(tmp_path):
    affinity = len(os.sched_getaffinity(0))
    root, proc = _fake_cgroup(tmp_path, "0::/\n", {"cpu.max": "100000 100000"})
    assert _threads._usable_cpus(root, proc) == 1
    root, proc = _fake_cgroup(tmp_path / "none", "", {})
    assert _threads._usable_cpus(root, proc) == affinity
    root, proc = _fake_cgroup(tmp_path / "big", "0::/\n", {"cpu.max": "100000000 100000"})
    assert _threads._usable_cpus(root, proc) == min(affinity, 1000)


# ---- the parsing rule (scatterops/_env.py), in this process ---------------------------------


@pytest.mark.parametrize("text, value", [
    ("1", True), ("0", False), ("true", True), ("FALSE", False), ("Yes", True), ("no", False),
    ("ON", True), ("off", False), ("  on\n", True), (" 0 ", False),
])
def test_bool_switch_words(text, value):
    warned = []
    assert _env.env_bool("SCATTEROPS_X", not value, {"SCATTEROPS_X": text}, warned.append) is value
    assert warned == []


@pytest.mark.parametrize("text", ["2", "-1", "yess", "enable", "1.0", "0x1", "t"])
def test_bool_switch_junk_warns_and_keeps_the_default(text):
    warned = []
    assert _env.env_bool("SCATTEROPS_X", True, {"SCATTEROPS_X": text}, warned.append) is True
    assert len(warned) == 1 and "SCATTEROPS_X=" + repr(text) in warned[0] and "using 1" in warned[0]


@pytest.mark.parametrize("text, value", [("7", 7), (" 12 ", 12), ("+3", 3), ("0", 0)])
def test_count(text, value):
    warned = []
    assert _env.env_int("SCATTEROPS_X", 5, 0, 100, "a count", {"SCATTEROPS_X": text},
                        warned.append) == value
    assert warned == []


@pytest.mark.parametrize("text, problem", [
    ("-1", "negative"), ("101", "too large"), ("99999999999999999999999", "too large"),
    ("abc", "not a whole number"), ("1K", "not a whole number"), ("1e3", "not a whole number"),
    ("1_000", "not a whole number"), ("4.0", "not a whole number"), ("0x10", "not a whole number"),
])
def test_count_junk_warns_and_keeps_the_default(text, problem):
    warned = []
    assert _env.env_int("SCATTEROPS_X", 5, 0, 100, "a count", {"SCATTEROPS_X": text},
                        warned.append) == 5
    assert len(warned) == 1, warned
    assert "SCATTEROPS_X=" + repr(text) in warned[0] and problem in warned[0] and \
        "using 5" in warned[0]


def test_unset_or_blank_is_the_default_without_a_warning():
    warned = []
    assert _env.env_int("SCATTEROPS_X", 5, 0, 9, "n", {}, warned.append) == 5
    assert _env.env_int("SCATTEROPS_X", 5, 0, 9, "n", {"SCATTEROPS_X": "  "}, warned.append) == 5
    assert _env.env_bool("SCATTEROPS_X", True, {"SCATTEROPS_X": ""}, warned.append) is True
    assert warned == []


def test_run_time_warning_is_a_runtime_warning():
    with pytest.warns(RuntimeWarning, match="SCATTEROPS_X='abc'"):
        _env.env_bool("SCATTEROPS_X", False, {"SCATTEROPS_X": "abc"})


# ---- every run-time variable, in a child process --------------------------------------------

_CHILD = r"""
import os, warnings
warnings.simplefilter("always")
import numpy as np, scatterops, scatterops._core as c
big = np.zeros(1 << 22, np.float32)              # 16 MiB: split by index value on any CPU
i = np.arange(1 << 19)[:, None] * 8
before = len(os.listdir("/proc/self/task"))     # NumPy's BLAS may have threads of its own
scatterops.scatter_nd(big, i, np.ones(1 << 19, np.float32), reduction="add")
print(scatterops.get_num_threads(), len(os.listdir("/proc/self/task")) - before,
      c.output_cache_info()["limit"], *map(int, c.cpu_features()))
"""


def _child(env_vars):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCATTEROPS_")}
    env.update(env_vars)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(scatterops.__file__)),
                                         env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                         check=True)
    threads, started, cache, f16c, avx512, avx2 = map(int, res.stdout.split())
    return dict(threads=threads, started=started, cache=cache, f16c=f16c, avx512=avx512,
                avx2=avx2), res.stderr


def test_run_time_variables_parsed_strictly():
    cpus = _threads._usable_cpus()
    best, err = _child({})
    assert err == "" and best["threads"] == cpus and best["cache"] == 256 << 20
    # the pool's workers (the caller is one of the call's threads)
    assert (0 < best["started"] <= cpus - 1) if cpus > 1 else best["started"] == 0
    # junk everywhere: each named with the value used instead, and that value in use
    got, err = _child({"SCATTEROPS_NUM_THREADS": "1K", "SCATTEROPS_OUTPUT_CACHE": "-1",
                       "SCATTEROPS_NO_AVX512": "maybe", "SCATTEROPS_NO_AVX2": "2",
                       "SCATTEROPS_NO_F16C": "  "})
    assert "SCATTEROPS_NUM_THREADS='1K' is not a whole number" in err and \
        f"using {cpus}" in err, err
    assert "SCATTEROPS_OUTPUT_CACHE='-1' is negative" in err and f"using {256 << 20}" in err
    assert "SCATTEROPS_NO_AVX512='maybe' is not a boolean" in err
    assert "SCATTEROPS_NO_AVX2='2' is not a boolean" in err and "NO_F16C" not in err
    assert err.count("RuntimeWarning") == 4
    assert got == best
    # overflow: no longer "no limit" for the cache; far too many threads: the cap, and no
    # more OS threads than that in the process (a call once started 530)
    got, err = _child({"SCATTEROPS_NUM_THREADS": "100000",
                       "SCATTEROPS_OUTPUT_CACHE": "99999999999999999999999",
                       "SCATTEROPS_NO_AVX512": " YES ", "SCATTEROPS_NO_AVX2": "On",
                       "SCATTEROPS_NO_F16C": "true"})
    assert "SCATTEROPS_OUTPUT_CACHE='99999999999999999999999' is too large" in err, err
    assert "SCATTEROPS_NUM_THREADS=100000 asks for 100000 threads" in err and \
        f"calls use {cpus}" in err
    assert got["threads"] == cpus and got["cache"] == 256 << 20 and got["started"] <= cpus - 1
    assert (got["f16c"], got["avx512"], got["avx2"]) == (0, 0, 0)
    # the words for "off", and values in range
    got, err = _child({"SCATTEROPS_NUM_THREADS": " 1 ", "SCATTEROPS_OUTPUT_CACHE": "0",
                       "SCATTEROPS_NO_AVX512": "no", "SCATTEROPS_NO_AVX2": "OFF",
                       "SCATTEROPS_NO_F16C": "False"})
    assert err == "" and got == dict(best, threads=1, started=0, cache=0)


# ---- build time: setup.py -------------------------------------------------------------------


needs_checkout = pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "setup.py")),
                                    reason="needs a checkout (setup.py)")


@pytest.fixture(scope="module")
def build_flags():
    return runpy.run_path(os.path.join(ROOT, "setup.py"), run_name="not_main")["build_flags"]


def _flags(build_flags, **env):
    warned = []
    cflags, ldflags, macros = build_flags({"SCATTEROPS_" + k: v for k, v in env.items()},
                                          cc="gcc", warn=warned.append)
    return cflags, ldflags, dict(macros), warned


@needs_checkout
def test_build_settings_parsed_strictly(build_flags):
    cflags, ldflags, macros, warned = _flags(build_flags)
    assert "-Werror" not in cflags and "-flto=auto" in cflags and "-flto=auto" in ldflags
    assert "SCATTEROPS_PORTABLE" not in macros and warned == []
    # WERROR=0 made warnings errors once
    for off in ("0", "no", "OFF", " false "):
        assert "-Werror" not in _flags(build_flags, WERROR=off)[0]
    for on in ("1", "yes", "On", "TRUE "):
        assert "-Werror" in _flags(build_flags, WERROR=on)[0]
    cflags, ldflags, macros, warned = _flags(build_flags, WERROR="abc", LTO="2",
                                             PORTABLE="portable", CFLAGS="-g 'unclosed",
                                             LDFLAGS="-lfoo")
    assert "-Werror" not in cflags and "-flto=auto" in cflags and "-g" not in cflags
    assert ldflags[-1] == "-lfoo" and "SCATTEROPS_PORTABLE" not in macros
    assert [w.split("=")[0] for w in warned] == ["SCATTEROPS_LTO", "SCATTEROPS_WERROR",
                                                 "SCATTEROPS_CFLAGS", "SCATTEROPS_PORTABLE"]
    assert "using 1" in warned[0] and "using 0" in warned[1] and "using none" in warned[2]
    cflags, ldflags, macros, warned = _flags(build_flags, LTO="off", PORTABLE="1",
                                             CFLAGS="-O1  -DX='a b'")
    assert not any("lto" in f for f in cflags + ldflags) and macros["SCATTEROPS_PORTABLE"] == "1"
    assert cflags[-2:] == ["-O1", "-DX=a b"] and warned == []


@needs_checkout
def test_kernels_compile_without_lto_and_first():
    # csrc/kernels/ is reached through tables of function pointers: its files compile whole,
    # without -flto, so that their code is generated in the parallel compiles rather than in the
    # link, and they start first, largest first, so that no long compile starts last
    setup = runpy.run_path(os.path.join(ROOT, "setup.py"), run_name="not_main")
    cflags = ["-O3", "-flto=auto", "-Wall"]
    assert setup["file_flags"](os.path.join("csrc", "kernels", "indexed.c"), cflags) == \
        ["-O3", "-Wall"]
    assert setup["file_flags"](os.path.join("csrc", "walk", "walk.c"), cflags) == cflags
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        sources = sorted(glob.glob("csrc/**/*.c", recursive=True))
        order = setup["compile_order"](sources)
    finally:
        os.chdir(cwd)
    assert sorted(order) == sources
    kernels = [src for src in order if src.startswith("csrc/kernels/")]
    assert order[:len(kernels)] == kernels and kernels[0] in ("csrc/kernels/indexed.c",
                                                              "csrc/kernels/rows.c")


@needs_checkout
def test_build_prints_its_warnings(build_flags, capsys):
    build_flags({"SCATTEROPS_WERROR": "-1"}, cc="gcc")
    assert "warning: SCATTEROPS_WERROR='-1' is not a boolean" in capsys.readouterr().err


@needs_checkout
def test_build_cache_key_follows_every_input(tmp_path):
    # setup.py keeps the library it built under a digest of its inputs, so that the README's
    # second install does not compile the same sources again; any input that changes must
    # change the name, and the folder of NumPy's headers (new in each isolated build) must not
    from setuptools import Extension
    key = runpy.run_path(os.path.join(ROOT, "setup.py"), run_name="not_main")["core_cache_key"]
    (tmp_path / "a.c").write_text("int a;")
    (tmp_path / "a.h").write_text("#define A 1")

    def name(source="int a;", numpy_dir="/tmp/env1/numpy/_core/include", cflags=("-O3",),
             macros=(("X", "1"),), commands=(["gcc", "-fPIC"], ["gcc", "-shared"]),
             version="gcc 12", numpy_version="2.4.6"):
        (tmp_path / "a.c").write_text(source)
        ext = Extension("scatterops._core", sources=["a.c"], depends=["a.h"],
                        include_dirs=[numpy_dir, "csrc"], define_macros=list(macros),
                        extra_compile_args=list(cflags))
        return key(ext, list(commands), version, numpy_version, root=str(tmp_path))

    base = name()
    assert name() == base and name(numpy_dir="/tmp/env2/numpy/_core/include") == base
    changed = [name(source="int a = 1;"), name(cflags=("-O3", "-Werror")),
               name(macros=(("X", "1"), ("SCATTEROPS_PORTABLE", "1"))),
               name(commands=(["clang", "-fPIC"], ["clang", "-shared"])),
               name(version="gcc 13"), name(numpy_version="2.5.0")]
    assert len(set(changed + [base])) == len(changed) + 1
    (tmp_path / "a.h").write_text("#define A 2")
    assert name() != base


# ---- the portable build -------------------------------------------------------------------


def test_vector_paths_compiled_in():
    # SCATTEROPS_PORTABLE=1 at build time (CI's portable step sets it when it runs the tests
    # too) or a machine other than x86-64: the scalar loops only
    import platform
    portable = _env.env_bool("SCATTEROPS_PORTABLE", False) or \
        platform.machine().lower() not in ("x86_64", "amd64")
    assert _core.CPU_FEATURES == ("f16c", "avx512", "avx2")
    if portable:
        assert _core.VECTOR_PATHS == () and _core.cpu_features() == (False, False, False)
    else:
        assert _core.VECTOR_PATHS == _core.CPU_FEATURES

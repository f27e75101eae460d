#!/usr/bin/env bash
# Check what a release would ship: `python -m build` makes an sdist and a wheel (from a copy of
# the checkout, in a temporary directory: the checkout gets no build/ or *.egg-info), then
#
#   1. the sdist carries the C sources and headers, the stubs and py.typed, README, LICENSE (if
#      the checkout has one), setup.py, pyproject.toml, MANIFEST.in and every file the tests,
#      benchmarks and notebook need -- and no compiled artefacts;
#   2. the wheel carries the compiled core, py.typed and the stubs, and no C sources;
#   3. the wheel, installed in a clean venv, imports from site-packages (printing
#      scatterops.__version__) and `python -m scatterops` passes, run from outside any source tree;
#   4. the tests shipped in the sdist run against that installed wheel (a quick subset; FULL=1
#      runs them all).
#
# The wheel is built from the sdist (python -m build's default), so a file the sdist misses
# breaks step 3.  Usage: bash tools/check_package.sh     (PYTHON=python3.x to pick the interpreter)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/scatterops-pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
start=$SECONDS
step() { printf '\n==> %s (%ds)\n' "$*" "$((SECONDS - start))"; }
quiet() {   # $1: log file, rest: a command whose output is shown only if it fails
    local log=$1; shift
    "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "error: $* failed" >&2; exit 1; }
}
problems=()
need() {    # $1: listing file, $2: what, rest: paths that must be in the listing
    local listing=$1 what=$2; shift 2
    for path in "$@"; do
        grep -qxF "$path" "$listing" || problems+=("$what lacks $path")
    done
}

step "copy the checkout's files (tracked and new, not ignored) to $work/src"
mkdir "$work/src"
(cd "$repo" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$work/src")

step "python -m build (sdist, then the wheel from the sdist)"
"$python" -m venv "$work/build-venv"
quiet "$work/build.log" "$work/build-venv/bin/python" -m pip install --upgrade pip build
quiet "$work/build.log" "$work/build-venv/bin/python" -m build --outdir "$work/dist" "$work/src"
# setuptools' own warnings (not pip's about its index, nor MANIFEST.in's excludes finding nothing)
grep -E '^(WARNING|warning)' "$work/build.log" \
    | grep -vE 'Location .* is ignored|byte-compiling is disabled|no previously-included files' \
    | sort | uniq -c || true
sdist=$(ls "$work"/dist/scatterops-*.tar.gz)
wheel=$(ls "$work"/dist/scatterops-*.whl)
ls -l "$work/dist"

step "the sdist's contents"
top=$(basename "$sdist" .tar.gz)
tar tzf "$sdist" | sed "s|^$top/||" | grep -v '/$' | sort >"$work/sdist.txt"
mapfile -t expected < <(cd "$repo" && git ls-files -co --exclude-standard -- \
    ':(glob)csrc/**/*.c' ':(glob)csrc/**/*.h' 'scatterops/*.py' 'scatterops/*.pyi' 'scatterops/py.typed' \
    'tests/*.py' 'benchmarks/*.py' 'examples/*.ipynb' 'docs/benchmark.png' 'tools/*.sh' \
    README.md pyproject.toml setup.py MANIFEST.in 'LICENSE*' 'COPYING*')
need "$work/sdist.txt" sdist "${expected[@]}"
for f in csrc/base/base.h csrc/walk/walk.h scatterops/py.typed scatterops/__init__.pyi README.md setup.py MANIFEST.in; do
    need "$work/sdist.txt" sdist "$f"
done
if [ -z "$(cd "$repo" && ls LICENSE* COPYING* 2>/dev/null)" ]; then
    echo "note: the checkout has no LICENSE file (pyproject.toml says MIT), so the sdist has none"
fi
if grep -E '\.(so|pyd|o|pyc)$|^build/|^dist/' "$work/sdist.txt"; then
    problems+=("sdist carries compiled or build artefacts (listed above)")
fi
echo "$(wc -l <"$work/sdist.txt") files; checked ${#expected[@]} from the checkout; among them:"
awk '/^csrc\/.*\.c$/ {c++} /^csrc\/.*\.h$/ {h++} /^tests\// {t++}
     END {printf "  csrc/**/*.c: %d, csrc/**/*.h: %d, tests/: %d files\n", c, h, t}' "$work/sdist.txt"
grep -E '^scatterops/(py\.typed|.*\.pyi)$|^(README|LICENSE|COPYING)|^examples/' "$work/sdist.txt" \
    | sed 's/^/  /' || true

step "the wheel's contents"
"$work/build-venv/bin/python" -m zipfile -l "$wheel" | awk 'NR > 1 {print $1}' | sort >"$work/wheel.txt"
need "$work/wheel.txt" wheel scatterops/py.typed scatterops/__init__.pyi scatterops/__init__.py \
    scatterops/__main__.py scatterops/reference.py
grep -qE '^scatterops/_core\..*(so|pyd)$' "$work/wheel.txt" || problems+=("wheel lacks the compiled scatterops/_core")
if grep -E '^csrc/|^tests/' "$work/wheel.txt"; then problems+=("wheel carries csrc/ or tests/"); fi
sed 's/^/  /' "$work/wheel.txt"

step "install the wheel in a clean venv; import it and run python -m scatterops from $work/run"
"$python" -m venv "$work/venv"
quiet "$work/install.log" "$work/venv/bin/python" -m pip install --upgrade pip
quiet "$work/install.log" "$work/venv/bin/python" -m pip install "$wheel"
mkdir "$work/run"
cd "$work/run"    # no scatterops/ here: the import must come from site-packages
"$work/venv/bin/python" - "$work/venv" <<'EOF'
import os, sys
import numpy, scatterops, scatterops._core
print("scatterops.__version__ =", scatterops.__version__, "| numpy", numpy.__version__)
print("imported from", scatterops._core.__file__)
venv = os.path.realpath(sys.argv[1])
assert os.path.realpath(scatterops.__file__).startswith(venv + os.sep), "not the installed wheel"
EOF
rc=0
"$work/venv/bin/python" -m scatterops </dev/null >"$work/examples.log" 2>&1 || rc=$?
sed -n '1,2p;/^all \|MISMATCH\|examples/p' "$work/examples.log" | tail -n 6
if [ "$rc" -ne 0 ]; then problems+=("python -m scatterops exited with status $rc"); cat "$work/examples.log"; fi

step "the sdist's tests against the installed wheel${FULL:+ (all)}"
mkdir "$work/unpacked"
tar xzf "$sdist" -C "$work/unpacked"
quiet "$work/install.log" "$work/venv/bin/python" -m pip install pytest hypothesis
tests=("$work/unpacked/$top/tests")
if [ -z "${FULL:-}" ]; then
    tests=("$work/unpacked/$top/tests/test_seeds.py" "$work/unpacked/$top/tests/test_errors.py"
           "$work/unpacked/$top/tests/test_docs.py" "$work/unpacked/$top/tests/test_interop.py")
fi
rc=0
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$work/unpacked/$top" \
    "${tests[@]}" >"$work/pytest.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then cat "$work/pytest.log"; problems+=("the sdist's tests failed (exit $rc)"); fi
tail -n 1 "$work/pytest.log"

step "result"
if [ "${#problems[@]}" -ne 0 ]; then
    printf 'PROBLEM: %s\n' "${problems[@]}"
    exit 1
fi
echo "package OK: $(basename "$sdist"), $(basename "$wheel")"

#!/usr/bin/env bash
# Build the scatterops wheel once (isolated build: NumPy 2.x at build time, as pyproject.toml's
# build-system asks) and run the test suite against it with the oldest NumPy pyproject.toml
# claims at run time and with the newest NumPy 2.x, each in a fresh virtual environment.
#
# Usage: bash tools/numpy_versions.sh [pytest args]
#   NUMPY_OLD  pip requirement for the oldest NumPy   (default: numpy==1.25.*)
#   NUMPY_NEW  pip requirement for the newest NumPy   (default: numpy>=2,<3)
#   PYTHON     the interpreter for the venvs          (default: python3)
#
# The tests run from outside the source tree, so `import scatterops` is the installed wheel
# (the script prints where it came from).  Exit status: 0 only if every run passed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
old=${NUMPY_OLD:-numpy==1.25.*}
new=${NUMPY_NEW:-numpy>=2,<3}
work=$(mktemp -d "${TMPDIR:-/tmp}/scatterops-numpy.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
start=$SECONDS
step() { printf '\n==> %s (%ds)\n' "$*" "$((SECONDS - start))"; }
quiet() {   # $1: log file, rest: a command whose output is shown only if it fails
    local log=$1; shift
    "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "error: $* failed" >&2; exit 1; }
}

# a copy of the checkout's files (tracked and new, not ignored: no build/, no *.so)
step "copy the source to $work/src"
mkdir "$work/src"
git -C "$repo" ls-files -z -co --exclude-standard \
    | (cd "$repo" && xargs -0 cp --parents -t "$work/src" 2>/dev/null || true)

step "build the wheel once (isolated build env, NumPy 2.x)"
"$python" -m venv "$work/build-venv"
quiet "$work/build.log" "$work/build-venv/bin/python" -m pip install --upgrade pip
t0=$SECONDS
quiet "$work/build.log" "$work/build-venv/bin/python" -m pip wheel --no-deps -w "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/scatterops-*.whl)
echo "built $(basename "$wheel") in $((SECONDS - t0))s"

summary=()
status=0
run_with() {   # $1: label, $2: numpy requirement, rest: pytest args
    local label=$1 req=$2; shift 2
    local venv="$work/venv-$label" log="$work/pytest-$label.log" t0=$SECONDS rc=0
    step "$label: fresh venv, $req, the wheel and its test extra"
    "$python" -m venv "$venv"
    quiet "$work/pip-$label.log" "$venv/bin/python" -m pip install --upgrade pip
    quiet "$work/pip-$label.log" "$venv/bin/python" -m pip install "$req" "${wheel}[test]"
    local npv
    npv=$("$venv/bin/python" -c 'import numpy; print(numpy.__version__)')
    (cd "$work" && "$venv/bin/python" -c \
        'import numpy, scatterops, scatterops._core as c; print("numpy", numpy.__version__, "| scatterops", scatterops.__version__, "from", c.__file__)')
    step "$label: python -m pytest (numpy $npv)"
    # from $work, not the source tree: the tests import the installed wheel
    (cd "$work" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
        --rootdir "$work/src" "$@" "$work/src/tests") >"$log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then   # the failures, then the summary
        # failures, or errors while collecting (an import that fails on this NumPy)
        sed -n '/^=* \(FAILURES\|ERRORS\) =*$/,$p' "$log" | head -n 300
    else
        tail -n 3 "$log"
    fi
    local last
    last=$({ grep -E '(passed|failed|error)' "$log" || echo "no pytest summary"; } | tail -n 1 | sed 's/=//g; s/^ *//; s/ *$//')
    summary+=("$(printf '%-6s numpy %-8s  %s  (%ds, exit %d)' "$label" "$npv" "$last" "$((SECONDS - t0))" "$rc")")
    if [ "$rc" -ne 0 ]; then status=1; fi
}

run_with oldest "$old" "$@"
run_with newest "$new" "$@"

step "summary (wheel $(basename "$wheel"), $("$python" --version 2>&1))"
printf '%s\n' "${summary[@]}"
exit "$status"

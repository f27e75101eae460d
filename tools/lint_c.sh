#!/usr/bin/env bash
# Static analysis of the C core: cppcheck and clang-tidy on every csrc/<layer>/*.c, with the
# Python and NumPy headers and the macros setup.py uses.
#
#   bash tools/lint_c.sh            # both; exit 1 if a report is not in tools/lint_c.known
#   LINT=cppcheck bash tools/lint_c.sh   /  LINT=clang-tidy bash tools/lint_c.sh
#
# Needs: apt-get install cppcheck clang-tidy; numpy importable by $PYTHON (default python3).
# Reports that were triaged as false positives are listed in tools/lint_c.known, keyed by
# file, check and the text of the reported source line (so they survive line moves); the
# rest are printed as NEW and fail the run.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
PYTHON=${PYTHON:-python3}
pyinc=$($PYTHON -c "import sysconfig; print(sysconfig.get_paths()['include'])")
npinc=$($PYTHON -c "import numpy; print(numpy.get_include())")
defs=(-DNPY_NO_DEPRECATED_API=NPY_1_25_API_VERSION -DNPY_TARGET_VERSION=NPY_1_25_API_VERSION)
out=$(mktemp -d "${TMPDIR:-/tmp}/scatterops-lint.XXXXXX")
trap 'rm -rf "$out"' EXIT
which=${LINT:-all}
mapfile -t sources < <(find csrc -name '*.c' | sort)   # every layer folder

if [ "$which" = all ] || [ "$which" = cppcheck ]; then
    echo "==> cppcheck $(cppcheck --version | cut -d' ' -f2)" >&2
    # cppcheck cannot read glibc/gcc's system headers (#include_next), so they are left
    # out and the few limits.h / pyconfig values Python's headers test are defined here.
    cppcheck --enable=warning,performance,portability --inconclusive --std=c11 \
        --platform=unix64 --library=posix -q \
        -I csrc -I "$pyinc" -I "$npinc" "${defs[@]}" \
        -D__STDC__=1 -D__STDC_VERSION__=201112L -D__x86_64__ -D__linux__ -D__GNUC__=12 \
        -DUCHAR_MAX=255 -DCHAR_BIT=8 -DINT_MAX=2147483647 -DLONG_MAX=9223372036854775807L \
        -DLONG_MIN='(-LONG_MAX-1L)' -DULONG_MAX=18446744073709551615UL -DSIZEOF_WCHAR_T=4 \
        --suppress=missingIncludeSystem --suppress="*:$pyinc/*" --suppress="*:$npinc/*" \
        --template='{file}:{line}:{column}: {severity}: {message} [cppcheck-{id}]' \
        "${sources[@]}" 2> "$out/cppcheck.txt"
fi

if [ "$which" = all ] || [ "$which" = clang-tidy ]; then
    echo "==> $(clang-tidy --version | grep -i version | head -1)" >&2
    # Left out: bugprone-easily-swappable-parameters (every kernel takes several
    # npy_intp strides by design), clang-analyzer-security.insecureAPI.DeprecatedOr-
    # UnsafeBufferHandling (asks for memcpy_s, which glibc does not have),
    # cert-dcl37-c / cert-dcl51-cpp (Python's own PyInit_ / Py_ names).
    checks='-*,bugprone-*,clang-analyzer-*,cert-*,performance-*,portability-*'
    checks+=',-bugprone-easily-swappable-parameters'
    checks+=',-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling'
    checks+=',-cert-dcl37-c,-cert-dcl51-cpp'
    clang-tidy --quiet --checks="$checks" "${sources[@]}" -- \
        -std=c11 -Wall -Wextra -Wno-unused-parameter -I csrc -I "$pyinc" -I "$npinc" \
        "${defs[@]}" > "$out/clang-tidy.txt" 2> "$out/clang-tidy.err"
    grep -v "warnings generated\|^Suppressed\|^Use -header-filter\|NOLINT" "$out/clang-tidy.err" >&2
fi

cat > "$out/triage.py" <<'PYEOF'
import os, re, sys
known = set()
with open(sys.argv[1]) as f:
    for line in f:
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            known.add(" ".join(line.split(" #")[0].split()))
new = old = 0
pat = re.compile(r"^(\S+?):(\d+):(\d+): (warning|error|style|performance|portability|information): (.*) \[([^\]]+)\]$")
seen = set()
for line in sys.stdin:
    m = pat.match(line.rstrip("\n"))
    if not m:
        continue
    path, lineno, _, sev, msg, check = m.groups()
    if "/csrc/" not in "/" + os.path.relpath(path):
        continue
    try:
        src = " ".join(open(path).read().splitlines()[int(lineno) - 1].split())
    except (OSError, IndexError):
        src = ""
    key = f"{os.path.basename(path)} | {check} | {src}"
    if (key, lineno) in seen:
        continue
    seen.add((key, lineno))
    if key in known:
        old += 1
        print(f"known  {os.path.relpath(path)}:{lineno}: {msg} [{check}]")
    else:
        new += 1
        print(f"NEW    {os.path.relpath(path)}:{lineno}: {sev}: {msg} [{check}]\n       key: {key}")
print(f"lint_c: {new} new report(s), {old} known false positive(s) (tools/lint_c.known)")
sys.exit(1 if new else 0)
PYEOF
cat "$out"/*.txt 2>/dev/null | $PYTHON "$out/triage.py" "$repo/tools/lint_c.known"

#!/usr/bin/env bash
# Build scatterops._core for coverage-guided fuzzing: clang, libFuzzer's
# edge/compare instrumentation (-fsanitize=fuzzer-no-link) plus ASan and UBSan,
# in a scratch copy of the checkout (the checkout's own in-place build is left
# alone). Prints the directory to put on PYTHONPATH.
# Usage: bash fuzz/build.sh [build-dir]     (default: /tmp/scatterops-fuzz-build)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-${TMPDIR:-/tmp}/scatterops-fuzz-build}
rm -rf "$work"
mkdir -p "$work"
git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 cp --parents -t "$work")
cd "$work"
export CC=clang LDSHARED="clang -shared"
# plain objects, no link-time optimisation: the sanitizers instrument each file as compiled
export SCATTEROPS_LTO=0
export SCATTEROPS_CFLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g"
export SCATTEROPS_LDFLAGS="-fsanitize=address,undefined,fuzzer-no-link"
python setup.py -q build_ext --inplace >&2
echo "$work"

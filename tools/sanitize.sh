#!/usr/bin/env bash
# Build the C core with AddressSanitizer and UndefinedBehaviorSanitizer in a scratch copy of
# the checkout and run the whole test suite under them. Any report fails the run
# (halt_on_error / -fno-sanitize-recover). Usage: bash tools/sanitize.sh [pytest args]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/scatterops-asan.XXXXXX")
trap 'rm -rf "$work"' EXIT
git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 cp --parents -t "$work")
cd "$work"
# plain objects, no link-time optimisation: the sanitizers instrument each file as compiled.
# -O0: every load and store the source writes is made and checked; at -O1 the compiler drops
# a read whose value is unused, and with it the report (the mean's count kernels read 8 bytes
# past an int8 update; kernels/reduce.c, SO_LOAD_UPDATE).  -g1 (line tables: a report still
# names file and line), not -g.  Both make the build shorter too: kernels/indexed.c and
# kernels/rows.c (every dtype, reduction and index type), most of it, took 75 and 85 s at -O1
# -g on the 2-core machine, 17 and 30 s at -O0 -g1; the whole build 109 s, 44 s.
export SCATTEROPS_LTO=0
export SCATTEROPS_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O0 -g1"
export SCATTEROPS_LDFLAGS="-fsanitize=address,undefined"
python3 setup.py -q build_ext --inplace
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
# CPython is not instrumented and leaks by design; MemoryError tests need malloc to fail, not abort.
# The tests marked cluster (worker processes of a distributed.LocalCluster) run once, in CI's
# dask step, not under the sanitizers.
LD_PRELOAD="$asan $ubsan" SCATTEROPS_SANITIZED=1 HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-asan}" ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    python3 -m pytest -q -p no:cacheprovider -x -m "not slow and not cluster" "$@" tests

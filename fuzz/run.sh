#!/usr/bin/env bash
# Build the instrumented core (fuzz/build.sh) and fuzz for SECONDS seconds (default 660),
# restarting after each finding so that one finding does not end the run.
# Corpus: fuzz/corpus (kept between runs), findings: fuzz/findings/ (crash-*; mismatch-*
# with mismatches.txt, a line each; notes.txt for exceptions that are subclasses of the
# documented ones).
# Usage: [SCATTEROPS_FUZZ_BUILD=dir] bash fuzz/run.sh [SECONDS] [extra libFuzzer args]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
total=${1:-660}; shift || true
# SCATTEROPS_FUZZ_BUILD=dir: a build fuzz/build.sh made before (no rebuild)
build=${SCATTEROPS_FUZZ_BUILD:-$(bash "$here/build.sh")} || exit 1
fuzzer_so="$(python -c 'import atheris, os; print(atheris.path())')/asan_with_fuzzer.so"
mkdir -p "$here/corpus" "$here/findings"
# seed an empty corpus with random inputs of useful lengths (the decoder wants a few
# hundred bytes for interesting arrays; libFuzzer alone grows -max_len very slowly)
if [ -z "$(ls -A "$here/corpus")" ]; then
    python -c 'import os, sys
for i in range(64):
    open(os.path.join(sys.argv[1], "seed-%02d" % i), "wb").write(os.urandom(16 << (i % 7)))' "$here/corpus"
fi
export PYTHONPATH="$build" SCATTEROPS_FUZZ_NOTES="$here/findings/notes.txt"
# a mismatch (not a crash) is recorded and the run goes on, so that a frequent one does
# not take the whole run; SCATTEROPS_FUZZ_RECORD= (empty) stops at the first instead
export SCATTEROPS_FUZZ_RECORD="${SCATTEROPS_FUZZ_RECORD-$here/findings}"
# CPython leaks by design; MemoryError paths need malloc to return NULL
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
start=$SECONDS
run=0
while :; do
    left=$((total - (SECONDS - start)))
    [ "$left" -gt 5 ] || break
    run=$((run + 1))
    echo "==> fuzz run $run, ${left}s left" >&2
    LD_PRELOAD="$fuzzer_so" python "$here/fuzz_scatter.py" "$here/corpus" \
        -max_total_time="$left" -max_len=2048 -len_control=0 -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 \
        -artifact_prefix="$here/findings/" "$@"
    rc=$?
    [ "$rc" -eq 0 ] && break
    if [ $((SECONDS - start - (total - left))) -lt 5 ]; then
        echo "==> fuzz run $run failed at once (status $rc): giving up" >&2
        exit "$rc"
    fi
    echo "==> fuzz run $run ended with status $rc (a finding: see fuzz/findings/)" >&2
done

#!/usr/bin/env bash
# Run the specifications' worked examples under valgrind memcheck and say whether the C
# core (scatterops._core) is clean.
#
#   bash tools/valgrind.sh             # tests/test_seeds.py (all but the two full-size examples)
#   bash tools/valgrind.sh --full      # the full-size examples too (1.5 GB updates: slow)
#   bash tools/valgrind.sh --main      # python -m scatterops instead of the seed tests
#
# The core is built (-O3 as shipped, plus -g) in a scratch copy; Python runs with
# PYTHONMALLOC=malloc so that valgrind sees every allocation (and pymalloc's
# address_in_range reads stop being reported).  Every memcheck error is then sorted by
# whether a frame of its stack is in scatterops._core: those are the ones that count
# (exit 1); the rest are CPython / NumPy / ld.so noise and are only counted (VALGRIND_LOG=path
# keeps the whole log).  Leaks: only
# "definitely lost" blocks allocated under _core are reported (CPython keeps a lot alive
# at exit by design).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
mode=seeds
case "${1:-}" in
    --full) mode=full ;;
    --main) mode=main ;;
    "") ;;
    *) echo "usage: bash tools/valgrind.sh [--full|--main]" >&2; exit 2 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/scatterops-valgrind.XXXXXX")
trap 'rm -rf "$work"' EXIT
git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 cp --parents -t "$work")
cd "$work"
SCATTEROPS_LTO=0 SCATTEROPS_CFLAGS="-g" $PYTHON setup.py -q build_ext --inplace >/dev/null 2>&1
if [ "$mode" = main ]; then
    cmd=($PYTHON -m scatterops)
else
    sel=()
    [ "$mode" = full ] || sel=(-k "not full_size")
    cmd=($PYTHON -m pytest -q -p no:cacheprovider -s "${sel[@]}" tests/test_seeds.py)
fi
echo "==> valgrind memcheck: ${cmd[*]}" >&2
start=$SECONDS
rc=0
PYTHONMALLOC=malloc SCATTEROPS_NUM_THREADS=2 valgrind --tool=memcheck --error-limit=no \
    --num-callers=40 --track-origins=yes --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --log-file="$work/vg.log" "${cmd[@]}" > "$work/out.txt" 2>&1 || rc=$?
tail -3 "$work/out.txt"
[ -z "${VALGRIND_LOG:-}" ] || cp "$work/vg.log" "$VALGRIND_LOG"
echo "==> program exit status $rc after $((SECONDS - start))s" >&2
$PYTHON - "$work/vg.log" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
pid = re.search(r"^==(\d+)==", text, re.M).group(1)
body = [l[len(f"=={pid}== "):] if l.startswith(f"=={pid}== ") else l
        for l in text.splitlines() if l.startswith(f"=={pid}==")]
records, cur = [], []
for line in body + [""]:
    if line.strip() == "" or line.startswith(f"=={pid}=="):
        if cur:
            records.append(cur)
        cur = []
    else:
        cur.append(line)
kinds = ("Invalid ", "Conditional jump", "Use of uninitialised", "Syscall param", "Mismatched",
         "Source and destination overlap", "Argument ")
core = other = leaks_core = leaks_other = 0
# a frame in one of the C core's files (csrc/<layer>/*.c, named by basename in the stacks)
core_frame = re.compile(r"_core\.cpython|\((numpy_api|threads|cpu|copy|assign|reduce|mean|plan|"
                        r"validate|dedup|walk|owned|split|fused|module|fast|checked|output_cache)"
                        r"\.c:\d+\)")
for rec in records:
    rec = [l for l in rec if not re.match(r"Thread \d+:", l)]
    if not rec:
        continue
    head = rec[0]
    if not head.startswith(kinds) and "definitely lost in loss record" not in head:
        continue
    in_core = any(core_frame.search(l) for l in rec)
    if "definitely lost" in head:
        if in_core:
            leaks_core += 1
            print("\n".join(["LEAK IN _core:"] + rec[:25]))
        else:
            leaks_other += 1
        continue
    if in_core:
        core += 1
        print("\n".join(["ERROR IN _core:"] + rec[:25]))
    else:
        other += 1
summary = re.search(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts", text)
print(f"valgrind: {core + other} error contexts read; {core} error context(s) in scatterops._core, {other} elsewhere "
      f"(CPython/NumPy); definitely-lost blocks: {leaks_core} under _core, {leaks_other} elsewhere; "
      f"memcheck total: {summary.group(0) if summary else '?'}")
sys.exit(1 if core or leaks_core else 0)
PYEOF

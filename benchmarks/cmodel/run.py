"""Compile scatter_model.c (or runs_model.c, --model runs; prefetch_model.c, --model prefetch; rows_model.c, --model rows; partition_model.c, --model partition; fusedrows_model.c, --model fusedrows; four_model.c, --model four; check_model.c, --model check; wake_model.c, --model wake; group_partition_model.c,
--model group_partition) with
gcc -O3 -march=native (the check model: -mavx2, and portable) into a temporary folder and print its ns per update for the out sizes of the
one-thread targets (docs/performance.md has one run of each).

    python benchmarks/cmodel/run.py [--model scatter|runs|prefetch|rows|partition|fusedrows|four|check|wake|group_partition] [--sorted] [--updates N] [--repeat R] [SIZE ...]
    python benchmarks/cmodel/run.py --model prefetch 1000000 10000000 50000000
    python benchmarks/cmodel/run.py --model prefetch --updates 10000000 100000
    python benchmarks/cmodel/run.py --model four 100 1000 30000 100000
    python benchmarks/cmodel/run.py --model four --dtype int64 1000 100000
    python benchmarks/cmodel/run.py --model four --index int32 100 1000 100000 1000000
    python benchmarks/cmodel/run.py --model four --nonneg 100 1000 30000
    python benchmarks/cmodel/run.py --model four --nonneg --warm --repeat 11 1000000 1500000 2000000 4000000
    python benchmarks/cmodel/run.py --model check --updates 100000 2048 8192 32768   (SIZE: the chunk)
    python benchmarks/cmodel/run.py --model wake --updates 2001 2 50 500   (SIZE: us between jobs; --updates: jobs)
    python benchmarks/cmodel/run.py --model group_partition --repeat 15 100000 1000   (SIZE: groups)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 30000, 1000000])
    ap.add_argument("--updates", type=int, default=1000000)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--model", choices=["scatter", "runs", "prefetch", "rows", "partition", "fusedrows", "four", "check", "wake",
                             "group_partition"], default="scatter")
    ap.add_argument("--sorted", action="store_true", help="runs model: sorted indices")
    ap.add_argument("--nonneg", action="store_true",
                    help="four model: indices in [0, size) (else half of them negative)")
    ap.add_argument("--warm", action="store_true",
                    help="four model: each variant run once untimed before it is timed (its "
                         "out warm, as in a call repeated on one out)")
    ap.add_argument("--dtype", choices=["float32", "int64"], default="float32",
                    help="four model: the type of out and the updates")
    ap.add_argument("--index", choices=["int64", "int32", "int16", "int8"], default="int64",
                    help="four model: the index type (a narrower one adds vec8n, the check in "
                         "32-bit lanes)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "scatter_model")
        define = ["-DSO_MODEL_INT64"] if args.dtype == "int64" else []
        define += [f"-DSO_MODEL_IX{args.index[3:]}"] if args.index != "int64" else []
        if (define or args.warm) and args.model != "four":
            ap.error("--dtype, --index and --warm are for --model four")
        # the check model is built as the package builds that loop: for AVX2 with the
        # compiler's generic tuning (-march=native tunes for this CPU, and gcc's znver3
        # tuning keeps four accumulator pairs no faster than one), and portable
        builds = ([("AVX2, generic tuning", ["-mavx2"]), ("portable", [])]
                  if args.model == "check" else [("", ["-march=native"])])
        extra = [str(int(args.sorted))] if args.model == "runs" else []
        if args.model == "four" and (args.nonneg or args.warm):
            extra += [str(int(args.nonneg)), str(int(args.warm))]
        for label, arch in builds:
            subprocess.run(["gcc", "-O3", *arch, "-std=c11", "-pthread", *define, "-o", exe,
                            os.path.join(HERE, f"{args.model}_model.c")], check=True)
            if label:
                print(f"# {label}", flush=True)
            for size in args.sizes:
                subprocess.run([exe, str(args.updates), str(size), str(args.repeat)] + extra,
                               check=True)


if __name__ == "__main__":
    main()

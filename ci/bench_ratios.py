#!/usr/bin/env python3
"""Runs the benchmarks several times and reports modelsync's ratio to each
peer: the median over rounds of (modelsync's median / the peer's median),
with the smallest and largest round, so that one noisy round cannot decide
a verdict. The table it prints is what BENCHMARKS.md records.

Usage: ci/bench_ratios.py [--rounds N] [-- extra criterion arguments]

Each round is one run of BENCH_COMMAND; criterion's own median of each
benchmark is read from target/criterion/<group>/<function>/new/estimates.json.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_COMMAND = ["cargo", "bench", "--bench", "queue", "--bench", "oneshot", "--bench", "block_on",
                 "--", "--warm-up-time", "1", "--measurement-time", "3", "--noplot"]
OURS = "modelsync"


def medians():
    """{group: {function: median in ns}} from criterion's last run."""
    found = defaultdict(dict)
    for meta in (ROOT / "target" / "criterion").glob("*/*/new/benchmark.json"):
        bench = json.loads(meta.read_text())
        estimates = json.loads((meta.parent / "estimates.json").read_text())
        # `BenchmarkId::from_parameter` names the function in `value_str`.
        function = bench["function_id"] or bench["value_str"]
        found[bench["group_id"]][function] = estimates["median"]["point_estimate"]
    return found


def show(ns):
    for unit, scale in (("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="appended to the criterion arguments")
    args = parser.parse_args()
    command = BENCH_COMMAND + args.extra
    print("command:", " ".join(command), f"(x{args.rounds})", flush=True)
    rounds = []
    for n in range(args.rounds):
        started = time.time()
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        rounds.append(medians())
        print(f"round {n + 1}: {time.time() - started:.0f}s", flush=True)

    print()
    print("| workload | peer | modelsync | peer | ratio (median of rounds) | range over rounds |")
    print("|---|---|---|---|---|---|")
    for group in sorted(rounds[0]):
        functions = rounds[0][group]
        if OURS not in functions:
            continue
        for peer in sorted(f for f in functions if f != OURS):
            ratios = [r[group][OURS] / r[group][peer] for r in rounds]
            ours = statistics.median(r[group][OURS] for r in rounds)
            theirs = statistics.median(r[group][peer] for r in rounds)
            print(f"| {group} | {peer} | {show(ours)} | {show(theirs)} | "
                  f"**{statistics.median(ratios):.2f}** | {min(ratios):.2f} - {max(ratios):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

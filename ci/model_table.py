#!/usr/bin/env python3
"""Remeasures the model table in VERIFICATION.md and rewrites its rows.

Runs, for every model:
  1. loom at its pull-request setting (ci/loom as CI runs it);
  2. loom with no preemption bound, each model alone, within a budget per
     model (MODELSYNC_LOOM_BUDGET, default 600 s): complete, or, when that
     runs out of budget, the highest bound that finishes within it;
  3. loom at preemption bound 2 (the bound the ordering mutants run at);
  4. every shuttle scenario (ci/shuttle).
Each model prints one result line (models/harness/mod.rs); this script
reads them from MODELSYNC_REPORT files. Run it after any change to src/ or
models/ and review the diff before committing it.

With --only PREFIX (e.g. `notify::`), only the models whose names start
with PREFIX are run, and only their rows are replaced or added.

Usage: ci/model_table.py [--budget SECS] [--only PREFIX] [--dry-run]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"model (\S+) backend=(\w+) (.*?) executions=(\d+) time=(\S+)s reached\[(.*?)\]")
HEADER = "| model | pull-request CI |"


def run(command, **env):
    """{model: (setting, executions, seconds, reached)} from one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, **env, "MODELSYNC_REPORT": report.name})
        if out.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
        found = {}
        for line in Path(report.name).read_text().splitlines():
            m = LINE.search(line)
            if m:
                name, _, setting, executions, secs, reached = m.groups()
                found[name] = (setting, int(executions), float(secs), reached.replace("=", ": "))
    if not found:
        sys.exit(f"{' '.join(command)} printed no model lines")
    return found


def show(executions, secs):
    return f"{executions:,} / {secs:.2f}s"


def bound_of(setting):
    m = re.match(r"preemption_bound=(\w+)", setting)
    return m.group(1) if m else setting


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--only", default="", help="remeasure only models starting with this")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    only = [args.only] if args.only else []
    pr = run(["bash", "ci/loom", "--test", "models", "--"] + only)
    complete = run(["bash", "ci/loom", "--test", "models", "--", "--test-threads=1"] + only,
                   LOOM_MAX_PREEMPTIONS="none", MODELSYNC_LOOM_BUDGET=str(args.budget))
    bound2 = run(["bash", "ci/loom", "--test", "models", "--"] + only, LOOM_MAX_PREEMPTIONS="2")
    shuttle = run(["bash", "ci/shuttle", "--test", "models", "--"] + only)

    rows = []
    for name in sorted(set(pr) | set(shuttle)):
        if name not in pr:
            rows.append(f"| `{name}` | not a loom model | | | {shuttle[name][3]} (shuttle) "
                        f"| {shuttle[name][2]:.2f}s |")
            continue
        setting, executions, secs, _ = pr[name]
        pr_cell = ("complete" if bound_of(setting) == "none"
                   else f"bound {bound_of(setting)}: {show(executions, secs)}")
        setting, executions, secs, reached = complete[name]
        if bound_of(setting) == "none":
            complete_cell = f"**complete**: {show(executions, secs)}"
        else:
            complete_cell = (f"out of budget ({args.budget} s); bound {bound_of(setting)} "
                             f"finished: {executions:,} executions ({secs:.0f}s with the "
                             f"unbounded attempt)")
        _, e2, s2, _ = bound2[name]
        rows.append(f"| `{name}` | {pr_cell} | {complete_cell} | {show(e2, s2)} | {reached} | "
                    f"{shuttle[name][2]:.2f}s |" if name in shuttle else
                    f"| `{name}` | {pr_cell} | {complete_cell} | {show(e2, s2)} | {reached} | "
                    f"not a shuttle scenario |")
    doc = (ROOT / "VERIFICATION.md").read_text().splitlines()
    start = next(i for i, line in enumerate(doc) if line.startswith(HEADER)) + 2
    end = next(i for i in range(start, len(doc)) if not doc[i].startswith("|"))
    if args.only:
        # Keep the other models' rows; replace or add this prefix's.
        name_of = lambda row: row.split("`")[1]  # noqa: E731
        kept = [row for row in doc[start:end] if not name_of(row).startswith(args.only)]
        rows = sorted(kept + rows, key=name_of)
    doc[start:end] = rows
    if args.dry_run:
        print("\n".join(rows))
    else:
        (ROOT / "VERIFICATION.md").write_text("\n".join(doc) + "\n")
        print(f"rewrote {len(rows)} rows of VERIFICATION.md's model table")
    total = lambda runs: sum(v[2] for v in runs.values())  # noqa: E731
    print(f"loom model time in all: pull-request settings {total(pr):.1f}s, complete runs "
          f"(or fallbacks) {total(complete):.1f}s, bound 2 {total(bound2):.1f}s; "
          f"shuttle {total(shuttle):.1f}s")


if __name__ == "__main__":
    main()

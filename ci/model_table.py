#!/usr/bin/env python3
"""Remeasures the model table in VERIFICATION.md: runs every loom model at
preemption bounds 2 and 3 (ci/loom) and every shuttle scenario (ci/shuttle),
reads the one line each model prints when it finishes, and rewrites the
table's rows in place. Run it after any change to src/ or models/; review
the diff before committing it.

Usage: ci/model_table.py [--dry-run]
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"model (\S+) backend=(\w+) .*?executions=(\d+) time=(\S+) reached\[(.*?)\]")
HEADER = "| model | loom bound 2:"


def run(script, **env):
    """{model: (executions, time, reached)} from one ci/ script's output."""
    out = subprocess.run(["bash", script], cwd=ROOT, env={**os.environ, **env},
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{script} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    found = {}
    for line in (out.stdout + out.stderr).splitlines():
        match = LINE.search(line)
        if match:
            name, _, executions, time, reached = match.groups()
            found[name] = (int(executions), time, reached.replace("=", ": "))
    return found


def main():
    bound2 = run("ci/loom", LOOM_MAX_PREEMPTIONS="2")
    bound3 = run("ci/loom", LOOM_MAX_PREEMPTIONS="3")
    shuttle = run("ci/shuttle")
    rows = []
    for name in sorted(set(bound2) | set(shuttle)):
        if name in bound2:
            (e2, t2, reached), (e3, t3, _) = bound2[name], bound3[name]
            loom2, loom3 = f"{e2:,} / {t2}", f"{e3:,} / {t3}"
        else:
            loom2 = loom3 = "not a loom model"
            reached = shuttle[name][2] + " (shuttle)"
        rows.append(f"| `{name}` | {loom2} | {loom3} | {reached} | {shuttle[name][1]} |")
    if not bound2 or not shuttle:
        sys.exit("no model lines found in the runs' output")
    doc = (ROOT / "VERIFICATION.md").read_text().splitlines()
    start = next(i for i, line in enumerate(doc) if line.startswith(HEADER)) + 2
    end = next(i for i in range(start, len(doc)) if not doc[i].startswith("|"))
    doc[start:end] = rows
    if "--dry-run" in sys.argv:
        print("\n".join(rows))
    else:
        (ROOT / "VERIFICATION.md").write_text("\n".join(doc) + "\n")
        print(f"rewrote {len(rows)} rows of VERIFICATION.md's model table")
    total2 = sum(float(t.rstrip("s")) for _, t, _ in bound2.values())
    total3 = sum(float(t.rstrip("s")) for _, t, _ in bound3.values())
    print(f"loom model time in all: bound 2 {total2:.2f}s, bound 3 {total3:.2f}s")


if __name__ == "__main__":
    main()

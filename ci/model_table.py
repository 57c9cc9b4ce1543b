#!/usr/bin/env python3
"""Remeasures the model table in VERIFICATION.md, rewrites its rows, and
checks it against a run of the main job.

Full mode (no subcommand) runs, for every model:
  1. loom at its pull-request setting (ci/loom as CI runs it);
  2. loom with no preemption bound, each model alone, within a budget per
     model (MODELSYNC_LOOM_BUDGET, default 600 s): complete, or, when that
     runs out of budget, the highest bound that finishes within it;
  3. loom at preemption bound 2 (the bound the ordering mutants run at);
  4. every shuttle scenario (ci/shuttle).
Each model prints one result line (models/harness/mod.rs); this script
reads them from MODELSYNC_REPORT files.

`--pr-only` runs step 1 alone and rewrites the pull-request column (and
the complete-run column of the models whose pull-request run is
complete: the same run), keeping the other columns as last measured.

`check REPORT` compares the executions of a main-job run (ci/loom writes
its result lines to target/logs/loom-report.txt) with the table's
pull-request column: loom's counts are deterministic for given code and
settings (the generated scenarios' budgets are counted in executions, not
time), so any difference means the table no longer says what the main job
runs. It fails naming the models and the command that rewrites the rows.

With --only PREFIX (e.g. `notify::`), only the models whose names start
with PREFIX are run, and only their rows are replaced or added.

Usage: ci/model_table.py [--budget SECS] [--only PREFIX] [--dry-run] [--pr-only]
       ci/model_table.py check REPORT
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"model (\S+) backend=(\w+) (.*?) executions=(\d+) time=(\S+)s reached\[(.*?)\]"
                  r"(?: real_time_pass\[(.*?) executions=(\d+) time=(\S+)s histories_checked=\d+\])?")
HEADER = "| model | pull-request CI |"
DOC = ROOT / "VERIFICATION.md"
REWRITE = "python3 ci/model_table.py --pr-only"


def parse(text):
    """{model: (setting, executions, seconds, reached, real-time pass)} from
    result lines; the real-time pass (a history-checking loom model's second
    run, models/harness/mod.rs) is (setting, executions, seconds) or None."""
    found = {}
    for line in text.splitlines():
        m = LINE.search(line)
        if m:
            name, _, setting, executions, secs, reached, rt_setting, rt_execs, rt_secs = m.groups()
            rt = (rt_setting, int(rt_execs), float(rt_secs)) if rt_execs else None
            found[name] = (setting, int(executions), float(secs), reached.replace("=", ": "), rt)
    return found


def run(command, **env):
    """The result lines of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, **env, "MODELSYNC_REPORT": report.name})
        if out.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
        found = parse(Path(report.name).read_text())
    if not found:
        sys.exit(f"{' '.join(command)} printed no model lines")
    return found


def show(executions, secs):
    return f"{executions:,} / {secs:.2f}s"


def bound_of(setting):
    m = re.match(r"preemption_bound=(\w+)", setting)
    return m.group(1) if m else setting


def is_generated(setting):
    return setting.startswith("scenarios=")


RT = "real-time pass:"


def pr_cell(setting, executions, secs, real_time=None):
    """The pull-request column: how the main job ran the model, and its
    executions (what `check` compares); then its real-time pass, if it had
    one."""
    cell = run_cell(setting, executions, secs)
    if real_time:
        cell += f"; {RT} " + run_cell(*real_time)
    return cell


def run_cell(setting, executions, secs):
    if is_generated(setting):
        fields = dict(f.split("=", 1) for f in setting.split() if "=" in f)
        bounded = fields.get("bounded", "0")
        how = f"{fields['scenarios']} scenarios, {fields['complete']} complete"
        if not bounded.startswith("0"):
            how += f", {bounded.replace('(lowest_bound=', ' down to bound ').rstrip(')')}"
        return f"{how}: {show(executions, secs)}"
    bound = bound_of(setting)
    if bound == "none":
        return f"complete: {show(executions, secs)}"
    return f"bound {bound}: {show(executions, secs)}"


def complete_cell(setting, executions, secs, budget):
    if is_generated(setting):
        # The same run: each scenario complete within its budget, or the
        # highest bound that finishes within it.
        return f"as in pull requests: {run_cell(setting, executions, secs).split(':')[0]}"
    if bound_of(setting) == "none":
        return f"**complete**: {show(executions, secs)}"
    capped = re.search(r"capped:loom-does-not-end-above-(\d+)", setting)
    if capped:
        return (f"not attempted: loom's exploration does not end above bound {capped.group(1)} "
                f"(the model's doc says why); bound {bound_of(setting)}: {show(executions, secs)}")
    return (f"out of budget ({budget} s); bound {bound_of(setting)} finished: {executions:,} "
            f"executions ({secs:.0f}s with the unbounded attempt)")


def table():
    """(lines of VERIFICATION.md, start, end) of the table's rows."""
    doc = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(doc) if line.startswith(HEADER)) + 2
    end = next(i for i in range(start, len(doc)) if not doc[i].startswith("|"))
    return doc, start, end


def name_of(row):
    return row.split("`")[1]


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def executions_in(cell):
    """The executions a pull-request cell gives, and those of its real-time
    pass (None where it has none, or is an old cell)."""
    first, _, real_time = cell.partition(f"; {RT}")
    count = lambda text: (  # noqa: E731
        int(m.group(1).replace(",", "")) if (m := re.search(r"([\d,]+) / [\d.]+s", text)) else None)
    return count(first), count(real_time)


def check(report_path):
    report = parse(Path(report_path).read_text())
    if not report:
        sys.exit(f"{report_path} holds no model lines")
    doc, start, end = table()
    rows = {name_of(row): cells(row) for row in doc[start:end]}
    wrong = []
    for name, (setting, executions, _, _, real_time) in sorted(report.items()):
        if "all-read-modify-write" in setting:
            continue
        row = rows.get(name)
        if row is None:
            wrong.append(f"{name}: no row (the main job ran {executions:,} executions)")
            continue
        said = executions_in(row[1])
        if row[1].startswith("not a loom model"):
            continue
        ran = (executions, real_time[1] if real_time else None)
        if said != ran:
            rt = real_time and (real_time[0], real_time[1], 0)
            wrong.append(f"{name}: the table says {row[1]!r}, the main job ran "
                         f"{pr_cell(setting, executions, 0, rt)!r}")
    if wrong:
        sys.exit("VERIFICATION.md's model table does not say what the main job runs:\n  "
                 + "\n  ".join(wrong)
                 + f"\nRewrite its rows with `{REWRITE}` (or the full `python3 ci/model_table.py`) "
                 "and commit them with the change that moved the counts.")
    print(f"model table: the {len(report)} models the main job ran match their rows")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        if len(sys.argv) != 3:
            sys.exit("usage: ci/model_table.py check REPORT")
        check(sys.argv[2])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--only", default="", help="remeasure only models starting with this")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--pr-only", action="store_true",
                        help="rerun only the main job; rewrite the pull-request column")
    parser.add_argument("--shuttle", action="store_true",
                        help="with --pr-only: rerun the shuttle scenarios too, for their column")
    args = parser.parse_args()

    only = [args.only] if args.only else []
    pr = run(["bash", "ci/loom", "--test", "models", "--"] + only)
    doc, start, end = table()
    old = {name_of(row): cells(row) for row in doc[start:end]}
    rows = []
    if args.pr_only:
        shuttle = run(["bash", "ci/shuttle", "--test", "models", "--"] + only) if args.shuttle else {}
        for name in sorted(set(pr) | {n for n, c in old.items() if c[1].startswith("not a loom model")}):
            if name not in pr:
                if not args.only or name.startswith(args.only):
                    rows.append("| " + " | ".join(old[name]) + " |")
                continue
            setting, executions, secs, reached, real_time = pr[name]
            previous = old.get(name, [f"`{name}`", "", "not measured", "not measured", reached,
                                      "not measured"])
            cell = pr_cell(setting, executions, secs, real_time)
            complete = previous[2]
            if bound_of(setting) == "none" or is_generated(setting):
                complete = complete_cell(setting, executions, secs, args.budget)
            last = f"{shuttle[name][2]:.2f}s" if name in shuttle else previous[5]
            if args.shuttle and name not in shuttle:
                last = "not a shuttle scenario"
            rows.append(f"| `{name}` | {cell} | {complete} | {previous[3]} | {reached} | {last} |")
    else:
        complete = run(["bash", "ci/loom", "--test", "models", "--", "--test-threads=1"] + only,
                       LOOM_MAX_PREEMPTIONS="none", MODELSYNC_LOOM_BUDGET=str(args.budget))
        bound2 = run(["bash", "ci/loom", "--test", "models", "--"] + only, LOOM_MAX_PREEMPTIONS="2")
        shuttle = run(["bash", "ci/shuttle", "--test", "models", "--"] + only)
        for name in sorted(set(pr) | set(shuttle)):
            if name not in pr:
                rows.append(f"| `{name}` | not a loom model | | | {shuttle[name][3]} (shuttle) "
                            f"| {shuttle[name][2]:.2f}s |")
                continue
            setting, executions, secs, _, real_time = pr[name]
            first = pr_cell(setting, executions, secs, real_time)
            setting, executions, secs, reached, _ = complete[name]
            second = complete_cell(setting, executions, secs, args.budget)
            _, e2, s2, _, _ = bound2[name]
            last = f"{shuttle[name][2]:.2f}s" if name in shuttle else "not a shuttle scenario"
            rows.append(f"| `{name}` | {first} | {second} | {show(e2, s2)} | {reached} | {last} |")
    if args.only:
        # Keep the other models' rows; replace or add this prefix's.
        kept = [row for row in doc[start:end] if not name_of(row).startswith(args.only)]
        rows = sorted(kept + rows, key=name_of)
    doc[start:end] = rows
    if args.dry_run:
        print("\n".join(rows))
    else:
        DOC.write_text("\n".join(doc) + "\n")
        # The summary at the top counts these rows.
        subprocess.run([sys.executable, str(ROOT / "ci" / "summary.py")], check=True)
        print(f"rewrote {len(rows)} rows of VERIFICATION.md's model table")
    total = lambda runs: sum(v[2] for v in runs.values())  # noqa: E731
    print(f"loom model time at pull-request settings: {total(pr):.1f}s")


if __name__ == "__main__":
    main()

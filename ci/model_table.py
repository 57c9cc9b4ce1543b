#!/usr/bin/env python3
"""VERIFICATION.md's measured-runs table: what each loom model runs, read
from the models' result lines (models/harness/mod.rs), and the checks that
keep every column true.

Columns, and what keeps each true:

- tier: `pr` (the main job, `ci/loom`) or `nightly` (the nightly tier:
  the model's builder says `.nightly()`); `-` for a model loom does not
  run. Checked by `check` (ci/loom): a model the main job ran is `pr`, one
  it skipped is `nightly`.
- pull requests, real-time pass, reached: the main job's run of each
  pull-request-tier model: its setting and executions, its real-time
  pass (a history-checking model's second run) and how many executions
  reached each interleaving the model declares. loom's counts are
  deterministic for given code and settings (the generated scenarios'
  budgets are counted in executions), so `check` compares every cell with
  the main job's report, exactly.
- nightly, no bound: the nightly's run of every loom model with no
  preemption bound (`LOOM_MAX_PREEMPTIONS=none`), within its time budget:
  complete, with its executions, or not complete within the budget (it
  then falls back to the highest bound that finishes, which depends on
  the machine and is not recorded here). Generated scenarios draw new
  ones each night. Checked by `check-nightly` (ci/nightly), for the models
  of the partition the report covers.

Times are not recorded: they are not the same twice.

Usage:
  ci/model_table.py check REPORT          the main job's report (ci/loom
                                          writes target/logs/loom-report.txt)
                                          against the tier, pull-request,
                                          real-time and reached columns
  ci/model_table.py check-nightly REPORT  the nightly's report against the
                                          nightly column
  ci/model_table.py write [--nightly] REPORT
                                          rewrite those columns from REPORT
                                          (then ci/summary.py, whose parts
                                          read the table)
  ci/model_table.py [--only PREFIX] [--nightly] [--budget SECS] [--dry-run]
                                          run the main job (or, with
                                          --nightly, the nightly's loom run)
                                          and rewrite the rows it measures
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree  # noqa: E402

ROOT = tree.ROOT
DOC = ROOT / "VERIFICATION.md"
HEADER = ("| model | tier | pull requests | real-time pass | reached (pull-request run) "
          "| nightly, no bound |")
LINE = re.compile(r"model (\S+) backend=(\w+) (?:tier=(\w+) )?(.*?) executions=(\d+) time=(\S+)s "
                  r"reached\[(.*?)\](?: real_time_pass\[(.*?) executions=(\d+) time=\S+s "
                  r"histories_checked=\d+\])?\s*$")
SKIPPED = re.compile(r"model (\S+) backend=loom tier=nightly skipped")
NOT_LOOM = "not a loom model"
AS_PR = "as in pull requests"
NOT_COMPLETE = "not complete within the budget"
NEW_DRAWS = "new scenarios each night"


class Run:
    """One result line."""

    def __init__(self, m):
        (self.name, self.backend, tier, self.setting, executions, _, reached,
         rt_setting, rt_executions) = m.groups()
        self.tier = tier or "pr"
        self.executions = int(executions)
        self.reached = reached
        self.real_time = (rt_setting, int(rt_executions)) if rt_executions else None
        self.audit = "all-read-modify-write" in self.setting


def parse(text):
    """({model: Run} of the loom lines of the normal run, {model skipped})."""
    runs, skipped = {}, set()
    for line in text.splitlines():
        if m := SKIPPED.search(line):
            skipped.add(m.group(1))
        elif (m := LINE.search(line)) and m.group(2) == "loom":
            run = Run(m)
            if not run.audit:
                runs[run.name] = run
    return runs, skipped


def fields(setting):
    return dict(f.split("=", 1) for f in setting.split() if "=" in f)


def is_generated(setting):
    return setting.startswith("scenarios=")


# A hand-written model run with no preemption bound: every execution of
# its one scenario, which is its whole scope (VERIFICATION.md's "loom
# complete in scope: each model's own scenario"). No colon: the count
# follows the first one.
OWN_SCENARIO_COMPLETE = "complete in scope its own scenario, no preemption bound"


def setting_cell(setting, executions):
    """`complete in scope its own scenario, no preemption bound: 26,914`, `bound 3: 7,679`, or for
    generated scenarios `8 scenarios: 7 complete, 1 down to bound 3:
    16,943`, `16 drawn scenarios, each complete: 4,321` or `every scenario
    of scope S (N after symmetry, of M), all complete: 1,234`."""
    if is_generated(setting):
        f = fields(setting)
        n, complete = int(f["scenarios"]), int(f["complete"])
        if "scope" in f and complete == n:
            how = (f"every scenario of scope {f['scope']} ({f['after_symmetry']} after symmetry, "
                   f"of {f['in_scope']}), all complete")
        elif complete == n:
            how = f"{n} drawn scenarios, each complete"
        else:
            lowest = re.search(r"lowest_bound=(\d+)", setting).group(1)
            how = f"{n} scenarios: {complete} complete, {n - complete} down to bound {lowest}"
        return f"{how}: {executions:,}"
    bound = fields(setting).get("preemption_bound", "?")
    how = OWN_SCENARIO_COMPLETE if bound == "none" else f"bound {bound}"
    if m := re.search(r"capped:loom-does-not-end-above-(\d+)", setting):
        how += f" (loom does not end above {m.group(1)})"
    if "TRUNCATED" in setting:
        how += " (TRUNCATED: not exhaustive)"
    return f"{how}: {executions:,}"


def reached_cell(reached):
    return "; ".join(r.replace("=", ": ") for r in reached.split())


def pr_cells(run):
    """tier, pull requests, real-time pass, reached."""
    rt = setting_cell(*run.real_time) if run.real_time else "-"
    return [run.tier, setting_cell(run.setting, run.executions), rt, reached_cell(run.reached)]


def nightly_cell(run, pr_cell):
    if is_generated(run.setting) and "scope=" not in run.setting:
        return NEW_DRAWS
    setting = run.setting
    if "unbounded=out-of-budget" in setting:
        return NOT_COMPLETE
    cell = setting_cell(setting, run.executions)
    return AS_PR if cell == pr_cell else cell


def table():
    """(lines of VERIFICATION.md, index of the first row, index after the last)."""
    doc = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(doc) if line.startswith(HEADER)) + 2
    end = next((i for i in range(start, len(doc)) if not doc[i].startswith("|")), len(doc))
    return doc, start, end


def name_of(row):
    return row.split("`")[1]


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def rows():
    doc, start, end = table()
    return {name_of(r): cells(r) for r in doc[start:end]}


def row_text(c):
    return "| " + " | ".join(c) + " |"


def expected_rows(old, pr=None, nightly=None, only=""):
    """The table's rows: every test of models/ that is not std-only, with
    the cells `pr` (a main-job report) and `nightly` (a nightly report)
    give, the rest as `old` has them."""
    out = []
    for name, test in sorted(tree.all_tests().items()):
        if test.target != "models" or not (test.loom or test.shuttle):
            continue
        if not test.loom:
            out.append([f"`{name}`", "-", NOT_LOOM, "-", "-", "-"])
            continue
        c = old.get(name, [f"`{name}`", "pr", "not measured", "-", "-", "not measured"])
        mine = name.startswith(only)
        if pr is not None and mine:
            runs, skipped = pr
            if name in runs:
                c = [c[0]] + pr_cells(runs[name]) + [c[5]]
            elif name in skipped:
                c = [c[0], "nightly", "-", "-", "-", c[5]]
        if nightly is not None and mine and name in nightly[0]:
            c = c[:5] + [nightly_cell(nightly[0][name], c[2])]
        out.append(c)
    return out


def write(new_rows, dry_run=False):
    doc, start, end = table()
    text = [row_text(c) for c in new_rows]
    if dry_run:
        print("\n".join(text))
        return
    doc[start:end] = text
    DOC.write_text("\n".join(doc) + "\n")
    # The summary and the evidence read these rows.
    subprocess.run([sys.executable, str(ROOT / "ci" / "summary.py")], check=True)
    print(f"rewrote {len(text)} rows of VERIFICATION.md's measured-runs table")


def report_and_rows(report_path):
    """The report's runs and skipped models, and the table's rows; exits if
    the report holds no loom result."""
    runs, skipped = parse(Path(report_path).read_text())
    if not runs:
        sys.exit(f"{report_path} holds no loom result lines")
    return runs, skipped, rows()


def check(report_path):
    runs, skipped, have = report_and_rows(report_path)
    wrong = []
    for name, c in sorted(have.items()):
        if c[2] == NOT_LOOM:
            continue
        if name in runs:
            want = pr_cells(runs[name])
            if c[1:5] != want:
                wrong.append(f"{name}: the table says {' | '.join(c[1:5])!r},\n"
                             f"    the main job ran {' | '.join(want)!r}")
        elif name in skipped:
            if c[1] != "nightly":
                wrong.append(f"{name}: the main job skipped it (nightly tier); the table says "
                             f"tier {c[1]!r}")
        else:
            wrong.append(f"{name}: the table has a row, the main job did not run it")
    for name in sorted((set(runs) | skipped) - set(have)):
        wrong.append(f"{name}: no row")
    if wrong:
        sys.exit("VERIFICATION.md's measured-runs table does not say what the main job runs:\n  "
                 + "\n  ".join(wrong)
                 + f"\nRewrite it with `python3 ci/model_table.py write {report_path}` and commit "
                 "it with the change that moved the counts.")
    print(f"measured-runs table: the {len(runs)} models the main job ran and the {len(skipped)} "
          "it skipped (nightly tier) match their rows")


def check_nightly(report_path):
    runs, _, have = report_and_rows(report_path)
    wrong = []
    for name, run in sorted(runs.items()):
        c = have.get(name)
        if c is None:
            wrong.append(f"{name}: no row")
            continue
        want = nightly_cell(run, c[2])
        if c[5] != want:
            wrong.append(f"{name}: the table says {c[5]!r}, the nightly ran {want!r} "
                         f"({run.setting}, {run.executions:,} executions)")
    if wrong:
        sys.exit("VERIFICATION.md's measured-runs table does not say what the nightly runs:\n  "
                 + "\n  ".join(wrong)
                 + f"\nRewrite its nightly column with `python3 ci/model_table.py write --nightly "
                 "REPORT` on this report (the partition's models only) and commit it.")
    print(f"measured-runs table: the nightly column matches the {len(runs)} models this "
          "partition ran")


def run(command, **env):
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, **env, "MODELSYNC_REPORT": report.name})
        if out.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
        return parse(Path(report.name).read_text())


def main():
    args = sys.argv[1:]
    if args[:1] == ["check"] and len(args) == 2:
        return check(args[1])
    if args[:1] == ["check-nightly"] and len(args) == 2:
        return check_nightly(args[1])
    if args[:1] == ["write"]:
        nightly = "--nightly" in args
        rest = [a for a in args[1:] if a != "--nightly"]
        if len(rest) != 1:
            sys.exit(__doc__)
        report = parse(Path(rest[0]).read_text())
        return write(expected_rows(rows(), **({"nightly": report} if nightly else {"pr": report})))
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--only", default="", help="remeasure only models starting with this")
    parser.add_argument("--nightly", action="store_true", help="the nightly's run, not the main job's")
    parser.add_argument("--dry-run", action="store_true")
    # The old name of the default (the main job's columns alone).
    parser.add_argument("--pr-only", action="store_true", help=argparse.SUPPRESS)
    a = parser.parse_args(args)
    filters = [a.only] if a.only else []
    if a.nightly:
        report = run(["bash", "ci/loom", "--test", "models", "--", "--test-threads=1"] + filters,
                     LOOM_MAX_PREEMPTIONS="none", MODELSYNC_LOOM_BUDGET=str(a.budget),
                     MODELSYNC_TIER="nightly")
        new = expected_rows(rows(), nightly=report, only=a.only)
    else:
        report = run(["bash", "ci/loom", "--test", "models", "--"] + filters)
        new = expected_rows(rows(), pr=report, only=a.only)
    write(new, a.dry_run)


if __name__ == "__main__":
    main()

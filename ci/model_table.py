#!/usr/bin/env python3
"""The measured runs: every loom model's result line at its own setting,
kept in verification/runs.json and checked against every run that
produces it. ci/summary.py renders them, with each model's rerun command,
into verification/<module>.md, and derives every status from them.

What each model records, and what keeps it true:

- `line`: the result line (check/src/lib.rs) of its run at its own
  setting, in its tier, with every time written `time=...s` (times are
  not the same twice; nothing else in a loom line varies: loom's counts
  are deterministic for given code and settings, and the generated
  scenarios' budgets are counted in executions). A pull-request-tier
  model's is the main job's run (the README's `RUSTFLAGS="--cfg loom"
  cargo test --release`), checked by `check` at the end of ci/loom on
  every push; a nightly-tier model's is its run under the nightly tier's
  settings (NIGHTLY_TIER_ENV below), checked every night by
  `ci/rerun_commands.py --tier nightly`, which runs each such model's
  documented command as written.
- `nightly_no_bound`: the nightly's soak, every loom model with no
  preemption bound within its time budget (ci/nightly): `as at its own
  setting` (the same run), `complete: N` (N executions, first pass),
  `not complete within the budget` (the nightly then ran the highest
  bound that finishes, which depends on the machine and is not kept), or
  `new scenarios each night` (generated scenarios, drawn from the seed of
  the day). Checked by `check-nightly` in ci/nightly, for the models of
  the partition the report covers.

Usage:
  ci/model_table.py check REPORT          the main job's report (ci/loom
                                          writes target/logs/loom-report.txt)
                                          against the recorded lines
  ci/model_table.py check-nightly REPORT  the nightly soak's report against
                                          `nightly_no_bound`
  ci/model_table.py not-run MODEL REASON   a nightly model with no run yet:
                                          its status is "not yet run", REASON
                                          says why, until `write` records one
  ci/model_table.py write [--nightly] REPORT
                                          record the lines of REPORT (a main
                                          job's report, or result lines of the
                                          documented commands, either tier);
                                          with --nightly, the soak's cells
                                          (then ci/summary.py, which renders
                                          them, runs)
"""

import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree  # noqa: E402

ROOT = tree.ROOT
RUNS = ROOT / "verification" / "runs.json"
LINE = re.compile(r"model (\S+) backend=(\w+) (?:tier=(\w+) )?(.*?) executions=(\d+) time=(\S+)s "
                  r"reached\[(.*?)\](?: real_time_pass\[(.*?) executions=(\d+) time=\S+s "
                  r"histories_checked=\d+\])?\s*$")
SKIPPED = re.compile(r"model (\S+) backend=loom tier=nightly skipped")
TIME = re.compile(r"time=\d+(?:\.\d+)?s")

# The settings a nightly-tier model's documented command runs it with,
# which are the nightly's (ci/nightly): both tiers, and a complete run's
# budget large enough for the scope shards the nightly runs. Every
# setting the command needs is in it, so it runs as written.
NIGHTLY_TIER_ENV = "MODELSYNC_TIER=nightly MODELSYNC_COMPLETE_BUDGET=1000000"

AS_OWN = "as at its own setting"
NOT_COMPLETE = "not complete within the budget"
NEW_DRAWS = "new scenarios each night"
NOT_MEASURED = "not measured"


def normalized(line):
    """A result line with its times written `time=...s`: what a rerun must
    print again."""
    return TIME.sub("time=...s", line.strip())


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
        self.line = normalized(m.group(0))


def parse_line(line):
    m = LINE.search(line)
    return Run(m) if m else None


def parse(text):
    """({model: Run} of the loom lines of the normal run, {model skipped})."""
    runs, skipped = {}, set()
    for line in text.splitlines():
        if m := SKIPPED.search(line):
            skipped.add(m.group(1))
        elif (run := parse_line(line)) and run.backend == "loom" and not run.audit:
            runs[run.name] = run
    return runs, skipped


def fields(setting):
    return dict(f.split("=", 1) for f in setting.split() if "=" in f)


def is_generated(setting):
    return setting.startswith("scenarios=")


def load():
    """{model: {"line": ..., "nightly_no_bound": ...}}."""
    return json.loads(RUNS.read_text())["models"] if RUNS.exists() else {}


def save(models):
    RUNS.parent.mkdir(exist_ok=True)
    data = {
        "about": "Written by ci/model_table.py write from result lines, never by hand: each "
                 "loom model's result line at its own setting (times as ...), and the nightly "
                 "soak's run with no bound (or, for a nightly model no run of which is recorded yet, "
                 "why: `not-run`). Checked by ci/model_table.py check (ci/loom), "
                 "ci/rerun_commands.py (.ci/run's sample, the nightly's whole tier) and "
                 "ci/model_table.py check-nightly (ci/nightly); rendered by ci/summary.py.",
        "models": {name: models[name] for name in sorted(models)},
    }
    RUNS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def loom_models():
    """The models loom runs: every test of models/ not compiled out under loom."""
    return {name for name, t in tree.all_tests().items() if t.target == "models" and t.loom}


def first_pass_setting(line):
    """The first pass's setting of a recorded line, for the soak's cell."""
    run = parse_line(line)
    return run.setting, run.executions


def nightly_cell(run, own_line):
    """What the nightly soak's `run` says, as `nightly_no_bound` records it."""
    if is_generated(run.setting) and "scope=" not in run.setting:
        return NEW_DRAWS
    if "unbounded=out-of-budget" in run.setting:
        return NOT_COMPLETE
    if own_line and first_pass_setting(own_line) == (run.setting, run.executions):
        return AS_OWN
    if fields(run.setting).get("preemption_bound") == "none" or (
            is_generated(run.setting) and fields(run.setting).get("bounded") == "0"):
        return f"complete: {run.executions:,}"
    return f"{run.setting}: {run.executions:,}"


def check(report_path):
    runs, skipped = parse(Path(report_path).read_text())
    if not runs:
        sys.exit(f"{report_path} holds no loom result lines")
    recorded = load()
    tiers = model_tiers()
    wrong = []
    for name in sorted(loom_models()):
        have = recorded.get(name, {}).get("line")
        if name in runs:
            if have != runs[name].line:
                wrong.append(f"{name}: recorded {have!r},\n    the main job printed "
                             f"{runs[name].line!r}")
        elif name in skipped:
            if tiers.get(name) != "nightly":
                wrong.append(f"{name}: the main job skipped it, but its builder does not say "
                             ".nightly()")
        else:
            wrong.append(f"{name}: the main job did not run it")
    for name in sorted((set(runs) | skipped) - loom_models()):
        wrong.append(f"{name}: the main job ran it, but the tree has no such loom model")
    if wrong:
        sys.exit("verification/runs.json does not say what the main job runs:\n  "
                 + "\n  ".join(wrong)
                 + f"\nRecord the runs with `python3 ci/model_table.py write {report_path}` and "
                 "commit them with the change that moved the counts.")
    print(f"measured runs: the {len(runs)} models the main job ran print their recorded lines; "
          f"the {len(skipped)} it skipped are of the nightly tier")


def check_nightly(report_path):
    runs, _ = parse(Path(report_path).read_text())
    if not runs:
        sys.exit(f"{report_path} holds no loom result lines")
    recorded = load()
    wrong = []
    for name, run in sorted(runs.items()):
        entry = recorded.get(name)
        if entry is None:
            wrong.append(f"{name}: no recorded run")
            continue
        want = nightly_cell(run, entry.get("line"))
        if entry.get("nightly_no_bound", NOT_MEASURED) != want:
            wrong.append(f"{name}: recorded {entry.get('nightly_no_bound', NOT_MEASURED)!r}, "
                         f"the nightly ran {want!r} ({run.setting}, {run.executions:,} "
                         "executions)")
    if wrong:
        sys.exit("verification/runs.json does not say what the nightly soak runs:\n  "
                 + "\n  ".join(wrong)
                 + "\nRecord it with `python3 ci/model_table.py write --nightly REPORT` on this "
                 "report (the partition's models only) and commit it.")
    print(f"measured runs: the nightly soak column matches the {len(runs)} models this "
          "partition ran")


def write(report_path, nightly):
    runs, _ = parse(Path(report_path).read_text())
    if not runs:
        sys.exit(f"{report_path} holds no loom result lines")
    recorded = load()
    known = loom_models()
    for name, run in runs.items():
        if name not in known:
            sys.exit(f"{report_path}: {name} is no loom model of the tree")
        entry = recorded.setdefault(name, {})
        if nightly:
            entry["nightly_no_bound"] = nightly_cell(run, entry.get("line"))
        else:
            entry["line"] = run.line
            entry.pop("not_run", None)
    # Models that no longer exist leave the record.
    save({name: e for name, e in recorded.items() if name in known})
    # The generated parts render these runs.
    subprocess.run([sys.executable, str(ROOT / "ci" / "summary.py")], check=True)
    print(f"recorded {len(runs)} runs in {RUNS.relative_to(ROOT)}")


def not_run(name, reason):
    """Records that nightly model `name` has no run yet, and why: its
    status is then "not yet run" (ci/summary.py), until a run of it is
    written."""
    if name not in loom_models():
        sys.exit(f"{name} is no loom model of the tree")
    if model_tiers().get(name) != "nightly":
        sys.exit(f"{name} is of the pull-request tier: its run must be recorded")
    recorded = load()
    entry = recorded.setdefault(name, {})
    entry.pop("line", None)
    entry["not_run"] = reason
    save(recorded)
    subprocess.run([sys.executable, str(ROOT / "ci" / "summary.py")], check=True)


def model_tiers():
    import kill_matrix
    return kill_matrix.model_tiers()


def main():
    args = sys.argv[1:]
    if args[:1] == ["check"] and len(args) == 2:
        return check(args[1])
    if args[:1] == ["check-nightly"] and len(args) == 2:
        return check_nightly(args[1])
    if args[:1] == ["not-run"] and len(args) == 3:
        return not_run(args[1], args[2])
    if args[:1] == ["write"]:
        nightly = "--nightly" in args
        rest = [a for a in args[1:] if a != "--nightly"]
        if len(rest) == 1:
            return write(rest[0], nightly)
    sys.exit(__doc__)


if __name__ == "__main__":
    main()

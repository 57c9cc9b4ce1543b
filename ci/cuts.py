#!/usr/bin/env python3
"""The cuts of a scope's cost, measured before and after on the same scope.

A scope's scenarios (models/harness/scope.rs) can be cut in two ways,
each argued where it is implemented:

- symmetry: scenarios equal up to interchangeable threads (equal
  alphabets, not `ordered_threads`) and the subject's renaming of values
  and keys (`Subject::canonical`) run once;
- commuting threads (one-size-up scopes only): a scenario with a thread
  whose operations touch parts disjoint from every other thread's
  (`Subject::footprint`) is left out: that thread commutes with the rest,
  and the smaller scope and the sequential specification check it.

`MODELSYNC_SCOPE_CUTS=none|symmetry|all` chooses the cuts of one run. This
script runs a scope's model under loom with each setting, records each
run's result line (scenarios, executions of both passes, seconds) in
verification/cuts.json, and renders the table verification/cuts.md from
it; a cut is checked by the same run: the model passes with and without
it (the scope's verdict is the same).

Usage:
  ci/cuts.py measure MODEL CUTS...   run MODEL (its tier's setting, alone:
                                     time it on a quiet machine) with each
                                     of CUTS (none, symmetry, all) and
                                     record the lines
  ci/cuts.py write                   render verification/cuts.md
  ci/cuts.py check                   fail if verification/cuts.md is not
                                     what verification/cuts.json gives
"""

import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree  # noqa: E402

ROOT = tree.ROOT
DATA = ROOT / "verification" / "cuts.json"
TABLE = ROOT / "verification" / "cuts.md"
LABELS = {"none": "none", "symmetry": "symmetry", "all": "symmetry and commuting threads"}


def host():
    info = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if ":" in line:
            k, v = (s.strip() for s in line.split(":", 1))
            info.setdefault(k, v)
    return (f"{info.get('model name', '?')} ({info.get('vendor_id', '?')}, cpu family "
            f"{info.get('cpu family', '?')}, model {info.get('model', '?')}), "
            f"{os.cpu_count()} cores")


def commit():
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "src", "models", "specs"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return out + ("+changes" if dirty else "")


def measure(model, cuts):
    tier = "nightly" if not model_in_pr(model) else "pr"
    data = json.loads(DATA.read_text()) if DATA.exists() else {"runs": {}}
    for cut in cuts:
        if cut not in LABELS:
            sys.exit(f"ci/cuts.py: {cut} is none of {', '.join(LABELS)}")
        env = dict(os.environ, RUSTFLAGS="--cfg loom", MODELSYNC_SCOPE_CUTS=cut,
                   CARGO_TARGET_DIR=os.environ.get("CARGO_TARGET_DIR", "target/loom"))
        env.pop("MODELSYNC_SCOPE_SAMPLE", None)
        if tier == "nightly":
            env["MODELSYNC_TIER"] = "nightly"
        started = time.time()
        run = subprocess.run(["cargo", "test", "--release", "--test", "models", "--",
                              "--exact", model], cwd=ROOT, env=env, capture_output=True,
                             text=True)
        wall = time.time() - started
        # The line is the model's process's, on stderr or stdout as the
        # harness's own-process runner passes it on.
        output = run.stdout + "\n" + run.stderr
        lines = [l for l in output.splitlines() if l.startswith(f"model {model} ")]
        if run.returncode != 0 or not lines:
            sys.exit(f"ci/cuts.py: {model} with cuts {cut} failed:\n{run.stdout[-3000:]}"
                     f"\n{run.stderr[-3000:]}")
        data["runs"].setdefault(model, {})[cut] = {
            "line": lines[-1], "wall_seconds": round(wall, 1),
            "when": datetime.date.today().isoformat(), "commit": commit(), "host": host(),
        }
        print(f"{model} cuts={cut}: {wall:.0f} s", flush=True)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    write()


def model_in_pr(model):
    # A model of the pull-request tier prints its line without
    # MODELSYNC_TIER; the kill matrix's tiers say which.
    from kill_matrix import model_tiers
    return model_tiers().get(model, "pr") == "pr"


def numbers(line):
    """(scenarios run, executions of both passes, seconds of both passes)
    from a scope's result line."""
    scenarios = int(re.search(r"\bscenarios=(\d+)", line).group(1))
    executions = [int(x) for x in re.findall(r"\bexecutions=(\d+)", line)]
    seconds = [float(x) for x in re.findall(r"\btime=([\d.]+)s", line)]
    return scenarios, sum(executions), sum(seconds)


def render():
    data = json.loads(DATA.read_text()) if DATA.exists() else {"runs": {}}
    out = [
        "# Cuts of a scope's cost, measured",
        "",
        "<!-- cuts: generated by ci/cuts.py from verification/cuts.json -->",
        "Each row is one scope's model run under loom with the cuts named "
        "(`MODELSYNC_SCOPE_CUTS`), both passes: what a cut saved is the "
        "difference between two rows of one scope. Every run passed: a cut "
        "changed no verdict. The cuts are argued in `models/harness/scope.rs` "
        "(`Cuts`, `has_independent_thread`) and VERIFICATION.md (\"How the "
        "checks run\"); rerun a row with `python3 ci/cuts.py measure MODEL CUT`.",
        "",
        "| scope's model | cuts | scenarios run | executions | seconds | measured |",
        "|---|---|---|---|---|---|",
    ]
    for model in sorted(data["runs"]):
        for cut in ("none", "symmetry", "all"):
            run = data["runs"][model].get(cut)
            if not run:
                continue
            scenarios, executions, seconds = numbers(run["line"])
            out.append(f"| `{model}` | {LABELS[cut]} | {scenarios:,} | {executions:,} | "
                       f"{seconds:,.0f} | {run['when']}, {run['commit']} |")
    hosts = sorted({r["host"] for runs in data["runs"].values() for r in runs.values()})
    out += ["", "Hosts: " + "; ".join(hosts) + "." if hosts else "No run recorded yet.",
            "<!-- end of cuts -->", ""]
    return "\n".join(out)


def write():
    TABLE.write_text(render())


def check():
    if not TABLE.exists() or TABLE.read_text() != render():
        sys.exit("verification/cuts.md is not what verification/cuts.json gives: "
                 "run `python3 ci/cuts.py write`")
    print("verification/cuts.md is current")


def main(argv):
    if argv[:1] == ["measure"] and len(argv) >= 3:
        measure(argv[1], argv[2:])
    elif argv == ["write"]:
        write()
    elif argv == ["check"]:
        check()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

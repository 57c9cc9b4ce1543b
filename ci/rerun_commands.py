#!/usr/bin/env python3
"""Runs the rerun commands that verification/*.md documents, exactly as
written, and compares the result line each prints with the line the
same entry documents beside it (times aside: `time=...s`).

An entry is a test's `### `<name>`` section under `## Tests`: its
command is its ```sh block, its expected line its ```text block
(ci/summary.py writes both from verification/runs.json). The command is
run by bash as it stands, in an environment cleared of every knob the
harness reads (LOOM_*, MODELSYNC_* but MODELSYNC_REPORT, SHUTTLE_*), so
that only what the command says decides what it runs. CARGO_TARGET_DIR,
a cache location that changes no result, defaults to target/loom, the
build ci/loom already made.

Which entries:
  (default)          a sample: for each tier and each kind of loom model
                     (hand-written complete in both passes, bounded, with
                     no history; generated scenarios; complete scenarios;
                     a scope), the one with the lowest recorded cost
                     (mutants/kill-matrix.json's `main_job_secs`): what
                     .ci/run runs, cheap beside the main job
  --tier nightly|pr  every loom model of that tier (ci/nightly runs the
                     nightly tier's, the only check of their lines)
  --all              every loom model
  NAME...            those models

Usage: ci/rerun_commands.py [--tier T | --all | NAME...] [--file MD] [--list]
  --file MD   read the entries from MD instead of verification/*.md
  --list      print the chosen commands without running them
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EVIDENCE = ROOT / "verification"
KNOB = re.compile(r"^(LOOM_|MODELSYNC_|SHUTTLE_)")


class Entry:
    def __init__(self, name, command, expected, fails=False):
        self.name = name
        self.command = command
        self.expected = expected
        # Documented as failing at its own setting (ci/summary.py): it is
        # run by --tier and --all, where it fails as documented, never
        # sampled.
        self.fails = fails
        run = model_table.parse_line(expected) if expected else None
        self.tier = run.tier if run else None

    def kind(self):
        line = self.expected
        if "scope=" in line:
            return "scope"
        if "scenarios=" in line:
            return "complete scenarios" if "complete_scenarios" in self.name else "generated"
        if "real_time_pass[" not in line:
            return "no history"
        both = line.count("preemption_bound=none") == 2
        return "complete" if both else "bounded"


def entries(files):
    """Every entry with a command, in file order."""
    out = []
    for path in files:
        text = path.read_text()
        tests = text.split("\n## Tests\n", 1)
        if len(tests) < 2:
            continue
        for block in re.split(r"^### ", tests[1], flags=re.M)[1:]:
            name = block.split("\n", 1)[0].strip().strip("`")
            command = re.search(r"```sh\n(.*?)\n```", block, re.S)
            expected = re.search(r"```text\n(.*?)\n```", block, re.S)
            if command:
                out.append(Entry(name, command.group(1).strip(),
                                 expected.group(1).strip() if expected else None,
                                 "Status: **no status: it fails" in block))
    return out


def sample(loom):
    """The cheapest entry of each tier and kind."""
    matrix = json.loads((ROOT / "mutants" / "kill-matrix.json").read_text())["models"]
    cost = {m: e.get("main_job_secs") for m, e in matrix.items()}
    chosen = {}
    for e in loom:
        c = cost.get(e.name)
        if c is None or e.fails:
            continue
        key = (e.tier, e.kind())
        if key not in chosen or c < cost[chosen[key].name]:
            chosen[key] = e
    return [chosen[k] for k in sorted(chosen)]


def environment():
    env = {k: v for k, v in os.environ.items() if not KNOB.match(k) or k == "MODELSYNC_REPORT"}
    env.setdefault("CARGO_TARGET_DIR", "target/loom")
    return env


def compare(entry, output, returncode):
    """The problems with one run: its exit status, and its line against
    the documented one."""
    problems = []
    if returncode != 0:
        problems.append(f"exited {returncode}:\n{output[-3000:]}")
    lines = [model_table.normalized(line) for line in output.splitlines()
             if line.startswith(f"model {entry.name} ") and "all-read-modify-write" not in line]
    if lines != [entry.expected]:
        problems.append(f"printed {lines!r},\n    documented {entry.expected!r}")
    return problems


def run(entry):
    out = subprocess.run(["bash", "-c", entry.command], cwd=ROOT, env=environment(),
                         capture_output=True, text=True)
    return compare(entry, out.stdout + out.stderr, out.returncode)


def main():
    args = sys.argv[1:]
    files = sorted(EVIDENCE.glob("*.md"))
    if "--file" in args:
        i = args.index("--file")
        files = [Path(args[i + 1])]
        del args[i:i + 2]
    listing = "--list" in args
    args = [a for a in args if a != "--list"]
    loom = [e for e in entries(files) if e.expected]
    if not loom:
        sys.exit(f"no documented result line in {', '.join(map(str, files))}")
    if not args:
        chosen, what = sample(loom), "a sample (the cheapest of each tier and kind)"
    elif args[0] == "--all":
        chosen, what = loom, "every loom model"
    elif args[0] == "--tier" and len(args) == 2:
        chosen, what = [e for e in loom if e.tier == args[1]], f"tier {args[1]}"
    elif not any(a.startswith("-") for a in args):
        by_name = {e.name: e for e in loom}
        unknown = [a for a in args if a not in by_name]
        if unknown:
            sys.exit(f"no documented loom model named {unknown}")
        chosen, what = [by_name[a] for a in args], "the named models"
    else:
        sys.exit(__doc__)
    print(f"rerun commands: {what}, {len(chosen)} of {len(loom)} documented", flush=True)
    problems = []
    for e in chosen:
        if listing:
            print(f"{e.tier} {e.kind()}: {e.command}")
            continue
        found = run(e)
        print(f"{'FAILED' if found else 'ok'}: {e.command}", flush=True)
        problems += [f"{e.name}: {p}" for p in found]
    if problems:
        sys.exit("documented rerun commands that do not print their documented line:\n  "
                 + "\n  ".join(problems)
                 + "\nIf the change moved the counts on purpose, record the new lines "
                   "(`python3 ci/model_table.py write REPORT`, REPORT holding the commands' "
                   "lines: MODELSYNC_REPORT=REPORT) and commit them with it.")


if __name__ == "__main__":
    main()

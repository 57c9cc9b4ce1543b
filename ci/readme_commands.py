#!/usr/bin/env python3
"""Runs every command the README gives, each in its cheapest form, and
checks that it runs the backend the README says it does.

A command is a line of a ```sh block (a trailing `\\` joins the next line;
`#` lines are comments), or an inline code span that starts with `cargo`
or `python3` (after any `VAR=value`) and has an argument. Each must have
an entry in COMMANDS below, which says how it is run:

- `run`: a shell command (the README's, narrowed to one cheap test where
  it names many) that must succeed; for a model command, its result lines
  must show the backend (and setting) expected, at least one of them;
  for a command that rewrites files, those files must come out unchanged
  (the tree is already what it writes);
- `ci`: a CI script runs the command itself (the script and the text it
  runs are checked to be there);
- `example`: `cargo run --example NAME`, which ci/examples runs for every
  file of examples/ (the file is checked to exist).

A README command with no entry, or an entry for a command the README no
longer gives, fails the run: no README command is left unrun.

Run after ci/loom in .ci/run: one entry rewrites VERIFICATION.md from the
main job's report.

Usage: ci/readme_commands.py [--list]
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The cheapest loom model: a handful of executions.
CHEAP = "queue::steal_of_items_just_stolen_in"
LOOM = {"CARGO_TARGET_DIR": "target/loom"}
SHUTTLE = {"CARGO_TARGET_DIR": "target/shuttle"}

# What a command that rewrites the generated parts must leave as it is.
GENERATED = ["README.md", "VERIFICATION.md",
             *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "verification").glob("*")))]

# README command -> how it runs. `expect` is (backend, [substrings every
# result line must hold]); `unchanged` lists files the command must leave
# as they are.
COMMANDS = {
    'RUSTFLAGS="--cfg loom" cargo test --release':
        {"ci": ("ci/loom", 'RUSTFLAGS="--cfg loom" cargo test --release')},
    "cargo test": {"ci": ("ci/test", "cargo test")},
    "cargo build": {"run": "cargo build --quiet"},
    'RUSTFLAGS="--cfg loom" cargo test --release --test models queue::multi_stealer':
        {"run": 'RUSTFLAGS="--cfg loom" cargo test --release --test models queue::multi_stealer',
         "env": LOOM, "expect": ("loom", ["model queue::multi_stealer ", "tier=pr"])},
    "cargo test --test models queue::multi_stealer":
        {"run": "cargo test --test models queue::multi_stealer",
         "expect": ("std", ["model queue::multi_stealer ", "stress_iters="])},
    'RUSTFLAGS="--cfg loom" cargo test --release --test models queue::':
        {"run": f'RUSTFLAGS="--cfg loom" cargo test --release --test models queue:: -- --exact {CHEAP}',
         "env": LOOM, "expect": ("loom", [f"model {CHEAP} "])},
    'LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test --release --test models':
        {"run": 'LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test --release --test models '
                f"-- --exact {CHEAP}",
         "env": LOOM, "expect": ("loom", ["preemption_bound=3 "])},
    'LOOM_MAX_PREEMPTIONS=none RUSTFLAGS="--cfg loom" cargo test --release --test models':
        {"run": 'LOOM_MAX_PREEMPTIONS=none RUSTFLAGS="--cfg loom" cargo test --release --test models '
                f"-- --exact {CHEAP}",
         "env": LOOM, "expect": ("loom", ["preemption_bound=none "])},
    'MODELSYNC_TIER=nightly RUSTFLAGS="--cfg loom" cargo test --release':
        {"run": 'MODELSYNC_TIER=nightly RUSTFLAGS="--cfg loom" cargo test --release --test models '
                f"-- --exact {CHEAP}",
         "env": LOOM, "expect": ("loom", ["tier="])},
    'MODELSYNC_SHUTTLE_ITERS=10000 SHUTTLE_RANDOM_SEED=42 RUSTFLAGS="--cfg shuttle" '
    "cargo test --release --test models queue::":
        {"run": 'MODELSYNC_SHUTTLE_ITERS=10000 SHUTTLE_RANDOM_SEED=42 RUSTFLAGS="--cfg shuttle" '
                f"cargo test --release --test models queue:: -- --exact {CHEAP}",
         "env": SHUTTLE, "expect": ("shuttle", ["seed=42 ", "random_iters=10000 "])},
    "MODELSYNC_BLESS=1 cargo test --test proptests verification":
        {"run": "MODELSYNC_BLESS=1 cargo test --test proptests verification",
         "unchanged": GENERATED},
    "python3 ci/summary.py":
        {"run": "python3 ci/summary.py", "unchanged": GENERATED},
    "python3 ci/model_table.py write target/logs/loom-report.txt":
        {"run": "python3 ci/model_table.py write target/logs/loom-report.txt",
         "unchanged": GENERATED},
    "python3 ci/mutants.py run": {"ci": ("ci/nightly", "python3 ci/mutants.py run")},
    "cargo package": {"ci": (".ci/run", "cargo package")},
    "python3 ci/tokio_suite.py": {"ci": (".ci/run", "python3 ci/tokio_suite.py")},
}

COMMAND_SPAN = re.compile(r'^(?:\w+=(?:"[^"]*"|\S+) )*(?:cargo|python3) \S')


def readme_commands(text):
    """Every command of the README, in order, once each."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", "", block)
        for line in joined.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                found.append(line)
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`\n]+)`", prose):
        if COMMAND_SPAN.match(span):
            found.append(span)
    return list(dict.fromkeys(found))


def result_lines(output):
    return [line for line in output.splitlines() if line.startswith("model ")]


def run(command, entry):
    env = {**os.environ, **entry.get("env", {})}
    before = {f: (ROOT / f).read_text() for f in entry.get("unchanged", [])}
    out = subprocess.run(["bash", "-c", entry["run"]], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    problems = []
    if out.returncode != 0:
        problems.append(f"exit {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    if "expect" in entry:
        backend, needles = entry["expect"]
        lines = result_lines(out.stdout + out.stderr)
        if not lines:
            problems.append("printed no result line")
        for line in lines:
            if f" backend={backend} " not in line or not all(n in line for n in needles):
                problems.append(f"expected backend={backend} with {needles}, got: {line}")
    for f, text in before.items():
        if (ROOT / f).read_text() != text:
            (ROOT / f).write_text(text)
            problems.append(f"changed {f} (restored): the tree is not what it writes")
    return problems


def main():
    commands = readme_commands(README.read_text())
    if sys.argv[1:] == ["--list"]:
        print("\n".join(commands))
        return
    problems = []
    for command in commands:
        m = re.fullmatch(r"cargo run --example (\S+)", command)
        if m:
            if not (ROOT / "examples" / f"{m.group(1)}.rs").is_file() \
                    and m.group(1) not in ("NAME", "<name>"):
                problems.append(f"`{command}`: no examples/{m.group(1)}.rs for ci/examples to run")
            continue
        if command not in COMMANDS:
            problems.append(f"`{command}`: the README gives it and ci/readme_commands.py does not "
                            "run it: add its cheapest form to COMMANDS")
    for command in COMMANDS:
        if command not in commands:
            problems.append(f"`{command}`: in COMMANDS, but no longer in the README")
    for command in commands:
        entry = COMMANDS.get(command)
        if entry is None:
            continue
        if "ci" in entry:
            script, text = entry["ci"]
            if text not in (ROOT / script).read_text():
                problems.append(f"`{command}`: {script} no longer runs `{text}`")
            print(f"ok (run by {script}): {command}")
            continue
        print(f"running: {entry['run']}", flush=True)
        found = run(command, entry)
        problems += [f"`{command}`: {p}" for p in found]
        print(f"{'FAILED' if found else 'ok'}: {command}", flush=True)
    if problems:
        sys.exit("README commands:\n  " + "\n  ".join(problems))
    print(f"every README command ran: {len(commands)}")


if __name__ == "__main__":
    main()

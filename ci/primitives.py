#!/usr/bin/env python3
"""The primitives, derived from the tree, and checks that a run covered each.

A primitive is a module of the library: src/<p>.rs or src/<p>/mod.rs (the
shim, src/sync/, is not one). Every ci/ script that needs the list asks this
file, so a new primitive is picked up everywhere without a list to edit; the
test `verification::every_primitive_has_its_files_and_sections` fails when
a primitive lacks its models, property tests, benchmarks or VERIFICATION.md
section.

Usage:
  ci/primitives.py list                 print the primitives, one per line
  ci/primitives.py ran BACKEND LOG      fail unless LOG (the output of
                                        `cargo test` or `cargo miri test`)
                                        shows, for every primitive, at least
                                        one passing test in each test target
                                        BACKEND must cover (loom, shuttle:
                                        models; std, miri: models and
                                        proptests), naming what did not run
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_PRIMITIVES = {"lib", "sync"}
# The test targets each backend runs every primitive in (the proptests
# target compiles to nothing under loom and shuttle).
TARGETS = {"loom": ["models"], "shuttle": ["models"], "std": ["models", "proptests"],
           "miri": ["models", "proptests"]}


def primitives():
    found = []
    for path in sorted((ROOT / "src").iterdir()):
        name = path.stem
        if name in NOT_PRIMITIVES:
            continue
        if path.is_dir() and (path / "mod.rs").is_file():
            found.append(name)
        elif path.suffix == ".rs":
            found.append(name)
    return found


def primitive_of(rel):
    """src/queue/local.rs -> queue; src/oneshot.rs -> oneshot; None for the shim."""
    parts = Path(rel).parts
    if len(parts) < 2 or parts[0] != "src":
        return None
    name = Path(parts[1]).stem
    return None if name in NOT_PRIMITIVES else name


def passing_tests(log_text):
    """{target: set of passing test names} from libtest output.

    With one test thread (Miri's default) libtest prints `test NAME ... `
    before the test runs and `ok` after it, so a model's own result line
    (written to stderr, uncaptured) can sit between the two."""
    by_target, target, pending = {}, None, None
    for line in log_text.splitlines():
        running = re.match(r"\s*Running (?:unittests )?(\S+)", line)
        if running:
            target, pending = running.group(1), None
            by_target.setdefault(target, set())
            continue
        started = re.match(r"test (\S+) \.\.\. ?(.*)$", line)
        if started:
            pending = started.group(1)
            rest = started.group(2)
        elif pending:
            rest = line
        else:
            continue
        if target and re.search(r"(^|\s)ok$", rest.rstrip()):
            by_target[target].add(pending)
            pending = None
        elif re.search(r"(^|\s)(FAILED|ignored)$", rest.rstrip()):
            pending = None
    return by_target


def check_ran(backend, log_path):
    tests = passing_tests(Path(log_path).read_text(errors="replace"))
    problems = []
    for target in TARGETS[backend]:
        names = set().union(*(n for t, n in tests.items() if t.startswith(f"{target}/")))
        if not names:
            problems.append(f"{backend}: {log_path} shows no test of the {target} target passing")
            continue
        for p in primitives():
            if not any(n.startswith(f"{p}::") for n in names):
                problems.append(f"{backend}: no test of primitive `{p}` passed in the {target} "
                                f"target (is {target}/{p}.rs compiled out for {backend}?)")
    return problems


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "list":
        print("\n".join(primitives()))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "ran":
        problems = check_ran(sys.argv[2], sys.argv[3])
        for p in problems:
            print(p)
        if not problems:
            print(f"{sys.argv[2]}: every primitive ({', '.join(primitives())}) ran")
        return 1 if problems else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The kill matrix: which loom models kill which known bug, and what that
allows the two tiers to be.

Every ordering mutant and seeded bug (ci/mutants.py) is run against every
model of its primitive, both tiers (`MODELSYNC_TIER=nightly`), and
mutants/results.json records every model that failed (not only the first).
This script turns that record, each model's tier (its builder says
`.nightly()` in models/<p>.rs) and each model's cost in the main job (a
report of `ci/loom` run with both tiers) into mutants/kill-matrix.json, and
checks the rule that decides the tiers:

- every bug some model kills is killed by a main-job (pull-request tier)
  model: moving a model to the nightly never loses a detection the main
  job had;
- every primitive keeps a whole-primitive model in the main job (one
  that drives the primitive's public API, not one of its components on
  its own: the tiers move cost, not whole kinds of check);
- every invariant some loom model checks (its `Checks:` line) is checked
  by a main-job model: a held-out bug breaks a promise, not a known
  mutant, so no promise leaves the main job's loom run.

A model may leave the main job only if every bug it kills is also killed
by a main-job model, or it kills none and costs more than a few seconds.
The kill matrix is built from known bugs, so it is a necessary condition,
never the only reason: VERIFICATION.md says, per model moved, what the
main job still runs in its place.

Usage:
  ci/kill_matrix.py write [REPORT]  rewrite mutants/kill-matrix.json from
                                    mutants/results.json, the models' tiers
                                    and, if given, REPORT (result lines of
                                    `MODELSYNC_TIER=nightly ci/loom`: each
                                    model's cost); without REPORT the costs
                                    already recorded are kept
  ci/kill_matrix.py check           fail if a killed bug has no main-job
                                    killer, a primitive has no main-job model,
                                    or kill-matrix.json is stale (fast: run by
                                    .ci/run)
  ci/kill_matrix.py cover           print, cheapest first, the main-job models
                                    that alone kill each bug, and a greedy
                                    cheapest set that kills every killed bug
"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from primitives import primitives  # noqa: E402
from tree import module_files  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "mutants" / "results.json"
MATRIX = ROOT / "mutants" / "kill-matrix.json"
# A model that kills no known bug leaves the main job only if it costs more
# than this (its recorded time at its main-job setting, both passes).
CHEAP_SECS = 3.0
LINE = re.compile(r"^model (\S+) backend=loom tier=(\w+) (.*?) executions=(\d+) time=(\S+)s")


def components():
    """The components with specifications of their own (specs/<c>.rs that
    is not a primitive's), and the runtime's join-waker hand-off: a model
    named `<p>::<component>_...` checks that component on its own."""
    prims = set(primitives())
    return sorted({p.stem for p in (ROOT / "specs").glob("*.rs")} - prims | {"join_waker"})


def is_component_model(name):
    fn = name.split("::", 1)[1]
    return any(fn == c or fn.startswith(c + "_") for c in components())


def model_checks():
    """{model name: set of invariant IDs} from each model's `Checks:` line."""
    checks = {}
    for stem, path in module_files("models"):
        text = path.read_text()
        for m in re.finditer(r"((?:\s*///[^\n]*\n)+)\s*(?:#\[[^\]]*\]\s*)*#\[test\]\s*"
                             r"(?:#\[[^\]]*\]\s*)*fn\s+(\w+)", text):
            line = re.search(r"Checks:([^\n]*)", m.group(1))
            ids = set(re.findall(r"\b[A-Z]+-\d+\b", line.group(1))) if line else set()
            checks[f"{stem}::{m.group(2)}"] = ids
    return checks


def model_tiers():
    """{model name: "pr" | "nightly"} for every `#[test]` in models/<p>.rs,
    from its body: `.nightly()` there moves it to the nightly tier."""
    tiers = {}
    for prim, path in module_files("models"):
        text = path.read_text()
        for m in re.finditer(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn\s+(\w+)\s*\(\s*\)\s*\{", text):
            depth, i = 1, m.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            body = text[m.end():i]
            tiers[f"{prim}::{m.group(1)}"] = "nightly" if ".nightly()" in body else "pr"
    return tiers


def killers(results):
    """{bug id: sorted killing models} for every bug some model kills."""
    out = {}
    for mid, r in results["mutants"].items():
        if r["result"] != "killed":
            continue
        names = sorted({b.replace(" (process died)", "") for b in r["by"]
                        if b != "(process died)"})
        out[mid] = names
    return out


def costs_from(report):
    """{model: seconds at its main-job setting} from result lines."""
    costs = {}
    for line in Path(report).read_text().splitlines():
        m = LINE.match(line)
        if m and "all-read-modify-write" not in m.group(3):
            costs[m.group(1)] = float(m.group(5))
    return costs


def build(costs):
    results = json.loads(RESULTS.read_text())
    tiers = model_tiers()
    kills = killers(results)
    models = {}
    for name, tier in sorted(tiers.items()):
        models[name] = {
            "tier": tier,
            "main_job_secs": costs.get(name),
            "kills": sorted(b for b, by in kills.items() if name in by),
        }
    return {
        "about": "Generated by ci/kill_matrix.py write from mutants/results.json "
                 "(ci/mutants.py run, every model of both tiers) and the models' tiers; "
                 "main_job_secs: each model's time at its main-job setting.",
        "mutation_bound": "/".join(sorted({str(r.get("bound")) for r in results["mutants"].values()})),
        "bugs": {b: {"killed_by": by, "main_job_killers": [m for m in by if tiers.get(m) == "pr"]}
                 for b, by in sorted(kills.items())},
        "models": models,
    }


def problems_of(matrix, tiers):
    problems = []
    for bug, entry in matrix["bugs"].items():
        if entry["killed_by"] and not entry["main_job_killers"]:
            problems.append(f"{bug} is killed only by nightly models "
                            f"({', '.join(entry['killed_by'])}): keep one in the main job")
    for prim in primitives():
        ours = [m for m in tiers if m.startswith(prim + "::")]
        whole = [m for m in ours if tiers[m] == "pr" and not is_component_model(m)]
        if ours and not whole:
            problems.append(f"{prim} has no whole-primitive model in the main job")
    for name, entry in matrix["models"].items():
        secs = entry.get("main_job_secs")
        if entry["tier"] == "nightly" and not entry["kills"] and secs is not None \
                and secs < CHEAP_SECS:
            problems.append(f"{name} kills no known bug and costs the main job {secs:.1f}s, "
                            f"under {CHEAP_SECS}s: too cheap to move to the nightly")
    checks = model_checks()
    for inv in sorted(set().union(*checks.values())):
        if not any(inv in ids and tiers.get(m) == "pr" for m, ids in checks.items()):
            problems.append(f"{inv} is checked by no main-job loom model (only by "
                            f"{', '.join(m for m, ids in checks.items() if inv in ids)})")
    return problems


def cmd_write(args):
    old = json.loads(MATRIX.read_text()) if MATRIX.exists() else {"models": {}}
    costs = {m: e.get("main_job_secs") for m, e in old["models"].items()}
    if args:
        costs.update(costs_from(args[0]))
    costs = {m: c for m, c in costs.items() if c is not None}
    matrix = build(costs)
    MATRIX.write_text(json.dumps(matrix, indent=1, sort_keys=True) + "\n")
    tiers = {m: e["tier"] for m, e in matrix["models"].items()}
    print(f"wrote {MATRIX.relative_to(ROOT)}: {len(matrix['bugs'])} killed bugs, "
          f"{len(tiers)} models ({sum(t == 'nightly' for t in tiers.values())} nightly)")
    for p in problems_of(matrix, tiers):
        print("problem:", p)


def cmd_check():
    if not MATRIX.exists():
        sys.exit(f"{MATRIX.relative_to(ROOT)} is missing: run `python3 ci/kill_matrix.py write`")
    recorded = json.loads(MATRIX.read_text())
    costs = {m: e["main_job_secs"] for m, e in recorded["models"].items()
             if e.get("main_job_secs") is not None}
    fresh = build(costs)
    problems = problems_of(fresh, {m: e["tier"] for m, e in fresh["models"].items()})
    if fresh != recorded:
        problems.append(f"{MATRIX.relative_to(ROOT)} is stale (a model was added or moved, or "
                        "mutants/results.json changed): run `python3 ci/kill_matrix.py write`")
    if problems:
        sys.exit("kill matrix:\n  " + "\n  ".join(problems))
    nightly = [m for m, e in fresh["models"].items() if e["tier"] == "nightly"]
    print(f"kill matrix: every one of {len(fresh['bugs'])} killed bugs has a main-job killer; "
          f"{len(nightly)} of {len(fresh['models'])} models run in the nightly tier only")


def cmd_cover():
    matrix = json.loads(MATRIX.read_text())
    cost = {m: (e["main_job_secs"] if e["main_job_secs"] is not None else 1e9)
            for m, e in matrix["models"].items()}
    left = {b for b, e in matrix["bugs"].items() if e["killed_by"]}
    chosen = []
    while left:
        best = min((m for m in cost if any(m in matrix["bugs"][b]["killed_by"] for b in left)),
                   key=lambda m: cost[m] / sum(m in matrix["bugs"][b]["killed_by"] for b in left))
        chosen.append(best)
        left -= {b for b in left if best in matrix["bugs"][b]["killed_by"]}
    print("a greedy cheapest set of models that kills every killed bug:")
    for m in sorted(chosen, key=lambda m: -cost[m]):
        print(f"  {cost[m]:8.2f}s  {m}  ({matrix['models'][m]['tier']})")
    print(f"  {sum(cost[m] for m in chosen):8.2f}s in all")
    print("bugs with one killer:")
    for b, e in sorted(matrix["bugs"].items()):
        if len(e["killed_by"]) == 1:
            print(f"  {b}: {e['killed_by'][0]}")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("write", "check", "cover"):
        sys.exit(__doc__)
    if sys.argv[1] == "write":
        cmd_write(sys.argv[2:])
    elif sys.argv[1] == "check":
        cmd_check()
    else:
        cmd_cover()


if __name__ == "__main__":
    main()

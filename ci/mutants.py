#!/usr/bin/env python3
"""Ordering mutants and seeded historical bugs, run against the loom models.

Every atomic operation's ordering argument and every fence in src/ (the
shim in src/sync excluded) is an *ordering site*. For each site the tool
generates, one at a time, each one-step-weaker ordering valid for that
operation (SeqCst -> AcqRel/Acquire/Release, AcqRel -> Acquire and Release,
Acquire -> Relaxed, Release -> Relaxed, a fence removed), builds the crate
under --cfg loom in a scratch copy, runs the models of the primitive the
file belongs to (`cargo test --test models -- <primitive>::`, the primitive
derived from the path by ci/primitives.py), and records: killed (by which
model), survived, timed out. Seeded bugs (mutants/seeded/*.patch, each with
`Subject:`, `Primitive:` and `Upstream:` headers) run the same way and must
be killed.

VERIFICATION.md's mutation summary and its table of historical bugs are
generated from mutants/results.json and the patches' headers (`run` and
`report` rewrite them; `check` fails when they are stale).

Every model of the primitive runs, both tiers (`MODELSYNC_TIER=nightly`),
and every one that fails is recorded, not only the first: the record is
the kill matrix that ci/kill_matrix.py turns into the tiers' rule. With
`--tier pr` only the main job's models run, one at a time, the ones the
kill matrix names as its killers first, stopping at the first that fails
(the question is whether the main job kills it, not which models do), each
at the main job's own setting (its declared bound, or none) unless
LOOM_MAX_PREEMPTIONS is set, and the results go to mutants/pr-tier.json
instead: the evidence that the main job alone still kills every bug that
some model kills.

Usage:
  ci/mutants.py list                 print every site and mutant
  ci/mutants.py run [--jobs N] [--budget SECS] [--only SUBSTR] [--tier pr]
                                     run mutants and seeded bugs, write
                                     mutants/results.json and mutants/REPORT.md
                                     (with --tier pr: mutants/pr-tier.json)
  ci/mutants.py report               rewrite mutants/REPORT.md and VERIFICATION.md's
                                     generated parts from results
  ci/mutants.py check                fail if a site in src/ has no result in
                                     mutants/results.json, a result names a
                                     site that no longer exists, a survivor
                                     is untriaged, a seeded patch no longer
                                     applies or lacks a header, or a
                                     generated part of VERIFICATION.md is
                                     stale (fast: run by .ci/run)

Triage of survivors lives in mutants/triage.json: {mutant id: {"class":
"a"|"b"|"c", "why": "..."}} (a: a model now kills it; b: the weaker
ordering was adopted; c: equivalent under loom's known limits, with why
the stronger ordering is still required).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree  # noqa: E402
from generated import splice  # noqa: E402
from primitives import primitive_of, primitives  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VERIFICATION = ROOT / "VERIFICATION.md"
MUTANTS = ROOT / "mutants"
RESULTS = MUTANTS / "results.json"
TRIAGE = MUTANTS / "triage.json"
REPORT = MUTANTS / "REPORT.md"
PR_TIER = MUTANTS / "pr-tier.json"
SEEDED = MUTANTS / "seeded"
BOUND = os.environ.get("LOOM_MAX_PREEMPTIONS", "2")


def bound_for(tier):
    """The loom bound a run uses: BOUND for the full run; for `--tier pr`
    the main job's own settings (each model's declared bound, or none)
    unless LOOM_MAX_PREEMPTIONS says otherwise."""
    if tier == "pr" and "LOOM_MAX_PREEMPTIONS" not in os.environ:
        return "as-declared"
    return BOUND

ORDERINGS = ("Relaxed", "Acquire", "Release", "AcqRel", "SeqCst")
RMW = {"swap", "compare_exchange", "compare_exchange_weak", "fetch_add", "fetch_sub",
       "fetch_and", "fetch_or", "fetch_xor", "fetch_nand", "fetch_max", "fetch_min"}
# One step weaker, per kind of access.
WEAKER = {
    "load": {"SeqCst": ["Acquire"], "Acquire": ["Relaxed"]},
    "store": {"SeqCst": ["Release"], "Release": ["Relaxed"]},
    "rmw": {"SeqCst": ["AcqRel"], "AcqRel": ["Acquire", "Release"],
            "Acquire": ["Relaxed"], "Release": ["Relaxed"]},
    "fence": {"SeqCst": ["AcqRel"], "AcqRel": ["Acquire", "Release"],
              "Acquire": ["removed"], "Release": ["removed"]},
}


def strip_comments(text):
    """Blanks out // comments (keeping offsets), leaving string literals."""
    out = []
    for line in text.split("\n"):
        in_str = False
        cut = len(line)
        i = 0
        while i < len(line):
            c = line[i]
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                in_str = not in_str
            elif not in_str and line.startswith("//", i):
                cut = i
                break
            i += 1
        out.append(line[:cut] + " " * (len(line) - cut))
    return "\n".join(out)


def find_sites():
    """Every ordering argument in src/ outside the shim, with a stable id."""
    sites = []
    for rel, text in tree.library_sources():
        code = strip_comments(text)
        counters = {}
        for m in re.finditer(r"\b(" + "|".join(ORDERINGS) + r")\b", code):
            pos = m.start()
            line_start = code.rfind("\n", 0, pos) + 1
            if code[line_start:pos].lstrip().startswith("use "):
                continue
            # The innermost unclosed '(' before the token, and the argument index.
            depth, i, arg = 0, pos - 1, 0
            while i >= 0:
                c = code[i]
                if c in ")]}":
                    depth += 1
                elif c in "([{":
                    if depth == 0:
                        break
                    depth -= 1
                elif c == "," and depth == 0:
                    arg += 1
                i -= 1
            if i < 0 or code[i] != "(":
                sys.exit(f"{rel}: ordering at offset {pos} is not a call argument")
            head = code[:i].rstrip()
            method = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", head).group(1)
            receiver_m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*" + method + r"$", head)
            receiver = receiver_m.group(1) if receiver_m else ""
            if method in ("fence", "compiler_fence"):
                kind = "fence"
            elif method == "load":
                kind = "load"
            elif method == "store":
                kind = "store"
            elif method in ("compare_exchange", "compare_exchange_weak"):
                kind = "rmw" if arg == 2 else "load"
            elif method == "fetch_update":
                kind = "rmw" if arg == 0 else "load"
            elif method in RMW:
                kind = "rmw"
            else:
                line = code.count("\n", 0, pos) + 1
                sys.exit(f"{rel}:{line}: `{m.group(1)}` passed to `{method}`, which this tool "
                         "does not know; teach ci/mutants.py the operation")
            fns = list(re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", code[:pos]))
            func = fns[-1].group(1) if fns else "<top>"
            role = {"compare_exchange": ["", "", "success", "failure"],
                    "compare_exchange_weak": ["", "", "success", "failure"],
                    "fetch_update": ["set", "fetch"]}.get(method)
            call = f"{receiver}.{method}" if receiver else method
            key = (rel, func, call, arg)
            counters[key] = counters.get(key, 0) + 1
            suffix = f"[{role[arg]}]" if role and role[arg] else ""
            site_id = f"{rel}:{func}:{call}{suffix}#{counters[key]}"
            sites.append({
                "id": site_id, "file": rel, "line": code.count("\n", 0, pos) + 1,
                "offset": pos, "ordering": m.group(1), "kind": kind, "method": method,
                "call_start": i - len(method), "call_open": i, "primitive": primitive_of(rel),
            })
    return sites


def mutants_of(sites):
    out = []
    for s in sites:
        for to in WEAKER[s["kind"]].get(s["ordering"], []):
            out.append({"id": f"{s['id']}:{s['ordering']}->{to}", "site": s["id"],
                        "file": s["file"], "line": s["line"], "from": s["ordering"], "to": to,
                        "primitive": s["primitive"], "seeded": False, "_site": s})
        if s["kind"] == "fence" and s["ordering"] in ("SeqCst", "AcqRel"):
            out.append({"id": f"{s['id']}:removed", "site": s["id"], "file": s["file"],
                        "line": s["line"], "from": s["ordering"], "to": "removed",
                        "primitive": s["primitive"], "seeded": False, "_site": s})
    return out


SEEDED_HEADERS = ("Subject", "Primitive", "Upstream")


def seeded_bugs():
    """Every seeded patch, with its headers; a missing header is None (and
    a problem that `check` reports: nothing defaults silently)."""
    out = []
    for patch in sorted(SEEDED.glob("*.patch")):
        text = patch.read_text()
        headers = {}
        for h in SEEDED_HEADERS:
            m = re.search(rf"^{h}:\s*(.+?)\s*$", text, re.M)
            headers[h] = m.group(1) if m else None
        out.append({"id": f"seeded:{patch.stem}", "patch": patch.relative_to(ROOT).as_posix(),
                    "primitive": headers["Primitive"], "seeded": True,
                    "title": headers["Subject"] or patch.stem, "upstream": headers["Upstream"],
                    "headers": headers, "file": "", "line": "", "from": "", "to": ""})
    return out


def header_problems():
    problems = []
    known = primitives()
    for b in seeded_bugs():
        for h, v in b["headers"].items():
            if v is None:
                problems.append(f"seeded bug {b['patch']} has no `{h}:` header")
        if b["primitive"] is not None and b["primitive"] not in known:
            problems.append(f"seeded bug {b['patch']}: `Primitive: {b['primitive']}` is not one "
                            f"of {known}")
    return problems


def apply_mutant(workdir, mutant):
    if mutant["seeded"]:
        subprocess.run(["git", "apply", "--whitespace=nowarn", str(ROOT / mutant["patch"])],
                       cwd=workdir, check=True)
        return
    s = mutant["_site"]
    path = workdir / s["file"]
    text = path.read_text()
    if mutant["to"] == "removed":
        # Replace the whole fence call with `()`.
        depth, j = 0, s["call_open"]
        while True:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        text = text[:s["call_start"]] + "()" + text[j + 1:]
    else:
        assert text[s["offset"]:s["offset"] + len(s["ordering"])] == s["ordering"]
        text = text[:s["offset"]] + mutant["to"] + text[s["offset"] + len(s["ordering"]):]
    path.write_text(text)


def copy_tree(dst):
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns("target", ".git", "mutants"))
    shutil.copytree(MUTANTS, dst / "mutants", dirs_exist_ok=True)


def pr_tier_order(primitive, mutant_id):
    """The main job's models of `primitive`, the kill matrix's killers of
    `mutant_id` first (cheapest first), then the rest, cheapest first."""
    import kill_matrix
    tiers = kill_matrix.model_tiers()
    matrix = load_json(kill_matrix.MATRIX, {"models": {}, "bugs": {}})
    cost = {m: e.get("main_job_secs") or 0.0 for m, e in matrix["models"].items()}
    killers = set(matrix["bugs"].get(mutant_id, {}).get("killed_by", []))
    ours = [m for m, t in tiers.items() if t == "pr" and m.startswith(primitive + "::")]
    return sorted(ours, key=lambda m: (m not in killers, cost.get(m, 0.0), m))


def run_pr_tier(mutant, workdir, env, budget, start):
    """The main job's models one at a time until one fails (`--tier pr`)."""
    for model in pr_tier_order(mutant["primitive"], mutant["id"]):
        left = budget - (time.time() - start)
        if left <= 0:
            return {"result": "timeout", "by": [], "secs": budget}
        try:
            run = subprocess.run(["cargo", "test", "--release", "--test", "models", "--",
                                  "--exact", model], cwd=workdir, env=env,
                                 capture_output=True, text=True, timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            return {"result": "timeout", "by": [], "secs": budget}
        out = run.stdout + run.stderr
        if run.returncode != 0:
            why = re.findall(r"panicked at [^\n]*\n([^\n]+)", out)
            return {"result": "killed", "by": [model], "secs": round(time.time() - start, 1),
                    "why": why[0][:200] if why else ""}
    return {"result": "survived", "by": [], "secs": round(time.time() - start, 1)}


def not_yet_run(primitive):
    """The primitive's models with no recorded run (ci/model_table.py not-run)."""
    runs = load_json(ROOT / "verification" / "runs.json", {"models": {}})["models"]
    return sorted(m for m, e in runs.items()
                  if m.startswith(primitive + "::") and "not_run" in e)


def run_one(mutant, slot, budget, scratch, tier):
    workdir = scratch / f"work{slot}"
    copy_tree(workdir)
    # MODELSYNC_MUTANTS_RUSTFLAGS: another loom build. (The audit run is
    # MODELSYNC_EVERY_ACCESS_RMW=1 in the environment, ci/loom-audit.)
    rustflags = os.environ.get("MODELSYNC_MUTANTS_RUSTFLAGS", "--cfg loom")
    env = dict(os.environ, RUSTFLAGS=rustflags, LOOM_MAX_PREEMPTIONS=BOUND,
               MODELSYNC_TIER=tier, CARGO_TARGET_DIR=str(scratch / f"target{slot}"))
    if bound_for(tier) == "as-declared":
        del env["LOOM_MAX_PREEMPTIONS"]
    # Incremental: a mutant changes one function, and a slot's target dir
    # keeps the last mutant's build, so rustc redoes only what changed: a
    # fraction of a clean build (HISTORY.md). Same program, so the same
    # executions.
    env["CARGO_INCREMENTAL"] = "1"
    start = time.time()
    try:
        apply_mutant(workdir, mutant)
    except subprocess.CalledProcessError:
        return {"result": "patch-does-not-apply", "by": [], "secs": 0}
    def build():
        return subprocess.run(["cargo", "test", "--release", "--no-run", "--quiet",
                               "--test", "models"],
                              cwd=workdir, env=env, capture_output=True, text=True)
    built = build()
    if built.returncode != 0:
        # rustc's incremental cache can go stale across mutants (seen: the
        # linker's "undefined hidden symbol"); a build that fails is tried
        # once more from a clean cache before it counts as the mutant's.
        shutil.rmtree(scratch / f"target{slot}" / "release" / "incremental", ignore_errors=True)
        built = build()
    build = built
    if build.returncode != 0:
        return {"result": "build-error", "by": [], "secs": round(time.time() - start, 1),
                "detail": build.stderr[-2000:]}
    if tier == "pr":
        return run_pr_tier(mutant, workdir, env, budget, start)
    # A nightly model recorded as not yet run (verification/runs.json
    # `not_run`) has no run that fits a mutant's budget: skipped, and
    # named in the record's `skipped`.
    unrun = not_yet_run(mutant["primitive"])
    failed, whys, skip = [], [], list(unrun)
    # A mutant that aborts the test process (a double free, loom's own
    # abort) ends the run at that model; run the rest again without it, so
    # that every model that kills the mutant is named, not just the first.
    while True:
        left = budget - (time.time() - start)
        skips = [arg for name in skip for arg in ("--skip", name)]
        try:
            run = subprocess.run(["cargo", "test", "--release", "--test", "models", "--",
                                  "--test-threads=1",
                                  f"{mutant['primitive']}::"] + skips,
                                 cwd=workdir, env=env, capture_output=True, text=True,
                                 timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            if failed:
                break
            return {"result": "timeout", "by": [], "secs": budget}
        out = run.stdout + run.stderr
        newly = sorted(set(re.findall(r"^test (\S+) \.\.\. FAILED", out, re.M)) |
                       set(re.findall(r"^---- (\S+) stdout ----", out, re.M)))
        failed += newly
        # A model that failed is named once: the next run skips it too.
        skip += newly
        whys += re.findall(r"panicked at [^\n]*\n([^\n]+)", out)
        if run.returncode == 0 or "test result:" in out:
            break
        # The process died before libtest reported: the model it was in.
        started = re.findall(r"^test (\S+) \.\.\. ", out, re.M)
        if not started or started[-1] in skip:
            failed.append("(process died)")
            break
        failed.append(f"{started[-1]} (process died)")
        skip.append(started[-1])
    secs = round(time.time() - start, 1)
    extra = {"skipped": unrun} if unrun else {}
    if not failed:
        return {"result": "survived", "by": [], "secs": secs, **extra}
    return {"result": "killed", "by": failed, "secs": secs, "why": whys[0][:200] if whys else "",
            **extra}


def load_json(path, default):
    return json.loads(path.read_text()) if path.exists() else default


def cmd_list(_args):
    sites = find_sites()
    for m in mutants_of(sites):
        print(f"{m['id']}  ({m['file']}:{m['line']})")
    for b in seeded_bugs():
        print(f"{b['id']}  ({b['patch']})")
    print(f"{len(sites)} sites, {len(mutants_of(sites))} ordering mutants, "
          f"{len(seeded_bugs())} seeded bugs", file=sys.stderr)


def cmd_run(args):
    problems = header_problems()
    if problems:
        sys.exit("\n".join(problems))
    sites = find_sites()
    todo = mutants_of(sites) + seeded_bugs()
    if args.only:
        todo = [m for m in todo if args.only in m["id"]]
    tier = args.tier
    if tier == "pr":
        # The question is only for bugs some model kills: a survivor of the
        # full run survives the main job too (and a bug with no full result
        # yet runs).
        full = load_json(RESULTS, {"mutants": {}})["mutants"]
        todo = [m for m in todo if full.get(m["id"], {}).get("result", "killed") == "killed"]
    out_path = RESULTS if tier == "nightly" else PR_TIER
    results = load_json(out_path, {"mutants": {}})
    # One scratch folder per checkout: two runs from different checkouts
    # (a worktree's and main's) must not copy over each other's slots.
    tag = hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]
    scratch = Path(tempfile.gettempdir()) / f"modelsync-mutants-{tag}"
    scratch.mkdir(exist_ok=True)
    print(f"running {len(todo)} mutants, {args.jobs} at a time, budget {args.budget}s each, "
          f"loom bound {bound_for(tier)}, models of tier {'both' if tier == 'nightly' else 'pr'}", flush=True)
    slots = list(range(args.jobs))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {}
        queue = list(todo)
        while queue or futures:
            while queue and slots:
                m, slot = queue.pop(0), slots.pop(0)
                futures[pool.submit(run_one, m, slot, args.budget, scratch, tier)] = (m, slot)
            done, _ = concurrent.futures.wait(futures, return_when="FIRST_COMPLETED")
            for f in done:
                m, slot = futures.pop(f)
                slots.append(slot)
                r = f.result()
                r.update({k: m[k] for k in ("file", "line", "from", "to", "primitive", "seeded")})
                if m["seeded"]:
                    r["title"], r["patch"] = m["title"], m["patch"]
                else:
                    r["site"] = m["site"]
                r["bound"] = bound_for(tier)
                r["budget"] = args.budget
                results["mutants"][m["id"]] = r
                print(f"{r['result']:>9} {r['secs']:>6}s  {m['id']}  {' '.join(r['by'])}", flush=True)
    # What a run was (its bound, its budget, its time) is recorded per bug,
    # so that a partial run (--only) leaves a record whose sums still hold.
    results.pop("last_run", None)
    # Forget mutants whose sites no longer exist.
    live = {m["id"] for m in mutants_of(sites) + seeded_bugs()}
    results["mutants"] = {k: v for k, v in sorted(results["mutants"].items()) if k in live}
    out_path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    # Every record a run feeds is rewritten with it: the report, the
    # generated parts of VERIFICATION.md and, from a full run, the kill
    # matrix.
    all_results = load_json(RESULTS, {"mutants": {}})
    write_report(all_results)
    write_verification(all_results)
    if tier == "pr":
        problems = pr_tier_problems(results)
        print("\n".join(problems) if problems else
              f"the main job alone kills every bug some model kills ({len(results['mutants'])} run)")
        sys.exit(1 if problems else 0)
    import kill_matrix
    kill_matrix.cmd_write([])
    problems = check(verbose=False)
    if problems:
        print("\n".join(problems))
        sys.exit(1)


def pr_tier_problems(pr):
    """Bugs that some model kills (mutants/results.json, both tiers) and the
    main job's models alone (`pr`, a `--tier pr` run) do not."""
    full = load_json(RESULTS, {"mutants": {}})["mutants"]
    return [f"{mid}: killed by {', '.join(full[mid]['by'])}, but not by the main job "
            f"({r['result']})"
            for mid, r in sorted(pr["mutants"].items())
            if r["result"] != "killed" and full.get(mid, {}).get("result") == "killed"]


def runs_line(mutants, what):
    """What the runs recorded in `mutants` ({id: result}) were, from the
    records themselves: how many bugs of each kind, at which settings,
    killed, and their seconds summed (each bug's build and model runs)."""
    runs = list(mutants.values())
    if not runs:
        return f"{what}: none recorded."
    seeded = sum(1 for r in runs if r["seeded"])
    killed = sum(1 for r in runs if r["result"] == "killed")
    bounds = sorted({str(r.get("bound")) for r in runs})
    budgets = sorted({r["budget"] for r in runs if "budget" in r})
    secs = sorted(r["secs"] for r in runs)
    setting = f"preemption bound `{bounds[0]}`" if len(bounds) == 1 else \
        "preemption bounds " + ", ".join(f"`{b}`" for b in bounds)
    if budgets:
        setting += f", a budget of {' or '.join(str(b) for b in budgets)} s a bug"
    return (f"{what}: {len(runs)} bugs ({len(runs) - seeded} ordering mutants, {seeded} seeded "
            f"bugs), at {setting}; {killed} killed. Their runs took {sum(secs):,.0f} s summed, "
            f"{secs[len(secs) // 2]:.0f} s the median bug.")


def pr_tier_line(pr):
    """VERIFICATION.md's line on the main job's mutation run."""
    return runs_line(pr["mutants"], "The main job's models alone, each at its own setting, "
                                    "to the first that fails")


def wrapped(text, indent=""):
    """A paragraph of generated Markdown, wrapped so that no line is long."""
    return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def killer_name(by):
    """A `by` entry as a reader reads it: the model, and whether the mutant
    took its process down."""
    name = by.replace(" (process died)", "")
    return f"`{name}`" + (" (the process died)" if "process died" in by else "")


def report_text(results, pr_tier):
    triage = load_json(TRIAGE, {})
    stats = per_primitive(results)
    lines = [
        "# Mutation report",
        "",
        wrapped("Generated by `ci/mutants.py` from `mutants/results.json` and "
                "`mutants/pr-tier.json` (do not edit by hand; triage goes in "
                "`mutants/triage.json`, and `ci/mutants.py check` fails when this file is not "
                "what the records give). Each ordering mutant weakens one atomic ordering in "
                "`src/` by one step; each seeded bug (`mutants/seeded/*.patch`) re-creates a real "
                "bug, its source in the patch's `Upstream:` header. Each is built under "
                "`--cfg loom` (release, with overflow checks and debug assertions) and run against "
                "every model of its primitive, both tiers (`MODELSYNC_TIER=nightly cargo test "
                "--test models -- <primitive>::`); then every bug some model kills against the "
                "main job's models alone (`ci/mutants.py run --tier pr`)."),
        "",
        runs_line(results["mutants"], "Every model of both tiers"),
        "",
        pr_tier_line(pr_tier),
        "",
        "## Kill rate",
        "",
        "| primitive | ordering mutants | killed | equivalent (c) | kill rate excluding (c) "
        "| seeded bugs killed |",
        "|---|---|---|---|---|---|",
    ]
    for prim, st in sorted(stats.items()):
        denom = st["total"] - st["c"]
        rate = f"{100 * st['killed'] / denom:.0f}%" if denom else "n/a"
        lines.append(f"| {prim} | {st['total']} | {st['killed']} | {st['c']} | {rate} | "
                     f"{st['seeded_killed']} / {st['seeded']} |")
    lines += ["", "Logic mutants (cargo-mutants, not orderings) are reported in "
                  "[`LOGIC.md`](LOGIC.md).",
              "", "## Mutants", "",
              "Every model that kills each bug is listed below the table.", "",
              "| mutant | where | change | result | models that kill it | first killer of the "
              "main job |",
              "|---|---|---|---|---|---|"]
    ordered = sorted(results["mutants"].items(), key=lambda kv: (kv[1]["seeded"], kv[0]))
    for mid, r in ordered:
        if r["seeded"]:
            where, what = "-", f"[patch]({Path(r['patch']).relative_to('mutants').as_posix()})"
        else:
            where, what = f"{r['file']}:{r['line']}", f"`{r['from']}` -> `{r['to']}`"
        pr = pr_tier["mutants"].get(mid, {})
        first = killer_name(pr["by"][0]) if pr.get("by") else "-"
        lines.append(f"| `{mid}` | {where} | {what} | **{r['result']}** | {len(r['by'])} | "
                     f"{first} |")
    lines += ["", "## The models that kill each bug", ""]
    for mid, r in ordered:
        if r["by"]:
            lines.append(f"- `{mid}`:")
            lines += [f"  - {killer_name(b)}" for b in r["by"]]
    lines += ["", "## Triage of survivors", ""]
    for mid, r in ordered:
        t = triage.get(mid)
        if t:
            lines += [f"- `{mid}` ({r['result']}), class ({t['class']}):", "",
                      wrapped(t["why"], "  "), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def refresh_from_patches():
    """Copies each seeded bug's title, patch and primitive from its patch's
    header into the records (they are the tree's, not a run's)."""
    patches = {b["id"]: b for b in seeded_bugs()}
    for path in (RESULTS, PR_TIER):
        data = load_json(path, {"mutants": {}})
        for mid, r in data["mutants"].items():
            if mid in patches:
                b = patches[mid]
                r["title"], r["patch"], r["primitive"] = b["title"], b["patch"], b["primitive"]
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def write_report(results):
    REPORT.write_text(report_text(results, load_json(PR_TIER, {"mutants": {}})))


def per_primitive(results):
    triage = load_json(TRIAGE, {})
    stats = {}
    for mid, r in results["mutants"].items():
        st = stats.setdefault(r["primitive"], {"total": 0, "killed": 0, "c": 0, "seeded": 0,
                                               "seeded_killed": 0})
        if r["seeded"]:
            st["seeded"] += 1
            st["seeded_killed"] += r["result"] == "killed"
        else:
            t = triage.get(mid)
            st["total"] += 1
            st["killed"] += r["result"] == "killed"
            st["c"] += r["result"] != "killed" and t is not None and t["class"] == "c"
    return stats


def mutation_summary(results):
    lines = [runs_line(results["mutants"], "Recorded runs, every model of both tiers"), "",
             "| primitive | ordering mutants | killed | equivalent under loom's limits (c) "
             "| seeded bugs killed |",
             "|---|---|---|---|---|"]
    stats = per_primitive(results)
    for prim in primitives():
        st = stats.get(prim) or {"total": 0, "seeded": 0, "seeded_killed": 0}
        seeded = f"{st['seeded_killed']} / {st['seeded']}"
        if st["total"] == 0:
            lines.append(f"| {prim} | 0 (no ordering site) | - | - | {seeded} |")
            continue
        lines.append(f"| {prim} | {st['total']} | **{st['killed']}** | {st['c']} | {seeded} |")
    return "\n".join(lines)


def upstream_short(upstream):
    """The upstream source's first clause, for a table cell: the patch's
    header, which the table links, has the rest."""
    first = re.split(r" \(|; |: |, ", upstream, maxsplit=1)[0]
    return first if len(first) <= 60 else "see the patch"


def historical_bugs(results):
    pr_tier = load_json(PR_TIER, {"mutants": {}})["mutants"]
    lines = ["| seeded bug | primitive | upstream | first killer of the main job "
             "| models that kill it |",
             "|---|---|---|---|---|"]
    links = []
    for b in seeded_bugs():
        name = Path(b["patch"]).stem
        r = results["mutants"].get(b["id"], {})
        killers = f"{len(r['by'])}" if r.get("result") == "killed" else \
            f"**{r.get('result', 'not run')}**"
        pr = pr_tier.get(b["id"], {})
        first = killer_name(pr["by"][0]) if pr.get("by") else "**none**"
        lines.append(f"| [{name}] | {b['primitive']} | {upstream_short(b['upstream'])} | "
                     f"{first} | {killers} |")
        links.append(f"[{name}]: {b['patch']}")
    return "\n".join(lines + [""] + links)


GENERATED = {
    "mutation-summary": mutation_summary,
    "historical-bugs": historical_bugs,
}


def verification_with_generated_parts(results, text):
    for name, make in GENERATED.items():
        text = splice(text, f"<!-- {name}: generated by ci/mutants.py -->",
                      f"<!-- end of {name} -->", make(results), "VERIFICATION.md")
    return text


def write_verification(results):
    VERIFICATION.write_text(verification_with_generated_parts(results, VERIFICATION.read_text()))
    # The summary at the top counts these results.
    subprocess.run([sys.executable, str(ROOT / "ci" / "summary.py")], check=True)


def record_problems(results, pr_tier):
    """Where the mutation records disagree with each other or with the
    tree: results.json (every model, both tiers), pr-tier.json (the main
    job alone) and the seeded patches. The kill matrix is
    ci/kill_matrix.py's to check against results.json."""
    import kill_matrix
    problems = []
    tiers = kill_matrix.model_tiers()
    patches = {b["id"]: b for b in seeded_bugs()}
    # One run's setting: a partial run at another bound leaves a record
    # whose kills were not all judged the same way.
    bounds = {str(r.get("bound")) for r in results.values()}
    if len(bounds) > 1:
        problems.append(f"{RESULTS.name} mixes preemption bounds {sorted(bounds)}: rerun the "
                        "odd ones at the others' bound")
    for mid, r in sorted(results.items()):
        if r["seeded"] and mid in patches:
            b = patches[mid]
            if (r.get("title"), r.get("patch"), r["primitive"]) != \
                    (b["title"], b["patch"], b["primitive"]):
                problems.append(f"{RESULTS.name}: {mid}'s title, patch or primitive is not its "
                                f"patch's header: run `python3 ci/mutants.py report`")
    killed = {mid for mid, r in results.items() if r["result"] == "killed"}
    for mid in sorted(killed - set(pr_tier)):
        problems.append(f"{PR_TIER.name} has no run of {mid}, which some model kills: run "
                        f"`python3 ci/mutants.py run --tier pr --only '{mid}'`")
    for mid, r in sorted(pr_tier.items()):
        if mid not in killed:
            problems.append(f"{PR_TIER.name} lists {mid}, which {RESULTS.name} does not record "
                            "as killed by some model")
        elif r["result"] != "killed":
            problems.append(f"{mid}: killed by {', '.join(results[mid]['by'])}, but not by the "
                            f"main job ({r['result']})")
        else:
            for model in r["by"]:
                name = model.replace(" (process died)", "")
                if tiers.get(name) != "pr":
                    problems.append(f"{PR_TIER.name}: {mid} is recorded as killed by {name}, "
                                    "which is not a main-job model")
        if mid in results and (r["primitive"], r["seeded"]) != \
                (results[mid]["primitive"], results[mid]["seeded"]):
            problems.append(f"{PR_TIER.name} and {RESULTS.name} disagree on {mid}'s primitive")
    pr_bounds = {str(r.get("bound")) for r in pr_tier.values()}
    if len(pr_bounds) > 1:
        problems.append(f"{PR_TIER.name} mixes settings {sorted(pr_bounds)}")
    return problems


def check(verbose=True):
    problems = []
    results = load_json(RESULTS, {"mutants": {}})["mutants"]
    triage = load_json(TRIAGE, {})
    expected = mutants_of(find_sites()) + seeded_bugs()
    ids = {m["id"] for m in expected}
    for m in expected:
        r = results.get(m["id"])
        if r is None:
            problems.append(f"no result for {m['id']}: run `ci/mutants.py run --only '{m['id']}'`")
        elif r["result"] != "killed":
            if m["seeded"]:
                problems.append(f"seeded bug {m['id']} is not killed ({r['result']})")
            elif m["id"] not in triage:
                problems.append(f"survivor {m['id']} ({r['result']}) is not triaged in {TRIAGE.name}")
    for mid in results:
        if mid not in ids:
            problems.append(f"{RESULTS.name} lists {mid}, which no longer exists in src/")
    for mid in triage:
        if mid not in ids:
            problems.append(f"{TRIAGE.name} triages {mid}, which no longer exists in src/")
    problems += header_problems()
    for b in seeded_bugs():
        ok = subprocess.run(["git", "apply", "--check", str(ROOT / b["patch"])], cwd=ROOT,
                            capture_output=True, text=True)
        if ok.returncode != 0:
            problems.append(f"seeded bug {b['patch']} no longer applies: {ok.stderr.strip()}")
    problems += record_problems(results, load_json(PR_TIER, {"mutants": {}})["mutants"])
    all_results = load_json(RESULTS, {"mutants": {}})
    text = VERIFICATION.read_text()
    if verification_with_generated_parts(all_results, text) != text:
        problems.append("VERIFICATION.md's mutation summary or historical bugs table is stale: "
                        "run `python3 ci/mutants.py report`")
    if not REPORT.exists() or REPORT.read_text() != report_text(all_results,
                                                                load_json(PR_TIER, {"mutants": {}})):
        problems.append(f"{REPORT.relative_to(ROOT)} is not what the records give: run "
                        "`python3 ci/mutants.py report`")
    if verbose:
        print(f"{len(expected)} mutants ({len(seeded_bugs())} seeded), "
              f"{len(problems)} problems")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    r = sub.add_parser("run")
    r.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    r.add_argument("--budget", type=int, default=600, help="seconds per mutant's model run")
    r.add_argument("--only", help="run only mutants whose id contains this")
    r.add_argument("--tier", choices=("nightly", "pr"), default="nightly",
                   help="nightly: every model (the kill matrix); pr: the main job's alone")
    sub.add_parser("report")
    sub.add_parser("check")
    args = p.parse_args()
    if args.cmd == "list":
        cmd_list(args)
    elif args.cmd == "run":
        cmd_run(args)
    elif args.cmd == "report":
        refresh_from_patches()
        results = load_json(RESULTS, {"mutants": {}})
        write_report(results)
        write_verification(results)
    else:
        problems = check()
        if problems:
            print("\n".join(problems))
            sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Which tests Miri runs on a pull request: the cheapest set that still
executes every path through every `unsafe` block, the rest nightly.

Miri is there for undefined behaviour, and undefined behaviour lives in
`unsafe` code: safe code that misuses nothing cannot cause it, and a Miri
run of a test that never enters an `unsafe` block checks nothing the
compiler has not. So a pull request needs, for each `unsafe` block in
src/, every part of it that the whole suite executes to be executed
again, once, by some test; it does not need the whole suite, which takes
Miri most of a quarter of an hour on 2 cores. The nightly soak runs the
whole suite (`MODELSYNC_MIRI=all ci/miri`), so a path only the rest
reaches is still checked every day.

`measure` finds that set. It builds the library's unit tests and the
models and proptests targets natively with coverage instrumentation and
`--cfg miri` on this crate's own code only (so every size the tests
reduce under Miri is reduced here too: proptest cases, operation counts,
stress iterations, scenario counts; and the tests Miri ignores are
ignored), runs every test alone with its own profile, and reads from each
which coverage regions of src/ it executed. A block is cut at every region
boundary any test's coverage has; a piece counts as a path if some test
executes it. Then it runs the whole suite under Miri as ci/miri does, timing
each test from its libtest lines as they arrive (Miri's own clock is virtual
under isolation, so `--report-time` would give instructions, not seconds),
and picks the pull-request set by greedy weighted set cover on those
seconds, with one more thing to cover per (primitive, target) so that
`ci/primitives.py ran miri` still sees every primitive in models and
proptests. Natively the threads interleave differently from Miri's one-core
scheduler, so a contended path a test reaches here may be rarer there;
the nightly full run is the backstop for that too.

An `unsafe` block's id survives line moves: `file:function:ordinal`, the
function qualified by its impl's type (`src/notify.rs:WaitList::pop:1`),
the ordinal counting `unsafe {` in that function from 1.

Usage:
  ci/miri_tests.py measure [--reuse-times] [--reuse-coverage] [--jobs N]
                         redo the coverage and the Miri timing, rewrite
                         ci/miri-coverage.json (--reuse-times: take the
                         Miri seconds from the last `MODELSYNC_MIRI=all
                         ci/miri` run's logs instead of running it;
                         --reuse-coverage: the last measure's coverage,
                         kept in target/miri-coverage/coverage.json)
  ci/miri_tests.py list [--jobs N]
                         the pull-request set as `ci/miri` runs it: one line
                         per cargo invocation, `PART CARGO-TEST-ARGS...`,
                         spread over N processes (default: the CPUs) by
                         their Miri seconds
  ci/miri_tests.py check fail if an unsafe block in src/ has no entry in the
                         data file, or an entry names a block or test that no
                         longer exists (fast, no build: run by .ci/run)
  ci/miri_tests.py ran LOG
                         fail unless LOG shows every test of the
                         pull-request set passing
  ci/miri_tests.py stamp TIMES
                         copy stdin to stdout, writing each test's seconds
                         (from its libtest lines) to TIMES as JSON
"""

import argparse
import bisect
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from primitives import passing_tests, primitives  # noqa: E402
import tree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "ci" / "miri-coverage.json"
COVERAGE_TARGET = ROOT / "target" / "miri-coverage"
LOGS = ROOT / "target" / "logs"
# The processes of ci/miri's full run (MODELSYNC_MIRI=all), whose times
# files `measure --reuse-times` reads.
FULL_PARTS = ["models", "proptests-keyed", "proptests-other"]
# The crates the coverage build instruments and compiles with --cfg miri:
# the library, its test targets and the model harness's crate (check/,
# whose cfg(miri) settings the models' runs follow), never a dependency
# from outside the repository (a dependency's cfg(miri) code may call into
# Miri itself).
OWN_CRATES = {"modelsync", "models", "proptests", "modelsync_check"}
WRAP_ENV = "MODELSYNC_MIRI_TESTS_RUSTC_WRAPPER"
# What ci/miri runs under Miri, by target: the library's unit tests and the
# two test targets (never the benches or doc tests).
TARGETS = ["lib", "models", "proptests"]
CARGO_TARGET_ARGS = {"lib": ["--lib"], "models": ["--test", "models"],
                     "proptests": ["--test", "proptests"]}


# --- The unsafe blocks of src/ ---------------------------------------------

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_string>b?r(?P<hashes>\#*)")
  | (?P<string>b?"(?:[^"\\]|\\.)*")
  | (?P<char>b?'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.))')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][0-9A-Za-z_.]*)
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)


def tokens(text):
    """(kind, text, offset) for Rust source, skipping whitespace and
    comments; strings and chars are one token, so a brace inside one does
    not count."""
    i, n = 0, len(text)
    while i < n:
        m = TOKEN.match(text, i)
        if m.group("block_comment"):
            depth, j = 1, i + 2
            while depth and j < n:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
            continue
        if m.group("raw_string"):
            close = '"' + m.group("hashes")
            j = text.index(close, m.end())
            yield "string", text[i:j + len(close)], i
            i = j + len(close)
            continue
        kind = m.lastgroup
        if kind not in ("ws", "comment"):
            yield kind, m.group(), i
        i = m.end()


def impl_type(header):
    """The type an `impl` header is for: `impl<T> Drop for Ring<T>` -> Ring."""
    words = [t for k, t, _ in header]
    # Skip the impl's own generics, then take the type after `for` if any.
    i, depth = 1, 0
    if i < len(words) and words[i] == "<":
        while i < len(words):
            depth += {"<": 1, ">": -1}.get(words[i], 0)
            i += 1
            if depth == 0:
                break
    rest = words[i:]
    if "where" in rest:
        rest = rest[:rest.index("where")]
    if "for" in rest:
        rest = rest[rest.index("for") + 1:]
    name, dollar = None, False
    for w in rest:
        if w == "<":
            break
        if re.match(r"[A-Za-z_]", w) and w not in ("dyn", "mut", "const"):
            # In a macro_rules! body the type may be a metavariable.
            name = f"${w}" if dollar else w
        dollar = w == "$"
    return name or "?"


def unsafe_blocks_in(rel, text):
    """Every `unsafe { ... }` block of one file: id, function, line range
    and the 1-based (line, column) of its first and one past its last
    character."""
    toks = list(tokens(text))
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(offset):
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    # The stack of open braces, each labelled with what it opened: an impl
    # (its type), a function (its name), an unsafe block, or nothing.
    stack, pending_fn, pending_impl, blocks, ordinals = [], None, None, [], {}
    for i, (kind, tok, off) in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else (None, None, None)
        if kind == "ident" and tok == "impl" and pending_fn is None:
            pending_impl = i
        elif kind == "ident" and tok == "fn" and nxt[0] == "ident":
            pending_fn = nxt[1]
        elif tok == ";" and kind == "punct":
            pending_fn = None if not stack or stack[-1][0] != "paren" else pending_fn
        elif tok in "([" and kind == "punct":
            stack.append(("paren", None, off))
        elif tok in ")]" and kind == "punct":
            stack.pop()
        elif tok == "{" and kind == "punct":
            prev = toks[i - 1] if i else (None, None, None)
            if prev[0] == "ident" and prev[1] == "unsafe":
                fns = [s[1] for s in stack if s[0] == "fn"]
                impls = [s[1] for s in stack if s[0] == "impl"]
                func = fns[-1] if fns else "<top>"
                if impls:
                    func = f"{impls[-1]}::{func}"
                ordinals[func] = ordinals.get(func, 0) + 1
                stack.append(("unsafe", (func, ordinals[func], i - 1), off))
            elif pending_fn is not None:
                stack.append(("fn", pending_fn, off))
                pending_fn = None
            elif pending_impl is not None:
                stack.append(("impl", impl_type(toks[pending_impl:i]), off))
                pending_impl = None
            else:
                stack.append(("brace", None, off))
        elif tok == "}" and kind == "punct":
            what, label, _ = stack.pop()
            if what == "unsafe":
                func, n, first = label
                (l0, c0), (l1, c1) = pos(toks[first][2]), pos(off)
                # The lines with code on them (not blank, not only a comment).
                code = set()
                for _, t, o in toks[first:i + 1]:
                    code |= set(range(pos(o)[0], pos(o + len(t) - 1)[0] + 1))
                blocks.append({"id": f"{rel}:{func}:{n}", "file": rel, "function": func,
                               "start": [l0, c0], "end": [l1, c1 + 1], "lines": [l0, l1],
                               "code_lines": sorted(code)})
    if stack:
        sys.exit(f"{rel}: unbalanced braces (this tool's lexer is confused)")
    return sorted(blocks, key=lambda b: b["start"])


def unsafe_blocks():
    """Every unsafe block of src/ (the shim too, should it ever have one)."""
    found = []
    for rel, text in tree.library_sources(shim=True):
        found += unsafe_blocks_in(rel, text)
    ids = [b["id"] for b in found]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit(f"unsafe block ids are not unique: {sorted(dup)}")
    return found


# --- Which tests exist, read from the source (for `check`) -----------------

def test_source(test):
    """The file a test id's test is in and its function's name, or None."""
    target, name = test.split("/", 1)
    parts = name.split("::")
    if target == "lib":
        mods = [p for p in parts[:-1] if p != "tests"]
        base = ROOT / "src" / Path(*mods)
        candidates = [base.with_suffix(".rs"), base / "mod.rs"]
        if "tests" in parts[:-1]:
            # `mod tests` may be its own file beside the module.
            candidates += [base / "tests.rs"]
    else:
        # The module's file and the files it includes (`models/<m>/*.rs`).
        candidates = [ROOT / target / f"{parts[0]}.rs"]
        candidates += sorted((ROOT / target / parts[0]).glob("*.rs"))
    for c in candidates:
        if c.is_file() and re.search(rf"\bfn\s+{re.escape(parts[-1])}\b", c.read_text()):
            return c, parts[-1]
    return None


def test_exists(test):
    return test_source(test) is not None


# --- Timing libtest's tests as their lines arrive ---------------------------

STARTED = re.compile(r"^test (\S+) \.\.\. ?")
RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
RESULT = re.compile(r"(^|\s)(ok|FAILED|ignored)(\s+<[0-9.]+s>)?$")


def target_of(running_path):
    """cargo's `Running models/main.rs` -> models; src/lib.rs -> lib."""
    p = Path(running_path)
    return "lib" if p.as_posix() == "src/lib.rs" else p.parent.name or p.stem


def cmd_stamp(args):
    """stdin to stdout unchanged; each test's seconds, from when libtest
    printed its `test NAME ... ` to its result, into args.times. libtest
    flushes both as it writes them, and Miri runs one test at a time."""
    times, target, pending, started, line = {}, None, None, 0.0, ""
    out = sys.stdout.buffer
    while True:
        chunk = os.read(0, 65536)
        now = time.monotonic()
        if not chunk:
            break
        out.write(chunk)
        out.flush()
        for piece in re.split(r"(\n)", chunk.decode(errors="replace")):
            if piece == "\n":
                running = RUNNING.match(line)
                if running:
                    target, pending = target_of(running.group(1)), None
                elif pending and RESULT.search(line.rstrip()):
                    if RESULT.search(line.rstrip()).group(2) != "ignored":
                        times[f"{target}/{pending}"] = round(now - started, 2)
                    pending = None
                line = ""
                continue
            line += piece
            m = STARTED.match(line)
            if m and target and pending != m.group(1):
                pending, started = m.group(1), now
    Path(args.times).write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")


# --- Coverage ---------------------------------------------------------------

def rustc_wrapper():
    """Run as cargo's RUSTC_WRAPPER by `measure`: this crate's own code gets
    coverage instrumentation and cfg(miri); everything else builds as is."""
    argv = sys.argv[1:]
    if "--crate-name" in argv and argv[argv.index("--crate-name") + 1] in OWN_CRATES:
        argv += ["-C", "instrument-coverage", "--cfg", "miri"]
    os.execvp(argv[0], argv)


def llvm_tool(name):
    sysroot = subprocess.run(["rustc", "+stable", "--print", "sysroot"], capture_output=True,
                             text=True, check=True).stdout.strip()
    host = re.search(r"host: (\S+)", subprocess.run(
        ["rustc", "+stable", "-vV"], capture_output=True, text=True, check=True).stdout).group(1)
    tool = Path(sysroot) / "lib" / "rustlib" / host / "bin" / name
    if not tool.exists():
        sys.exit(f"{tool} is missing: rustup component add llvm-tools --toolchain stable")
    return str(tool)


def build_coverage_tests():
    """{target: test binary} of the instrumented build."""
    env = dict(os.environ, RUSTC_WRAPPER=str(Path(__file__).resolve()), **{WRAP_ENV: "1"},
               CARGO_TARGET_DIR=str(COVERAGE_TARGET))
    env.pop("RUSTFLAGS", None)
    cmd = ["cargo", "+stable", "test", "--no-run", "--message-format=json"]
    for t in TARGETS:
        cmd += CARGO_TARGET_ARGS[t]
    out = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, check=True, text=True)
    binaries = {}
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                msg["profile"]["test"]:
            name, kinds = msg["target"]["name"], msg["target"]["kind"]
            binaries["lib" if "lib" in kinds else name] = msg["executable"]
    return binaries


def listed(binary, *extra):
    # Instrumented: its profile goes with the others, not into the tree.
    env = dict(os.environ, LLVM_PROFILE_FILE=str(COVERAGE_TARGET / "list-%p.profraw"))
    out = subprocess.run([binary, "--list", "--format", "terse", *extra], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout
    return [line[:-len(": test")] for line in out.splitlines() if line.endswith(": test")]


def test_env():
    """The environment Miri's run sees: ci/miri's stress iterations and no
    other knob of the tests (Miri's isolation hides the host's)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MODELSYNC_", "PROPTEST_", "LOOM_", "SHUTTLE_"))}
    env["MODELSYNC_STRESS_ITERS"] = "2"
    return env


def segments_in_blocks(export, blocks_by_file):
    """{block id: [(start, end, has_code, executed)]}: the coverage segments
    of one test's export, clipped to each unsafe block (positions are
    (line, column) pairs; a segment runs to the next one's start)."""
    pieces = {}
    for f in export["data"][0]["files"]:
        path = Path(f["filename"])
        rel = (path if path.is_absolute() else ROOT / path).resolve().relative_to(ROOT).as_posix()
        segs = f["segments"]
        starts = [(s[0], s[1]) for s in segs]
        for b in blocks_by_file.get(rel, []):
            lo, hi = tuple(b["start"]), tuple(b["end"])
            i = max(bisect.bisect_right(starts, lo) - 1, 0)
            out = []
            while i < len(segs) and starts[i] < hi:
                end = starts[i + 1] if i + 1 < len(segs) else hi
                s0, s1 = max(starts[i], lo), min(end, hi)
                if s0 < s1:
                    line, col, count, has_count, _entry, gap = segs[i]
                    code = bool(has_count) and not gap
                    out.append((s0, s1, code, code and count > 0))
                i += 1
            pieces[b["id"]] = out
    return pieces


def run_one(binary, target, name, index, blocks_by_file, profdir, sources):
    """One test alone under coverage; its clipped segments per block."""
    profraw = profdir / f"{index}-%p.profraw"
    env = dict(test_env(), LLVM_PROFILE_FILE=str(profraw))
    started = time.monotonic()
    run = subprocess.run([binary, "--exact", name, "--test-threads", "1"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    took = time.monotonic() - started
    raws = sorted(profdir.glob(f"{index}-*.profraw"))
    profdata = profdir / f"{index}.profdata"
    subprocess.run([llvm_tool("llvm-profdata"), "merge", "-sparse", *map(str, raws), "-o",
                    str(profdata)], check=True)
    export = subprocess.run([llvm_tool("llvm-cov"), "export", "-format=text", "-skip-functions",
                             f"-instr-profile={profdata}", binary, *sources],
                            capture_output=True, text=True, check=True).stdout
    for r in raws:
        r.unlink()
    profdata.unlink()
    return {"test": f"{target}/{name}", "ok": run.returncode == 0, "native_seconds": round(took, 2),
            "pieces": segments_in_blocks(json.loads(export), blocks_by_file)}


def coverage(blocks, jobs):
    """Every test's executed pieces of every unsafe block, run one by one."""
    binaries = build_coverage_tests()
    blocks_by_file = {}
    for b in blocks:
        blocks_by_file.setdefault(b["file"], []).append(b)
    sources = [str(ROOT / f) for f in blocks_by_file]
    profdir = COVERAGE_TARGET / "profiles"
    shutil.rmtree(profdir, ignore_errors=True)
    profdir.mkdir(parents=True)
    work = []
    for target in TARGETS:
        ignored = set(listed(binaries[target], "--ignored"))
        work += [(binaries[target], target, n) for n in listed(binaries[target]) if n not in ignored]
    print(f"coverage: {len(work)} tests, {jobs} at a time", flush=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(run_one, b, t, n, i, blocks_by_file, profdir, sources)
                   for i, (b, t, n) in enumerate(work)]
        for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            r = fut.result()
            results.append(r)
            if not r["ok"]:
                print(f"coverage: {r['test']} FAILED natively (its coverage still counts)")
            if done % 25 == 0:
                print(f"coverage: {done}/{len(work)}", flush=True)
    return sorted(results, key=lambda r: r["test"])


def paths(blocks, results):
    """Cut each block at every boundary any test's coverage has; a piece
    with code is a path. {block id: [{"at", "lines", "tests"}]} with
    neighbouring pieces of one block that the same tests reach merged, and
    those no test reaches (tests empty) kept, to be reported."""
    out = {}
    for b in blocks:
        bid = b["id"]
        cuts = {tuple(b["start"]), tuple(b["end"])}
        for r in results:
            for s0, s1, _, _ in r["pieces"].get(bid, []):
                cuts |= {s0, s1}
        cuts = sorted(cuts)
        atoms = []
        for a0, a1 in zip(cuts, cuts[1:]):
            code, tests = False, set()
            for r in results:
                for s0, s1, has_code, executed in r["pieces"].get(bid, []):
                    if s0 <= a0 and a1 <= s1:
                        code |= has_code
                        if executed:
                            tests.add(r["test"])
            if code:
                atoms.append([a0, a1, tests])
        merged = []
        for a0, a1, tests in atoms:
            if merged and merged[-1][2] == tests and merged[-1][1] == a0:
                merged[-1][1] = a1
            else:
                merged.append([a0, a1, tests])
        code = set(b["code_lines"])
        out[bid] = [{"at": f"{a0[0]}:{a0[1]}-{a1[0]}:{a1[1]}",
                     "lines": sorted(code & set(range(a0[0], a1[0] + (a1[1] > 1)))),
                     "tests": sorted(tests)} for a0, a1, tests in merged]
    return out


# --- Choosing the pull-request set -----------------------------------------

def primitive_group(test):
    """(target, primitive) a test counts for in `ci/primitives.py ran miri`."""
    target, name = test.split("/", 1)
    head = name.split("::")[0]
    if target in ("models", "proptests") and head in primitives():
        return f"{target}/{head}::"
    return None


def choose(block_paths, seconds):
    """Greedy weighted set cover: what to cover is every reached path and
    every (target, primitive) group; a test's weight is its Miri seconds.
    Then drop, most expensive first, any chosen test the others make
    redundant."""
    covers = {t: set() for t in seconds}
    for bid, ps in block_paths.items():
        for p in ps:
            for t in p["tests"]:
                if t in covers:
                    covers[t].add((bid, p["at"]))
    for t in seconds:
        g = primitive_group(t)
        if g:
            covers[t].add(g)
    needed = set().union(*covers.values())
    chosen, left = [], set(needed)
    while left:
        best = max(covers, key=lambda t: (len(covers[t] & left) / max(seconds[t], 0.01),
                                          -seconds[t]))
        if not covers[best] & left:
            break
        chosen.append(best)
        left -= covers[best]
    for t in sorted(chosen, key=lambda t: -seconds[t]):
        rest = set().union(*(covers[o] for o in chosen if o != t))
        if needed <= rest:
            chosen.remove(t)
    return sorted(chosen)


def full_times(reuse):
    """{test: Miri seconds} from ci/miri's full run (run now unless reuse),
    and that run's wall time (None when reused)."""
    wall = None
    if not reuse:
        started = time.monotonic()
        subprocess.run(["ci/miri"], cwd=ROOT, env=dict(os.environ, MODELSYNC_MIRI="all"),
                       check=True)
        wall = round(time.monotonic() - started)
    seconds = {}
    for part in FULL_PARTS:
        path = LOGS / f"miri-{part}.times.json"
        if not path.exists():
            sys.exit(f"{path} is missing: run `MODELSYNC_MIRI=all ci/miri` first")
        seconds.update(json.loads(path.read_text()))
    return seconds, wall


def host():
    cpu = "?"
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    except (OSError, AttributeError):
        pass
    miri = subprocess.run(["cargo", "+nightly", "miri", "--version"], capture_output=True,
                          text=True).stdout.strip()
    return {"cpu": cpu, "cpus": os.cpu_count(), "os": platform.platform(), "miri": miri,
            "date": datetime.date.today().isoformat()}


def cmd_measure(args):
    blocks = unsafe_blocks()
    cache = COVERAGE_TARGET / "coverage.json"
    if args.reuse_coverage:
        results = json.loads(cache.read_text())
        for r in results:
            r["pieces"] = {b: [(tuple(s0), tuple(s1), c, e) for s0, s1, c, e in ps]
                           for b, ps in r["pieces"].items()}
    else:
        results = coverage(blocks, args.jobs)
        cache.write_text(json.dumps(results))
    block_paths = paths(blocks, results)
    seconds, wall = full_times(args.reuse_times)
    ran_natively = {r["test"] for r in results}
    missing = sorted(ran_natively - set(seconds))
    if missing:
        sys.exit("Miri's full run has no time for these tests, which ran natively "
                 f"(is the coverage build's --cfg miri out of step with Miri?): {missing}")
    extra = sorted(set(seconds) - ran_natively)
    if extra:
        sys.exit(f"Miri ran these tests, which the coverage run did not: {extra}")
    pr = choose(block_paths, seconds)
    previous = json.loads(DATA.read_text()) if DATA.exists() else {}
    data = {
        "about": "Generated by `python3 ci/miri_tests.py measure`; see its docstring. blocks: "
                 "every unsafe block of src/, its lines and its paths (coverage regions, "
                 "neighbours with the same tests merged), each with the tests that execute it "
                 "(none: no test reaches it). tests: every test Miri runs, its seconds in "
                 "ci/miri's full run on `host`, and whether the pull-request set has it.",
        "host": host(),
        "full_run_wall_seconds": wall if wall is not None else previous.get("full_run_wall_seconds"),
        "coverage": "native build, --cfg miri and -C instrument-coverage on this crate's "
                    "own code, MODELSYNC_STRESS_ITERS=2, each test alone",
        "pr_set": pr,
        "tests": {t: {"miri_seconds": seconds[t], "pr": t in pr} for t in sorted(seconds)},
        "blocks": {b["id"]: {"lines": b["lines"], "paths": block_paths[b["id"]]}
                   for b in blocks},
    }
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    summary(data)


def summary(data):
    blocks = data["blocks"]
    total = sum(len(b["paths"]) for b in blocks.values())
    reached = sum(1 for b in blocks.values() for p in b["paths"] if p["tests"])
    lines = {(bid, ln) for bid, b in blocks.items() for p in b["paths"] for ln in p["lines"]}
    lines_reached = {(bid, ln) for bid, b in blocks.items() for p in b["paths"] if p["tests"]
                     for ln in p["lines"]}
    unreached = [bid for bid, b in blocks.items() if not any(p["tests"] for p in b["paths"])]
    partly = [bid for bid, b in blocks.items()
              if bid not in unreached and not all(p["tests"] for p in b["paths"])]
    tests = data["tests"]
    pr_secs = sum(t["miri_seconds"] for t in tests.values() if t["pr"])
    all_secs = sum(t["miri_seconds"] for t in tests.values())
    print(f"{len(blocks)} unsafe blocks, {len(blocks) - len(unreached)} reached by some test; "
          f"paths reached {reached}/{total}, lines reached {len(lines_reached)}/{len(lines)}")
    for bid in unreached:
        print(f"  no test reaches {bid} (lines {blocks[bid]['lines']})")
    for bid in partly:
        missed = [p["at"] for p in blocks[bid]["paths"] if not p["tests"]]
        print(f"  partly reached: {bid}, not {', '.join(missed)}")
    print(f"pull-request set: {len(data['pr_set'])} of {len(tests)} tests, "
          f"{pr_secs:.0f} of {all_secs:.0f} Miri seconds")


# --- Using the data ---------------------------------------------------------

def load():
    if not DATA.exists():
        sys.exit(f"{DATA.relative_to(ROOT)} is missing: run `python3 ci/miri_tests.py measure`")
    return json.loads(DATA.read_text())


def cmd_list(args):
    """LPT: the slowest test first, each to the least loaded process; each
    process runs its tests target by target (a name may exist in more than
    one target, and --exact matches names, not targets)."""
    data = load()
    loads = [0.0] * args.jobs
    parts = [dict() for _ in range(args.jobs)]
    for t in sorted(data["pr_set"], key=lambda t: -data["tests"][t]["miri_seconds"]):
        k = loads.index(min(loads))
        loads[k] += data["tests"][t]["miri_seconds"]
        target, name = t.split("/", 1)
        parts[k].setdefault(target, []).append(name)
    for k, part in enumerate(parts, 1):
        for target in TARGETS:
            if target in part:
                print(f"pr-{k}", *CARGO_TARGET_ARGS[target], "--", "--exact",
                      *sorted(part[target]))


def check(data):
    problems = []
    blocks = {b["id"]: b for b in unsafe_blocks()}
    for bid, b in blocks.items():
        if bid not in data["blocks"]:
            problems.append(f"unsafe block {bid} (lines {b['lines'][0]}-{b['lines'][1]}) has no "
                            f"entry in {DATA.name}: run `python3 ci/miri_tests.py measure`")
    for bid in data["blocks"]:
        if bid not in blocks:
            problems.append(f"{DATA.name} has {bid}, which is no longer an unsafe block in src/: "
                            "run `python3 ci/miri_tests.py measure`")
    named = set(data["tests"]) | set(data["pr_set"]) | {
        t for b in data["blocks"].values() for p in b["paths"] for t in p["tests"]}
    for t in sorted(named):
        if not test_exists(t):
            problems.append(f"{DATA.name} names test {t}, which no longer exists: "
                            "run `python3 ci/miri_tests.py measure`")
    return problems


def cmd_check(_args):
    data = load()
    problems = check(data)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(data['blocks'])} unsafe blocks and {len(data['tests'])} tests in {DATA.name} "
          f"match the tree; pull-request set: {len(data['pr_set'])} tests")


def cmd_ran(args):
    data = load()
    passed = set()
    for target, names in passing_tests(Path(args.log).read_text(errors="replace")).items():
        passed |= {f"{target_of(target)}/{n}" for n in names}
    missing = [t for t in data["pr_set"] if t not in passed]
    for t in missing:
        print(f"miri: {t} of the pull-request set did not pass (or did not run)")
    if missing:
        sys.exit(1)
    print(f"miri: all {len(data['pr_set'])} tests of the pull-request set passed")


def main():
    if os.environ.get(WRAP_ENV):
        return rustc_wrapper()
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--reuse-times", action="store_true")
    m.add_argument("--reuse-coverage", action="store_true")
    m.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                   help="tests run at once under coverage")
    lst = sub.add_parser("list")
    lst.add_argument("--jobs", type=int,
                     default=int(os.environ.get("MODELSYNC_MIRI_JOBS", os.cpu_count() or 2)))
    sub.add_parser("check")
    r = sub.add_parser("ran")
    r.add_argument("log")
    s = sub.add_parser("stamp")
    s.add_argument("times")
    args = p.parse_args()
    {"measure": cmd_measure, "list": cmd_list, "check": cmd_check, "ran": cmd_ran,
     "stamp": cmd_stamp}[args.cmd](args)


if __name__ == "__main__":
    main()

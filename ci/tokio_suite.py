#!/usr/bin/env python3
"""tokio's own test files for its runtime, tasks, Notify and oneshot, run
against modelsync's with only their import swapped (tokio-tests/README.md).

From tokio-tests/manifest.toml, this writes a test package under
target/tokio-suite/ (never committed): each listed test file of the tokio
crate that Cargo.lock names (found through `cargo metadata`, after checking
its sha256), copied with the tests the manifest skips removed, and nothing
else changed; a Cargo.toml whose `tokio` is the facade
(tokio-tests/facade, modelsync in tokio's paths). It then runs clippy on
the facade and its macros (`-D warnings`; tokio's own files are not
linted), builds the tests, runs every test binary and checks the outcome:

- every test of every listed file either ran and passed, or is skipped by
  the manifest with its kind and reason;
- a test that is in neither (tokio added it, or the reader below missed
  it), a skip that names nothing, a file whose sha256 changed, or a
  manifest written for another tokio version fails the run.

The tests of a file are found by reading it: every `fn` under a test
attribute (`#[test]`, `#[tokio::test]`, `#[tokio::main] #[test]`, any path
ending in `test`), named by the `mod`s around it; a macro defined in the
file whose expansion wraps its input in `mod`s (rt_common.rs's `rt_test!`)
puts the tests given to it in each of those modules. A test generated in a
way the reader cannot see is listed by the manifest (`generated`).

Removing an item removes it with its attributes and doc comments, found by
a tokenizer that knows Rust's comments, strings, raw strings, characters
and lifetimes, and nested brackets; a removed item becomes a one-line
comment saying why.

Usage: ci/tokio_suite.py [--no-clippy] [--only FILE...] [--generate-only]
Prints a table (per file: tests, run, passed, skipped by kind) and one line
per skipped test; exits non-zero on any failure.
"""

import argparse
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "tokio-tests"
MANIFEST = SUITE / "manifest.toml"
OUT = ROOT / "target" / "tokio-suite"
PACKAGE = "modelsync-tokio-suite"
# A test binary that runs longer than this has hung.
BINARY_TIMEOUT = 180

# Why a test is not run: one of these, then the specific item.
KINDS = {
    "missing": "an API modelsync's runtime does not have",
    "current-thread": "needs tokio's current-thread semantics (tasks run only inside block_on, "
                      "LocalSet, spawn_local, LocalRuntime, !Send tasks)",
    "blocking": "spawn_blocking or block_in_place",
    "time": "timers",
    "io": "I/O: net, fs, io, process, signal",
    "unstable": "compiled only with --cfg tokio_unstable",
    "platform": "compiled only for another platform",
    "finding": "fails: modelsync differs from tokio's documented behaviour",
}


class Failure(Exception):
    pass


# ---------------------------------------------------------------- reading Rust


@dataclass
class Tok:
    kind: str  # ident, punct, lit, lifetime, doc, open, close
    text: str
    start: int
    end: int


@dataclass
class Group:
    delim: str  # "(", "[" or "{"
    children: list
    start: int
    end: int


IDENT = re.compile(r"r#[A-Za-z_]\w*|[A-Za-z_]\w*")
NUMBER = re.compile(r"\d\w*(?:\.\d\w*)?")
RAW_STRING = re.compile(r'(?:br|cr|r)(#*)"')
STRING = re.compile(r'[bc]?"')


def lex(src):
    """Rust tokens: comments dropped (outer doc comments kept as `doc`),
    strings, raw strings, characters and lifetimes each one token."""
    toks = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            text = src[i:j]
            if text.startswith("///") and not text.startswith("////"):
                toks.append(Tok("doc", text, i, j))
            i = j
            continue
        if src.startswith("/*", i):
            depth, j = 0, i
            while j < n:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                    if depth == 0:
                        break
                else:
                    j += 1
            text = src[i:j]
            if text.startswith("/**") and not text.startswith("/***") and text != "/**/":
                toks.append(Tok("doc", text, i, j))
            i = j
            continue
        m = RAW_STRING.match(src, i)
        if m:
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            if j < 0:
                raise Failure(f"unterminated raw string at offset {i}")
            j += len(close)
            toks.append(Tok("lit", src[i:j], i, j))
            i = j
            continue
        m = STRING.match(src, i)
        if m:
            j = m.end()
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            toks.append(Tok("lit", src[i:j], i, j))
            i = j
            continue
        if c == "'" or src.startswith("b'", i):
            k = i + (1 if c == "'" else 2)
            if src[k] == "\\":
                j = src.index("'", k + 2) + 1
                toks.append(Tok("lit", src[i:j], i, j))
                i = j
                continue
            if k + 1 < n and src[k + 1] == "'":
                toks.append(Tok("lit", src[i:k + 2], i, k + 2))
                i = k + 2
                continue
            m = IDENT.match(src, k)
            if c == "'" and m:
                toks.append(Tok("lifetime", src[i:m.end()], i, m.end()))
                i = m.end()
                continue
        m = IDENT.match(src, i)
        if m:
            toks.append(Tok("ident", m.group(), i, m.end()))
            i = m.end()
            continue
        m = NUMBER.match(src, i)
        if m:
            toks.append(Tok("lit", m.group(), i, m.end()))
            i = m.end()
            continue
        if c in "([{":
            toks.append(Tok("open", c, i, i + 1))
        elif c in ")]}":
            toks.append(Tok("close", c, i, i + 1))
        else:
            toks.append(Tok("punct", c, i, i + 1))
        i += 1
    return toks


def tree(toks):
    """Tokens nested into groups by their brackets."""
    stack = [[]]
    opens = []
    for t in toks:
        if t.kind == "open":
            opens.append(t)
            stack.append([])
        elif t.kind == "close":
            if not opens or "([{"[")]}".index(t.text)] != opens[-1].text:
                raise Failure(f"unbalanced {t.text!r} at offset {t.start}")
            children = stack.pop()
            o = opens.pop()
            stack[-1].append(Group(o.text, children, o.start, t.end))
        else:
            stack[-1].append(t)
    if opens:
        raise Failure(f"unclosed {opens[-1].text!r} at offset {opens[-1].start}")
    return stack[0]


def is_punct(node, text):
    return isinstance(node, Tok) and node.kind == "punct" and node.text == text


def is_ident(node, text=None):
    return isinstance(node, Tok) and node.kind == "ident" and (text is None or node.text == text)


def is_group(node, delim):
    return isinstance(node, Group) and node.delim == delim


@dataclass
class Item:
    start: int  # its first attribute or doc comment
    end: int
    kind: str  # fn, mod, use, macro, macro_rules, other, ...
    name: str = None
    attrs: list = field(default_factory=list)  # each attribute's text inside #[...]
    # Items inside it: a mod's or a brace macro call's; a macro_rules'
    # expansions' (one list per rule).
    children: list = None
    rules: list = None
    text: str = ""  # `use` items: the path, whitespace removed

    @property
    def is_test(self):
        for attr in self.attrs:
            m = re.match(r"\s*(?:::\s*)?(\w+(?:\s*::\s*\w+)*)", attr)
            if m and re.split(r"\s*::\s*", m.group(1))[-1] == "test":
                return True
        return False


QUALIFIERS = {"pub", "unsafe", "async", "default", "extern", "const"}
ITEM_KEYWORDS = {"fn", "mod", "use", "const", "static", "type", "struct", "enum", "union",
                 "trait", "impl", "let", "extern"}


def items(nodes, src):
    """The items of one level: each with its attributes, its kind, and the
    items inside it where it has any."""
    out = []
    i, n = 0, len(nodes)
    while i < n:
        node = nodes[i]
        if is_punct(node, ";"):
            i += 1
            continue
        if is_punct(node, "#") and i + 2 < n and is_punct(nodes[i + 1], "!") \
                and is_group(nodes[i + 2], "["):
            i += 3  # an inner attribute
            continue
        start = node.start
        attrs = []
        while i < n:
            if isinstance(nodes[i], Tok) and nodes[i].kind == "doc":
                i += 1
            elif is_punct(nodes[i], "#") and i + 1 < n and is_group(nodes[i + 1], "["):
                g = nodes[i + 1]
                attrs.append(src[g.start + 1:g.end - 1])
                i += 2
            else:
                break
        if i >= n:
            break
        item = Item(start, None, "other", attrs=attrs)
        if is_punct(nodes[i], "$"):
            # A macro's metavariable or repetition: `$x`, `$(...)sep*`.
            j = i + 1
            if j < n and is_group(nodes[j], "("):
                j += 1
                if j < n and isinstance(nodes[j], Tok) and nodes[j].text not in "*+?" \
                        and j + 1 < n and isinstance(nodes[j + 1], Tok) \
                        and nodes[j + 1].text in "*+?":
                    j += 1
                if j < n and isinstance(nodes[j], Tok) and nodes[j].text in "*+?":
                    j += 1
            elif j < n:
                j += 1
            item.kind = "meta"
            item.end = nodes[j - 1].end
            out.append(item)
            i = j
            continue
        j = i
        while j < n and is_ident(nodes[j]) and nodes[j].text in QUALIFIERS:
            if nodes[j].text == "const" and not (j + 1 < n and is_ident(nodes[j + 1]) and
                                                 nodes[j + 1].text in {"fn", "unsafe", "async",
                                                                       "extern"}):
                break
            if nodes[j].text == "extern" and j + 1 < n and is_ident(nodes[j + 1], "crate"):
                break
            j += 1
            if j < n and (is_group(nodes[j], "(") or
                          (isinstance(nodes[j], Tok) and nodes[j].kind == "lit")):
                j += 1  # pub(crate), extern "C"
        head = nodes[j] if j < n else None
        # A macro call or macro_rules: path `!` [name] group.
        k = j
        while k + 1 < n and is_ident(nodes[k]) and is_punct(nodes[k + 1], ":") \
                and k + 2 < n and is_punct(nodes[k + 2], ":"):
            k += 3
        if k < n and is_ident(nodes[k]) and k + 1 < n and is_punct(nodes[k + 1], "!"):
            macro = nodes[k].text
            m = k + 2
            name = None
            if m < n and is_ident(nodes[m]):
                name = nodes[m].text
                m += 1
            if m >= n or not isinstance(nodes[m], Group):
                raise Failure(f"a macro call without arguments at offset {nodes[k].start}")
            g = nodes[m]
            end = g.end
            m += 1
            if g.delim != "{" and m < n and is_punct(nodes[m], ";"):
                end = nodes[m].end
                m += 1
            if macro == "macro_rules":
                item.kind, item.name = "macro_rules", name
                item.rules = macro_rules_expansions(g, src)
            else:
                item.kind, item.name = "macro", macro
                if g.delim == "{":
                    item.children = opaque_or_items(g, src)
            item.end = end
            out.append(item)
            i = m
            continue
        keyword = head.text if is_ident(head) and head.text in ITEM_KEYWORDS else None
        if keyword in {"fn", "mod", "struct", "enum", "union", "trait", "const", "static",
                       "type"} and j + 1 < n and is_ident(nodes[j + 1]):
            item.name = nodes[j + 1].text
        item.kind = keyword or "other"
        m = j
        if keyword in {"use", "const", "static", "type", "let"} or \
                (keyword == "extern" and j + 1 < n and is_ident(nodes[j + 1], "crate")):
            while m < n and not is_punct(nodes[m], ";"):
                m += 1
            if m >= n:
                raise Failure(f"no `;` after the item at offset {start}")
            item.end = nodes[m].end
            if keyword == "use":
                item.text = re.sub(r"\s+", "", src[nodes[j + 1].start:nodes[m].start])
            out.append(item)
            i = m + 1
            continue
        while m < n and not is_punct(nodes[m], ";") and not is_group(nodes[m], "{"):
            m += 1
        if m >= n:
            raise Failure(f"an item without `;` or body at offset {start}: "
                          f"{src[start:start + 60]!r}")
        item.end = nodes[m].end
        if keyword == "mod" and is_group(nodes[m], "{"):
            item.children = items(nodes[m].children, src)
        out.append(item)
        i = m + 1
    return out


def opaque_or_items(group, src):
    """The items in a macro's brace group; None where it holds something
    else (an expression, a list), which the reader leaves alone."""
    try:
        return items(group.children, src)
    except Failure:
        return None


def macro_rules_expansions(group, src):
    """The items of each expansion of a macro_rules: `(pattern) => {items};`
    (an expansion that is not items counts as none)."""
    rules = []
    nodes = group.children
    for i, node in enumerate(nodes):
        if is_punct(node, ">") and i > 0 and is_punct(nodes[i - 1], "=") and i + 1 < len(nodes) \
                and isinstance(nodes[i + 1], Group):
            rules.append(opaque_or_items(nodes[i + 1], src) or [])
    return rules


def walk(level):
    """Every item, at any depth (inside mods, brace macro calls and
    macro_rules expansions)."""
    for item in level:
        yield item
        if item.children:
            yield from walk(item.children)
        for rule in item.rules or ():
            yield from walk(rule)


@functools.lru_cache(maxsize=4)
def parse(src):
    return items(tree(lex(src)), src)


def templates(level):
    """Macros defined in the file whose expansion puts their input in
    modules: name -> those modules."""
    found = {}
    for item in walk(level):
        if item.kind == "macro_rules":
            mods = [i.name for rule in item.rules for i in rule if i.kind == "mod"]
            if mods:
                found[item.name] = mods
    return found


def tests(level, macros, prefix=()):
    """The tests of a file as libtest names them, from its items."""
    for item in level:
        if item.kind == "mod" and item.children is not None:
            yield from tests(item.children, macros, prefix + (item.name,))
        elif item.kind == "macro" and item.children is not None:
            for module in macros.get(item.name, [None]):
                inner = prefix + (module,) if module else prefix
                yield from tests(item.children, macros, inner)
        elif item.kind == "fn" and item.is_test:
            yield "::".join(prefix + (item.name,))


def file_tests(src):
    level = parse(src)
    return set(tests(level, templates(level)))


# ---------------------------------------------------------------- removing


def source_paths(level, prefix=()):
    """(item, its path in the source: the mods around it, then its name)."""
    for item in level:
        yield item, prefix + ((item.name,) if item.name else ())
        inner = prefix + (item.name,) if item.kind == "mod" else prefix
        if item.children:
            yield from source_paths(item.children, inner)
        for rule in item.rules or ():
            yield from source_paths(rule, prefix)


def matches(skip, item, path):
    if "test" in skip:
        want = tuple(skip["test"].split("::"))
        return item.kind == "fn" and item.is_test and path[-len(want):] == want
    sel = skip["item"]
    word, _, rest = sel.partition(" ")
    if word == "use":
        return item.kind == "use" and re.match(re.escape(rest.replace(" ", "")) + r"(?!\w)",
                                               item.text) is not None
    if sel.endswith("!"):
        return item.kind == "macro" and item.name == sel[:-1]
    want = tuple(rest.split("::"))
    return item.kind == word and path[-len(want):] == want


def spans(src, skip):
    """The (start, end) of every item the skip names: with `mentions`,
    every innermost item (one with no items inside) whose text holds it."""
    level = parse(src)
    if "mentions" in skip:
        return [(i.start, i.end) for i in walk(level)
                if not i.children and not i.rules and i.kind != "meta"
                and skip["mentions"] in src[i.start:i.end]]
    return [(item.start, item.end) for item, path in source_paths(level)
            if matches(skip, item, path)]


SELECTORS = ("test", "item", "mentions")


def selector(skip):
    return next(f"{key} {skip[key]!r}" if key == "mentions" else skip[key]
                for key in SELECTORS if key in skip)


def remove(src, removals):
    """`src` without the given spans (outermost kept where they nest), each
    replaced by a one-line comment at its indentation."""
    chosen = []
    for start, end, note in sorted(removals, key=lambda r: (r[0], -r[1])):
        if chosen and start < chosen[-1][1]:
            continue
        chosen.append((start, end, note))
    for start, end, note in reversed(chosen):
        line_start = src.rfind("\n", 0, start) + 1
        indent = src[line_start:start]
        if indent.strip():
            indent, line_start = "", start
        line_end = src.find("\n", end)
        if line_end < 0 or src[end:line_end].strip():
            line_end = end
        src = src[:line_start] + f"{indent}// removed by ci/tokio_suite.py: {note}" \
            + src[line_end:]
    return src


# ---------------------------------------------------------------- manifest


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_kind(where, kind):
    if kind not in KINDS:
        raise Failure(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")


@dataclass
class Plan:
    """One file of the manifest: what runs and what is skipped."""
    path: str
    name: str  # the file's name, its test target
    out: str = None  # the copy, with the skips removed; None if not taken
    universe: set = field(default_factory=set)
    expected: set = field(default_factory=set)
    skipped: dict = field(default_factory=dict)  # test -> (kind, why)
    # Skips that removed no test: (selector, items removed, kind, why).
    removed: list = field(default_factory=list)
    ran: dict = field(default_factory=dict)  # test -> outcome
    # Compile-time checks (a file's `checks`: macro calls): (kept, of all).
    checks: tuple = None
    seconds: float = 0.0


def plan_file(entry, tests_dir, problems):
    path = entry["path"]
    name = Path(path).name
    plan = Plan(path, name)
    file = tests_dir.parent / path
    if not file.is_file():
        problems.append(f"{path}: not in the tokio crate")
        return plan
    digest = sha256(file)
    if digest != entry.get("sha256"):
        problems.append(f"{path}: sha256 is {digest}, the manifest says {entry.get('sha256')}: "
                        "tokio changed it; read the change, update its skips, then its sha256")
        return plan
    src = file.read_text()
    plan.universe = file_tests(src)
    if "unusable" in entry:
        check_kind(path, entry["unusable"]["kind"])
        reason = (entry["unusable"]["kind"], entry["unusable"]["why"])
        plan.skipped = {t: reason for t in plan.universe}
        return plan
    removals = []
    covered = {}
    for skip in entry.get("skip", []):
        if sum(key in skip for key in SELECTORS) != 1:
            raise Failure(f"{path}: a skip needs exactly one of {', '.join(SELECTORS)}: {skip}")
        where = f"{path}: skip `{selector(skip)}`"
        check_kind(where, skip["kind"])
        found = spans(src, skip)
        if not found:
            problems.append(f"{where}: names nothing in the file")
            continue
        note = f"`{selector(skip)}`: {skip['kind']}: {skip['why']}"
        removals += [(s, e, note) for s, e in found]
        left = file_tests(remove(src, [(s, e, note) for s, e in found]))
        gone = plan.universe - left
        if "test" in skip and not gone:
            problems.append(f"{where}: removes no test")
        # A test that several skips remove is attributed to an item skip (a
        # module of tests) over a test skip, then to the larger removal.
        rank = ("item" in skip, max(e - s for s, e in found))
        for t in gone:
            if t not in covered or covered[t][0] < rank:
                covered[t] = (rank, skip["kind"], skip["why"])
        if not gone:
            plan.removed.append((selector(skip), len(found), skip["kind"], skip["why"]))
    plan.out = remove(src, removals)
    plan.expected = file_tests(plan.out) | set(entry.get("generated", []))
    plan.skipped = {t: (kind, why) for t, (_, kind, why) in covered.items()}
    if "checks" in entry:
        names = {name.rstrip("!") for name in entry["checks"]}
        count = lambda text: sum(1 for i in walk(parse(text))  # noqa: E731
                                 if i.kind == "macro" and i.name in names)
        plan.checks = (count(plan.out), count(src))
    return plan


# ---------------------------------------------------------------- running


def run(cmd, cwd, env=None, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, **kw)


def tokio_crate(version):
    """The tests/ directory of the tokio crate Cargo.lock names."""
    for attempt in range(2):
        out = run(["cargo", "metadata", "--format-version", "1"], ROOT,
                  capture_output=True, text=True)
        if out.returncode != 0:
            raise Failure(f"cargo metadata failed:\n{out.stderr}")
        found = [p for p in json.loads(out.stdout)["packages"] if p["name"] == "tokio"]
        if len(found) != 1:
            raise Failure(f"expected one tokio package in the dependency graph, found "
                          f"{[p['version'] for p in found]}")
        tokio = found[0]
        tests_dir = Path(tokio["manifest_path"]).parent / "tests"
        if tests_dir.is_dir():
            break
        if attempt == 0:
            run(["cargo", "fetch"], ROOT, check=True)
    else:
        raise Failure(f"no tests/ in the tokio crate at {tests_dir}")
    if tokio["version"] != version:
        raise Failure(f"Cargo.lock has tokio {tokio['version']}, the manifest is for {version}: "
                      "check each file against the new version, then update `tokio` and "
                      "every sha256 in tokio-tests/manifest.toml")
    return tests_dir


def write_package(manifest, plans, tests_dir):
    # Files are rewritten only when they change, so that a second run
    # rebuilds nothing.
    wanted = {"src/lib.rs": "//! Written by ci/tokio_suite.py: the tests are in tests/, "
                            "copied from tokio.\n",
              "LICENSE-tokio": (tests_dir.parent / "LICENSE").read_text()}
    for plan in plans:
        if plan.out is not None:
            wanted[f"tests/{plan.name}"] = plan.out
    for support in manifest.get("support", []):
        wanted[support["path"]] = (tests_dir.parent / support["path"]).read_text()
    if (OUT / "tests").exists():
        for old in (OUT / "tests").rglob("*.rs"):
            if old.relative_to(OUT).as_posix() not in wanted:
                old.unlink()
    deps = "\n".join(f"{name} = {json.dumps(spec) if isinstance(spec, str) else toml_inline(spec)}"
                     for name, spec in manifest["dev-dependencies"].items())
    wanted["Cargo.toml"] = f"""\
# Written by ci/tokio_suite.py from tokio-tests/manifest.toml: do not edit.
# tests/ holds test files of tokio {manifest['tokio']} (MIT licence, Copyright
# (c) Tokio Contributors: LICENSE-tokio), with the tests that cannot run
# removed; `tokio` is the facade, modelsync in tokio's paths.
[package]
name = "{PACKAGE}"
version = "0.0.0"
edition = "2021"
publish = false

# The files' `#![cfg(feature = "full")]` holds; so do their `rt`,
# `rt-multi-thread`, `macros` and `sync` gates. Not `net`, `time`, `fs`,
# `io-*`, `process`, `signal`: modelsync has none of them.
[features]
default = ["full"]
full = ["rt", "rt-multi-thread", "macros", "sync"]
rt = []
rt-multi-thread = []
macros = []
sync = []

[dev-dependencies]
tokio = {{ package = "modelsync-tokio-facade", path = "{os.path.relpath(SUITE / 'facade', OUT)}" }}
{deps}

# What removing tests leaves unused, and the cfgs of features this package
# does not declare, are tokio's files' business.
[lints.rust]
unused = {{ level = "allow", priority = -1 }}
unexpected_cfgs = "allow"

[workspace]
resolver = "2"
"""
    for name, text in wanted.items():
        dest = OUT / name
        if not dest.exists() or dest.read_text() != text:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
    seed_lock(OUT, "package")
    seed_lock(SUITE, "facade")


def seed_lock(workspace, name):
    """Starts `workspace`'s Cargo.lock from the repository's, so that tokio
    (the test files' version) and everything else resolve as they do for
    modelsync; again whenever the repository's changes."""
    seed = OUT / f"Cargo.lock.{name}-seed"
    lock = (ROOT / "Cargo.lock").read_bytes()
    if not (workspace / "Cargo.lock").exists() or not seed.exists() or seed.read_bytes() != lock:
        (workspace / "Cargo.lock").write_bytes(lock)
        seed.write_bytes(lock)


def toml_inline(spec):
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items()) + " }"


RESULT = re.compile(r"^test (\S+)(?: - should panic)? \.\.\. (ok|FAILED|ignored.*)$")


def run_binaries(plans, env):
    out = run(["cargo", "test", "--no-run", "-p", PACKAGE,
               "--message-format", "json-render-diagnostics"], OUT, env,
              stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise Failure("the tests did not build (errors above)")
    binaries = {}
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and "test" in msg["target"]["kind"]:
            binaries[msg["target"]["name"]] = msg["executable"]
    failures = []
    for plan in plans:
        if plan.out is None:
            continue
        exe = binaries.get(Path(plan.name).stem)
        if exe is None:
            raise Failure(f"no test binary for {plan.name}")
        started = time.monotonic()
        try:
            res = subprocess.run([exe], cwd=OUT, capture_output=True, text=True,
                                 timeout=BINARY_TIMEOUT, env={**os.environ, **env})
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) \
                else (e.stdout or "")
            failures.append(f"{plan.name}: still running after {BINARY_TIMEOUT} s:\n"
                            f"{stdout[-3000:]}")
            res = subprocess.CompletedProcess(exe, None, stdout, "")
        plan.seconds = time.monotonic() - started
        for line in res.stdout.splitlines():
            m = RESULT.match(line)
            if m:
                plan.ran[m.group(1)] = m.group(2)
        if res.returncode not in (0, None):
            failures.append(f"{plan.name}: exit {res.returncode}\n{res.stdout[-6000:]}"
                            f"\n{res.stderr[-2000:]}")
    return failures


def check(plans):
    problems = []
    for plan in plans:
        for test, outcome in sorted(plan.ran.items()):
            if outcome != "ok":
                problems.append(f"{plan.name}: {test}: {outcome}")
        if plan.out is None:
            continue
        for test in sorted(plan.expected - set(plan.ran)):
            problems.append(f"{plan.name}: {test}: expected to run, did not (compiled out here? "
                            "skip it with its reason)")
        for test in sorted(set(plan.ran) - plan.expected):
            problems.append(f"{plan.name}: {test}: ran, but is neither read from the file nor "
                            "listed (`generated`)")
    return problems


def summary(plans):
    kinds = [k for k in KINDS if any(k == v[0] for p in plans for v in p.skipped.values())]
    header = ["file", "tests", "run", "passed", "skipped"] + kinds + ["seconds"]
    rows = []
    for p in plans:
        passed = sum(1 for o in p.ran.values() if o == "ok")
        by_kind = [sum(1 for v in p.skipped.values() if v[0] == k) for k in kinds]
        note = "" if p.out is not None else " (not taken)"
        rows.append([p.name + note, len(p.universe | p.expected), len(p.ran), passed,
                     len(p.skipped)] + by_kind + [f"{p.seconds:.1f}"])
    total = ["total"] + [sum(r[c] for r in rows) for c in range(1, len(header) - 1)] \
        + [f"{sum(p.seconds for p in plans):.1f}"]
    rows.append(total)
    widths = [max(len(str(r[c])) for r in rows + [header]) for c in range(len(header))]
    fmt = lambda r: "  ".join(str(v).ljust(w) if c == 0 else str(v).rjust(w)  # noqa: E731
                              for c, (v, w) in enumerate(zip(r, widths)))
    print("\n== tokio's tests against modelsync")
    print(fmt(header))
    for r in rows:
        print(fmt(r))
    for p in plans:
        if p.checks:
            print(f"{p.name}: {p.checks[0]} of its {p.checks[1]} compile-time checks kept "
                  "(the file compiles: they hold)")
    print()
    for p in plans:
        for test in sorted(p.skipped):
            kind, why = p.skipped[test]
            print(f"skipped {p.name} {test}: {kind}: {why}")
    for p in plans:
        for sel, count, kind, why in p.removed:
            items = "" if count == 1 else f" ({count} items)"
            print(f"removed {p.name} `{sel}`{items}, no test: {kind}: {why}")
    findings = [(p.name, t, v[1]) for p in plans for t, v in sorted(p.skipped.items())
                if v[0] == "finding"]
    findings += [(p.name, f"`{sel}`", why) for p in plans for sel, _, kind, why in p.removed
                 if kind == "finding"]
    if findings:
        print("\nfindings (modelsync differs from tokio; fix src/ and un-skip):")
        for name, test, why in findings:
            print(f"  {name} {test}: {why}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-clippy", action="store_true",
                    help="skip clippy on the facade and its macros")
    ap.add_argument("--only", nargs="+", metavar="FILE",
                    help="only these files of the manifest (by name, e.g. rt_common.rs)")
    ap.add_argument("--generate-only", action="store_true",
                    help="write target/tokio-suite/ and stop")
    args = ap.parse_args()
    started = time.monotonic()
    manifest = tomllib.loads(MANIFEST.read_text())
    tests_dir = tokio_crate(manifest["tokio"])
    problems = []
    for support in manifest.get("support", []):
        file = tests_dir.parent / support["path"]
        if not file.is_file() or sha256(file) != support["sha256"]:
            problems.append(f"{support['path']}: missing, or its sha256 changed")
    entries = manifest["file"]
    if args.only:
        entries = [e for e in entries if Path(e["path"]).name in args.only]
        if len(entries) != len(args.only):
            raise Failure(f"--only: not all of {args.only} are in the manifest")
    plans = [plan_file(entry, tests_dir, problems) for entry in entries]
    if problems:
        raise Failure("the manifest does not fit tokio's files:\n  " + "\n  ".join(problems))
    write_package(manifest, plans, tests_dir)
    if args.generate_only:
        print(f"wrote {OUT}")
        return
    env = {"CARGO_TARGET_DIR": str(OUT / "target")}
    if not args.no_clippy:
        res = run(["cargo", "clippy", "--manifest-path", "tokio-tests/Cargo.toml", "--workspace",
                   "--", "-D", "warnings"], ROOT, env)
        if res.returncode != 0:
            raise Failure("clippy: the facade or its macros (tokio-tests/) have warnings")
    failures = run_binaries(plans, env)
    summary(plans)
    problems = check(plans)
    print(f"\n{time.monotonic() - started:.0f} s")
    if failures or problems:
        for f in failures:
            print(f"\n---- {f}", file=sys.stderr)
        raise Failure("tokio's tests:\n  " + "\n  ".join(problems or ["see above"]))
    print("every test of every file ran and passed, or is skipped with its reason")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        sys.exit(f"ci/tokio_suite.py: {e}")

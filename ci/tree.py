"""What the tree says about the tests and the model-build constants, read
the way `proptests/verification.rs` reads it, for the scripts that write
VERIFICATION.md's generated parts (ci/summary.py, ci/model_table.py).

A test is a `#[test]` fn at the top level of `models/<m>.rs` or
`proptests/<m>.rs`, named `<m>::<fn>`. Its doc comment has a paragraph
`Checks: <ID>, <ID> (weaker: <what it checks less>), ...`; a qualifier
says that the test checks a weaker form of that invariant than its
heading states. An optional `Scope: <text>` paragraph states the scope in
which a complete loom run of the model is complete (`check/src/scope.rs`).
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def library_sources(shim=False):
    """(path from the root, text) of every `.rs` file in src/, in path
    order; the sync shim (src/sync/) only if `shim`."""
    for path in sorted((ROOT / "src").rglob("*.rs")):
        rel = path.relative_to(ROOT).as_posix()
        if shim or not rel.startswith("src/sync/"):
            yield rel, path.read_text()
ID = re.compile(r"^[A-Z]+-\d+$")


@dataclass
class Test:
    name: str
    target: str  # "models" or "proptests"
    path: str
    line: int
    # [(invariant ID, weaker-form qualifier or None)]
    checks: list = field(default_factory=list)
    # The `#[cfg(...)]` attributes directly above `#[test]`.
    cfgs: list = field(default_factory=list)
    # Property tests: the cases per run (std; Miri runs 2 or fewer).
    cases: int = None
    scope: str = None

    @property
    def loom(self):
        return self.target == "models" and not ({"not(loom)", "not(any(loom, shuttle))"}
                                                & set(self.cfgs))

    @property
    def shuttle(self):
        return self.target == "models" and not ({"not(shuttle)", "not(any(loom, shuttle))"}
                                                & set(self.cfgs))


def doc_paragraphs(doc_lines):
    """The paragraphs of a doc comment, each joined into one line."""
    paras, current = [], []
    for line in doc_lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            paras.append(" ".join(current))
            current = []
    if current:
        paras.append(" ".join(current))
    return paras


def parse_checks(text):
    """`Q-1, Q-8 (weaker: capacity 2, so ...).` -> [("Q-1", None), ("Q-8", "capacity 2, so ...")].
    Raises ValueError on anything else."""
    text = text.strip()
    if text.endswith("."):
        text = text[:-1]
    items, depth, current = [], 0, ""
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += c
    items.append(current.strip())
    out = []
    for item in items:
        m = re.fullmatch(r"([A-Z]+-\d+)(?:\s*\(weaker:\s*(.+)\))?", item, re.S)
        if not m:
            raise ValueError(f"cannot read {item!r} in `Checks: {text}`: IDs like Q-1, each "
                             "optionally followed by `(weaker: <what it checks less>)`")
        out.append((m.group(1), m.group(2).strip() if m.group(2) else None))
    return out


def _block_end(lines, start):
    """The index of the line that closes the brace opened on lines[start]."""
    depth = 0
    for i in range(start, len(lines)):
        code = lines[i].split("//")[0]
        depth += code.count("{") - code.count("}")
        if depth == 0 and "{" in "".join(lines[start:i + 1]):
            return i
    return len(lines) - 1


def tests_in(target, stem, source, path=None):
    lines = source.splitlines()
    # proptest! blocks: (first line, last line, cases).
    blocks = []
    for i, line in enumerate(lines):
        if line.strip().startswith("proptest! {"):
            end = _block_end(lines, i)
            cases = None
            for inner in lines[i:end]:
                m = re.search(r"proptest_config\((\d+)\)", inner)
                if m and "#![proptest_config" in inner:
                    cases = int(m.group(1))
                    break
            blocks.append((i, end, cases))
    found = []
    for i, line in enumerate(lines):
        if line.strip() != "#[test]":
            continue
        fn_line = next(j for j in range(i + 1, len(lines)) if re.search(r"\bfn ", lines[j]))
        name = re.search(r"\bfn ([a-z0-9_]+)", lines[fn_line]).group(1)
        doc, cfgs = [], []
        j = i - 1
        while j >= 0 and (lines[j].strip().startswith("///") or lines[j].strip().startswith("#[")):
            above = lines[j].strip()
            if above.startswith("#[cfg("):
                cfgs.append(above[len("#[cfg("):-len(")]")])
            elif above.startswith("///"):
                doc.insert(0, above[3:])
            j -= 1
        where = str(path.relative_to(ROOT)) if path else f"{target}/{stem}.rs"
        test = Test(f"{stem}::{name}", target, where, i + 1, cfgs=cfgs)
        for para in doc_paragraphs(doc):
            if para.startswith("Checks:"):
                test.checks = parse_checks(para[len("Checks:"):])
            elif para.startswith("Scope:"):
                test.scope = para[len("Scope:"):].strip().rstrip(".")
        if target == "proptests":
            block = next((b for b in blocks if b[0] < i < b[1]), None)
            if block:
                test.cases = block[2]
            else:
                body = lines[fn_line:_block_end(lines, fn_line) + 1]
                m = re.search(r"proptest_config\((\d+)\)", "\n".join(body))
                if m:
                    test.cases = int(m.group(1))
        found.append(test)
    return found


def all_tests():
    """Every test of the models and proptests targets, by name."""
    tests = {}
    for target in ("models", "proptests"):
        for stem, path in module_files(target):
            for t in tests_in(target, stem, path.read_text(), path):
                tests[t.name] = t
    return tests


def module_files(target):
    """(module, file) for every file of a test target's modules: `<t>/<m>.rs`
    and the files it includes, `<t>/<m>/*.rs` (a component's models: their
    tests are the module's, `<m>::<fn>`)."""
    found = []
    for path in sorted((ROOT / target).glob("*.rs")):
        if path.stem == "main":
            continue
        found.append((path.stem, path))
        found.extend((path.stem, part) for part in sorted((ROOT / target / path.stem).glob("*.rs")))
    return found


# ---------------------------------------------------------------------------
# Model-build constants: every `cfg!(...)` in src/ outside the shim.

@dataclass
class Constant:
    name: str
    path: str
    builds: str  # "loom, shuttle" ...
    models: str
    production: str
    why: str


def _first_sentences(doc):
    text = " ".join(d.strip() for d in doc)
    return text


def model_build_constants():
    """Each value that differs under the model builds, from its source:
    `const X: T = if cfg!(any(loom, shuttle)) { a } else { b };`,
    `const X: bool = cfg!(not(any(loom, shuttle)));` or an `if cfg!(...)`
    in a fn's body. Anything else with `cfg!(` fails, so that a new one
    cannot go unlisted."""
    out = []
    for rel, text in library_sources():
        lines = text.splitlines()
        for m in re.finditer(r"cfg!\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)", text):
            cond = m.group(1)
            at = text.count("\n", 0, m.start())
            # The item it belongs to: the nearest `const` or `fn` at or above.
            k = at
            while k >= 0 and not re.match(r"\s*(pub(\(\w+\))? )?(const|fn) ", lines[k]):
                k -= 1
            item = re.match(r"\s*(?:pub(?:\(\w+\))? )?(const|fn) ([A-Za-z0-9_]+)", lines[k])
            kind, name = item.group(1), item.group(2)
            doc, d = [], k - 1
            while d >= 0 and lines[d].strip().startswith("///"):
                doc.insert(0, lines[d].strip()[3:])
                d -= 1
            after = text[m.end():]
            branches = re.match(r"\s*\{\s*(.*?)\s*\}\s*else\s*\{\s*(.*?)\s*\}", after, re.S)
            builds = cond
            neg = re.fullmatch(r"not\(any\((.*)\)\)", cond)
            pos = re.fullmatch(r"any\((.*)\)", cond)
            if branches and pos:
                models, production = branches.group(1), branches.group(2)
                builds = pos.group(1)
            elif neg and text[m.start() - 1] == " " and kind == "const":
                # `const X: bool = cfg!(not(any(...)));`
                models, production, builds = "false", "true", neg.group(1)
            else:
                raise SystemExit(f"{rel}:{at + 1}: cfg!({cond}) in {name} is not a form "
                                 "ci/tree.py reads; list it there")
            builds = builds.replace("miri", "Miri")
            out.append(Constant(name, rel, builds, " ".join(models.split()),
                                " ".join(production.split()), _first_sentences(doc)))
    return out

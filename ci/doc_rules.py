#!/usr/bin/env python3
"""What hand-written text in the repository may say. Three rules, each
failing with the file, the line and what to do instead:

1. **No measured number typed by hand.** A number a run produces
   (executions, scenarios, histories, seconds, bug, mutant and kill counts)
   lives only in a generated part that CI or the nightly rewrites and
   checks: VERIFICATION.md's and the README's generated parts,
   `verification/`, `mutants/REPORT.md`. Typed into prose or a comment it
   was true once and goes stale silently, so the rule fails on it.

   It matches a quantity (`17,803`, `2.6 million`, `30 to 37`, and for bug
   counts also a number word: `five`) directly followed by a unit that
   only a run produces:

   - a time: `s`, `secs`, `seconds`, `ms`, `us`, `ns`, `min`, `minutes`,
     `hours`, or in words (`about a minute`, `under two seconds`);
   - `executions`, `histories` or `scenarios`, up to two words after the
     quantity (`3 scenarios over`, `2.6 million executions`), or a scope's
     count (`456 after renaming`, `326 after symmetry`);
   - `bugs`, `mutants` or `survivors`, up to three words after it
     (`57 seeded bugs`, `five of Notify's seeded bugs`), or a kill count
     (`122 killed`, `kills four`);
   - a percentage (`19%`).

   It does not match what the code or a setting fixes: invariant IDs
   (`Q-8`), constants of the code (`every 61st tick`, `capacity 4`, `a
   batch of 32`), preemption bounds (`bound 3`), thread and operation
   counts, dates, commit hashes, a number that names something (`round 4
   of the blind bugs`, after `round`, `bound`, `step`, `stage`,
   `version`, `rule`, `item` or `code`). A quantity with a unit is a setting, not
   a measurement, when the text says so next to it: within 40 characters
   before it `within`, `default`, `budget`, `at most`, `up to`, `limit`,
   `timeout` or a knob's name (an environment variable `MODELSYNC_*`,
   `LOOM_*`, `NIGHTLY_*`, `SHUTTLE_*`, `CARGO_*`, or a constant named
   `*_SECS`, `*_BUDGET`, `*_ITERS`, `*_BOUND`: `MODELSYNC_COMPLETE_BUDGET`),
   or within 25 characters after it `budget`, `timeout`, `limit`, `per
   attempt` or `per model`. Text inside backquotes is code, not prose:
   its numbers are not matched (its knob names still mark a setting).

2. **No reference a reader cannot follow.** `issue 49`, `stop 57` or
   `pull request 12` with no project before it names this repository's
   internal tracker, which no reader of the repository can open. Cite the
   invariant, the model, the commit or HISTORY.md instead. A reference to
   another project names it: `tokio-rs/loom issue 166`, `loom issue 254`,
   `tokio #5041`. A reference in backquotes is quoted, not cited.

3. **Readable layout.** In the Markdown a reviewer reads
   (VERIFICATION.md, the README, `check/README.md`, `verification/`,
   `mutants/REPORT.md`, `mutants/LOGIC.md`), no table cell is over 120 characters and no line
   outside a code block over 400: what does not fit belongs in the file
   a link points to (a seeded bug's explanation is its patch's header).
   Code blocks are exempt: a result line is compared whole.

Where the rules look (rules 1 and 2: hand-written text only, so
generated parts are skipped; rule 3: the Markdown above, generated parts
included):

- Markdown: VERIFICATION.md, README.md, check/README.md,
  mutants/LOGIC.md, outside code blocks and generated parts;
- comments: every `//` comment of the Rust sources (src/, check/,
  models/, specs/, proptests/, benches/, examples/, build.rs), every comment and
  docstring of ci/*.py, every `#` comment of the shell scripts (ci/,
  .ci/run), the workflows and the TOML files;
- the seeded bugs' patch headers and the triage's explanations
  (mutants/seeded/*.patch, mutants/triage.json).

Not looked at: HISTORY.md, a dated record in which every number is
tied to its date (it is where a measurement that explains a decision
goes); BENCHMARKS.md, whose numbers are per host and written by
ci/bench_ratios.py; experiments/, outside the crate; code itself and
string literals (a panic message states what happened in that run).

Usage:
  ci/doc_rules.py            check the tree
  ci/doc_rules.py FILE...    check those files (a path's suffix says how to read it)
"""

import io
import json
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------
# Rule 1: measured numbers.

NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
WORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
        r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
        r"hundred|dozen)")
# A quantity: a number (not part of an identifier, an ID like Q-8, a path
# or a version), optionally a range, optionally scaled.
QUANTITY = (rf"(?<![\w.\-/#@`]){NUM}(?:\s*(?:-|–|to|and|or)\s*{NUM})?"
            r"(?:\s+(?:million|thousand|hundred))?(?![\w\-]|\.\d)")
QUANTITY_OR_WORD = rf"(?:{QUANTITY}|\b{WORD}\b)"
GAP = r"[\w`'’\-]+\s+"  # one word between the quantity and its unit
MEASURED = [
    ("a time", re.compile(rf"{QUANTITY}\s?(?:s|secs?|seconds?|ms|us|µs|ns|mins?|minutes?|hours?)\b")),
    ("a time", re.compile(r"\b(?:about|over|under|nearly|almost|within)\s+(?:a|an|half\s+an?)\s+"
                          r"(?:second|minute|hour)\b", re.I)),
    ("a time", re.compile(rf"\b{WORD}\s+(?:seconds?|minutes?|hours?)\b", re.I)),
    ("a count of executions, histories or scenarios",
     re.compile(rf"{QUANTITY}\s+(?:{GAP}){{0,2}}?(?:executions?|histories|scenarios?)\b", re.I)),
    ("a scope's count", re.compile(rf"{QUANTITY}\s+after\s+(?:renaming|symmetry)\b")),
    ("a count of bugs or mutants",
     re.compile(rf"{QUANTITY_OR_WORD}\s+(?:{GAP}){{0,3}}?(?:bugs?|mutants?|survivors?)\b", re.I)),
    ("a kill count", re.compile(rf"(?:\bkills?\s+{QUANTITY_OR_WORD}|{QUANTITY_OR_WORD}\s+killed\b)",
                                re.I)),
    ("a percentage", re.compile(rf"{QUANTITY}\s?%")),
]
# What marks a quantity as a setting (see the module documentation): words
# matched in any case, a knob's name only in capitals.
SETTING_BEFORE = re.compile(r"\b(?:within|default|budget|at\s+most|up\s+to|limit|timeout)\b",
                            re.I)
SETTING_AFTER = re.compile(r"\b(?:budget|timeout|limit|per\s+attempt|per\s+model)\b", re.I)
# A knob: an environment variable of the harness, loom, cargo or the
# nightly, or a constant named for a setting. Any other UPPER_SNAKE name
# (a bit, a size of the code) marks nothing: `JOIN_WAKER); 12 scenarios`
# is a count.
KNOB = re.compile(r"\b(?:(?:MODELSYNC|LOOM|NIGHTLY|SHUTTLE|CARGO|MIRI|PROPTEST)_[A-Z0-9_]+"
                  r"|[A-Z][A-Z0-9_]*_(?:SECS|BUDGET|ITERS|BOUND))\b")


def is_setting(text, start, end):
    before = text[max(0, start - 40):start]
    after = text[end:end + 25]
    return bool(SETTING_BEFORE.search(before) or KNOB.search(before)
                or SETTING_AFTER.search(after))


def code_spans(text):
    """[(start, end)] of the inline code spans of `text`."""
    return [(m.start(), m.end()) for m in re.finditer(r"`[^`\n]*`", text)]


# A number after one of these words names something (round 4 of a series,
# bound 3) and counts nothing.
LABEL_BEFORE = re.compile(r"\b(?:round|bound|step|stage|version|rule|item|code)\s+$", re.I)


def measured_numbers(text):
    """[(offset, what, matched text)] of every measured number in `text`."""
    spans = code_spans(text)
    found = []
    for what, pattern in MEASURED:
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            if is_setting(text, m.start(), m.end()):
                continue
            if LABEL_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
                continue
            found.append((m.start(), what, m.group(0)))
    # One report per place: the first rule that matched it.
    found.sort()
    out, last_end = [], -1
    for start, what, matched in found:
        if start >= last_end:
            out.append((start, what, matched))
            last_end = start + len(matched)
    return out


# ---------------------------------------------------------------------------
# Rule 2: references a reader cannot follow.

REFERENCE = re.compile(r"\b(?:issues?|stop|pull requests?|PR)\s+#?\d+", re.I)
# A project named just before the reference: `owner/repo`, or one of these.
PROJECTS = ("tokio", "loom", "shuttle", "crossbeam", "rust", "miri", "proptest", "criterion",
            "cargo-mutants", "futures", "flume", "st3")
PROJECT_BEFORE = re.compile(r"(?:[\w.\-]+/[\w.\-]+|\b(?:" + "|".join(map(re.escape, PROJECTS))
                            + r")(?:'s)?)\W{0,3}$", re.I)


def internal_references(text):
    spans = code_spans(text)
    out = []
    for m in REFERENCE.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        if not PROJECT_BEFORE.search(text[max(0, m.start() - 40):m.start()]):
            out.append((m.start(), m.group(0)))
    return out


# ---------------------------------------------------------------------------
# Rule 3: layout.

MAX_CELL = 120
MAX_LINE = 400


def layout_problems(text):
    """[(line number, what)] for table cells and lines over the limits."""
    out = []
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if len(line) > MAX_LINE:
            out.append((n, f"a line of {len(line)} characters (at most {MAX_LINE})"))
        if line.startswith("|"):
            # Cells split on `|` outside inline code.
            cells, cell, in_code = [], "", False
            for c in line.strip().strip("|"):
                if c == "`":
                    in_code = not in_code
                if c == "|" and not in_code:
                    cells.append(cell)
                    cell = ""
                else:
                    cell += c
            cells.append(cell)
            for c in cells:
                if len(c.strip()) > MAX_CELL:
                    out.append((n, f"a table cell of {len(c.strip())} characters (at most "
                                   f"{MAX_CELL}): {c.strip()[:60]!r}..."))
    return out


# ---------------------------------------------------------------------------
# The hand-written text of each kind of file, as passages: (first line,
# text). A passage is a paragraph or a block of consecutive comment lines,
# so that a quantity and its unit on two lines are still seen together.

GENERATED_BEGIN = re.compile(r"<!-- ([\w \-]+): generated by ")


def markdown_passages(text):
    passages, current, start = [], [], 0
    fenced, generated = False, None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if generated:
            if stripped == f"<!-- end of {generated} -->":
                generated = None
            continue
        if m := GENERATED_BEGIN.match(stripped):
            generated = m.group(1)
            line = ""
        elif stripped.startswith("```"):
            fenced = not fenced
            line = ""
        elif fenced or stripped.startswith("<!--"):
            line = ""
        if line.strip():
            if not current:
                start = n
            current.append(line)
        elif current:
            passages.append((start, "\n".join(current)))
            current = []
    if current:
        passages.append((start, "\n".join(current)))
    return passages


def rust_comment(line):
    """The `//` comment of a line of Rust, or None (string literals and
    char literals are skipped)."""
    i, in_str = 0, False
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "'" and i + 2 < len(line) and line[i + 2] == "'":
            i += 3
            continue
        elif line.startswith("//", i):
            return line[i:].lstrip("/!").strip()
        i += 1
    return None


def comment_passages(lines_with_comments):
    """Consecutive (line number, comment or None) -> passages."""
    passages, current, start = [], [], 0
    for n, comment in lines_with_comments:
        if comment:
            if not current:
                start = n
            current.append(comment)
        else:
            if current:
                passages.append((start, "\n".join(current)))
            current = []
    if current:
        passages.append((start, "\n".join(current)))
    return passages


def rust_passages(text):
    return comment_passages((n, rust_comment(line)) for n, line in enumerate(text.splitlines(), 1))


def hash_passages(text):
    """Full-line `#` comments (shell, YAML, TOML); not a shebang."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        out.append((n, s.lstrip("#").strip() if s.startswith("#") and not s.startswith("#!")
                    else None))
    return comment_passages(out)


def python_passages(text):
    """Comments and docstrings (a string that is a statement of its own)."""
    out = []
    comments = []
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    previous = tokenize.NEWLINE
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            comments.append((tok.start[0], tok.string.lstrip("#").strip()))
        elif tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT,
                                                          tokenize.DEDENT, tokenize.NL):
            body = re.sub(r'^[rbuf]*("""|\'\'\'|"|\')|("""|\'\'\'|"|\')$', "", tok.string)
            out.append((tok.start[0], body))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            previous = tok.type
        elif tok.type == tokenize.NL and previous == tokenize.NEWLINE:
            previous = tokenize.NEWLINE
    # Comment lines grouped by adjacency.
    grouped, last = [], None
    for n, c in comments:
        if last is not None and n == last + 1:
            grouped[-1] = (grouped[-1][0], grouped[-1][1] + "\n" + c)
        else:
            grouped.append((n, c))
        last = n
    return out + grouped


def patch_passages(text):
    head = text.split("\ndiff --git", 1)[0]
    return [(n, line) for n, line in enumerate(head.splitlines(), 1) if line.strip()]


def json_passages(text):
    """Every string value of a JSON file, at the line it starts on."""
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        for m in re.finditer(r'"((?:[^"\\]|\\.)*)"\s*[,}\]]?\s*$', line):
            out.append((n, json.loads(f'"{m.group(1)}"')))
    return out


def passages_of(path):
    text = path.read_text()
    name = path.name
    if name.endswith(".md"):
        return markdown_passages(text)
    if name.endswith(".rs"):
        return rust_passages(text)
    if name.endswith(".py"):
        return python_passages(text)
    if name.endswith(".patch"):
        return patch_passages(text)
    if name.endswith(".json"):
        return json_passages(text)
    return hash_passages(text)


# ---------------------------------------------------------------------------
# Which files.

HAND_WRITTEN_MARKDOWN = ("README.md", "VERIFICATION.md", "check/README.md", "mutants/LOGIC.md")
LAID_OUT_MARKDOWN = ("README.md", "VERIFICATION.md", "check/README.md", "mutants/LOGIC.md",
                     "mutants/REPORT.md")


def hand_written_files():
    files = [ROOT / f for f in HAND_WRITTEN_MARKDOWN]
    for folder in ("src", "check", "models", "specs", "proptests", "benches", "examples"):
        files += sorted((ROOT / folder).rglob("*.rs"))
    files.append(ROOT / "build.rs")
    ci = ROOT / "ci"
    files += sorted(p for p in ci.iterdir() if p.is_file() and p.suffix in ("", ".py", ".sh"))
    files.append(ROOT / ".ci" / "run")
    files += sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    files += [ROOT / "Cargo.toml", ROOT / "check" / "Cargo.toml",
              *sorted((ROOT / ".config").glob("*.toml")),
              *sorted((ROOT / ".cargo").glob("*.toml"))]
    files += sorted((ROOT / "mutants" / "seeded").glob("*.patch"))
    files.append(ROOT / "mutants" / "triage.json")
    return [f for f in files if f.is_file()]


def laid_out_files():
    files = [ROOT / f for f in LAID_OUT_MARKDOWN]
    files += sorted((ROOT / "verification").glob("*.md"))
    return [f for f in files if f.is_file()]


def content_problems(path):
    """Rules 1 and 2 on one file: [(line, message)]."""
    problems = []
    for first, text in passages_of(path):
        for offset, what, matched in measured_numbers(text):
            line = first + text.count("\n", 0, offset)
            problems.append((line, f"{what} typed by hand: {matched!r}; a number a run produces "
                                   "belongs in a generated part (state the setting, or link the "
                                   "measured run, or move the history to HISTORY.md)"))
        for offset, matched in internal_references(text):
            line = first + text.count("\n", 0, offset)
            problems.append((line, f"{matched!r} cites an internal tracker no reader can open: "
                                   "cite the invariant, the model, the commit or HISTORY.md"))
    return problems


def check(content_files, layout_files):
    problems = []
    for path in content_files:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        problems += [f"{rel}:{n}: {m}" for n, m in content_problems(path)]
    for path in layout_files:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        problems += [f"{rel}:{n}: {m}" for n, m in layout_problems(path.read_text())]
    return problems


def main():
    args = [Path(a).resolve() for a in sys.argv[1:]]
    if any(a.name in ("-h", "--help") for a in args):
        sys.exit(__doc__)
    if args:
        content = args
        layout = [a for a in args if a.suffix == ".md"]
    else:
        content, layout = hand_written_files(), laid_out_files()
    problems = check(content, layout)
    if problems:
        sys.exit(f"ci/doc_rules.py: {len(problems)} problems (the rules: `ci/doc_rules.py "
                 "--help`):\n" + "\n".join(problems))
    print(f"doc rules: {len(content)} files of hand-written text, {len(layout)} laid out, "
          "no problem")


if __name__ == "__main__":
    main()

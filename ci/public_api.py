#!/usr/bin/env python3
"""The crate's public API, as rustdoc documents it, against ci/public-api.txt.

Builds the documentation (`cargo doc --no-deps`, default features) and lists
every item rustdoc shows (its `all.html`: structs, enums, functions, macros,
types, constants, by path) and, on each item's page, the inherent methods,
associated constants, enum variants and public fields (not for items the
`sync` shim re-exports from std, whose members follow the toolchain). Items marked
`#[doc(hidden)]` (the models' `modelsync::internals`, the keyed receivers'
diagnostics) are not shown, so they are not in the list.

The list is the public surface a user meets: a change to it must be a
decision, made by rewriting the file (`--bless`) in the same commit, so that
an internal made public by accident fails CI.

Usage: ci/public_api.py [--bless]
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "ci" / "public-api.txt"
DOC = ROOT / "target" / "doc" / "modelsync"
KINDS = {"structs": "struct", "enums": "enum", "macros": "macro", "functions": "fn",
         "types": "type", "constants": "const", "traits": "trait", "unions": "union",
         "statics": "static", "attributes": "attribute", "derives": "derive"}
MEMBER = re.compile(r'id="(method|tymethod|associatedconstant|associatedtype|variant|structfield)\.([^"]+)"')


def surface():
    subprocess.run(["cargo", "doc", "--no-deps", "--quiet"], cwd=ROOT, check=True)
    index = (DOC / "all.html").read_text()
    lines = []
    # all.html: an <h3 id="structs"> heading per kind, then a list of links.
    for kind_id, body in re.findall(r'<h3 id="([^"]+)">.*?</h3>\s*<ul[^>]*>(.*?)</ul>', index, re.S):
        kind = KINDS.get(kind_id, kind_id)
        for href, path in re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', body):
            page = (DOC / href).read_text()
            source = re.search(r'class="src" href="([^"]+)"', page)
            if source and source.group(1).startswith("http"):
                # Re-exported from std (the shim's atomics, `Arc`, threads):
                # its members are std's, and follow the toolchain.
                lines.append(f"{kind} {path} (re-exported from std)")
                continue
            lines.append(f"{kind} {path}")
            # Inherent impls only: trait implementations follow their own <h2>.
            start = page.find('id="implementations-list"')
            inherent = page[start:page.find("<h2", start)] if start >= 0 else ""
            own = page[:page.find('<h2 id="implementations"')] if 'id="implementations"' in page else page
            members = set()
            for what, name in MEMBER.findall(inherent):
                members.add((what, re.sub(r"-\d+$", "", name)))
            for what, name in MEMBER.findall(own):
                if what in ("variant", "structfield"):
                    members.add((what, name))
            for what, name in sorted(members):
                lines.append(f"    {what} {path}::{name}")
    return "\n".join(lines) + "\n"


def main():
    found = surface()
    if "--bless" in sys.argv[1:]:
        EXPECTED.write_text(found)
        print(f"wrote {EXPECTED.relative_to(ROOT)}")
        return
    expected = EXPECTED.read_text() if EXPECTED.exists() else ""
    if found != expected:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(
            expected.splitlines(True), found.splitlines(True), "ci/public-api.txt", "rustdoc"))
        sys.exit("the public API differs from ci/public-api.txt: if the change is meant, "
                 "run `python3 ci/public_api.py --bless` and commit the file")
    print(f"public API as ci/public-api.txt says: {found.count(chr(10))} lines")


if __name__ == "__main__":
    main()

"""The one way the CI scripts rewrite a generated part of a Markdown file:
the text between a `begin` marker line and an `end` marker line."""

import sys


def splice(text, begin, end, body, where="the file"):
    """`text` with what lies between `begin` and `end` replaced by `body`;
    exits with a message naming the markers if either is missing."""
    if begin not in text or end not in text:
        sys.exit(f"{where} lacks the markers {begin} ... {end}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"

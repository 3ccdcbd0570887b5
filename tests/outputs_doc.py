"""The paths docs/outputs.md documents, as patterns: a run's files checked against them (tests/test_end_to_end.py).

A row's first cell holds one or more backticked paths: `<name>` is one path component, `{a,b}` either
word, `[x/]` an optional part, `*` any run of characters within a component, and a path ending in `/` a
whole folder. A bare name after the first path (`index.md`) sits in the first path's folder.
"""
import re
from pathlib import Path

ROW = re.compile(r"^\| `")
SKIP = re.compile(r"(\.manifest\.json|\.snakemake_timestamp)$")   # beside every output, said once below the table


def pattern(path: str) -> re.Pattern:
    out, i = "", 0
    while i < len(path):
        c = path[i]
        if c in "<{[":
            j = path.index({"<": ">", "{": "}", "[": "]"}[c], i)
            inner = path[i + 1:j]
            out += {"<": r"[^/]+", "{": "(" + "|".join(map(re.escape, inner.split(","))) + ")",
                    "[": "(" + re.escape(inner) + ")?"}[c]
            i = j + 1
        else:
            out += r"[^/]*" if c == "*" else re.escape(c)
            i += 1
    return re.compile(out + (".*" if path.endswith("/") else "") + "$")


def documented(doc: Path) -> list[re.Pattern]:
    patterns = []
    for line in doc.read_text(encoding="utf-8").splitlines():
        if ROW.match(line):
            paths = re.findall(r"`([^`]+)`", line.split(" | ")[0])
            folder = re.sub(r"[^/\]]+$", "", paths[0])
            patterns += [pattern(p if "/" in p else folder + p) for p in paths]
    return patterns


def undocumented(root: Path, doc: Path) -> list[str]:
    """Files under root's results/ and reports/ that no row of doc names."""
    patterns = documented(doc)
    files = [p.relative_to(root).as_posix() for top in ("results", "reports") for p in (root / top).rglob("*")
             if p.is_file()]
    return sorted(f for f in files if not SKIP.search(f) and not any(p.match(f) for p in patterns))

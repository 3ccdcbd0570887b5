"""Whether two checkouts' runs wrote the same outputs: the identity check a refactor must pass.

A redesign that changes no result must leave ``results/`` and ``reports/`` byte-identical to the runs of
the commit it starts from. Two runs of one commit still differ where a file records *when* or *where* it
ran (the commit in each manifest, run ids, wall times), so a plain ``diff -r`` drowns the one real change
in noise. This compares every file byte for byte and then sorts the differing ones:

- ``provenance``: manifests (``*.manifest.json``) that are equal once their ``git_commit`` is dropped are
  counted as equal; a manifest that differs beyond the commit is listed (a params hash that moved);
- ``volatile``: files that are expected to differ between any two runs (telemetry, the run's summary,
  stamped pages: :data:`VOLATILE`), listed apart so a reader sees them but they do not fail the check;
- ``differ``: every other file with other bytes, and ``only_a``/``only_b``: files present on one side.

Exit status 0 when ``differ``, ``only_a`` and ``only_b`` are empty (``--allow PATTERN`` exempts files a
change alters on purpose). Stdlib only, as devtools must be.

    python -m devtools.same_outputs /work/runs/base/main /work/runs/new/main
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

FOLDERS = ("results", "reports")
# Files whose bytes record the run itself (times, CPU, run id, commit stamps, screenshots), not a result.
VOLATILE = (
    "*.telemetry.*",  # times, CPU and tokens of each job (results/**/*.telemetry.jsonl, reports/*.telemetry.*)
    "reports/summary.json",
    "reports/README.md",
    "reports/index.screenshot.png",
    "reports/bench/*",
    "reports/*.timeline.*",
)


@dataclass
class Comparison:
    """The files of two output trees, sorted by how they compare."""

    same: int = 0
    provenance: list[str] = field(default_factory=list)
    volatile: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.differ or self.only_a or self.only_b)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(root: Path) -> set[str]:
    out: set[str] = set()
    for folder in FOLDERS:
        base = root / folder
        if base.is_dir():
            out |= {str(p.relative_to(root)) for p in base.rglob("*") if p.is_file() and not p.is_symlink()}
    return out


def _manifest_body(path: Path) -> object:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if isinstance(data, dict):
        data.pop("git_commit", None)
    return data


def _matches(rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(rel, pattern) for pattern in patterns)


def compare(a: Path, b: Path, allow: tuple[str, ...] = ()) -> Comparison:
    """Compare ``results/`` and ``reports/`` of checkouts ``a`` and ``b``; ``allow``: globs of files a change
    alters on purpose (listed as volatile, not as differences)."""
    files_a, files_b = _files(a), _files(b)
    out = Comparison(only_a=sorted(files_a - files_b), only_b=sorted(files_b - files_a))
    for rel in sorted(files_a & files_b):
        pa, pb = a / rel, b / rel
        if pa.stat().st_size == pb.stat().st_size and _digest(pa) == _digest(pb):
            out.same += 1
        elif rel.endswith(".manifest.json") and _manifest_body(pa) == _manifest_body(pb) is not None:
            out.provenance.append(rel)
        elif _matches(rel, VOLATILE + allow):
            out.volatile.append(rel)
        else:
            out.differ.append(rel)
    return out


def _print_list(title: str, items: list[str], limit: int) -> None:
    if not items:
        return
    print(f"{title} ({len(items)}):")
    for rel in items[:limit]:
        print(f"  {rel}")
    if len(items) > limit:
        print(f"  ... and {len(items) - limit} more")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the first checkout (its results/ and reports/)")
    parser.add_argument("b", type=Path, help="the second checkout")
    parser.add_argument("--allow", action="append", default=[], help="glob of files changed on purpose")
    parser.add_argument("--limit", type=int, default=40, help="names listed per group")
    args = parser.parse_args(argv)
    for root in (args.a, args.b):
        if not any((root / folder).is_dir() for folder in FOLDERS):
            print(f"error: {root} has neither results/ nor reports/", file=sys.stderr)
            return 2
    result = compare(args.a, args.b, tuple(args.allow))
    print(f"{result.same} files byte-identical; {len(result.provenance)} manifests differ only in their commit")
    _print_list("expected to differ (run times, stamps, --allow)", result.volatile, args.limit)
    _print_list("DIFFER", result.differ, args.limit)
    _print_list(f"only in {args.a}", result.only_a, args.limit)
    _print_list(f"only in {args.b}", result.only_b, args.limit)
    print("identical" if result.identical else "NOT identical")
    return 0 if result.identical else 1


if __name__ == "__main__":
    sys.exit(main())

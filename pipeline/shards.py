"""A dataset's documents cut into shards, and a large set of queries into batches: the jobs a cluster splits.

Per-document work (parse, encode, index build, SproutRAG's attention and trees) runs one job per shard:
consecutive documents in the dataset's document order, as many as fit ``shards.max_chars`` characters of
text (a document larger than that is a shard of its own). One writer merges the shards' parts in that order,
so a merged output is the one an unsharded job writes, whatever the cut (tests/test_shards.py). The cut is
read off a sizes file (each document's id and characters, in document order) when Snakemake builds the DAG
(the file is a checkpoint's output: pipeline/rules/shards.smk), and again by each shard's job, so the DAG and
the job agree with no list of documents on a command line.

The document order is the order every build already walks its trees in: their files sorted by name
(``<doc_id>.json``), so a one-shard job and the merge of many read the same sequence.

A shard's id names its documents' positions in that order (``0-69``: the first 70), so a shard whose
documents a changed ``max_chars`` leaves as they were keeps its id and its part, and reruns nothing. Standard
library only: the DAG is planned from here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SIZES_COLUMNS = ("doc_id", "chars")


@dataclass(frozen=True)
class Shard:
    """Documents ``start`` to ``end - 1`` of the dataset's document order."""

    start: int
    end: int
    docs: tuple[str, ...]

    @property
    def id(self) -> str:
        """``<first>-<last>`` positions (a name by pipeline/names.py's rule: digits and '-')."""
        return f"{self.start}-{self.end - 1}"


def document_order(doc_ids: Iterable[str]) -> list[str]:
    """Documents in the order the builds walk their tree files: sorted by file name ``<doc_id>.json``
    (``a-b.json`` before ``a.json``: not the ids' own order)."""
    return sorted(doc_ids, key=lambda d: f"{d}.json")


def sizes_text(sizes: Iterable[tuple[str, int]]) -> str:
    """The sizes file's CSV: ``doc_id,chars``, one row per document in document order."""
    rows = sorted(sizes, key=lambda r: f"{r[0]}.json")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(SIZES_COLUMNS)
    w.writerows(rows)
    return out.getvalue()


def read_sizes(path: str | Path) -> list[tuple[str, int]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [(r["doc_id"], int(r["chars"])) for r in csv.DictReader(fh)]


def plan(sizes: Sequence[tuple[str, int]], max_chars: int) -> list[Shard]:
    """Consecutive documents, each shard up to ``max_chars`` characters (a larger document alone)."""
    shards: list[Shard] = []
    start, total = 0, 0
    for i, (_, chars) in enumerate(sizes):
        if i > start and total + chars > max_chars:
            shards.append(Shard(start, i, tuple(d for d, _ in sizes[start:i])))
            start, total = i, 0
        total += chars
    if start < len(sizes):
        shards.append(Shard(start, len(sizes), tuple(d for d, _ in sizes[start:])))
    return shards


def shard_of(sizes: Sequence[tuple[str, int]], max_chars: int, shard_id: str) -> Shard:
    """The shard ``shard_id`` of :func:`plan` (a shard the plan does not make is an error naming the plan)."""
    shards = plan(sizes, max_chars)
    for s in shards:
        if s.id == shard_id:
            return s
    raise ValueError(f"no shard {shard_id!r} in {len(sizes)} documents at max_chars {max_chars}: {[s.id for s in shards]}")


def select(tree_paths: Iterable[str], docs: Iterable[str]) -> list[str]:
    """The tree files (``<doc_id>.json``) of ``docs``, in document order; a document without one is an error."""
    by_doc = {Path(p).name[: -len(".json")]: str(p) for p in tree_paths}
    missing = [d for d in docs if d not in by_doc]
    if missing:
        raise FileNotFoundError(f"no tree file for {len(missing)} document(s) of the shard, e.g. {missing[:3]}")
    return [by_doc[d] for d in document_order(docs)]


@dataclass(frozen=True)
class Batch:
    """Queries ``start`` to ``end - 1`` of a split's file order."""

    start: int
    end: int

    @property
    def id(self) -> str:
        return f"q{self.start}-{self.end - 1}"


def batches(n_queries: int, size: int) -> list[Batch]:
    """A split's queries in batches of ``size`` (the last smaller); one batch when they fit in one."""
    return [Batch(s, min(s + size, n_queries)) for s in range(0, n_queries, size)] or [Batch(0, 0)]

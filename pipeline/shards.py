"""A dataset's documents cut into shards: the per-document jobs a cluster splits.

Per-document work (today: encoding and building the dense indexes) runs one job per shard: consecutive
documents in the dataset's document order, as many as fit ``shards.max_chars`` characters of text (a document
larger than that is a shard of its own). One writer merges the shards' parts in that order, so a merged output
is the one an unsharded job writes, whatever the cut (tests/index/test_index_shards.py). The cut is read off a
sizes file (each document's id and characters, in document order) when Snakemake builds the DAG (the file is a
checkpoint's output: pipeline/rules/shards.smk); a shard's job reads its documents off the same file by the
positions its id names, so the DAG and the job agree with no list of documents on a command line.

Per-query work (a retrieval of a large split) runs the same way in batches of consecutive queries, in the
split's file order, ``shards.max_queries`` a batch (:func:`query_batches`): a batch is a :class:`Shard` of query
positions, and one writer joins the batches' rows in that order into the whole job's bytes.

The document order is the order every build already walks its trees in: their files sorted by name
(``<doc_id>.json``), so a one-shard job and the merge of many read the same sequence.

A shard's id names its documents' positions in that order (``0-69``: the first 70), so a shard whose
documents a changed ``max_chars`` leaves as they were keeps its id and its part. Standard library only: the
DAG is planned from here.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SIZES_COLUMNS = ("doc_id", "chars")
ID_PATTERN = r"[0-9]+-[0-9]+"  # a shard id in a path (the rules' wildcard constraint)


@dataclass(frozen=True)
class Shard:
    """Positions ``start`` to ``end - 1``: of the dataset's document order, or of a split's queries (a batch)."""

    start: int
    end: int

    @property
    def id(self) -> str:
        """``<first>-<last>`` positions (a name by pipeline/names.py's rule: digits and '-')."""
        return f"{self.start}-{self.end - 1}"

    @classmethod
    def from_id(cls, shard_id: str) -> Shard:
        if not re.fullmatch(ID_PATTERN, shard_id):
            raise ValueError(f"shard id {shard_id!r} is not <first>-<last> document positions")
        first, last = (int(x) for x in shard_id.split("-"))
        if last < first:
            raise ValueError(f"shard id {shard_id!r}: its last position is before its first")
        return cls(first, last + 1)

    def docs(self, sizes: Sequence[tuple[str, int]]) -> list[str]:
        """Its documents' ids, from the sizes file it was cut from (a shard past its end is an error)."""
        if self.end > len(sizes):
            raise ValueError(f"shard {self.id} reaches past the {len(sizes)} documents of its sizes file")
        return [d for d, _ in sizes[self.start : self.end]]


def query_batches(n_queries: int, max_queries: int) -> list[Shard]:
    """A split's ``n_queries`` queries cut into batches of ``max_queries`` consecutive ones (the last shorter)."""
    return plan([("", 1)] * n_queries, max_queries)


def batch_rows(columns: Mapping[str, Sequence[str]], batch: Shard) -> dict[str, list[str]]:
    """The rows of ``batch`` of a split's question columns (a batch past the split's end is an error)."""
    n = len(next(iter(columns.values()), []))
    if batch.end > n:
        raise ValueError(f"batch {batch.id} reaches past the {n} questions of its split")
    return {c: list(v[batch.start : batch.end]) for c, v in columns.items()}


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
    if max_chars < 1:
        raise ValueError(f"a shard's bound (shards.max_chars, shards.max_queries) must be at least 1, not {max_chars}")
    shards: list[Shard] = []
    start, total = 0, 0
    for i, (_, chars) in enumerate(sizes):
        if i > start and total + chars > max_chars:
            shards.append(Shard(start, i))
            start, total = i, 0
        total += chars
    if start < len(sizes):
        shards.append(Shard(start, len(sizes)))
    return shards


def doc_id_of(tree_path: str | Path) -> str:
    """``<doc_id>.json`` -> ``doc_id`` (a tree file's name is its document's id)."""
    name = Path(tree_path).name
    if not name.endswith(".json"):
        raise ValueError(f"{tree_path}: a tree file is named <doc_id>.json")
    return name[: -len(".json")]


def select(tree_paths: Iterable[str], docs: Iterable[str]) -> list[str]:
    """The tree files (``<doc_id>.json``) of ``docs``, in document order; a document without one is an error."""
    by_doc = {doc_id_of(p): str(p) for p in tree_paths}
    missing = [d for d in docs if d not in by_doc]
    if missing:
        raise FileNotFoundError(f"no tree file for {len(missing)} document(s) of the shard, e.g. {missing[:3]}")
    return [by_doc[d] for d in document_order(docs)]

"""Cross-fitting SproutRAG's heads (#45 item 2): K folds of a scored dataset by document, so that every
query can be scored with head weights trained on none of its documents and not on itself.

Why folds by document: the heads learn from co-relevant chunk pairs of a query's gold document; a head
trained on the query, or on another query of the same document, has seen that document's attention
pattern. A fold is a set of whole documents plus every query whose gold lies in them. Documents that
share a query are kept in one fold (connected components of the query-document graph), so a query's
gold never straddles two folds; the components go to folds round-robin in the order of their smallest
document id: deterministic, and balanced in documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Folds:
    """Each document's and each query's fold (0..k-1)."""

    k: int
    doc_fold: dict[str, int]
    query_fold: dict[str, int]

    def docs(self, fold: int) -> set[str]:
        return {d for d, f in self.doc_fold.items() if f == fold}

    def queries(self, fold: int) -> set[str]:
        return {q for q, f in self.query_fold.items() if f == fold}

    def counts(self) -> list[dict[str, int]]:
        """Documents and queries per fold (what a fold's head file and the report record)."""
        return [{"docs": len(self.docs(f)), "queries": len(self.queries(f))} for f in range(self.k)]


def _components(doc_ids: list[str], gold: list[dict]) -> list[list[str]]:
    """Documents joined by a shared query (union-find), each component sorted, components by first id."""
    parent = {d: d for d in doc_ids}

    def root(d: str) -> str:
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    by_query: dict[str, list[str]] = {}
    for g in gold:
        if g["doc_id"] in parent:
            by_query.setdefault(g["query_id"], []).append(g["doc_id"])
    for docs in by_query.values():
        for d in docs[1:]:
            parent[root(d)] = root(docs[0])
    groups: dict[str, list[str]] = {}
    for d in sorted(doc_ids):
        groups.setdefault(root(d), []).append(d)
    return sorted(groups.values())


def assign_folds(doc_ids: list[str], query_ids: list[str], gold: list[dict], k: int) -> Folds:
    """``k`` folds of the documents (whole components, round-robin) and their queries; a query without
    gold in these documents goes round-robin, in id order, beside them."""
    if k < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {k}")
    doc_fold = {d: i % k for i, comp in enumerate(_components(doc_ids, gold)) for d in comp}
    query_fold: dict[str, int] = {}
    for g in sorted(gold, key=lambda g: (g["query_id"], g["doc_id"])):
        if g["doc_id"] in doc_fold:
            query_fold.setdefault(g["query_id"], doc_fold[g["doc_id"]])
    orphans = sorted(q for q in set(query_ids) if q not in query_fold)
    query_fold.update({q: i % k for i, q in enumerate(orphans)})
    return Folds(k, doc_fold, {q: query_fold[q] for q in sorted(query_fold)})


def export_folds(export_dir: str | Path, k: int) -> Folds:
    """The folds of a suite export (``trees/``, ``queries.csv``, ``gold.jsonl``: the suite_export rule's
    declared outputs)."""
    from pipeline.io import read_csv_columns, read_jsonl

    out = Path(export_dir)
    docs = sorted(p.stem for p in (out / "trees").glob("*.json"))
    queries = list(read_csv_columns(out / "queries.csv")["id"])
    return assign_folds(docs, queries, read_jsonl(out / "gold.jsonl"), k)


def kept_examples(example_ids: list[list[str]], dataset: str, folds: Folds, fold: int) -> list[int]:
    """The training examples ``(dataset, query, document)`` a head for ``fold`` of ``dataset`` may learn
    from: none of that fold's queries, none on its documents (other datasets' examples all stay)."""
    held_q, held_d = folds.queries(fold), folds.docs(fold)
    return [i for i, (name, q, d) in enumerate(example_ids) if name != dataset or (q not in held_q and d not in held_d)]

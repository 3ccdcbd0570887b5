"""Lexical retrieval: BM25 (rank-bm25's Okapi) over tree nodes of chosen levels.

The index file is the tokenised corpus in SQLite (the same node table as the dense
stores, plus a tokens column), so it is a real DAG output that a rerun reuses; the
BM25 statistics are rebuilt from it at load time in about a second.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from pipeline.index.store import IndexReader, IndexWriter, StoredNode
from pipeline.tree import DocTree

TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")


def tokenize(text: str) -> list[str]:
    """Lower-case word and number tokens; punctuation splits, decimals stay whole ("4.3")."""
    return [t.replace(",", "") for t in TOKEN.findall(text.lower())]


def build_bm25_index(trees: list[DocTree], levels: list[str], writer: IndexWriter) -> dict:
    """Store every node (so hits can be expanded to their parents); tokens only on ``levels``."""
    counts: dict[str, int] = {}
    for tree in trees:
        nodes = list(tree.nodes.values())
        writer.add([StoredNode.from_node(n) for n in nodes], tokens=[tokenize(n.text) if n.level in levels else None for n in nodes])
        for n in nodes:
            if n.level in levels:
                counts[n.level] = counts.get(n.level, 0) + 1
    return counts


class BM25Searcher:
    """Top-k BM25 search, restricted to ``levels`` (each level scored as its own collection,
    so long paragraphs and short sentences do not share length statistics)."""

    def __init__(self, path: str | Path, levels: list[str]):
        self.reader = IndexReader(path)
        self.by_level: dict[str, tuple[list[int], BM25Okapi]] = {}
        for level in levels:
            rows = self.reader.db.execute(
                "SELECT rowid, tokens FROM nodes WHERE level = ? AND tokens IS NOT NULL ORDER BY rowid", (level,)
            ).fetchall()
            if not rows:
                raise ValueError(f"{path}: no '{level}' nodes in this BM25 index (built for {self.reader.meta.get('levels')})")
            self.by_level[level] = ([r[0] for r in rows], BM25Okapi([json.loads(r[1]) or ["<empty>"] for r in rows]))

    def search(self, query: str, k: int) -> list[tuple[StoredNode, float]]:
        q = tokenize(query)
        scored: list[tuple[float, int]] = []
        for rowids, bm25 in self.by_level.values():
            scores = bm25.get_scores(q)
            top = np.argsort(-scores, kind="stable")[:k]
            scored += [(float(scores[i]), rowids[i]) for i in top if scores[i] > 0]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [(self.reader.node_by_rowid(r), s) for s, r in scored[:k]]

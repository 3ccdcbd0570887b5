"""SproutRAG trees in the shared sqlite index, and the searcher that reads them back.

Nodes go into the usual ``nodes``/``vectors`` tables (leaves: level ``chunk``; internal nodes:
level ``subtree``, text left empty and rebuilt from the leaves on read: a chain-shaped tree would
otherwise store its document O(n) times). The tree itself (children, leaf range, size, depth,
height, merge score in merge order) is the ``sprout_tree`` table, enough to redraw any document's
tree. An internal node may cover non-contiguous leaves (no adjacency constraint), so a hit
carries its exact character ``spans``; ``start``/``end`` are their hull.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.index_structures.store import IndexReader, IndexWriter, StoredNode
from pipeline.sprout.build import SproutTree
from pipeline.sprout.chunks import Chunk
from pipeline.tree import DocTree

TREE_SCHEMA = """
CREATE TABLE sprout_tree (
    doc_id TEXT NOT NULL, node INTEGER NOT NULL, node_id TEXT NOT NULL, left INTEGER NOT NULL,
    right INTEGER NOT NULL, parent INTEGER NOT NULL, leaf_lo INTEGER NOT NULL, leaf_hi INTEGER NOT NULL,
    size INTEGER NOT NULL, depth INTEGER NOT NULL, height INTEGER NOT NULL, merge_score REAL,
    PRIMARY KEY (doc_id, node)
);
"""
TREE_COLUMNS = (
    "node",
    "node_id",
    "left",
    "right",
    "parent",
    "leaf_lo",
    "leaf_hi",
    "size",
    "depth",
    "height",
    "merge_score",
)


def write_trees(writer: IndexWriter, built: list[tuple[DocTree, list[Chunk], SproutTree]]) -> dict:
    writer.db.executescript(TREE_SCHEMA)
    counts = {"chunk": 0, "subtree": 0, "documents": 0, "max_height": 0}
    for doc, chunks, t in built:
        nodes = []
        for i in range(t.n_nodes):
            parent = t.node_id(int(t.parent[i])) if t.parent[i] >= 0 else None
            if i < t.n_leaves:
                c = chunks[i]
                nodes.append(
                    StoredNode(
                        t.node_id(i),
                        doc.doc_id,
                        "chunk",
                        "leaf",
                        parent,
                        c.start,
                        c.end,
                        list(c.pages),
                        doc.text[c.start : c.end],
                    )
                )
            else:
                lo, hi = chunks[t.leaf_lo[i]], chunks[t.leaf_hi[i]]
                nodes.append(
                    StoredNode(t.node_id(i), doc.doc_id, "subtree", "internal", parent, lo.start, hi.end, [], "")
                )
        writer.add(nodes, t.vectors)
        writer.db.executemany(
            "INSERT INTO sprout_tree VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    doc.doc_id,
                    i,
                    t.node_id(i),
                    int(t.left[i]),
                    int(t.right[i]),
                    int(t.parent[i]),
                    int(t.leaf_lo[i]),
                    int(t.leaf_hi[i]),
                    int(t.size[i]),
                    int(t.depth[i]),
                    int(t.height[i]),
                    None if np.isnan(t.merge_score[i]) else float(t.merge_score[i]),
                )
                for i in range(t.n_nodes)
            ],
        )
        counts["chunk"] += t.n_leaves
        counts["subtree"] += t.n_nodes - t.n_leaves
        counts["documents"] += 1
        counts["max_height"] = max(counts["max_height"], int(t.height[t.root]))
    return counts


def tree_records(db, doc_id: str) -> list[dict]:
    """One document's tree as rows (node index order; internal nodes in merge order): for figures."""
    rows = db.execute(
        f"SELECT {', '.join(TREE_COLUMNS)} FROM sprout_tree WHERE doc_id = ? ORDER BY node", (doc_id,)
    ).fetchall()
    return [dict(zip(TREE_COLUMNS, r)) for r in rows]


class SproutIndex:
    """All trees of one sprout index in memory (arrays + vectors) for beam search, and node texts."""

    def __init__(self, path: str | Path):
        self.reader = IndexReader(path)
        db = self.reader.db
        vec = {
            rowid: np.frombuffer(blob, dtype=np.float32)
            for rowid, blob in db.execute("SELECT node_rowid, embedding FROM vectors")
        }
        rows = db.execute(
            'SELECT n.rowid, n.doc_id, n.start, n."end", n.text, t.node, t.left, t.right, t.parent, '
            "t.leaf_lo, t.leaf_hi, t.size, t.depth, t.height, t.merge_score FROM sprout_tree t "
            "JOIN nodes n ON n.node_id = t.node_id ORDER BY n.doc_id, t.node"
        ).fetchall()
        by_doc: dict[str, list] = {}
        for r in rows:
            by_doc.setdefault(r[1], []).append(r)
        self.trees: list[SproutTree] = []
        self.leaf_spans: dict[str, list[tuple[int, int]]] = {}
        self.leaf_text: dict[str, list[str]] = {}
        for doc_id in sorted(by_doc):
            rs = by_doc[doc_id]
            n = (len(rs) + 1) // 2
            col = lambda k: np.array([r[k] for r in rs], dtype=np.int64)  # noqa: E731, B023 (called in this iteration only)
            score = np.array([np.nan if r[14] is None else r[14] for r in rs])
            self.trees.append(
                SproutTree(
                    doc_id,
                    n,
                    col(6),
                    col(7),
                    col(8),
                    col(9),
                    col(10),
                    col(11),
                    col(13),
                    col(12),
                    score,
                    np.stack([vec[r[0]] for r in rs]),
                )
            )
            self.leaf_spans[doc_id] = [(r[2], r[3]) for r in rs[:n]]
            self.leaf_text[doc_id] = [r[4] for r in rs[:n]]
        self.by_doc = {t.doc_id: t for t in self.trees}

    def leaves(self, doc_id: str, node: int) -> list[int]:
        return self.by_doc[doc_id].leaves(node)

    def spans(self, doc_id: str, node: int) -> list[list[int]]:
        """Character spans of the node's leaves, adjacent leaves merged into one span."""
        out: list[list[int]] = []
        prev = None
        for leaf in self.leaves(doc_id, node):
            s, e = self.leaf_spans[doc_id][leaf]
            if prev is not None and leaf == prev + 1:
                out[-1][1] = e
            else:
                out.append([s, e])
            prev = leaf
        return out

    def text(self, doc_id: str, node: int) -> str:
        """Leaf texts in document order, one per line (the reference joined left + "\\n" + right)."""
        return "\n".join(self.leaf_text[doc_id][i] for i in self.leaves(doc_id, node))


class SproutStore:
    """What the retrieval stage's context code reads (``node()``, ``db``), with internal-node text rebuilt."""

    def __init__(self, index: SproutIndex):
        self.index = index
        self.reader = index.reader
        self.db = index.reader.db
        self.node_index = {t.node_id(i): (t.doc_id, i) for t in index.trees for i in range(t.n_nodes)}

    def node(self, node_id: str) -> StoredNode | None:
        node = self.reader.node(node_id)
        if node is not None and node.level == "subtree":
            doc_id, i = self.node_index[node_id]
            node.text = self.index.text(doc_id, i)
        return node

    def extra(self, node_id: str) -> dict:
        """Fields a sprout hit adds to the retrieval record: spans, leaves, height, depth, size."""
        doc_id, i = self.node_index[node_id]
        t = self.index.by_doc[doc_id]
        return {
            "spans": self.index.spans(doc_id, i),
            "leaves": len(t.leaves(i)),
            "height": int(t.height[i]),
            "depth": int(t.depth[i]),
        }


def dump_tree(index_path: str | Path, doc_id: str) -> dict:
    """One document's tree as JSON-able data (merge order, heights, spans) for a report figure."""
    reader = IndexReader(index_path)
    rows = tree_records(reader.db, doc_id)
    if not rows:
        raise ValueError(f"{index_path}: no sprout tree for document {doc_id!r}")
    leaves = {
        r[0]: (r[1], r[2])
        for r in reader.db.execute(
            "SELECT node_id, start, \"end\" FROM nodes WHERE doc_id = ? AND level = 'chunk'", (doc_id,)
        )
    }
    reader.close()
    for r in rows:
        if r["left"] < 0:
            r["start"], r["end"] = leaves[r["node_id"]]
    return {"doc_id": doc_id, "nodes": rows}

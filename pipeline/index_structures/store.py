"""One SQLite file per index: node rows + a sqlite-vec ``vec0`` table of their vectors.

The stdlib ``sqlite3`` on our machines is built without extension loading, so
``sqlite_vec.load()`` fails on it; ``sqlean`` (the ``sqlean.py`` package) is a drop-in
sqlite3 module that can load extensions, and it is used for every index connection.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sqlean
import sqlite_vec

from pipeline.io import create_shared_file

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE nodes (
    rowid INTEGER PRIMARY KEY, node_id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL,
    level TEXT NOT NULL, kind TEXT NOT NULL, parent TEXT, start INTEGER NOT NULL,
    "end" INTEGER NOT NULL, pages TEXT NOT NULL, text TEXT NOT NULL, tokens TEXT
);
CREATE INDEX nodes_parent ON nodes(parent);
"""


@dataclass
class StoredNode:
    node_id: str
    doc_id: str
    level: str
    kind: str
    parent: str | None
    start: int
    end: int
    pages: list[int]
    text: str

    @classmethod
    def from_node(cls, node) -> StoredNode:
        """From a :class:`pipeline.tree.Node`."""
        return cls(
            node.id, node.doc_id, node.level, node.kind, node.parent, node.start, node.end, node.pages, node.text
        )


def connect(path: str | Path) -> sqlean.Connection:
    db = sqlean.connect(str(path))
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    return db


class IndexWriter:
    """Writes nodes and vectors into a fresh file; call :meth:`close` to finish."""

    def __init__(self, path: str | Path, dim: int | None, meta: dict):
        """``dim=None`` makes a store without vectors (the BM25 index keeps tokens instead)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Built under a temp name and renamed by close(): a killed build never leaves a
        # half-written index that looks finished.
        self.tmp = self.path.with_name(f".{self.path.name}.tmp")
        self.tmp.unlink(missing_ok=True)
        self.db = connect(create_shared_file(self.tmp))  # the umask policy of every output (pipeline/io.py)
        self.db.executescript(SCHEMA)
        if dim is not None:
            self.db.execute(
                f"CREATE VIRTUAL TABLE vectors USING vec0("
                f"node_rowid INTEGER PRIMARY KEY, embedding float[{dim}] distance_metric=cosine, level TEXT)"
            )
        meta = {**meta, "dim": dim}
        self.db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items()]
        )
        self.rowid = 0

    def add(
        self, nodes: list[StoredNode], vectors: np.ndarray | None = None, tokens: list[list[str] | None] | None = None
    ) -> None:
        """Append nodes with their vectors (dense stores) or their tokens (BM25)."""
        if vectors is not None and len(vectors) != len(nodes):
            raise ValueError(f"{len(nodes)} nodes but {len(vectors)} vectors")
        rows, vecs = [], []
        for i, node in enumerate(nodes):
            self.rowid += 1
            toks = json.dumps(tokens[i]) if tokens is not None and tokens[i] is not None else None
            rows.append(
                (
                    self.rowid,
                    node.node_id,
                    node.doc_id,
                    node.level,
                    node.kind,
                    node.parent,
                    node.start,
                    node.end,
                    json.dumps(node.pages),
                    node.text,
                    toks,
                )
            )
            if vectors is not None:
                vecs.append((self.rowid, np.asarray(vectors[i], dtype=np.float32).tobytes(), node.level))
        self.db.executemany("INSERT INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        if vecs:
            self.db.executemany("INSERT INTO vectors(node_rowid, embedding, level) VALUES (?,?,?)", vecs)

    def add_meta(self, key: str, value) -> None:
        """One more ``meta`` row (a shard's part records what its build found: pipeline/index_structures/parts.py)."""
        self.db.execute("INSERT INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    def close(self) -> None:
        self.db.commit()
        self.db.execute("VACUUM")
        self.db.close()
        os.replace(self.tmp, self.path)


class IndexReader:
    """Exact k-NN over the stored vectors, filtered by level inside the search."""

    def __init__(self, path: str | Path, mmap: bool = False):
        """``mmap``: read the file's pages through a memory map of it instead of copying them into SQLite's
        own page cache (2 MB by default). For an exact k-NN scan, which reads every vector at every query: in the
        scale bench's latency pass, measured again with and without (docs/scale.md), the tree and chunks
        indexes' queries were faster mapped in both mapped passes. SproutRAG's beam search (many small lookups)
        is left as it was: its passes varied more from one to the next than with the map. Reading only: the
        same rows either way."""
        if not Path(path).exists():
            raise FileNotFoundError(f"{path}: index not found (run the index rule first)")
        self.db = connect(path)
        if mmap:
            self.db.execute(f"PRAGMA mmap_size = {Path(path).stat().st_size}")
        self.meta = {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def search(self, query: np.ndarray, k: int, levels: list[str]) -> list[tuple[StoredNode, float]]:
        """Top-``k`` nodes among ``levels`` by cosine similarity (1 - cosine distance)."""
        marks = ",".join("?" * len(levels))
        rows = self.db.execute(
            f"SELECT node_rowid, distance FROM vectors WHERE embedding MATCH ? AND k = ? AND level IN ({marks}) "
            f"ORDER BY distance",
            (np.asarray(query, dtype=np.float32).tobytes(), k, *levels),
        ).fetchall()
        return [(self.node_by_rowid(r), 1.0 - d) for r, d in rows]

    def _node(self, where: str, arg) -> StoredNode | None:
        row = self.db.execute(
            'SELECT node_id, doc_id, level, kind, parent, start, "end", pages, text FROM nodes WHERE ' + where, (arg,)
        ).fetchone()
        if row is None:
            return None
        return StoredNode(row[0], row[1], row[2], row[3], row[4], row[5], row[6], json.loads(row[7]), row[8])

    def nodes_with_vectors(self, batch: int = 2048) -> Iterator[tuple[list[StoredNode], np.ndarray]]:
        """Every node and its vector in rowid order, ``batch`` at a time: a shard's part read back by the merge
        without holding it whole. A node without a vector is an error (a dense store gives every node one)."""
        n_nodes = self.count()
        n_vectors = self.db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        if n_vectors != n_nodes:
            raise ValueError(f"{n_nodes} nodes but {n_vectors} vectors: not a dense store")
        cur = self.db.execute(
            'SELECT n.node_id, n.doc_id, n.level, n.kind, n.parent, n.start, n."end", n.pages, n.text, v.embedding '
            "FROM nodes n JOIN vectors v ON v.node_rowid = n.rowid ORDER BY n.rowid"
        )
        while rows := cur.fetchmany(batch):
            nodes = [StoredNode(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7]), r[8]) for r in rows]
            yield nodes, np.stack([np.frombuffer(r[9], dtype=np.float32) for r in rows])

    def node_by_rowid(self, rowid: int) -> StoredNode:
        """A node a search found (its rowid comes from this index's vectors or postings)."""
        node = self._node("rowid = ?", rowid)
        if node is None:
            raise KeyError(f"no node with rowid {rowid} in this index")
        return node

    def node(self, node_id: str) -> StoredNode | None:
        return self._node("node_id = ?", node_id)

    def count(self, level: str | None = None) -> int:
        if level is None:
            return self.db.execute("SELECT count(*) FROM nodes").fetchone()[0]
        return self.db.execute("SELECT count(*) FROM nodes WHERE level = ?", (level,)).fetchone()[0]

    def vector(self, node_id: str) -> np.ndarray:
        row = self.db.execute(
            "SELECT v.embedding FROM vectors v JOIN nodes n ON n.rowid = v.node_rowid WHERE n.node_id = ?", (node_id,)
        ).fetchone()
        return np.frombuffer(row[0], dtype=np.float32)

    def close(self) -> None:
        self.db.close()

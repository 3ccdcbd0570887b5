"""What the hierarchy learned: a 2-D PCA map of one tree index's vectors, per level.

PCA (not t-SNE) on purpose: linear, deterministic with a fixed solver, and one projection is
shared by all four levels, so a document's sentences, paragraphs, sections and its own vector
can be compared on the same axes (parents are token-weighted means of their children).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA

from pipeline.index_structures.store import connect
from pipeline.tree import LEVELS


def load_vectors(index_path: str | Path, sample: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Node rows (node_id, doc_id, level) and their vectors; at most ``sample`` nodes per level,
    drawn with a seeded generator from the node_id-sorted list (stable across runs)."""
    db = connect(index_path)
    rows = db.execute(
        "SELECT n.node_id, n.doc_id, n.level, v.embedding FROM vectors v "
        "JOIN nodes n ON n.rowid = v.node_rowid ORDER BY n.node_id"
    ).fetchall()
    db.close()
    if not rows:
        raise ValueError(f"{index_path}: no vectors (not a dense tree index?)")
    meta = pd.DataFrame([r[:3] for r in rows], columns=["node_id", "doc_id", "level"])
    vecs = np.stack([np.frombuffer(r[3], dtype=np.float32) for r in rows])
    rng = np.random.default_rng(seed)
    picked: list[int] = []
    for level in LEVELS:
        idx = np.flatnonzero(meta["level"].to_numpy() == level)
        picked.extend(sorted(rng.choice(idx, size=sample, replace=False)) if len(idx) > sample else idx)
    keep = np.asarray(sorted(picked))
    return meta.iloc[keep].reset_index(drop=True), vecs[keep]


def project(vectors: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """2-D coordinates and explained variance ratios; component signs fixed (largest |loading| > 0)
    so the picture does not mirror between platforms."""
    pca = PCA(n_components=2, svd_solver="full")
    xy = pca.fit_transform(vectors.astype(np.float64))
    for j, comp in enumerate(pca.components_):
        if comp[np.argmax(np.abs(comp))] < 0:
            xy[:, j] = -xy[:, j]
    return xy, [float(r) for r in pca.explained_variance_ratio_]

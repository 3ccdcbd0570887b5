"""The per-dataset attention file: every document's chunks, per-head pair attention and leaf vectors.

Computed once per dataset (the ``sprout_attention`` rule) and shared by every sprout index of that
dataset (uniform or trained head weights only change the tree, never the encoder passes). Stored as
safetensors (byte-stable, no pickles): arrays concatenated over documents with offset tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pipeline.io import atomic_write_bytes
from pipeline.sprout.attention import DocAttention


def save_attention(
    path: str | Path, docs: list[DocAttention], chunk_spans: list[list[tuple[int, int]]], meta: dict
) -> None:
    from safetensors.numpy import save

    def offsets(sizes):
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    lh = docs[0].head_values.shape[1] if docs else 0
    dim = docs[0].leaf_vectors.shape[1] if docs else 0
    arrays = {
        "chunk_offsets": offsets([d.n_chunks for d in docs]),
        "chunk_spans": np.asarray([s for spans in chunk_spans for s in spans], dtype=np.int64).reshape(-1, 2),
        "chunk_windows": np.concatenate([d.chunk_windows for d in docs] or [np.zeros(0, np.int32)]).astype(np.int32),
        "leaf_vectors": np.concatenate([d.leaf_vectors for d in docs] or [np.zeros((0, dim), np.float32)]),
        "pair_offsets": offsets([len(d.pairs) for d in docs]),
        "pairs": np.concatenate([d.pairs for d in docs] or [np.zeros((0, 2), np.int32)]).astype(np.int32),
        "head_values": np.concatenate([d.head_values for d in docs] or [np.zeros((0, lh), np.float32)]).astype(
            np.float32
        ),
        "pair_windows": np.concatenate([d.pair_windows for d in docs] or [np.zeros(0, np.int32)]).astype(np.int32),
        "doc_tokens": np.asarray([d.n_tokens for d in docs], dtype=np.int64),
        "doc_windows": np.asarray([d.n_windows for d in docs], dtype=np.int64),
    }
    meta = {**meta, "doc_ids": [d.doc_id for d in docs]}
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    atomic_write_bytes(path, save(arrays, metadata={"meta": json.dumps(meta, sort_keys=True)}))


def load_attention(path: str | Path) -> tuple[dict, dict[str, DocAttention], dict[str, np.ndarray]]:
    """(meta, {doc_id: DocAttention}, {doc_id: chunk spans [n, 2]})."""
    from safetensors import safe_open
    from safetensors.numpy import load_file

    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: sprout attention file not found (run the sprout_attention rule)")
    with safe_open(str(path), "np") as fh:
        meta = json.loads(fh.metadata()["meta"])
    a = load_file(str(path))
    co, po = a["chunk_offsets"], a["pair_offsets"]
    docs, spans = {}, {}
    for d, doc_id in enumerate(meta["doc_ids"]):
        c0, c1, p0, p1 = co[d], co[d + 1], po[d], po[d + 1]
        docs[doc_id] = DocAttention(
            doc_id,
            int(c1 - c0),
            a["pairs"][p0:p1],
            a["head_values"][p0:p1],
            a["pair_windows"][p0:p1],
            a["leaf_vectors"][c0:c1],
            a["chunk_windows"][c0:c1],
            int(a["doc_tokens"][d]),
            int(a["doc_windows"][d]),
        )
        spans[doc_id] = a["chunk_spans"][c0:c1]
    return meta, docs, spans

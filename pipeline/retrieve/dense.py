"""Dense retrieval: top-k nodes per question from one index, with context expansion.

Filtering by level happens inside the vector search (sqlite-vec metadata column), so
``top_k`` results really come back; KohakuRAG filtered after a global top-k and lost some.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.index.store import IndexReader, StoredNode

EXPAND_LEVEL = {"paragraph": ("paragraph",), "section": ("section",)}


def expand(reader: IndexReader, node: StoredNode, to: str) -> StoredNode:
    """The node's ancestor at level ``to`` (the node itself when it is at or above it)."""
    if to == "none":
        return node
    order = ["sentence", "paragraph", "section", "document"]
    current = node
    while current.level in order and order.index(current.level) < order.index(to) and current.parent:
        current = reader.node(current.parent)
    return current


def hit_record(node: StoredNode, score: float, context: StoredNode) -> dict:
    return {
        "node_id": node.node_id,
        "doc_id": node.doc_id,
        "level": node.level,
        "score": round(float(score), 6),
        "text": node.text,
        "start": node.start,
        "end": node.end,
        "pages": node.pages,
        "context_id": context.node_id,
        "context": context.text,
    }


def retrieve(index_path: str | Path, questions: pd.DataFrame, retrieval_cfg: dict, embedding_cfg: dict,
             cache_dir: str | Path, progress: bool = True) -> list[dict]:
    """One record per question, hits in rank order (the retrieval JSONL contract)."""
    reader = IndexReader(index_path)
    encoder = make_encoder(embedding_cfg)
    if reader.meta["model_id"] != encoder.model_id:
        raise ValueError(
            f"{index_path}: built with {reader.meta['model_id']}, queried with {encoder.model_id}; rebuild the index"
        )
    cache = EmbeddingCache(Path(cache_dir) / "embeddings.sqlite")
    queries = questions["question"].tolist()
    qvecs = cache.encode(encoder, queries, progress=False)
    out = []
    for (qid, query), qvec in tqdm(zip(zip(questions["id"], queries), qvecs), total=len(queries),
                                   desc="retrieve", disable=not progress):
        hits = reader.search(qvec, retrieval_cfg["top_k"], retrieval_cfg["levels"])
        out.append({
            "id": qid,
            "query": query,
            "hits": [hit_record(n, s, expand(reader, n, retrieval_cfg["expand"])) for n, s in hits],
        })
    reader.close()
    return out

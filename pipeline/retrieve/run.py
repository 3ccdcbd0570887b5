"""The retrieval stage: per question, ranked hits from a dense or BM25 index (or a hybrid of
both), each expanded to its context, in the retrieval JSONL contract."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline.index.bm25 import BM25Searcher
from pipeline.index.store import IndexReader, StoredNode
from pipeline.retrieve.dense import DenseSearcher
from pipeline.retrieve.fusion import append, convex, rrf

ORDER = ["chunk", "sentence", "paragraph", "section", "document"]


def expand(reader: IndexReader, node: StoredNode, to: str) -> StoredNode:
    """The node's ancestor at level ``to`` (the node itself when it is at or above it)."""
    if to == "none" or node.level == "chunk":
        return node
    current = node
    while ORDER.index(current.level) < ORDER.index(to) and current.parent:
        current = reader.node(current.parent)
    return current


def hit_record(node: StoredNode, score: float, context: StoredNode, source: str) -> dict:
    return {
        "node_id": node.node_id, "doc_id": node.doc_id, "level": node.level, "score": round(float(score), 6),
        "text": node.text, "start": node.start, "end": node.end, "pages": node.pages, "source": source,
        "context_id": context.node_id, "context": context.text,
    }


def retrieve(questions: pd.DataFrame, params: dict, index_dir: str | Path, cache_dir: str | Path,
             progress: bool = True) -> list[dict]:
    """``params`` is a retrieval slice of the config (see :func:`pipeline.config.retrieval_slice`);
    index files are ``<index_dir>/<index name>.sqlite``."""
    cfg, embedding_cfg = params["retrieval"], params["embedding"]
    main, hybrid = cfg["index"], cfg.get("hybrid")
    index_kinds = {name: idx["kind"] for name, idx in params["indexes"].items()}
    index_paths = {name: Path(index_dir) / f"{name}.sqlite" for name in index_kinds}
    dense = bm25 = None
    for name in [main] + ([hybrid["index"]] if hybrid else []):
        if index_kinds[name] == "bm25":
            bm25 = BM25Searcher(index_paths[name], cfg["levels"])
        else:
            dense = DenseSearcher(index_paths[name], embedding_cfg, cache_dir)
    store = (dense.reader if dense else bm25.reader)
    queries = questions["question"].tolist()
    qvecs = dense.encode(queries) if dense else [None] * len(queries)
    out = []
    for qid, query, qvec in tqdm(list(zip(questions["id"], queries, qvecs)), desc="retrieve", disable=not progress):
        lists, nodes = {}, {}
        if dense:
            found = dense.search(qvec, cfg["top_k"] if not hybrid else max(cfg["top_k"], hybrid["top_k"]), cfg["levels"])
            lists["dense"] = [(n.node_id, s) for n, s in found]
            nodes.update((n.node_id, n) for n, _ in found)
        if bm25:
            k = hybrid["top_k"] if hybrid else cfg["top_k"]
            found = bm25.search(query, k, cfg.get("level_fusion", "score"))
            lists["bm25"] = [(n.node_id, s) for n, s in found]
            nodes.update((n.node_id, n) for n, _ in found)
        if not hybrid:
            ranked = next(iter(lists.values()))
        elif hybrid["mode"] in ("rrf", "convex"):
            weights = [1 - hybrid["weight"], hybrid["weight"]] if "weight" in hybrid else None
            fuse = rrf if hybrid["mode"] == "rrf" else convex
            ranked = fuse([lists["dense"], lists["bm25"]], cfg["top_k"], weights=weights)
        else:
            ranked = append(lists["dense"][: cfg["top_k"]], lists["bm25"], hybrid["top_k"])
        members = {name: {n for n, _ in found} for name, found in lists.items()}
        source = {n: "+".join(name for name in sorted(lists) if n in members[name]) for n in nodes}
        hits = [hit_record(nodes[n], s, expand(store, nodes[n], cfg["expand"]), source[n]) for n, s in ranked]
        out.append({"id": qid, "query": query, "hits": hits})
    return out

"""Building one index file: DocTrees -> a sqlite(-vec) file + its manifest.

Two shapes share the writer and the manifest: dense indexes (an encoder through the embedding
cache; what they embed is the kind's ``add_nodes``) and lexical ones (tokens, no vectors). Which
kind uses which is said by the kind's module in :mod:`pipeline.indexes`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.index.bm25 import build_bm25_index
from pipeline.index.store import IndexWriter
from pipeline.provenance import write_manifest
from pipeline.tree import DocTree

log = logging.getLogger(__name__)

# add_nodes(trees, embed, count_tokens, writer) -> counts per level
AddNodes = Callable[[list[DocTree], Callable, Callable, IndexWriter], dict]


def build_dense_index(
    tree_paths: list[str],
    out_path: str,
    index_cfg: dict,
    embedding_cfg: dict,
    cache_dir: str,
    config_slice: dict | None,
    add_nodes: AddNodes,
) -> dict:
    """Embed through the cache, write the nodes ``add_nodes`` makes, write the manifest."""
    trees = [DocTree.load(p) for p in sorted(tree_paths)]
    encoder = make_encoder(embedding_cfg)
    cache = EmbeddingCache(Path(cache_dir) / "embeddings.sqlite")
    writer = IndexWriter(out_path, encoder.dim, {"model_id": encoder.model_id, "index": index_cfg})
    t0 = time.perf_counter()
    embed = lambda texts: cache.encode(encoder, texts)  # noqa: E731 - a closure over the cache
    counts = add_nodes(trees, embed, encoder.count_tokens, writer)
    writer.close()
    stats = {
        "counts": counts,
        "seconds": round(time.perf_counter() - t0, 3),
        "cache": cache.stats(),
        "model_id": encoder.model_id,
    }
    log.info("index %s: %s", out_path, stats)
    write_manifest(
        out_path,
        config_slice or {"index": index_cfg, "embedding": embedding_cfg},
        inputs=sorted(tree_paths),
        model_id=encoder.model_id,
        counts=counts,
    )
    return stats


def build_lexical_index(tree_paths: list[str], out_path: str, index_cfg: dict, config_slice: dict | None) -> dict:
    """The tokenised nodes of ``index_cfg['levels']`` (BM25): no encoder, no vectors."""
    trees = [DocTree.load(p) for p in sorted(tree_paths)]
    writer = IndexWriter(out_path, None, {"model_id": "bm25", "index": index_cfg, "levels": index_cfg["levels"]})
    counts = build_bm25_index(trees, index_cfg["levels"], writer)
    writer.close()
    write_manifest(out_path, config_slice or {"index": index_cfg}, inputs=sorted(tree_paths), counts=counts)
    return {"counts": counts}

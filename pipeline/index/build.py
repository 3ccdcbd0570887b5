"""The index stage: DocTrees + an encoder -> one sqlite-vec file per index variant."""
from __future__ import annotations

import logging
import time
from pathlib import Path

from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.index.bm25 import build_bm25_index
from pipeline.index.flat import build_chunk_index
from pipeline.index.hier import build_tree_index
from pipeline.index.store import IndexWriter
from pipeline.provenance import write_manifest
from pipeline.tree import DocTree

log = logging.getLogger(__name__)


def build_index(tree_paths: list[str], out_path: str, index_cfg: dict, embedding_cfg: dict,
                cache_dir: str, config_slice: dict | None = None) -> dict:
    """Build one index variant and write its manifest. Returns counts and timings."""
    trees = [DocTree.load(p) for p in sorted(tree_paths)]
    if index_cfg["kind"] == "bm25":  # lexical: no encoder, no vectors
        writer = IndexWriter(out_path, None, {"model_id": "bm25", "index": index_cfg, "levels": index_cfg["levels"]})
        counts = build_bm25_index(trees, index_cfg["levels"], writer)
        writer.close()
        write_manifest(out_path, config_slice or {"index": index_cfg}, inputs=sorted(tree_paths), counts=counts)
        return {"counts": counts}
    encoder = make_encoder(embedding_cfg)
    cache = EmbeddingCache(Path(cache_dir) / "embeddings.sqlite")
    writer = IndexWriter(out_path, encoder.dim, {"model_id": encoder.model_id, "index": index_cfg})
    t0 = time.perf_counter()
    embed = lambda texts: cache.encode(encoder, texts)  # noqa: E731 - a closure over the cache
    if index_cfg["kind"] == "tree":
        counts = build_tree_index(trees, embed, encoder.count_tokens, writer)
    else:
        counts = build_chunk_index(trees, embed, encoder.count_tokens, writer,
                                   index_cfg["chunk_tokens"], index_cfg["overlap_tokens"])
    writer.close()
    stats = {"counts": counts, "seconds": round(time.perf_counter() - t0, 3), "cache": cache.stats(),
             "model_id": encoder.model_id}
    log.info("index %s: %s", out_path, stats)
    write_manifest(out_path, config_slice or {"index": index_cfg, "embedding": embedding_cfg},
                   inputs=sorted(tree_paths), model_id=encoder.model_id, counts=counts)
    return stats

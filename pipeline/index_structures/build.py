"""Building one index file: DocTrees -> a sqlite(-vec) file + its manifest.

Two shapes share the writer and the manifest: dense indexes (an encoder through the embedding
cache; what they embed is the kind's ``add_nodes``) and lexical ones (tokens, no vectors). Which
kind uses which is said by the kind's module in :mod:`pipeline.indexes`; both read an
:class:`~pipeline.registry.index_kinds.IndexJob` (settings from its typed specs; the hashed params only as provenance).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.embed.kernels import encoder_path
from pipeline.index_structures.bm25 import build_bm25_index
from pipeline.index_structures.parts import merge_parts, write_part_meta
from pipeline.index_structures.store import IndexWriter
from pipeline.provenance import write_manifest
from pipeline.registry.index_kinds import IndexJob
from pipeline.tree import DocTree

log = logging.getLogger(__name__)

# add_nodes(trees, embed, count_tokens, writer) -> counts per level
AddNodes = Callable[[list[DocTree], Callable, Callable, IndexWriter], dict]


def build_dense_index(job: IndexJob, add_nodes: AddNodes) -> dict:
    """Embed through the cache, write the nodes ``add_nodes`` makes, write the manifest. A shard's job
    (``job.part``) writes its part, with what the merge needs in its meta; a merge (``job.parts``) embeds nothing
    (pipeline/index_structures/parts.py)."""
    if job.embedding is None:
        raise ValueError(f"index {job.spec.name}: a dense index needs an embedding")
    if job.parts:
        return merge_parts(job)
    index_cfg = job.provenance["index"]  # recorded in the file as the config wrote it (the spec has every key)
    trees = [DocTree.load(p) for p in sorted(job.trees)]
    encoder = make_encoder(job.embedding)
    cache = EmbeddingCache(Path(job.cache_dir) / "embeddings.sqlite")
    writer = IndexWriter(job.out, encoder.dim, {"model_id": encoder.model_id, "index": index_cfg})
    t0 = time.perf_counter()
    embed = lambda texts: cache.encode(encoder, texts)  # noqa: E731 - a closure over the cache
    counts = add_nodes(trees, embed, encoder.count_tokens, writer)
    # encoder_path: e.g. "int8 (vnni)", what the vectors were computed in and on which kernels (embed/kernels.py)
    path = encoder_path(encoder).as_dict()
    if job.part:
        write_part_meta(writer, counts, path)
    writer.close()
    stats = {
        "counts": counts,
        "seconds": round(time.perf_counter() - t0, 3),
        "cache": cache.stats(),
        "model_id": encoder.model_id,
    }
    log.info("index %s: %s", job.out, stats)
    write_manifest(  # a shard's part has one too: its own trees
        job.out, job.provenance, inputs=sorted(job.trees), model_id=encoder.model_id, encoder_path=path, counts=counts
    )
    return stats


def build_lexical_index(job: IndexJob, levels: list[str]) -> dict:
    """The tokenised nodes of ``levels`` (BM25): no encoder, no vectors."""
    index_cfg = job.provenance["index"]  # recorded in the file as the config wrote it
    trees = [DocTree.load(p) for p in sorted(job.trees)]
    writer = IndexWriter(job.out, None, {"model_id": "bm25", "index": index_cfg, "levels": levels})
    counts = build_bm25_index(trees, levels, writer)
    writer.close()
    write_manifest(job.out, job.provenance, inputs=sorted(job.trees), counts=counts)
    return {"counts": counts}

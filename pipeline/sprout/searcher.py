"""SproutRAG's searcher: query vector -> beam search over every document's tree.

Queries are encoded like the leaves' encoder (fp32 MiniLM, mean pooling over all tokens, L2
normalised; §3.1), through the shared embedding cache.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.index.store import StoredNode
from pipeline.specs import BeamSpec
from pipeline.sprout.search import BeamConfig, search_documents
from pipeline.sprout.store import SproutIndex, SproutStore


def beam_config(cfg: dict) -> BeamConfig:
    """A sprout retrieval variant's beam search: its keys over the schema's defaults."""
    return BeamConfig(top_k=cfg["top_k"], **asdict(BeamSpec.from_dict(cfg)))


class SproutSearcher:
    def __init__(self, index_path: str | Path, retrieval_cfg: dict, cache_dir: str | Path, threads: int = 2):
        self.index = SproutIndex(index_path)
        self.store = SproutStore(self.index)
        self.beam = beam_config(retrieval_cfg)
        self.encoder = make_encoder({"backend": "torch", "max_tokens": 512, "threads": threads})
        self.cache = EmbeddingCache(Path(cache_dir) / "embeddings.sqlite")

    def encode(self, queries: list[str]) -> np.ndarray:
        return self.cache.encode(self.encoder, queries, progress=False)

    def search(self, query: str, qvec: np.ndarray, k: int) -> list[tuple[StoredNode, float]]:
        """Beam search over every document's tree; ``k`` is the variant's ``top_k``, already in the beam."""
        hits = []
        for found in search_documents(self.index.trees, qvec, self.beam):
            node = self.store.node(found.node_id)
            assert node is not None, "the beam visits only this index's own trees"
            hits.append((node, found.score))
        return hits

    def hit_extra(self, node_id: str) -> dict:
        """Exact spans (a subtree may cover non-adjacent leaves), size, height, depth of a hit."""
        return self.store.extra(node_id)

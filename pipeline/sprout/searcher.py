"""SproutRAG's searcher: query vector -> beam search over every document's tree.

Queries are encoded like the leaves' encoder (fp32 MiniLM, mean pooling over all tokens, L2
normalised; §3.1), through the shared embedding cache.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.config_schema import declared_defaults
from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.index_structures.store import StoredNode
from pipeline.specs import BeamSpec, EncoderSpec
from pipeline.sprout.beam_search import search_documents
from pipeline.sprout.store import SproutIndex, SproutStore


def query_encoder(threads: int | None = None) -> EncoderSpec:
    """The query encoder: the leaves' MiniLM on the torch backend, the declared ``embedding`` defaults
    (max_tokens, batch_size; threads unless given). The searcher, head training and the bench share it."""
    given = {"backend": "torch", "max_tokens": declared_defaults(EncoderSpec)["max_tokens"]}
    return EncoderSpec.from_dict({**given, **({"threads": threads} if threads is not None else {})})


class SproutSearcher:
    def __init__(self, index_path: str | Path, beam: BeamSpec, encoder: EncoderSpec, cache_dir: str | Path):
        self.index = SproutIndex(index_path)
        self.store = SproutStore(self.index)
        self.beam = beam
        self.encoder = make_encoder(encoder, lazy=True)  # loads at the first query not in the cache
        self.cache = EmbeddingCache(Path(cache_dir) / "embeddings.sqlite")

    def encode(self, queries: list[str]) -> np.ndarray:
        return self.cache.encode(self.encoder, queries, progress=False)

    def search(self, query: str, qvec: np.ndarray, k: int) -> list[tuple[StoredNode, float]]:
        """Beam search over every document's tree, the best ``k`` (the variant's ``top_k``) pooled."""
        hits = []
        for found in search_documents(self.index.trees, qvec, self.beam, k):
            node = self.store.node(found.node_id)
            assert node is not None, "the beam visits only this index's own trees"
            hits.append((node, found.score))
        return hits

    def hit_extra(self, node_id: str) -> dict:
        """Exact spans (a subtree may cover non-adjacent leaves), size, height, depth of a hit."""
        return self.store.extra(node_id)

"""Dense retrieval over one sqlite-vec store.

Filtering by level happens inside the vector search (a sqlite-vec metadata column), so
``k`` results really come back; KohakuRAG filtered after a global top-k and lost some.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.embed import EmbeddingCache, make_encoder
from pipeline.index_structures.store import IndexReader, StoredNode
from pipeline.specs import EncoderSpec


class DenseSearcher:
    def __init__(self, index_path: str | Path, embedding: EncoderSpec, cache_dir: str | Path):
        self.reader = IndexReader(index_path, mmap=True)  # an exact scan of every vector a query
        self.encoder = make_encoder(embedding, lazy=True)  # loads at the first query not in the cache
        if self.reader.meta["model_id"] != self.encoder.model_id:
            raise ValueError(
                f"{index_path}: built with {self.reader.meta['model_id']}, queried with "
                f"{self.encoder.model_id}; rebuild the index"
            )
        self.cache = EmbeddingCache(Path(cache_dir) / "embeddings.sqlite")

    def encode(self, queries: list[str]) -> np.ndarray:
        return self.cache.encode(self.encoder, queries, progress=False)

    def search(self, qvec: np.ndarray, k: int, levels: list[str]) -> list[tuple[StoredNode, float]]:
        return self.reader.search(qvec, k, levels)

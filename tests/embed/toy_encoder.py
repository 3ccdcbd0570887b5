"""A toy embedding backend, kept outside the package: it registers at import, like the built-in ones, and is
a plugin: its distribution declares entry point ``toy = "toy_encoder"`` of group ``wattbench.embed_backends``
(tests/embed/test_toy_backend.py's PLUGIN)."""
import hashlib

import numpy as np

from pipeline.embed.backends import EmbedBackend, register
from pipeline.embed.base import l2_normalise


class ToyEncoder:
    """Hashes each word into ``dim`` buckets: deterministic vectors with no model to load."""

    def __init__(self, model: str | None, dim: int | None, max_tokens: int | None):
        self.dim = dim or 8
        self.max_tokens = max_tokens
        self.model_id = f"{model or 'words'}/toy-{self.dim}d"  # its cache key: what it computes

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, hashlib.sha256(word.encode()).digest()[0] % self.dim] += 1
        return l2_normalise(out)

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]


register(EmbedBackend("toy", lambda spec, run: ToyEncoder(spec.model, spec.dim, spec.max_tokens),
                      keys=frozenset({"dim"})))

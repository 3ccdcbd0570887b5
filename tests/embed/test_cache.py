import numpy as np
import pytest

from pipeline.embed import EmbeddingCache


class Counting:
    """Wraps an encoder and records every text it is asked to embed."""

    def __init__(self, inner, model_id=None):
        self.inner, self.model_id, self.dim = inner, model_id or inner.model_id, inner.dim
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen += texts
        return self.inner.encode(texts)

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)


def test_cache_hits_reopen_and_model_id(tmp_path, onnx_encoder, sentences):
    path = tmp_path / "emb.sqlite"
    texts = sentences[:10] + sentences[:3]  # duplicates
    enc = Counting(onnx_encoder)
    with EmbeddingCache(path, chunk_size=4) as cache:
        first = cache.encode(enc, texts, progress=False)
        assert sorted(enc.seen) == sorted(sentences[:10])  # each unique text encoded once
        assert cache.stats() == {"hits": 3, "misses": 10}
        np.testing.assert_array_equal(first[10:], first[:3])
        again = cache.encode(enc, texts, progress=False)
        assert len(enc.seen) == 10  # zero new encoder calls
        assert again.tobytes() == first.tobytes()
        assert cache.stats() == {"hits": 16, "misses": 10}

    enc2 = Counting(onnx_encoder)
    with EmbeddingCache(path) as reopened:
        assert len(reopened) == 10
        assert reopened.encode(enc2, texts, progress=False).tobytes() == first.tobytes()
        assert enc2.seen == [] and reopened.stats() == {"hits": 13, "misses": 0}

        other = Counting(onnx_encoder, model_id="something-else/onnx-int8")
        reopened.encode(other, sentences[:2], progress=False)
        assert sorted(other.seen) == sorted(sentences[:2])  # different model_id → miss
        assert reopened.encode(enc2, [], progress=False).shape == (0, 384)


def test_killed_run_keeps_committed_chunks(tmp_path, onnx_encoder, sentences):
    class Dies(Counting):
        def encode(self, texts):
            if len(self.seen) >= 4:
                raise KeyboardInterrupt
            return super().encode(texts)

    path = tmp_path / "emb.sqlite"
    cache = EmbeddingCache(path, chunk_size=2)
    with pytest.raises(KeyboardInterrupt):
        cache.encode(Dies(onnx_encoder), sentences[:8], progress=False)
    cache.close()
    enc = Counting(onnx_encoder)
    with EmbeddingCache(path, chunk_size=2) as cache:
        cache.encode(enc, sentences[:8], progress=False)
        assert len(enc.seen) == 4 and cache.stats()["hits"] == 4

import numpy as np
import pytest

from pipeline.embed import make_encoder


@pytest.fixture
def fake_litellm(monkeypatch):
    """Replace litellm.embedding with a deterministic, un-normalised fake that records its calls."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    calls = []

    def embedding(model, input, **kw):
        calls.append((model, list(input)))
        data = [{"object": "embedding", "index": i, "embedding": [len(t) + 1.0, 3.0, 4.0]} for i, t in enumerate(input)]
        return {"object": "list", "model": model, "data": data[::-1]}  # out of order on purpose

    monkeypatch.setattr(litellm, "embedding", embedding)
    return calls


def test_litellm_backend(fake_litellm):
    enc = make_encoder({"backend": "litellm", "model": "openai/text-embedding-3-small", "batch_size": 2})
    assert enc.model_id == "openai/text-embedding-3-small/litellm"
    texts = ["a", "bbb", "cc", "dddd", "e"]
    v = enc.encode(texts)
    assert [len(c[1]) for c in fake_litellm] == [2, 2, 1]  # batched
    assert all(c[0] == "openai/text-embedding-3-small" for c in fake_litellm)
    assert v.shape == (5, 3) and enc.dim == 3
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    raw = np.array([[len(t) + 1.0, 3.0, 4.0] for t in texts])
    np.testing.assert_allclose(v, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=1e-6)  # order kept
    assert enc.count_tokens(["energy use", ""]) == [2, 0]


def test_litellm_dim_probe(fake_litellm):
    enc = make_encoder({"backend": "litellm", "model": "m"})
    assert enc.dim == 3 and len(fake_litellm) == 1
    assert make_encoder({"backend": "litellm", "model": "m", "dim": 3}).dim == 3 and len(fake_litellm) == 1


def test_litellm_needs_model():
    with pytest.raises(ValueError, match="model"):
        make_encoder({"backend": "litellm"})

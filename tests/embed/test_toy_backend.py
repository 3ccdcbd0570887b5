"""A new embedding backend is one registration: the config accepts it, the factory makes its encoder,
the cache keys its vectors by its own model_id, and its own keys are refused to other backends."""
import sys
from pathlib import Path

import pytest

from pipeline.config import ConfigError, load_config
from pipeline.datasets.paths import REPO
from pipeline.embed import BACKENDS, EmbeddingCache, make_encoder
from pipeline.embed.backends import GROUP, unregister

HERE = Path(__file__).parent
PLUGIN = ("wattbench-toy-encoder", [HERE / "toy_encoder.py"], {GROUP: {"toy": "toy_encoder"}})


@pytest.fixture
def toy(monkeypatch, plugin_site):
    """tests/embed/toy_encoder.py, a plugin pip-installed into a folder put on sys.path (as a job finds it)."""
    monkeypatch.syspath_prepend(str(plugin_site(*PLUGIN)))
    yield
    unregister("toy")
    sys.modules.pop("toy_encoder", None)


def test_a_registered_backend_is_made_by_the_factory_with_its_own_cache_key(toy, tmp_path):
    assert "toy" in BACKENDS.names() and BACKENDS.origin("toy") == "wattbench-toy-encoder 0.1.0"
    enc = make_encoder({"backend": "toy", "dim": 16})
    assert (type(enc).__name__, enc.model_id, enc.dim) == ("ToyEncoder", "words/toy-16d", 16)
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        first = cache.encode(enc, ["energy of training", "water use"], progress=False)
        again = cache.encode(make_encoder({"backend": "toy", "dim": 16}), ["water use"], progress=False)
        assert cache.stats() == {"hits": 1, "misses": 2} and (first[1] == again[0]).all()
        rows = cache._db.execute("SELECT DISTINCT model_id FROM embeddings").fetchall()
    assert rows == [("words/toy-16d",)]
    assert make_encoder({"backend": "toy", "model_id": "pinned"}).model_id == "pinned"  # the override still wins


def test_the_config_accepts_a_registered_backend_and_no_other(toy):
    cfg = load_config(REPO / "tests" / "tiny.yaml", {"embedding": {"backend": "toy", "dim": 4}})
    assert cfg["embedding"]["backend"] == "toy"
    with pytest.raises(ConfigError, match="embedding.backend"):
        load_config(REPO / "tests" / "tiny.yaml", {"embedding": {"backend": "toy-not-registered"}})


def test_a_backend_refuses_the_keys_of_another(toy):
    with pytest.raises(ValueError, match="embedding.dim: backend 'onnx-int8' does not take it"):
        make_encoder({"backend": "onnx-int8", "dim": 4})
    with pytest.raises(ValueError, match="embedding.precision: backend 'toy' does not take it"):
        make_encoder({"backend": "toy", "precision": "int8"})

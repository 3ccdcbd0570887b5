from pathlib import Path

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


class Fixed:
    """A tiny deterministic encoder: the cache's behaviour, not the model's, is under test."""

    model_id, dim = "fixed/3", 3

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen += texts
        return np.array([[len(t), t.count("e"), 1.0] for t in texts], dtype=np.float32)


def test_nfs_mode_uses_a_rollback_journal_and_a_lock_file(tmp_path):
    """As the LLM cache's nfs mode (tests/answer/test_llm_scale.py): shared filesystems have no WAL."""
    import sqlite3

    path = tmp_path / "emb.sqlite"
    enc = Fixed()
    with EmbeddingCache(path, chunk_size=2, journal="nfs") as cache:
        first = cache.encode(enc, ["one", "three", "seven"], progress=False)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert (tmp_path / "emb.sqlite.lock").exists() and not (tmp_path / "emb.sqlite-wal").exists()
    with EmbeddingCache(path, journal="nfs") as again:  # reopened: every vector served from the cache
        assert again.encode(enc, ["seven", "one"], progress=False).tobytes() == first[[2, 0]].tobytes()
        assert enc.seen == ["one", "three", "seven"] and again.stats() == {"hits": 2, "misses": 0}


def test_the_journal_comes_from_the_run_and_a_bad_one_is_named(tmp_path, monkeypatch):
    """Jobs get the config's cache_journal through the environment (the Snakefile sets it)."""
    import sqlite3

    from pipeline.cache_journal import ENV

    with EmbeddingCache(tmp_path / "wal.sqlite") as cache:
        assert cache.journal == "wal"
    assert sqlite3.connect(tmp_path / "wal.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    monkeypatch.setenv(ENV, "nfs")
    with EmbeddingCache(tmp_path / "nfs.sqlite") as cache:
        assert cache.journal == "nfs"
    monkeypatch.setenv(ENV, "lustre")
    with pytest.raises(ValueError, match="cache_journal: 'lustre' is not one of"):
        EmbeddingCache(tmp_path / "bad.sqlite")


@pytest.mark.slow
@pytest.mark.data
def test_a_run_with_cache_journal_nfs_indexes_through_an_nfs_cache(tmp_path):
    """The config key reaches the jobs: the tiny grid's index job writes its embedding cache in nfs mode."""
    import sqlite3

    import yaml
    from dag_runner import snakemake

    from pipeline import paths
    from pipeline.datasets.paths import REPO

    config = tmp_path / "tiny-nfs.yaml"
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text(encoding="utf-8"))
    config.write_text(yaml.safe_dump({**cfg, "cache_journal": "nfs"}), encoding="utf-8")
    work = tmp_path / "work"
    done = snakemake(work, paths.index("wattbot", "hier"), configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]
    cache = work / cfg["cache_dir"] / "embeddings.sqlite"
    assert sqlite3.connect(cache).execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert Path(f"{cache}.lock").exists()


@pytest.mark.parametrize("backend", ["onnx-int8", "torch"])
def test_a_lazy_encoder_loads_only_for_a_text_not_in_the_cache(tmp_path, sentences, backend):
    """make_encoder(lazy=True), as the query searchers build theirs: a job whose queries are all cached
    never loads tokenizer or model (the torch backend's import alone is seconds); a miss loads it, and
    the vectors are the eager encoder's, bit for bit."""
    from pipeline.embed import make_encoder

    eager = make_encoder({"backend": backend, "batch_size": 4})
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        first = cache.encode(eager, sentences[:4], progress=False)
        lazy = make_encoder({"backend": backend, "batch_size": 4}, lazy=True)
        assert (lazy.model_id, lazy.dim) == (eager.model_id, eager.dim)
        assert cache.encode(lazy, sentences[:4], progress=False).tobytes() == first.tobytes()
        assert not lazy.loaded  # all hits: nothing loaded
        more = cache.encode(lazy, sentences[4:8], progress=False)
        assert lazy.loaded
    assert more.tobytes() == eager.encode(sentences[4:8]).tobytes()

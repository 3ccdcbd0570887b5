"""On-disk embedding cache: re-running a benchmark only pays for texts it has never embedded.

Key = (encoder.model_id, sha256(text)); value = the float32 vector bytes. Stdlib sqlite3, one
commit per encoded chunk, so a killed run keeps every chunk it finished. WAL mode on local disks;
``journal='nfs'`` (config ``cache_journal``) for a cache on a shared filesystem: rollback journal,
each write under a lock file (pipeline/cache_journal.py).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
from tqdm import tqdm

from pipeline.cache_journal import journal_mode, journal_pragma, write_lock
from pipeline.io import create_shared_file

from .base import Encoder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model_id, text_sha256)
) WITHOUT ROWID
"""
_LOOKUP_CHUNK = 500  # stay far below SQLite's bound-parameter limit


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    def __init__(self, path: str | Path, chunk_size: int = 256, journal: str | None = None):
        """`chunk_size` texts go to the encoder per call and per commit (crash-safety granularity);
        `journal` 'wal' or 'nfs' (None: the run's ``cache_journal``, see pipeline/cache_journal.py)."""
        self.path = create_shared_file(path)  # the umask policy of every output, for it and its -wal/-shm
        self.chunk_size = chunk_size
        self.journal = journal_mode(journal)
        self._db = sqlite3.connect(str(path), timeout=60)
        self._db.execute(journal_pragma(self.journal))
        self._db.execute("PRAGMA synchronous=NORMAL")  # survives a killed process; only power loss can drop the tail
        with write_lock(self.path, self.journal):
            self._db.execute(_SCHEMA)
            self._db.commit()
        self._hits = 0
        self._misses = 0

    def _lookup(self, model_id: str, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            part = keys[start : start + _LOOKUP_CHUNK]
            q = f"SELECT text_sha256, vec FROM embeddings WHERE model_id = ? AND text_sha256 IN ({','.join('?' * len(part))})"
            found.update(self._db.execute(q, [model_id, *part]).fetchall())
        return found

    def encode(self, encoder: Encoder, texts: list[str], progress: bool = True) -> np.ndarray:
        """Vectors for `texts` in order; only unseen unique texts reach the encoder."""
        model_id = encoder.model_id
        keys = [text_key(t) for t in texts]
        blobs = self._lookup(model_id, list(dict.fromkeys(keys)))
        todo: dict[bytes, str] = {}
        for k, t in zip(keys, texts):
            if k not in blobs:
                todo.setdefault(k, t)
        # Similar lengths in one chunk keep the encoder's own length-sorted batching effective.
        pending = sorted(todo.items(), key=lambda kv: len(kv[1]))
        with tqdm(
            total=len(pending), desc=f"embed {model_id}", unit="text", disable=not progress or not pending
        ) as bar:
            for start in range(0, len(pending), self.chunk_size):
                chunk = pending[start : start + self.chunk_size]
                vecs = np.ascontiguousarray(encoder.encode([t for _, t in chunk]), dtype=np.float32)
                rows = [(model_id, k, v.tobytes()) for (k, _), v in zip(chunk, vecs)]
                with write_lock(self.path, self.journal):
                    self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
                    self._db.commit()
                blobs.update((k, b) for _, k, b in rows)
                bar.update(len(chunk))
        self._misses += len(pending)
        self._hits += len(texts) - len(pending)
        if not texts:
            return np.zeros((0, getattr(encoder, "dim", 0) or 0), dtype=np.float32)
        return np.stack([np.frombuffer(blobs[k], dtype=np.float32) for k in keys])

    def stats(self) -> dict[str, int]:
        """This session's counts: misses = unique texts encoded, hits = requested texts served without encoding."""
        return {"hits": self._hits, "misses": self._misses}

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""The SQLite journal of the on-disk caches (embeddings, LLM replies): local disk or shared filesystem.

``wal`` (local disk, the default): a write-ahead log, readers never wait for the writer. WAL keeps
its index in shared memory (``<db>-shm``), which NFS and other shared filesystems do not share
between machines, so two compute nodes writing one cache over WAL can corrupt it. ``nfs``: the
rollback journal (``DELETE``) with every write transaction under an ``fcntl`` lock on
``<db>.lock`` (POSIX locks reach the server on NFSv4). Execution-only: the mode changes no
params and no cache key. Jobs learn it from :data:`ENV`, which the Snakefile sets from the
config's ``cache_journal`` (a cluster job reads the Snakefile again, so it sets it there too).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

JOURNALS = ("wal", "nfs")  # the config's choices (cache_journal, llm.cache_journal)
ENV = "WATTBENCH_CACHE_JOURNAL"


def journal_mode(journal: str | None, key: str = "cache_journal") -> str:
    """``journal``, else :data:`ENV`'s value, else ``wal``; checked (the error names ``key``)."""
    journal = journal or os.environ.get(ENV) or "wal"
    if journal not in JOURNALS:
        raise ValueError(f"{key}: '{journal}' is not one of {JOURNALS}")
    return journal


def journal_pragma(journal: str) -> str:
    return f"PRAGMA journal_mode={'WAL' if journal == 'wal' else 'DELETE'}"


@contextlib.contextmanager
def write_lock(db_path: str | Path, journal: str) -> Iterator[None]:
    """Hold ``<db_path>.lock`` (``nfs``) around one write transaction; nothing to hold for ``wal``."""
    if journal != "nfs":
        yield
        return
    import fcntl

    with open(f"{db_path}.lock", "a") as lock:  # closing it releases the lock
        fcntl.lockf(lock, fcntl.LOCK_EX)
        yield

"""The LLM reply cache: an append-only SQLite table request-hash -> result, plus leases.

Every request is keyed by a hash of its full content (model, messages, parameters, seed,
sample index, and the endpoint when one is set), so a rerun makes zero calls and a run can be
replayed offline. The key is ``stable_hash(asdict(request))`` (``endpoint`` only when set):
changing :class:`LLMRequest`'s fields or that hash re-buys every stored call
(``tests/llm/test_cache_key.py`` pins it).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.cache_journal import JOURNALS, journal_pragma, write_lock
from pipeline.io import create_shared_file
from pipeline.provenance import stable_hash


@dataclass
class LLMResult:
    text: str
    ok: bool
    error: str = ""
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    attempts: int = 0
    fatal: bool = False  # a non-retryable error (auth, permission, unknown model, bad request)
    # what the provider said it ran (litellm's ``response.model`` / ``.system_fingerprint``): an alias
    # that drifts (``gpt-4o-mini`` now and next year) or a server whose weights changed shows in the cache
    model_id: str = ""
    system_fingerprint: str | None = None


@dataclass
class LLMRequest:
    model: str
    messages: list[dict]
    params: dict = field(default_factory=dict)
    seed: int | None = None
    sample: int = 0
    # the server (``api_base``) when the model string does not pin the weights: two servers answering
    # under one model name never share replies. None (hosted without api_base, ``local/``) is left out of
    # the key, so those keys are the ones stored before the field existed.
    endpoint: str | None = None

    def key(self) -> str:
        fields = asdict(self)
        if fields["endpoint"] is None:
            del fields["endpoint"]
        return stable_hash(fields)


def _set_journal(con: sqlite3.Connection, pragma: str, patience_s: float = 60.0) -> None:
    """Set the journal mode, retrying while another process holds the file: SQLite answers a journal-mode
    change it cannot make at once with "database is locked" without calling the busy handler, so two jobs
    opening a new cache together could fail (seen once in make test's cross-process test)."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            con.execute(pragma)
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class LLMCache:
    """Append-only SQLite table request-hash -> result, plus the leases of requests in flight.

    Crash-safe: ``synchronous=FULL`` and one transaction per insert, so a SIGKILL loses at most
    the calls in flight, never a stored one; rows are only inserted (``INSERT OR IGNORE``),
    never updated or deleted, so the first stored answer wins. One connection per thread (the
    sqlite3 module's connections are not for concurrent use). ``journal='wal'`` on local disks;
    ``'nfs'``: rollback journal and every write under an ``fcntl`` lock on ``<path>.lock``
    (WAL's shared memory does not work across NFS clients; pipeline/cache_journal.py)."""

    def __init__(self, path: str | Path, journal: str = "wal"):
        if journal not in JOURNALS:
            raise ValueError(f"llm.cache_journal: '{journal}' is not one of {JOURNALS}")
        create_shared_file(path)  # the umask policy of every output, for it and its -wal/-shm (pipeline/io.py)
        self.path, self.journal = str(path), journal
        self.local = threading.local()
        self.conns: list[sqlite3.Connection] = []
        self.conns_lock = threading.Lock()
        with self._write() as db:
            db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, result TEXT)")
            db.execute("CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, owner TEXT, expires REAL)")

    @property
    def db(self) -> sqlite3.Connection:
        con = getattr(self.local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            _set_journal(con, journal_pragma(self.journal))
            con.execute("PRAGMA synchronous=FULL")
            self.local.con = con
            with self.conns_lock:
                self.conns.append(con)
        return con

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), under the lock file in NFS mode."""
        with write_lock(self.path, self.journal):
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction, for the tables kept beside the replies (:mod:`pipeline.llm.usage`)."""
        return self._write()

    def get(self, key: str) -> LLMResult | None:
        row = self.db.execute("SELECT result FROM calls WHERE key = ?", (key,)).fetchone()
        return LLMResult(**{**json.loads(row[0]), "cached": True}) if row else None

    def put(self, key: str, request: LLMRequest, result: LLMResult) -> None:
        row = (
            key,
            json.dumps(asdict(request), sort_keys=True),
            json.dumps({**asdict(result), "cached": False}, sort_keys=True),
        )
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO calls VALUES (?, ?, ?)", row)
            db.execute("DELETE FROM leases WHERE key = ?", (key,))

    def claim(self, key: str, owner: str, ttl_s: float) -> str:
        """``'hit'`` (stored already), ``'mine'`` (this caller makes the call) or ``'busy'``
        (another live process has it in flight: wait and ask again)."""
        now = time.time()
        with self._write() as db:
            if db.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone():
                return "hit"
            row = db.execute("SELECT owner, expires FROM leases WHERE key = ?", (key,)).fetchone()
            if row and row[0] != owner and row[1] > now and _owner_alive(row[0]):
                return "busy"
            db.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (key, owner, now + ttl_s))
            return "mine"

    def release(self, key: str, owner: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, owner))

    def __len__(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self.conns_lock:
            for con in self.conns:
                con.close()
            self.conns.clear()
        self.local = threading.local()


def _owner_alive(owner: str) -> bool:
    """A lease's process (``host:pid``) is alive; on another host it is presumed so until it expires."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True

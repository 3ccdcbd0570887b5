"""Provider limits shared by every thread and every process of a run: token buckets in SQLite.

A model's limits themselves (``requests_per_minute``, ``tokens_per_minute``, ``concurrency``, from
``llm.per_model.<model>`` over ``llm``) are its :class:`pipeline.llm_models.ModelSpec`'s.

Why SQLite: the answering jobs Snakemake runs side by side are separate processes, and a
provider's requests-per-minute and tokens-per-minute budgets hold for the account, not per job.
One small database beside the LLM cache (``llm.limits.sqlite``) holds one row per bucket; a
``BEGIN IMMEDIATE`` transaction takes from it atomically across processes. A bucket refills at
``per_minute / 60`` per second and holds at most ``burst_s`` seconds of budget (10 s), so a
fresh run cannot spend a whole minute's allowance in its first second.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.io import create_shared_file

if TYPE_CHECKING:
    from pipeline.llm.cache import LLMRequest

BURST_S = 10.0
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English (no tokenizer download)


def text_tokens(text: str) -> int:
    """Tokens of ``text`` before any call: characters / 4, rounded up (the cost estimate counts by it)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_tokens(request: LLMRequest) -> int:
    """Tokens a request spends against a tokens-per-minute budget, before the call: prompt
    characters / 4 plus the completion allowance (``max_tokens``, else 512)."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    return chars // 4 + int(request.params.get("max_tokens") or 512)


class SharedBuckets:
    """Token buckets by name in one SQLite file; ``take`` blocks until the budget allows."""

    def __init__(self, path: str | Path, journal: str = "wal"):
        self.path, self.journal = str(create_shared_file(path)), journal  # its mode: pipeline/io.py's policy
        self.local = threading.local()
        self._conn().execute("CREATE TABLE IF NOT EXISTS buckets (name TEXT PRIMARY KEY, level REAL, at REAL)")

    def _conn(self) -> sqlite3.Connection:
        con = getattr(self.local, "con", None)
        if con is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            con.execute(f"PRAGMA journal_mode={'WAL' if self.journal == 'wal' else 'DELETE'}")
            self.local.con = con
        return con

    def take(self, name: str, amount: float, per_minute: float) -> float:
        """Take ``amount`` from bucket ``name``; the seconds spent waiting. An amount above the
        bucket's capacity waits for a full bucket and then drives it negative (it still goes out)."""
        rate, capacity = per_minute / 60.0, max(1.0, per_minute / 60.0 * BURST_S)
        waited, con = 0.0, self._conn()
        while True:
            now = time.time()
            con.execute("BEGIN IMMEDIATE")
            try:
                row = con.execute("SELECT level, at FROM buckets WHERE name = ?", (name,)).fetchone()
                level = capacity if row is None else min(capacity, row[0] + (now - row[1]) * rate)
                if level >= min(amount, capacity):
                    con.execute("INSERT OR REPLACE INTO buckets VALUES (?, ?, ?)", (name, level - amount, now))
                    con.execute("COMMIT")
                    return waited
                con.execute("ROLLBACK")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
            pause = min(1.0, (min(amount, capacity) - level) / rate)
            time.sleep(pause)
            waited += pause

"""Provider limits shared by every thread and every process of a run: token buckets in SQLite.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.config_schema import node

if TYPE_CHECKING:
    from pipeline.llm.cache import LLMRequest

BURST_S = 10.0
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English (no tokenizer download)
CONCURRENCY = node("llm", "concurrency")["x-default"]  # calls in flight per model
LOCAL_CONCURRENCY = node("llm", "per_model", "*", "concurrency")["x-default"]  # a local model's servers


@dataclass(frozen=True)
class ModelLimits:
    """What one provider/model allows; None is no limit."""

    concurrency: int = 1
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


def model_settings(llm_cfg: dict, model: str) -> dict:
    """The ``llm`` settings as they hold for one model: ``llm.per_model.<model>`` over ``llm``."""
    return {**llm_cfg, **((llm_cfg.get("per_model") or {}).get(model) or {})}


def model_limits(llm_cfg: dict, model: str) -> ModelLimits:
    """``llm.concurrency`` / ``llm.requests_per_minute`` / ``llm.tokens_per_minute``, overridden per
    model by ``llm.per_model.<model>``. A ``local/<name>`` model's concurrency is its number of
    server processes (each answers one request at a time): ``per_model`` only, default 1, never the
    hosted-model default."""
    merged = model_settings(llm_cfg, model)
    concurrency = merged.get("concurrency") or CONCURRENCY
    if model.startswith("local/"):  # one server process per call in flight: only per_model sets it
        concurrency = ((llm_cfg.get("per_model") or {}).get(model) or {}).get("concurrency", LOCAL_CONCURRENCY)
    return ModelLimits(int(concurrency), merged.get("requests_per_minute"), merged.get("tokens_per_minute"))


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
        self.path, self.journal = str(path), journal
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

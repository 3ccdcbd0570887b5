"""Who bought each LLM call: one ``usage`` row per gateway request, beside the cached replies.

The reply cache (:mod:`pipeline.llm.cache`) is keyed by the request and shared by every run, so
it cannot say which run paid for what. The gateway appends a row here for every request it
answers — a call it made (``cached = 0``, with the tokens and USD of every attempt that got a
reply) or a reply it served from the cache (``cached = 1``, nothing paid) — with the run id
(:mod:`pipeline.run_ids`), the variant that asked and the model. From these rows come the ``cost``
verb, each run's spend cap (``llm.max_cost_usd`` compares *this run's* new spend) and the replay
pack (the keys a run used). ``cost_usd`` NULL: the model has no price (litellm's map nor
``llm.prices``); local models cost 0.

Rows of calls made are written at once (other processes of the run read them for the cap); rows
of cache hits are buffered and written in batches (a killed job's lost hit rows are written again
when its rerun hits the same replies).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import astuple, dataclass, fields
from pathlib import Path

from pipeline.llm.cache import LLMCache

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS usage (run TEXT, variant TEXT, model TEXT, key TEXT, cached INTEGER, "
    "ok INTEGER, attempts INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, cost_usd REAL, at REAL)",
    "CREATE INDEX IF NOT EXISTS usage_run ON usage (run)",
)
HIT_BATCH = 256


@dataclass
class Usage:
    run: str
    variant: str
    model: str
    key: str
    cached: bool
    ok: bool = True
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    at: float = 0.0


@dataclass
class Bill:
    """What one request's attempts cost: every attempt that got a reply is paid, kept or not."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None once an attempt could not be priced

    def add(self, prompt: int, completion: int, usd: float | None) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cost_usd = None if usd is None or self.cost_usd is None else self.cost_usd + usd


def ensure_table(cache: LLMCache) -> None:
    with cache.transaction() as db:
        for statement in SCHEMA:
            db.execute(statement)


class UsageLog:
    """The ``usage`` table of one cache, for one gateway (thread-safe)."""

    def __init__(self, cache: LLMCache):
        self.cache = cache
        self.pending: list[Usage] = []
        self.lock = threading.Lock()
        ensure_table(cache)

    def add(self, row: Usage) -> None:
        row.at = row.at or time.time()
        with self.lock:
            self.pending.append(row)
            flush = not row.cached or len(self.pending) >= HIT_BATCH
        if flush:
            self.flush()

    def flush(self) -> None:
        with self.lock:
            rows, self.pending = self.pending, []
        if rows:
            with self.cache.transaction() as db:
                db.executemany("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [astuple(r) for r in rows])

    def run_spend(self, run: str) -> float:
        """USD of the calls run ``run`` made (every process of it; the cap compares this)."""
        row = self.cache.db.execute("SELECT SUM(cost_usd) FROM usage WHERE run = ? AND cached = 0", (run,)).fetchone()
        return float(row[0] or 0.0)


@dataclass
class CostRow:
    """One run x variant x model of the ``usage`` table: what the ``cost`` verb prints."""

    run: str
    variant: str
    model: str
    calls: int  # requests answered (made + cached)
    cached: int
    attempts: int  # HTTP requests of the calls made (retries included)
    prompt_tokens: int  # bought: every attempt of the calls made
    completion_tokens: int
    usd: float
    unpriced: int  # calls made that nothing could price (their USD is not in ``usd``)
    first: float


def open_read_only(path: str | Path) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise FileNotFoundError(f"no LLM cache at {path}")
    return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)


def cost_rows(path: str | Path, run: str | None = None) -> list[CostRow]:
    """Calls, cached hits, tokens and USD per run, variant and model, oldest run first."""
    db = open_read_only(path)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'usage'").fetchone():
            return []
        rows = db.execute(
            "SELECT run, variant, model, COUNT(*), SUM(cached), SUM(attempts), SUM(prompt_tokens), "
            "SUM(completion_tokens), TOTAL(cost_usd), SUM(cached = 0 AND cost_usd IS NULL), MIN(at) FROM usage "
            + ("WHERE run = ? " if run else "")
            + "GROUP BY run, variant, model",
            (run,) if run else (),
        ).fetchall()
    finally:
        db.close()
    first: dict[str, float] = {}
    for r in rows:
        first[r[0]] = min(first.get(r[0], r[10]), r[10])
    return sorted((CostRow(*r) for r in rows), key=lambda c: (first[c.run], c.run, c.variant, c.model))


def format_cost(rows: list[CostRow]) -> str:
    head = f"{'run':24} {'variant':26} {'model':28} {'calls':>7} {'cached':>7} {'tokens in':>11} {'tokens out':>10} {'USD':>10}"
    out = [head]
    for run in dict.fromkeys(r.run for r in rows):
        mine = [r for r in rows if r.run == run]
        for r in mine + [_total(run, mine)]:
            usd = f"{r.usd:,.4f}" + (f" (+{r.unpriced} unpriced)" if r.unpriced else "")
            out.append(
                f"{r.run[:24]:24} {r.variant[:26]:26} {r.model[:28]:28} {r.calls:>7,} {r.cached:>7,} "
                f"{r.prompt_tokens:>11,} {r.completion_tokens:>10,} {usd:>10}"
            )
    out.append("(tokens and USD of the calls made: every attempt that got a reply; cached replies cost nothing)")
    return "\n".join(out)


def _total(run: str, rows: list[CostRow]) -> CostRow:
    summed = {f.name: sum(getattr(r, f.name) for r in rows) for f in fields(CostRow)[3:10]}  # calls .. unpriced
    return CostRow(run, "(run total)", "", **summed, first=min(r.first for r in rows))

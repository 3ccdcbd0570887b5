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

from pipeline.answer_backends import calls_llm
from pipeline.specs import AnswerSpec, as_answer_spec

if TYPE_CHECKING:
    from pipeline.llm.cache import LLMRequest

BURST_S = 10.0


@dataclass(frozen=True)
class ModelLimits:
    """What one provider/model allows; None is no limit."""

    concurrency: int = 1
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


def model_settings(llm_cfg: dict, model: str) -> dict:
    """The ``llm`` settings as they hold for one model: ``llm.per_model.<model>`` over ``llm``."""
    return {**llm_cfg, **((llm_cfg.get("per_model") or {}).get(model) or {})}


def variant_model(variant: AnswerSpec | dict, default_model: str | None = None) -> str:
    """The model an LLM variant calls: its ``model``, else ``llm.model``."""
    model = as_answer_spec(variant).resolved_model(default_model)
    if not model:
        raise ValueError("config key 'answering.<variant>.model': required when backend is llm (or set llm.model)")
    return model


def llm_job_config(llm: dict, execution: dict, in_flight: int | None, variant: AnswerSpec | dict) -> dict:
    """The gateway config of one answering job (:func:`model_job_config` of the variant's model);
    the computed slice plus the execution-only settings for a variant without an LLM."""
    if not calls_llm(as_answer_spec(variant).backend):
        return {**llm, **execution}
    return model_job_config(llm, execution, in_flight, variant_model(variant, {**llm, **execution}.get("model")))


def model_job_config(llm: dict, execution: dict, in_flight: int | None, model: str) -> dict:
    """The gateway config of one job calling ``model`` (answering, or an LLM query planner): the
    computed slice plus the execution-only settings; ``in_flight`` (the job's ``llm_api`` share) caps
    the model's concurrency, and a local model's servers and their threads fit the job's granted
    threads (:mod:`pipeline.cores`, :func:`pipeline.llm.local_server.fit_local_servers`)."""
    from pipeline.cores import granted_threads
    from pipeline.llm.local_server import fit_local_servers

    cfg = {**llm, **execution}
    hashed, run = llm.get("per_model") or {}, execution.get("per_model") or {}
    if hashed:  # the hashed slice's per-model keys (api_base) over the execution-only ones, model by model
        cfg["per_model"] = {m: {**run.get(m, {}), **hashed.get(m, {})} for m in {*run, *hashed}}
    if in_flight:
        per_model = dict(cfg.get("per_model") or {})
        per_model[model] = {
            **per_model.get(model, {}),
            "concurrency": min(in_flight, model_limits(cfg, model).concurrency),
        }
        cfg["per_model"] = per_model
    granted = granted_threads()
    return fit_local_servers(cfg, model, granted) if granted else cfg


def model_limits(llm_cfg: dict, model: str) -> ModelLimits:
    """``llm.concurrency`` / ``llm.requests_per_minute`` / ``llm.tokens_per_minute``, overridden per
    model by ``llm.per_model.<model>``. A ``local/<name>`` model's concurrency is its number of
    server processes (each answers one request at a time): ``per_model`` only, default 1, never the
    hosted-model default."""
    merged = model_settings(llm_cfg, model)
    concurrency = merged.get("concurrency") or 1
    if model.startswith("local/"):  # one server process per call in flight: only per_model sets it (default 1)
        concurrency = ((llm_cfg.get("per_model") or {}).get(model) or {}).get("concurrency", 1)
    return ModelLimits(int(concurrency), merged.get("requests_per_minute"), merged.get("tokens_per_minute"))


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

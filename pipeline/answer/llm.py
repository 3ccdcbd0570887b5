"""The one gateway for LLM calls: litellm underneath, our own on-disk cache on top.

Every request is keyed by a hash of its full content (model, messages, parameters, seed,
sample index) and stored in SQLite, so a rerun makes zero calls and a run can be replayed
offline. Modes: ``live`` (cache, then call), ``record`` (always call, store), ``replay``
(cache only; a miss fails fast). litellm's own disk cache is not used: it was removed in
1.109 and its hits crash without fastapi in recent versions.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.provenance import stable_hash

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else `import litellm` fetches a price list

MODES = ("live", "record", "replay")


class CacheMiss(RuntimeError):
    """Replay mode met a request that was never recorded."""


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


@dataclass
class LLMRequest:
    model: str
    messages: list[dict]
    params: dict = field(default_factory=dict)
    seed: int | None = None
    sample: int = 0

    def key(self) -> str:
        return stable_hash(asdict(self))


class LLMCache:
    """Append-only SQLite table request-hash -> result; each insert is its own commit."""

    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, result TEXT)")
        self.db.commit()

    def get(self, key: str) -> LLMResult | None:
        row = self.db.execute("SELECT result FROM calls WHERE key = ?", (key,)).fetchone()
        return LLMResult(**{**json.loads(row[0]), "cached": True}) if row else None

    def put(self, key: str, request: LLMRequest, result: LLMResult) -> None:
        self.db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)",
                        (key, json.dumps(asdict(request), sort_keys=True), json.dumps(asdict(result), sort_keys=True)))
        self.db.commit()


class LLMGateway:
    def __init__(self, cache_path: str | Path, mode: str = "live", timeout_s: float = 120, max_retries: int = 3,
                 api_base: str | None = None, backoff_s: float = 2.0):
        if mode not in MODES:
            raise ValueError(f"llm.mode: '{mode}' is not one of {MODES}")
        self.cache = LLMCache(cache_path)
        self.mode, self.timeout_s, self.max_retries = mode, timeout_s, max_retries
        self.api_base, self.backoff_s = api_base, backoff_s
        self.calls = 0

    def complete(self, request: LLMRequest) -> LLMResult:
        """One completion; failures come back as ``ok=False`` with the reason, never silently."""
        key = request.key()
        if self.mode != "record":
            hit = self.cache.get(key)
            if hit is not None:
                return hit
            if self.mode == "replay":
                raise CacheMiss(f"llm replay: no cached response for model={request.model} key={key}")
        result = self._call(request)
        if result.ok:  # failures are reported per question, not cached, so a rerun retries them
            self.cache.put(key, request, result)
        return result

    def _call(self, request: LLMRequest) -> LLMResult:
        import litellm

        kwargs = dict(request.params)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if self.api_base:
            kwargs.setdefault("api_base", self.api_base)
        error = ""
        for attempt in range(1, self.max_retries + 2):
            t0 = time.perf_counter()
            try:
                self.calls += 1
                resp = litellm.completion(model=request.model, messages=request.messages,
                                          timeout=self.timeout_s, **kwargs)
                text = resp.choices[0].message.content or ""
                usage = getattr(resp, "usage", None)
                try:
                    cost = litellm.completion_cost(completion_response=resp)
                except Exception:  # price unknown for local or mocked models
                    cost = None
                if not text.strip():
                    error = "empty response"
                else:
                    return LLMResult(text, True, "", False, getattr(usage, "prompt_tokens", 0) or 0,
                                     getattr(usage, "completion_tokens", 0) or 0,
                                     round(time.perf_counter() - t0, 3), cost, attempt)
            except Exception as exc:  # litellm maps provider errors to its own exception types
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                if not _retryable(exc):
                    return LLMResult("", False, error, attempts=attempt)
            if attempt <= self.max_retries:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
        return LLMResult("", False, error, attempts=self.max_retries + 1)


def _retryable(exc: Exception) -> bool:
    """Rate limits, timeouts, connection problems and 5xx are retried; bad requests are not."""
    status = getattr(exc, "status_code", None)
    if status is not None:
        return status == 429 or status >= 500
    return type(exc).__name__ in {"Timeout", "APIConnectionError", "RateLimitError", "ServiceUnavailableError",
                                  "InternalServerError", "APIError", "TimeoutError", "ConnectionError"}

"""The one gateway for LLM calls: litellm underneath, our own on-disk cache on top.

Every request is keyed by a hash of its full content (model, messages, parameters, seed,
sample index) and stored in SQLite, so a rerun makes zero calls and a run can be replayed
offline. Modes: ``live`` (cache, then call), ``record`` (always call; the first stored
response is kept), ``replay`` (cache only; a miss fails fast). litellm's own disk cache is
not used: it was removed in 1.109 and its hits crash without fastapi in recent versions.

Faults: timeouts, 429, 5xx and connection errors are retried with exponential backoff, and
so are malformed replies (a ``validate`` hook says what is wrong: empty, not JSON). After
``max_retries`` the result comes back ``ok=False`` with the reason; callers record it per
question, nothing is dropped. Transport failures are never cached (a rerun tries again);
what a model actually said is cached even when it is malformed, so replays reproduce it.

Models named ``local/<name>`` are served on 127.0.0.1 by llama-cpp-python (see
:mod:`pipeline.answer.local_server`), started on the first cache miss and stopped on close.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from pipeline.provenance import stable_hash

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else `import litellm` fetches a price list

MODES = ("live", "record", "replay")
LOCAL_PREFIX = "local/"


class CacheMiss(ValueError):
    """Replay mode met a request that was never recorded (a ValueError: the CLI prints one line)."""


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
    """Append-only SQLite table request-hash -> result.

    Crash-safe: WAL journal with ``synchronous=FULL`` and one transaction per insert, so a
    SIGKILL loses at most the call in flight, never a stored one; rows are only inserted
    (``INSERT OR IGNORE``), never updated or deleted, so the first stored answer wins."""

    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60, check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, result TEXT)")

    def get(self, key: str) -> LLMResult | None:
        with self.lock:
            row = self.db.execute("SELECT result FROM calls WHERE key = ?", (key,)).fetchone()
        return LLMResult(**{**json.loads(row[0]), "cached": True}) if row else None

    def put(self, key: str, request: LLMRequest, result: LLMResult) -> None:
        row = (key, json.dumps(asdict(request), sort_keys=True), json.dumps({**asdict(result), "cached": False},
                                                                            sort_keys=True))
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("INSERT OR IGNORE INTO calls VALUES (?, ?, ?)", row)
            self.db.execute("COMMIT")

    def __len__(self) -> int:
        with self.lock:
            return self.db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        self.db.close()


class LLMGateway:
    """``local`` maps a ``local/<name>`` model to its llama-cpp server config (``llm.local``);
    ``concurrency`` bounds calls in flight when callers use threads."""

    def __init__(self, cache_path: str | Path, mode: str = "live", timeout_s: float = 120, max_retries: int = 3,
                 api_base: str | None = None, backoff_s: float = 2.0, local: dict | None = None,
                 concurrency: int = 1, max_backoff_s: float = 60.0):
        if mode not in MODES:
            raise ValueError(f"llm.mode: '{mode}' is not one of {MODES}")
        self.cache = LLMCache(cache_path)
        self.mode, self.timeout_s, self.max_retries = mode, timeout_s, max_retries
        self.api_base, self.backoff_s, self.max_backoff_s = api_base, backoff_s, max_backoff_s
        self.local = dict(local or {})
        self.servers: dict = {}
        self.slots = threading.BoundedSemaphore(max(1, concurrency))
        self.calls = 0

    @classmethod
    def from_config(cls, cache_dir: str | Path, llm_cfg: dict) -> "LLMGateway":
        return cls(Path(cache_dir) / "llm.sqlite", llm_cfg.get("mode", "live"), llm_cfg.get("timeout_s", 120),
                   llm_cfg.get("max_retries", 3), llm_cfg.get("api_base"), llm_cfg.get("backoff_s", 2.0),
                   llm_cfg.get("local"), llm_cfg.get("concurrency", 1))

    def __enter__(self) -> "LLMGateway":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the local servers this gateway started."""
        for server in self.servers.values():
            server.stop()
        self.servers.clear()

    def complete(self, request: LLMRequest, validate: Callable[[str], str | None] | None = None) -> LLMResult:
        """One completion; failures come back as ``ok=False`` with the reason, never silently.
        ``validate(text)`` returns what is wrong with a reply (None when it is fine)."""
        key = request.key()
        if self.mode != "record":
            hit = self.cache.get(key)
            if hit is not None:
                return hit
            if self.mode == "replay":
                raise CacheMiss(f"llm replay: no cached response for model={request.model} key={key} "
                                f"(run once with llm.mode: live to record it)")
        with self.slots:
            result = self._call(request, validate or _not_empty)
        if result.ok or result.text:  # what the model said is kept; transport failures are retried on rerun
            self.cache.put(key, request, result)
        return result

    def _route(self, model: str) -> tuple[str, dict]:
        """litellm model string and extra kwargs: ``local/<name>`` goes to its local server."""
        if not model.startswith(LOCAL_PREFIX):
            return model, ({"api_base": self.api_base} if self.api_base else {})
        name = model[len(LOCAL_PREFIX):]
        if name not in self.local:
            raise ValueError(f"config key 'llm.local.{name}': model '{model}' has no local server config "
                             f"(have {sorted(self.local)})")
        if name not in self.servers:
            from pipeline.answer.local_server import LocalServer

            self.servers[name] = LocalServer(name, self.local[name]).start()
        return f"openai/{name}", {"api_base": self.servers[name].api_base, "api_key": "local"}

    def _call(self, request: LLMRequest, validate: Callable[[str], str | None]) -> LLMResult:
        model, route = self._route(request.model)
        kwargs = {"max_retries": 0, **route, **request.params}  # retries are ours (one policy, counted)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        error, text = "", ""
        for attempt in range(1, self.max_retries + 2):
            t0 = time.perf_counter()
            try:
                self.calls += 1
                resp = _litellm_completion(model=model, messages=request.messages, timeout=self.timeout_s, **kwargs)
                text = resp.choices[0].message.content or ""
                usage = getattr(resp, "usage", None)
                try:
                    import litellm

                    cost = litellm.completion_cost(completion_response=resp)
                except Exception:  # price unknown for local or mocked models
                    cost = None
                result = LLMResult(text, True, "", False, getattr(usage, "prompt_tokens", 0) or 0,
                                   getattr(usage, "completion_tokens", 0) or 0,
                                   round(time.perf_counter() - t0, 3), cost, attempt)
                error = validate(text) or ""
                if not error:
                    return result
                result.ok, result.error = False, error
            except Exception as exc:  # litellm maps provider errors to its own exception types
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
                text, result = "", None
                if not _retryable(exc):
                    return LLMResult("", False, error, attempts=attempt)
            if attempt <= self.max_retries:
                time.sleep(min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)))
        if result is not None:  # a reply that stayed malformed: the model's words, with the reason
            return result
        return LLMResult("", False, error, attempts=self.max_retries + 1)


def _litellm_completion(**kwargs):
    """The one place a request leaves the process (tests replace it with a script)."""
    import litellm

    return litellm.completion(**kwargs)


def _not_empty(text: str) -> str | None:
    return None if text.strip() else "empty response"


def _retryable(exc: Exception) -> bool:
    """Rate limits, timeouts, connection problems and 5xx are retried; bad requests are not."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status == 429 or status >= 500 or status == 408
    return type(exc).__name__ in {"Timeout", "APIConnectionError", "RateLimitError", "ServiceUnavailableError",
                                  "InternalServerError", "APIError", "TimeoutError", "ConnectionError",
                                  "APITimeoutError", "BadGatewayError"}

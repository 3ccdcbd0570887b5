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

Concurrency: callers may use many threads (``llm.concurrency`` calls in flight per model).
Each thread has its own SQLite connection (WAL; ``llm.cache_journal: nfs`` switches to a
rollback journal plus a lock file, for shared filesystems where WAL does not work). Identical
requests in flight are made once: inside a process the first caller leads and the others wait
for its stored reply; across processes a lease row in the cache marks a request in flight and
other processes wait for it (a lease whose process died is taken over). Provider limits
(requests/tokens per minute) are token buckets shared by threads and processes
(:mod:`pipeline.answer.limits`). A 429's ``Retry-After`` is honoured before the exponential
backoff with jitter. Authentication, permission, unknown-model and bad-request errors are
not retried: the result comes back ``fatal`` and the answering job fails.

Models named ``local/<name>`` are served on 127.0.0.1 by llama-cpp-python (see
:mod:`pipeline.answer.local_server`), started on the first cache miss and stopped on close.
"""
from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import os
import queue
import random
import socket
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from pipeline.answer.limits import ModelLimits, SharedBuckets, model_limits
from pipeline.provenance import stable_hash
from pipeline.specs import CACHE_JOURNALS as JOURNALS, LLM_MODES as MODES, LLMSpec

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else `import litellm` fetches a price list

_DEFAULTS = LLMSpec.from_dict({})   # the config schema's llm defaults
LOCAL_PREFIX = "local/"


class CacheMiss(ValueError):
    """Replay mode met a request that was never recorded (a ValueError: the CLI prints one line)."""


class SpendCapReached(ValueError):
    """``llm.max_cost_usd`` is spent: no further call goes out (the cache keeps every reply)."""


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
    fatal: bool = False   # a non-retryable error (auth, permission, unknown model, bad request)


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
    """Append-only SQLite table request-hash -> result, plus the leases of requests in flight.

    Crash-safe: ``synchronous=FULL`` and one transaction per insert, so a SIGKILL loses at most
    the calls in flight, never a stored one; rows are only inserted (``INSERT OR IGNORE``),
    never updated or deleted, so the first stored answer wins. One connection per thread (the
    sqlite3 module's connections are not for concurrent use). ``journal='wal'`` on local disks;
    ``'nfs'``: rollback journal and every write under an ``fcntl`` lock on ``<path>.lock``
    (WAL's shared memory does not work across NFS clients)."""

    def __init__(self, path: str | Path, journal: str = "wal"):
        if journal not in JOURNALS:
            raise ValueError(f"llm.cache_journal: '{journal}' is not one of {JOURNALS}")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
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
            con.execute(f"PRAGMA journal_mode={'WAL' if self.journal == 'wal' else 'DELETE'}")
            con.execute("PRAGMA synchronous=FULL")
            self.local.con = con
            with self.conns_lock:
                self.conns.append(con)
        return con

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), under the lock file in NFS mode."""
        lock = None
        if self.journal == "nfs":
            import fcntl

            lock = open(self.path + ".lock", "a")
            fcntl.lockf(lock, fcntl.LOCK_EX)
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            if lock is not None:
                lock.close()

    def get(self, key: str) -> LLMResult | None:
        row = self.db.execute("SELECT result FROM calls WHERE key = ?", (key,)).fetchone()
        return LLMResult(**{**json.loads(row[0]), "cached": True}) if row else None

    def put(self, key: str, request: LLMRequest, result: LLMResult) -> None:
        row = (key, json.dumps(asdict(request), sort_keys=True), json.dumps({**asdict(result), "cached": False},
                                                                            sort_keys=True))
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


class _Flight:
    """One request in flight inside this process: followers wait for the leader's result."""

    def __init__(self):
        self.done = threading.Event()
        self.result: LLMResult | None = None


_FLIGHTS: dict[tuple[str, str], _Flight] = {}
_FLIGHTS_LOCK = threading.Lock()


@dataclass
class GatewayStats:
    """Counters of one gateway (telemetry for the benchmark; never in result files)."""
    requests: int = 0          # HTTP requests sent (attempts)
    retries: int = 0           # attempts after the first, any reason
    rate_limited: int = 0      # 429 replies
    retry_after_honoured: int = 0  # 429s whose Retry-After was waited out
    waited_for_peer: int = 0   # single-flight followers (in-process or another process)
    limit_wait_s: float = 0.0  # seconds spent waiting on requests/tokens-per-minute buckets


class LLMGateway:
    """``local`` maps a ``local/<name>`` model to its llama-cpp server config (``llm.local``);
    ``concurrency`` bounds calls in flight per model when callers use threads (``limits``:
    per-model :class:`ModelLimits` overriding it); ``drop_params`` lists per model the
    parameters its provider does not take (e.g. ``{"anthropic/x": ["seed"]}``) and
    litellm's own ``drop_params`` drops the ones it knows a provider refuses."""

    def __init__(self, cache_path: str | Path, mode: str = _DEFAULTS.mode, timeout_s: float = _DEFAULTS.timeout_s,
                 max_retries: int = _DEFAULTS.max_retries, api_base: str | None = None,
                 backoff_s: float = _DEFAULTS.backoff_s, local: dict | None = None,
                 concurrency: int = 1, max_backoff_s: float = 60.0, llm_cfg: dict | None = None,
                 journal: str = _DEFAULTS.cache_journal, max_cost_usd: float | None = None):
        if mode not in MODES:
            raise ValueError(f"llm.mode: '{mode}' is not one of {MODES}")
        self.cache = LLMCache(cache_path, journal)
        self.mode, self.timeout_s, self.max_retries = mode, timeout_s, max_retries
        self.api_base, self.backoff_s, self.max_backoff_s = api_base, backoff_s, max_backoff_s
        self.local = dict(local or {})
        self.servers: dict[str, list] = {}
        self.free: dict[str, queue.SimpleQueue] = {}
        self.servers_lock = threading.Lock()
        self.llm_cfg = {"concurrency": concurrency, **(llm_cfg or {})}
        self.slots: dict[str, threading.BoundedSemaphore] = {}
        self.limits_lock = threading.Lock()
        self.buckets: SharedBuckets | None = None
        self.max_cost_usd = max_cost_usd
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.calls = 0
        self.stats = GatewayStats()
        self.stats_lock = threading.Lock()

    @classmethod
    def from_config(cls, cache_dir: str | Path, llm_cfg: dict) -> "LLMGateway":
        s = LLMSpec.from_dict(llm_cfg)
        return cls(Path(cache_dir) / "llm.sqlite", s.mode, s.timeout_s, s.max_retries, s.api_base, s.backoff_s,
                   llm_cfg.get("local"), s.concurrency, llm_cfg=llm_cfg, journal=s.cache_journal,
                   max_cost_usd=s.max_cost_usd)

    def __enter__(self) -> "LLMGateway":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the local servers this gateway started."""
        for pool in self.servers.values():
            for server in pool:
                server.stop()
        self.servers.clear()
        self.free.clear()

    def limits(self, model: str) -> ModelLimits:
        return model_limits(self.llm_cfg, model)

    def _slot(self, model: str) -> threading.BoundedSemaphore:
        with self.limits_lock:
            if model not in self.slots:
                self.slots[model] = threading.BoundedSemaphore(max(1, self.limits(model).concurrency))
            return self.slots[model]

    def _count(self, **inc) -> None:
        with self.stats_lock:
            for k, v in inc.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)

    def complete(self, request: LLMRequest, validate: Callable[[str], str | None] | None = None) -> LLMResult:
        """One completion; failures come back as ``ok=False`` with the reason, never silently.
        ``validate(text)`` returns what is wrong with a reply (None when it is fine).
        Thread-safe; identical requests in flight are made once (single flight)."""
        key = request.key()
        if self.mode != "record":
            hit = self.cache.get(key)
            if hit is not None:
                return hit
            if self.mode == "replay":
                raise CacheMiss(f"llm replay: no cached response for model={request.model} key={key} "
                                f"(run once with llm.mode: live to record it)")
        flight_key = (self.cache.path, key)
        with _FLIGHTS_LOCK:
            flight = _FLIGHTS.get(flight_key)
            leader = flight is None
            if leader:
                flight = _FLIGHTS[flight_key] = _Flight()
        if not leader:  # the same request is in flight in this process: its reply is ours
            self._count(waited_for_peer=1)
            flight.done.wait()
            return self.cache.get(key) or flight.result
        try:
            flight.result = self._lead(request, key, validate or _not_empty)
        finally:
            with _FLIGHTS_LOCK:
                _FLIGHTS.pop(flight_key, None)
            flight.done.set()
        return flight.result

    def _lead(self, request: LLMRequest, key: str, validate: Callable[[str], str | None]) -> LLMResult:
        """Claim the request across processes (a lease row), call, store, release."""
        if self.mode == "record":
            return self._call_and_store(request, key, validate)
        ttl = (self.timeout_s + self.max_backoff_s) * (self.max_retries + 1) + 60
        waited = False
        while True:
            state = self.cache.claim(key, self.owner, ttl)
            if state == "hit":
                return self.cache.get(key)
            if state == "mine":
                break
            if not waited:
                self._count(waited_for_peer=1)
                waited = True
            time.sleep(0.1)
        try:
            result = self._call_and_store(request, key, validate)
        except BaseException:
            self.cache.release(key, self.owner)
            raise
        if not (result.ok or result.text):  # not stored (storing drops the lease): let others try
            self.cache.release(key, self.owner)
        return result

    def _call_and_store(self, request: LLMRequest, key: str, validate: Callable[[str], str | None]) -> LLMResult:
        self._check_spend()
        with self._slot(request.model):
            result = self._call(request, validate)
        if result.ok or result.text:  # what the model said is kept; transport failures are retried on rerun
            self.cache.put(key, request, result)
            if result.cost_usd:
                self._spend(result.cost_usd)
        return result

    def _check_spend(self) -> None:
        if self.max_cost_usd is None:
            return
        spent = self._buckets().spent()
        if spent >= self.max_cost_usd:
            raise SpendCapReached(f"llm.max_cost_usd: {spent:.4f} USD spent, the cap is {self.max_cost_usd} USD; "
                                  f"every reply so far is cached (raise the cap and rerun to go on)")

    def _spend(self, cost: float) -> None:
        if self.max_cost_usd is not None:
            self._buckets().add_spend(cost)

    def _buckets(self) -> SharedBuckets:
        with self.limits_lock:
            if self.buckets is None:
                self.buckets = SharedBuckets(Path(self.cache.path).with_suffix(".limits.sqlite"), self.cache.journal)
            return self.buckets

    def _throttle(self, request: LLMRequest) -> None:
        """Wait for the model's shared requests/tokens-per-minute budget (one request, its tokens)."""
        lim = self.limits(request.model)
        waited = 0.0
        if lim.requests_per_minute:
            waited += self._buckets().take(f"rpm:{request.model}", 1, lim.requests_per_minute)
        if lim.tokens_per_minute:
            waited += self._buckets().take(f"tpm:{request.model}", estimate_tokens(request), lim.tokens_per_minute)
        if waited:
            self._count(limit_wait_s=waited)

    def _route(self, model: str) -> tuple[str, dict]:
        """litellm model string and extra kwargs: ``local/<name>`` goes to its local server."""
        if not model.startswith(LOCAL_PREFIX):
            return model, ({"api_base": self.api_base} if self.api_base else {})
        name = model[len(LOCAL_PREFIX):]
        if name not in self.local:
            raise ValueError(f"config key 'llm.local.{name}': model '{model}' has no local server config "
                             f"(have {sorted(self.local)})")
        with self.servers_lock:
            if name not in self.servers:  # one process per call in flight (each answers one request at a time)
                from pipeline.answer.local_server import LocalServer

                log = Path(self.local[name]["gguf"]).with_suffix(".server.log")
                pool = [LocalServer(name, self.local[name], log if i == 0 else log.with_suffix(f".{i}.log"))
                        for i in range(self.limits(model).concurrency)]
                self.servers[name] = [server.start() for server in pool]
                self.free[name] = queue.SimpleQueue()
                for server in pool:
                    self.free[name].put(server)
        return f"openai/{name}", {"api_key": "local"}

    @contextlib.contextmanager
    def _server_for_call(self, model: str) -> Iterator[dict]:
        """A local model's idle server for the length of one call (``{}`` for hosted models): two
        concurrent calls never queue on one server while another is idle."""
        name = model[len(LOCAL_PREFIX):]
        if not model.startswith(LOCAL_PREFIX) or name not in self.free:
            yield {}
            return
        server = self.free[name].get()
        try:
            yield {"api_base": server.api_base}
        finally:
            self.free[name].put(server)

    def _kwargs(self, request: LLMRequest) -> tuple[str, dict]:
        """The litellm call's model and keyword arguments: route, params, seed, minus what the
        provider does not take (``llm.drop_params.<model>`` and litellm's ``drop_params``)."""
        model, route = self._route(request.model)
        kwargs = {"max_retries": 0, **route, **request.params}  # retries are ours (one policy, counted)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        for name in (self.llm_cfg.get("drop_params") or {}).get(request.model, []):
            kwargs.pop(name, None)
        if not request.model.startswith(LOCAL_PREFIX) and "mock_response" not in kwargs:
            kwargs.setdefault("drop_params", True)
        return model, kwargs

    def _call(self, request: LLMRequest, validate: Callable[[str], str | None]) -> LLMResult:
        model, kwargs = self._kwargs(request)
        error, text, result = "", "", None
        for attempt in range(1, self.max_retries + 2):
            self._throttle(request)
            t0 = time.perf_counter()
            retry_after = None
            try:
                with self.stats_lock:
                    self.calls += 1
                    self.stats.requests += 1
                    self.stats.retries += attempt > 1
                with self._server_for_call(request.model) as server:
                    resp = _litellm_completion(model=model, messages=request.messages, timeout=self.timeout_s,
                                               **kwargs, **server)
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
                    return LLMResult("", False, error, attempts=attempt, fatal=True)
                if _status(exc) == 429 or type(exc).__name__ == "RateLimitError":
                    self._count(rate_limited=1)
                    retry_after = _retry_after(exc)
            if attempt <= self.max_retries:
                if retry_after is not None:  # the provider said when: wait that long (capped), then go
                    self._count(retry_after_honoured=1)
                    time.sleep(min(self.max_backoff_s, retry_after * random.uniform(1.0, 1.1) + random.uniform(0, 0.05)))
                else:  # exponential backoff with full jitter (threads that failed together spread out)
                    time.sleep(random.uniform(0.5, 1.0) * min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)))
        if result is not None:  # a reply that stayed malformed: the model's words, with the reason
            return result
        return LLMResult("", False, error, attempts=self.max_retries + 1)


def estimate_tokens(request: LLMRequest) -> int:
    """Tokens a request spends against a tokens-per-minute budget, before the call: prompt
    characters / 4 plus the completion allowance (``max_tokens``, else 512)."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    return chars // 4 + int(request.params.get("max_tokens") or 512)


def _litellm_completion(**kwargs):
    """The one place a request leaves the process (tests replace it with a script)."""
    import litellm

    litellm.suppress_debug_info = True  # else every unpriced model prints litellm's provider list to stdout
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)  # two INFO lines per call would flood the job logs
    return litellm.completion(**kwargs)


def _not_empty(text: str) -> str | None:
    return None if text.strip() else "empty response"


def _status(exc: Exception) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


# Errors that another attempt cannot fix: the job fails (after storing every reply it got).
FATAL = {"AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError",
         "UnprocessableEntityError", "ContextWindowExceededError", "ContentPolicyViolationError",
         "UnsupportedParamsError", "InvalidRequestError"}
FATAL_WORDS = ("api key", "api_key", "credentials", "llm provider not provided", "model not found",
               "does not exist", "unknown model")


def _retryable(exc: Exception) -> bool:
    """Rate limits, timeouts, connection problems and 5xx are retried; authentication, permission,
    unknown-model and bad-request errors are not (a missing key is one, whatever type litellm
    wraps it in)."""
    name = type(exc).__name__
    if name in FATAL or any(w in str(exc).lower() for w in FATAL_WORDS):
        return False
    status = _status(exc)
    if status is not None:
        return status == 429 or status >= 500 or status == 408
    return name in {"Timeout", "APIConnectionError", "RateLimitError", "ServiceUnavailableError",
                    "InternalServerError", "APIError", "TimeoutError", "ConnectionError",
                    "APITimeoutError", "BadGatewayError", "JSONDecodeError"}


def _retry_after(exc: Exception) -> float | None:
    """Seconds a 429 asks to wait: its ``Retry-After`` header, in seconds or as an HTTP date."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    value = None
    if headers is not None:
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            value = None
    return parse_retry_after(value)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    if not value:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))

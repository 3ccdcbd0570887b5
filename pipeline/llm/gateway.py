"""The one gateway for LLM calls: litellm underneath, our own on-disk cache on top.

Every request is keyed by a hash of its full content (model, messages, parameters, seed, sample
index) and stored in SQLite, so a rerun makes zero calls and a run can be replayed offline (modes
``live``, ``record``, ``replay``). A call that fails comes back ``ok=False`` with the reason (or
``fatal``), never dropped. This module orchestrates; each job has its own module:
:mod:`pipeline.llm.cache` (the keyed store and its leases), :mod:`pipeline.llm.flight` (single
flight), :mod:`pipeline.llm.limits` (rate limits, concurrency, spend), :mod:`pipeline.llm.retries`
(the call, error classes, backoff), :mod:`pipeline.llm.usage` (spend records),
the model's kind of serving (:mod:`pipeline.llm.serving`: an endpoint, local servers, the cache alone)
and :mod:`pipeline.llm.replies` (JSON replies). Each model's settings are its
:class:`pipeline.llm_models.ModelSpec`, resolved once. What each guarantees: docs/llm.md and docs/llm-at-scale.md.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pipeline.llm.serving  # noqa: F401  (the built-in kinds of serving: a job that imports only the gateway resolves them)
from pipeline.cache_journal import journal_mode
from pipeline.credentials import carried
from pipeline.llm import prices, retries
from pipeline.llm.cache import LLMCache, LLMRequest, LLMResult
from pipeline.llm.flight import claim_lease, single_flight
from pipeline.llm.limits import SharedBuckets, estimate_tokens
from pipeline.llm.usage import Bill, Usage, UsageLog
from pipeline.llm_models import Connection, LLMSpec, ModelSpec
from pipeline.run_ids import current_run_id

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else `import litellm` fetches a price list


class CacheMiss(ValueError):
    """Replay mode met a request that was never recorded (a ValueError: the CLI prints one line)."""


class SpendCapReached(ValueError):
    """``llm.max_cost_usd`` is spent by this run: no further call goes out (the cache keeps every reply)."""


@dataclass
class GatewayStats:
    """Counters of one gateway (telemetry for the benchmark; never in result files)."""

    requests: int = 0  # HTTP requests sent (attempts)
    retries: int = 0  # attempts after the first, any reason
    rate_limited: int = 0  # 429 replies
    retry_after_honoured: int = 0  # 429s whose Retry-After was waited out
    waited_for_peer: int = 0  # single-flight followers (in-process or another process)
    limit_wait_s: float = 0.0  # seconds spent waiting on requests/tokens-per-minute buckets


class LLMGateway:
    """One job's calls under ``settings`` (:class:`pipeline.llm_models.LLMSpec`; its declared defaults
    when None), each model's as its :class:`~pipeline.llm_models.ModelSpec` says: its kind of serving
    (an endpoint, a ``local/<name>`` model's llama-cpp servers, the cache alone under replay), its calls
    in flight (``concurrency``) when callers use threads, its rate limits, price and timeout, and the
    request parameters its provider does not take (``drop_params``; litellm's own ``drop_params`` drops
    the ones it knows a provider refuses). Every request is attributed to ``run_id`` (default:
    :func:`pipeline.run_ids.current_run_id`) and ``variant`` (who asked) in the cache's ``usage`` table
    (:mod:`pipeline.llm.usage`); ``max_cost_usd`` caps the new spend of that run."""

    def __init__(
        self, cache_path: str | Path, settings: LLMSpec | None = None, variant: str = "", run_id: str | None = None
    ):
        s = settings if settings is not None else LLMSpec.from_dict({})
        self.settings = s
        self.cache = LLMCache(cache_path, journal_mode(s.cache_journal, "llm.cache_journal"))  # unset: the caches' own
        self.mode, self.max_retries = s.mode, s.max_retries
        self.backoff_s, self.max_backoff_s = s.backoff_s, s.max_backoff_s
        self.connections: dict[str, Connection] = {}
        self.connect_lock = threading.Lock()
        self.slots: dict[str, threading.BoundedSemaphore] = {}
        self.limits_lock = threading.Lock()
        self.buckets: SharedBuckets | None = None
        self.max_cost_usd = s.max_cost_usd
        self.run_id, self.variant = run_id or current_run_id(), variant
        self.usage = UsageLog(self.cache)
        self.reserved = 0.0  # the most the calls in flight in this gateway can cost (llm.max_cost_usd)
        self.spend_lock = threading.Lock()
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.calls = 0
        self.stats = GatewayStats()
        self.stats_lock = threading.Lock()

    def __enter__(self) -> LLMGateway:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the local servers this gateway started; write the pending usage rows."""
        self.usage.flush()
        for connection in self.connections.values():
            connection.close()
        self.connections.clear()

    def model(self, name: str) -> ModelSpec:
        """``name``'s settings (``llm.per_model.<name>`` over ``llm``, resolved once)."""
        return self.settings.resolve(name)

    def _slot(self, model: str) -> threading.BoundedSemaphore:
        with self.limits_lock:
            if model not in self.slots:
                self.slots[model] = threading.BoundedSemaphore(max(1, self.model(model).concurrency))
            return self.slots[model]

    def _count(self, **inc) -> None:
        with self.stats_lock:
            for k, v in inc.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)

    def identified(self, request: LLMRequest) -> LLMRequest:
        """``request`` naming its endpoint (the cache key then does): replies of two servers that
        answer under one model name are never shared. None for the provider's own endpoint and for
        models served on this machine (a ``local/`` model's GGUF pins the weights)."""
        endpoint = self.model(request.model).endpoint
        if endpoint is None or request.endpoint is not None:
            return request
        return dataclasses.replace(request, endpoint=endpoint)

    def key(self, request: LLMRequest) -> str:
        """The cache key this gateway stores ``request`` under (with its endpoint, when one is set)."""
        return self.identified(request).key()

    def _timeout(self, model: str) -> float:
        """``llm.per_model.<model>.timeout_s``, else ``llm.timeout_s`` (execution-only: not in any key)."""
        return self.model(model).timeout_s

    def complete(self, request: LLMRequest, validate: Callable[[str], str | None] | None = None) -> LLMResult:
        """One completion; failures come back as ``ok=False`` with the reason, never silently.
        ``validate(text)`` returns what is wrong with a reply (None when it is fine).
        Thread-safe; identical requests in flight are made once (single flight)."""
        request = self.identified(request)
        key = request.key()
        if self.mode != "record":
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add(Usage(self.run_id, self.variant, request.model, key, True, hit.ok))
                return hit
            if self.model(request.model).serving.cache_only:
                raise CacheMiss(
                    f"llm replay: no cached response for model={request.model} key={key} "
                    f"(run once with llm.mode: live to record it)"
                )
        return single_flight(
            (self.cache.path, key),
            lambda: self._lead(request, key, validate or retries.not_empty),
            lambda: self._count(waited_for_peer=1),
            lambda result: self._peer_reply(request, key, result),
        )

    def _peer_reply(self, request: LLMRequest, key: str, result: LLMResult | None) -> LLMResult:
        """A single-flight follower's reply: the stored one (a cache hit for this caller), else the
        leader's unstored failure (recorded by the leader; None: the leader raised, nothing came back)."""
        stored = self.cache.get(key)
        if stored is None:
            return result if result is not None else LLMResult("", False, "the leading call raised before any reply")
        self.usage.add(Usage(self.run_id, self.variant, request.model, key, True, stored.ok))
        return stored

    def _lead(self, request: LLMRequest, key: str, validate: Callable[[str], str | None]) -> LLMResult:
        """Claim the request across processes (a lease row), call, store, release."""
        if self.mode == "record":
            return self._call_and_store(request, key, validate)
        ttl = (self._timeout(request.model) + self.max_backoff_s) * (self.max_retries + 1) + 60
        if not claim_lease(self.cache, key, self.owner, ttl, lambda: self._count(waited_for_peer=1)):
            return self._peer_reply(request, key, LLMResult("", False, "no stored reply after the lease"))
        try:
            result = self._call_and_store(request, key, validate)
        except BaseException:
            self.cache.release(key, self.owner)
            raise
        if not (result.ok or result.text):  # not stored (storing drops the lease): let others try
            self.cache.release(key, self.owner)
        return result

    def _call_and_store(self, request: LLMRequest, key: str, validate: Callable[[str], str | None]) -> LLMResult:
        reserved = self._reserve_spend(request)
        bill = Bill()
        try:
            with self._slot(request.model):
                result = self._call(request, validate, bill)
        finally:
            with self.spend_lock:
                self.reserved -= reserved
        if result.ok or result.text:  # what the model said is kept; transport failures are retried on rerun
            self.cache.put(key, request, result)
        self.usage.add(
            Usage(
                self.run_id,
                self.variant,
                request.model,
                key,
                False,
                result.ok,
                result.attempts,
                bill.prompt_tokens,
                bill.completion_tokens,
                bill.cost_usd,
            )
        )
        return result

    def _reserve_spend(self, request: LLMRequest) -> float:
        """Before a call: this run's recorded spend (every process of it), plus the most the calls in
        flight here can cost, plus the most this call can cost, must fit under ``llm.max_cost_usd``;
        the call's share is reserved until its spend is recorded. The most a call costs: prompt
        characters / 3 input tokens and ``max_tokens`` (else 512) output tokens at the model's price
        (a reply longer than that, or malformed replies asked again, can still pass the cap)."""
        if self.max_cost_usd is None:
            return 0.0
        price = prices.price_per_token(self.model(request.model)) or (0.0, 0.0)  # preflight: priced
        chars = sum(len(str(m.get("content", ""))) for m in request.messages)
        most = chars / 3 * price[0] + int(request.params.get("max_tokens") or 512) * price[1]
        with self.spend_lock:
            spent = self.usage.run_spend(self.run_id)
            if spent + self.reserved + most > self.max_cost_usd:
                raise SpendCapReached(
                    f"llm.max_cost_usd: run {self.run_id} has spent {spent:.4f} USD (+ up to {self.reserved:.4f} in "
                    f"flight); the next call may cost up to {most:.4f} and the cap is {self.max_cost_usd} USD; "
                    f"every reply so far is cached (raise the cap and resume: the run goes on under the same id)"
                )
            self.reserved += most
        return most

    def _buckets(self) -> SharedBuckets:
        with self.limits_lock:
            if self.buckets is None:
                self.buckets = SharedBuckets(Path(self.cache.path).with_suffix(".limits.sqlite"), self.cache.journal)
            return self.buckets

    def _throttle(self, request: LLMRequest) -> None:
        """Wait for the model's shared requests/tokens-per-minute budget (one request, its tokens)."""
        lim = self.model(request.model)
        waited = 0.0
        if lim.requests_per_minute:
            waited += self._buckets().take(f"rpm:{request.model}", 1, lim.requests_per_minute)
        if lim.tokens_per_minute:
            waited += self._buckets().take(f"tpm:{request.model}", estimate_tokens(request), lim.tokens_per_minute)
        if waited:
            self._count(limit_wait_s=waited)

    def open(self, model: str) -> None:
        """Open ``model``'s route now (a local model's servers started), so a caller timing its calls
        (pipeline/bench/llm_choice.py) does not count a server's start-up in its first question's seconds."""
        self._connection(model)

    def _connection(self, model: str) -> Connection:
        """The model's route, opened once per gateway by its kind of serving (a local model's servers
        start here, one per call in flight)."""
        with self.connect_lock:
            if model not in self.connections:
                spec = self.model(model)
                self.connections[model] = spec.kind.connect(spec)
            return self.connections[model]

    def _kwargs(self, request: LLMRequest) -> tuple[str, dict]:
        """The litellm call's model and keyword arguments: route, params, seed, minus what the
        provider does not take (``llm.drop_params.<model>`` and litellm's ``drop_params``)."""
        spec = self.model(request.model)
        model, route = self._connection(request.model).route
        kwargs = {"max_retries": 0, **route, **request.params}  # retries are ours (one policy, counted)
        if "extra_headers" in route and "extra_headers" in request.params:  # the variant's, and headers_env's over them
            kwargs["extra_headers"] = {**request.params["extra_headers"], **route["extra_headers"]}
        if request.seed is not None:
            kwargs["seed"] = request.seed
        for name in spec.drop_params:
            kwargs.pop(name, None)
        if spec.kind.calls_out and "mock_response" not in kwargs:
            kwargs.setdefault("drop_params", True)
        return model, kwargs

    def _call(self, request: LLMRequest, validate: Callable[[str], str | None], bill: Bill) -> LLMResult:
        model, kwargs = self._kwargs(request)
        error, text, result = "", "", None
        # a malformed reply's retries (llm.malformed_retries, per model; default max_retries): a greedy local
        # model mostly repeats its words, so its retries are capped lower than those of transport failures
        spec = self.model(request.model)
        malformed, malformed_limit = 0, spec.malformed_retries
        for attempt in range(1, self.max_retries + 2):
            self._throttle(request)
            t0 = time.perf_counter()
            retry_after = None
            try:
                with self.stats_lock:
                    self.calls += 1
                    self.stats.requests += 1
                    self.stats.retries += attempt > 1
                with self._connection(request.model).server() as server:
                    resp = retries.litellm_completion(
                        model=model,
                        messages=request.messages,
                        timeout=spec.timeout_s,
                        **kwargs,
                        **server,
                    )
                text = resp.choices[0].message.content or ""
                usage = getattr(resp, "usage", None)
                tokens = (getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
                cost = prices.reply_cost(spec, resp, *tokens)
                bill.add(*tokens, 0.0 if cost is None and spec.kind.free else cost)  # every reply is paid, kept or not
                result = LLMResult(
                    text,
                    True,
                    "",
                    False,
                    *tokens,
                    round(time.perf_counter() - t0, 3),
                    cost,
                    attempt,
                    model_id=str(getattr(resp, "model", "") or ""),
                    system_fingerprint=getattr(resp, "system_fingerprint", None),
                )
                error = validate(text) or ""
                if not error:
                    return result
                result.ok, result.error = False, error
                malformed += 1
                if malformed > malformed_limit:  # the model's words again would most likely be the same
                    return result
            except Exception as exc:  # litellm maps provider errors to its own exception types
                error = retries.error_line(exc, carried(kwargs))  # never the key or headers it carried
                text, result = "", None
                if not retries.retryable(exc):
                    return LLMResult("", False, error, attempts=attempt, fatal=True)
                if retries.rate_limited(exc):
                    self._count(rate_limited=1)
                    retry_after = retries.retry_after(exc)
            # a malformed reply is the model's words, not an overload signal: ask again at once (the
            # rate-limit buckets above still pace it); transport failures, 429 and 5xx back off
            if attempt <= self.max_retries and result is None:
                if retry_after is not None:  # the provider said when: wait that long (capped), then go
                    self._count(retry_after_honoured=1)
                time.sleep(retries.backoff_s(attempt, self.backoff_s, self.max_backoff_s, retry_after))
        if result is not None:  # a reply that stayed malformed: the model's words, with the reason
            return result
        return LLMResult("", False, error, attempts=self.max_retries + 1)

"""The built-in kinds of LLM serving (:class:`pipeline.llm_models.ServingKind`): a provider or server
at an endpoint (``hosted``), llama.cpp servers this job starts on 127.0.0.1 (``local``, models named
``local/<name>``), and replies replayed from the cache (``replay``, under ``llm.mode: replay``).

Each kind's hooks live here, once: how the gateway reaches the model, where the plan says its calls
go, how long the estimate takes a call to be, how many cores a job calling it keeps busy.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from pipeline.config_schema import declared_defaults
from pipeline.llm.local_auth import new_key
from pipeline.llm_models import SERVING, LocalModelSpec, ModelSpec, ServingKind

ASSUMED_LATENCY_S = 3.0  # a hosted call, for the estimate
LOCAL_PROMPT_TOK_S = 311.0  # the packaged Gemma 3 270M on 2 cores (../shared/docs/local-llm.md)
LOCAL_OUTPUT_TOK_S = 53.0
LOCAL_DEFAULTS = declared_defaults(LocalModelSpec)  # a local model's n_threads when it has no server config
LOCAL_CONCURRENCY = 1  # a local model's servers unless llm.per_model.<model>.concurrency says (one per call in flight)
KEYLESS = "no-key"  # the placeholder a keyless server is sent (litellm's openai/ route requires some key)


def api_key_kwargs(model: ModelSpec) -> dict:
    """litellm's ``api_key`` for a model: the value of its ``api_key_env`` variable, the placeholder
    for a keyless server, nothing (litellm's own lookup, e.g. ``OPENAI_API_KEY``) when not configured."""
    if not model.keyed:
        return {}
    if model.api_key_env is None:
        return {"api_key": KEYLESS}
    value = os.environ.get(model.api_key_env)
    return {"api_key": value} if value else {}


@dataclass
class Hosted:
    """A model at its endpoint (or the provider's own), with the key its ``api_key_env`` names."""

    route: tuple[str, dict]

    @contextlib.contextmanager
    def server(self) -> Iterator[dict]:
        yield {}

    def close(self) -> None:
        pass


def env_headers(model: ModelSpec) -> dict[str, str]:
    """The HTTP headers its ``headers_env`` names, their values read from the environment (set ones only)."""
    return {h: os.environ[v] for h, v in sorted(model.headers_env.items()) if os.environ.get(v)}


def userinfo(model: ModelSpec) -> str | None:
    """The ``user:password`` its ``userinfo_env`` variable holds (None: not configured or not set)."""
    return os.environ.get(model.userinfo_env) or None if model.userinfo_env else None


def endpoint_url(model: ModelSpec) -> str | None:
    """Its endpoint as called: ``api_base`` with the ``user:password@`` of ``userinfo_env`` put in (the
    endpoint in cache keys, manifests and messages stays without it)."""
    if not model.endpoint or not userinfo(model):
        return model.endpoint
    parts = urlsplit(model.endpoint)
    return parts._replace(netloc=f"{userinfo(model)}@{parts.netloc}").geturl()


def connection_secrets(model: ModelSpec) -> list[str]:
    """Every value from the environment a call of ``model`` carries (key, header values, user:password):
    what :func:`pipeline.credentials.redact` keeps out of error lines and logs."""
    return [v for v in (api_key_kwargs(model).get("api_key"), *env_headers(model).values(), userinfo(model)) if v]


def connect_hosted(model: ModelSpec) -> Hosted:
    """Its route: endpoint, key and headers from the environment, in the connection settings (never in the
    request, so never in the cache key, the cache's request column or a replay pack)."""
    url, headers = endpoint_url(model), env_headers(model)
    route = {
        **({"api_base": url} if url else {}),
        **api_key_kwargs(model),
        **({"extra_headers": headers} if headers else {}),
    }
    return Hosted((model.name, route))


def provider_endpoint(model: ModelSpec) -> str:
    """Its ``api_base``, else the provider's own endpoint (litellm's default)."""
    if model.endpoint:
        return model.endpoint
    try:
        import litellm

        provider = litellm.get_llm_provider(model.name)[1]
    except Exception:  # litellm does not know the provider: preflight or the first call says so
        provider = model.name.split("/", 1)[0]
    return f"{provider} (provider's endpoint)"


def assumed_latency(model: ModelSpec, calls: int, prompt: int, completion: int) -> tuple[float | None, str]:
    return ASSUMED_LATENCY_S, f"{ASSUMED_LATENCY_S:g} s a call (assumed)"


@dataclass
class LocalPool:
    """A local model's llama.cpp servers, one per call in flight (each answers one request at a time):
    a call takes an idle one, so two calls never queue on one server while another is idle."""

    model: ModelSpec
    key: str = field(default_factory=new_key)  # its servers require it of every call (pipeline/llm/local_auth.py)
    servers: list = field(default_factory=list)
    free: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def route(self) -> tuple[str, dict]:
        return f"openai/{self.model.local_name}", {"api_key": self.key}

    def start(self) -> LocalPool:
        from pipeline.llm.local_server import LocalServer, start_all

        spec = self.model.server
        if spec is None:
            raise ValueError(
                f"config key 'llm.local.{self.model.local_name}': model '{self.model.name}' has no local server config"
            )
        log = Path(spec.gguf).with_suffix(".server.log")
        pool = [
            LocalServer(spec, log if i == 0 else log.with_suffix(f".{i}.log"), self.key)
            for i in range(self.model.concurrency)
        ]
        self.servers = start_all(pool)
        for server in pool:
            self.free.put(server)
        return self

    @contextlib.contextmanager
    def server(self) -> Iterator[dict]:
        server = self.free.get()
        try:
            yield {"api_base": server.api_base}
        finally:
            self.free.put(server)

    def close(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers = []


def local_speed(model: ModelSpec, calls: int, prompt: int, completion: int) -> tuple[float | None, str]:
    """A local model's mean call at its measured token speeds: the LLM bench's row for its threads per
    server and servers (pipeline/llm/speeds.py), else Gemma 3 270M's constants above."""
    from pipeline.llm.speeds import speed_of

    if not calls:
        return None, "unknown"
    threads = model.server.n_threads if model.server else LOCAL_DEFAULTS["n_threads"]
    row = speed_of(model.local_name, int(threads), model.concurrency)
    prompt_tok_s, output_tok_s = (
        (row["prompt_tok_s"], row["gen_tok_s"]) if row else (LOCAL_PROMPT_TOK_S, LOCAL_OUTPUT_TOK_S)
    )
    where = (
        f"LLM bench {row['measured']}, {row['cpu']}, load {row['load_avg']:g}"
        if row
        else "no LLM bench row for it: Gemma 3 270M's, measured on 2 cores"
    )
    per_call = (prompt / prompt_tok_s + completion / output_tok_s) / calls
    return per_call, f"~{per_call:.0f} s a call (local: {prompt_tok_s:g}/{output_tok_s:g} tok/s, {where})"


def local_threads(model: ModelSpec) -> int:
    """One llama.cpp server per call in flight (``concurrency``), each with ``n_threads``."""
    n_threads = model.server.n_threads if model.server else LOCAL_DEFAULTS["n_threads"]
    return max(1, model.concurrency) * max(1, int(n_threads))


def fit_local(model: ModelSpec, threads: int) -> ModelSpec:
    """As many servers as its ``concurrency`` asks while each keeps its ``n_threads`` (at least one
    server), then each server's ``n_threads`` at most its share of the ``threads`` cores."""
    if model.server is None:
        return model
    n_threads = max(1, int(model.server.n_threads))
    servers = max(1, min(model.concurrency, threads // n_threads))
    server = replace(model.server, n_threads=max(1, min(n_threads, threads // servers)))
    return replace(model, concurrency=servers, server=server)


def local_problem(model: ModelSpec) -> str | None:
    return None if model.server is not None else "has no server config under llm.local"


def cache_only(model: ModelSpec):
    raise ValueError(f"llm.mode replay: model '{model.name}' is answered from the cache only")


HOSTED = SERVING.register(ServingKind("hosted", connect_hosted, provider_endpoint, assumed_latency))
LOCAL = SERVING.register(
    ServingKind(
        "local",
        lambda model: LocalPool(model).start(),
        lambda model: "llama.cpp on 127.0.0.1 (this machine)",
        local_speed,
        prefix="local/",
        calls_out=False,
        free=True,
        local_server=True,
        own_concurrency=LOCAL_CONCURRENCY,
        sends="{carried}, to this machine only",
        threads=local_threads,
        fit=fit_local,
        problem=local_problem,
        json_format="json_object",
    )
)
REPLAY = SERVING.register(
    ServingKind(
        "replay",
        cache_only,
        lambda model: model.kind.where(model),
        assumed_latency,
        mode="replay",
        calls_out=False,
        cache_only=True,
        sends="nothing (replay: cached replies)",
    )
)

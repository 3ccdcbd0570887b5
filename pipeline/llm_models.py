"""The LLM service typed per model: ``llm`` parsed once, and each model it calls resolved once.

Why: the gateway, its pool, the preflight, the plan and the estimate all ask the same questions of a
model: who serves it, at which endpoint, with which key variable, how many calls in flight, under which
rate limits, at what price, how long a call may take. :class:`LLMSpec` is the ``llm`` block parsed
(``per_model``, ``prices`` and ``local`` typed too); :meth:`LLMSpec.resolve` turns one model name into
its :class:`ModelSpec` (``llm.per_model.<model>`` over ``llm``), once per spec, and every reader takes
that. A job's own share of calls and cores is a new spec (:meth:`LLMSpec.with_model`), never a dict
merged again.

Who serves a model is a registered :class:`ServingKind` (a provider or server at an endpoint, a local
llama.cpp server, replies replayed from the cache): a model is served by the kind whose ``prefix`` it
carries, else by the kind without one; under ``llm.mode: <mode>`` a kind registered for that mode
answers instead. A new kind of serving is one :meth:`~pipeline.registry.base.Registry.register` call. The
built-in kinds register in :mod:`pipeline.llm.serving` (their hooks start servers and ask litellm);
a driver imports it through pipeline/register_builtins.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from pipeline.config_schema import enum, parse_spec, spec_defaults
from pipeline.registry.base import Registry

LLM_MODES = enum("llm", "mode")
PER_TOKEN = 1e6  # llm.prices are per million tokens
CONCURRENCY = spec_defaults("llm")["concurrency"]  # calls in flight per model
MAX_BACKOFF_S = 60.0  # the longest backoff between attempts (not a config key: tests and benches shorten it)


class Connection(Protocol):
    """How a gateway reaches one model for a job: litellm's model string and keyword arguments, a
    server for the length of one call (its extra keyword arguments), and stopping what it started."""

    @property
    def route(self) -> tuple[str, dict]: ...

    def server(self):  # a context manager yielding extra litellm keyword arguments
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ServingKind:
    """One way a model is served. Its flags say what every reader does about it (no reader checks a
    model name's prefix or the mode); its hooks do what only it knows (start servers, name its endpoint)."""

    name: str
    connect: Callable[[ModelSpec], Connection]  # the gateway's route to the model (started once per job)
    where: Callable[[ModelSpec], str]  # where the calls go, for the plan
    per_call_s: Callable[
        [ModelSpec, int, int, int], tuple[float | None, str]
    ]  # (model, calls, prompt, output tokens) -> s a call, why
    prefix: str | None = None  # a model named "<prefix><name>" is served by this kind (None: by no name)
    mode: str | None = None  # answers for every model while llm.mode is this (replay)
    calls_out: bool = True  # requests go to an endpoint: its key is checked, its api_base probed and keyed
    free: bool = False  # runs on this machine: costs 0 unless llm.prices prices it
    local_server: bool = False  # "<prefix><name>" runs on the server a job starts from llm.local.<name>: the
    #                             config must have that entry and gives the model no endpoint or key of its own
    cache_only: bool = False  # answers from the cache alone: a miss is an error, nothing is paid or checked
    own_concurrency: int | None = None  # calls in flight from llm.per_model only, default this (None: llm.concurrency)
    sends: str = "{carried} -> {endpoint}"  # the plan's line of what leaves this machine, and to whom
    threads: Callable[[ModelSpec], int] = lambda model: 1  # cores a job calling it keeps busy
    fit: Callable[[ModelSpec, int], ModelSpec] = lambda model, threads: model  # fitted to a job's granted cores
    problem: Callable[[ModelSpec], str | None] = lambda model: None  # what keeps it from being served (preflight)
    json_format: str = "json_schema"  # how a structured reply is asked: json_schema (OpenAI) | json_object (llama.cpp)

    def local_name(self, model: str) -> str | None:
        """The ``llm.local`` entry that serves ``model`` on this machine: its name after this kind's prefix
        (``local/gemma`` -> ``gemma``; None for a kind without a prefix, which serves no such entry)."""
        return model[len(self.prefix) :] if self.prefix else None


SERVING: Registry[ServingKind] = Registry("LLM serving kind", "wattbench.llm_serving", builtins="pipeline.llm.serving")


TEMPLATE_IN_FILE = "gguf"  # llm.local.<name>.chat_format: the chat template the GGUF carries (no --chat_format)


@dataclass(frozen=True)
class LocalModelSpec:
    """``llm.local.<name>``: a GGUF served by llama-cpp-python on 127.0.0.1."""

    name: str
    package: str
    gguf: str
    chat_format: str
    n_ctx: int
    n_threads: int
    startup_timeout_s: float
    logits_all: bool = False  # vocabulary logits for every prompt token (only logprobs need them)
    parts: int | None = None  # the GGUF in numbered packages package.format(n=1..parts) (pipeline/llm/model_file.py)
    sha256: str | None = None  # the assembled file's, checked when it is written

    @classmethod
    def from_dict(cls, name: str, m: Mapping) -> LocalModelSpec:
        return parse_spec(cls, m, f"llm.local.{name}", spec_defaults("llm", "local", "*"), name=name)


@dataclass(frozen=True)
class PerModelSpec:
    """``llm.per_model.<model>``: one model's overrides of ``llm`` (None: not set here)."""

    api_base: str | None
    api_key_env: str | None
    timeout_s: float | None
    concurrency: int | None
    requests_per_minute: float | None
    tokens_per_minute: float | None
    max_failure_rate: float | None
    malformed_retries: int | None
    keyed: bool = False  # api_key_env is set (None then means a keyless server), not a config key
    headers_env: dict[str, str] = field(default_factory=dict)  # header -> the variable holding its value
    userinfo_env: str | None = None  # the variable holding user:password for its api_base

    @classmethod
    def from_dict(cls, model: str, d: Mapping) -> PerModelSpec:
        return parse_spec(cls, d, f"llm.per_model.{model}", {}, keyed="api_key_env" in d)


@dataclass(frozen=True)
class Price:
    """``llm.prices.<model>``: USD per million input (prompt) and output (completion) tokens."""

    input: float
    output: float

    def per_token(self) -> tuple[float, float]:
        return float(self.input) / PER_TOKEN, float(self.output) / PER_TOKEN


@dataclass(frozen=True)
class ModelSpec:
    """One model as this job's calls see it: ``llm.per_model.<model>`` over ``llm``, resolved once."""

    name: str
    kind: ServingKind  # who serves it live (its endpoint, price and timing)
    serving: ServingKind  # who answers in this run: ``kind``, or the kind of ``llm.mode`` (replay)
    endpoint: str | None  # api_base (a kind that calls out); part of the cache key
    keyed: bool  # api_key_env is configured
    api_key_env: str | None  # its key's variable (None with ``keyed``: a keyless server)
    headers_env: dict[str, str]  # HTTP header -> the variable holding its value (sent with every call, never stored)
    userinfo_env: str | None  # the variable holding user:password for its endpoint's URL (never stored)
    timeout_s: float
    concurrency: int
    requests_per_minute: float | None
    tokens_per_minute: float | None
    max_failure_rate: float
    malformed_retries: int
    price: tuple[float, float] | None  # USD per input and output token from llm.prices
    drop_params: tuple[str, ...]  # request parameters its provider does not take
    server: LocalModelSpec | None  # llm.local.<name> of a kind serving "<prefix><name>" on this machine

    @property
    def local_name(self) -> str:
        """The name after the kind's prefix (``local/gemma`` -> ``gemma``)."""
        local = self.kind.local_name(self.name)
        return self.name if local is None else local


def serving_kind(model: str) -> ServingKind:
    """The kind whose prefix ``model`` carries, else the one registered without prefix or mode."""
    kinds = SERVING.entries()
    own = [k for k in kinds if k.prefix and model.startswith(k.prefix)]
    return own[0] if own else next(k for k in kinds if k.prefix is None and k.mode is None)


@dataclass(frozen=True)
class LLMSpec:
    """``llm`` as one job's gateway sees it (the computed slice plus the execution-only settings),
    parsed once; :meth:`resolve` gives a model's :class:`ModelSpec`."""

    mode: str
    timeout_s: float
    max_retries: int
    backoff_s: float
    cache_journal: str
    concurrency: int
    max_failure_rate: float
    confirm_spend: bool
    api_base: str | None = None
    model: str | None = None
    envvars: tuple[str, ...] = ()
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_cost_usd: float | None = None
    malformed_retries: int | None = None
    max_backoff_s: float = MAX_BACKOFF_S
    prices: dict[str, Price] = field(default_factory=dict)
    drop_params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    per_model: dict[str, PerModelSpec] = field(default_factory=dict)
    local: dict[str, LocalModelSpec] = field(default_factory=dict)

    def __post_init__(self):
        if self.mode not in LLM_MODES:
            raise ValueError(f"llm.mode: '{self.mode}' is not one of {LLM_MODES}")
        object.__setattr__(self, "_models", {})  # model -> its ModelSpec, resolved on first use

    @classmethod
    def from_dict(cls, values: Mapping) -> LLMSpec:
        """The ``llm`` table parsed (an unknown key is a :class:`~pipeline.config_schema.ConfigProblem`)."""
        d = dict(values)
        typed = {
            "envvars": tuple(d.pop("envvars", None) or ()),
            "prices": {
                m: parse_spec(Price, p, f"llm.prices.{m}", {}) for m, p in (d.pop("prices", None) or {}).items()
            },
            "drop_params": {m: tuple(p) for m, p in (d.pop("drop_params", None) or {}).items()},
            "per_model": {m: PerModelSpec.from_dict(m, p or {}) for m, p in (d.pop("per_model", None) or {}).items()},
            "local": {n: LocalModelSpec.from_dict(n, m) for n, m in (d.pop("local", None) or {}).items()},
        }
        return parse_spec(cls, d, "llm", {"max_backoff_s": MAX_BACKOFF_S, **spec_defaults("llm")}, **typed)

    @classmethod
    def from_slices(cls, hashed: Mapping, execution: Mapping) -> LLMSpec:
        """One job's spec from the hashed slice and the execution-only settings it is passed apart
        (``--llm-exec``): the hashed ``per_model`` keys (api_base) over the execution-only ones, model by model."""
        run, own = execution.get("per_model") or {}, hashed.get("per_model") or {}
        per_model = {m: {**run.get(m, {}), **own.get(m, {})} for m in {*run, *own}}
        return cls.from_dict({**hashed, **execution, **({"per_model": per_model} if per_model else {})})

    @property
    def cache_only(self) -> bool:
        """Every reply comes from the cache: the kind registered for ``llm.mode`` answers alone (replay)."""
        return any(k.mode == self.mode and k.cache_only for k in SERVING.entries())

    def resolve(self, name: str) -> ModelSpec:
        """``name``'s settings: ``llm.per_model.<name>`` over ``llm`` (resolved once per spec)."""
        models: dict[str, ModelSpec] = self._models  # type: ignore[attr-defined]
        if name not in models:
            models[name] = self._resolve(name)
        return models[name]

    def _resolve(self, name: str) -> ModelSpec:
        kind = serving_kind(name)
        serving = next((k for k in SERVING.entries() if k.mode is not None and k.mode == self.mode), kind)
        per = self.per_model.get(name) or PerModelSpec.from_dict(name, {})
        if kind.own_concurrency is not None:  # one server per call in flight: only per_model sets it
            concurrency = per.concurrency or kind.own_concurrency
        else:
            concurrency = per.concurrency or self.concurrency or CONCURRENCY
        price = self.prices.get(name)
        return ModelSpec(
            name=name,
            kind=kind,
            serving=serving,
            endpoint=(per.api_base or self.api_base or None) if kind.calls_out else None,
            keyed=per.keyed,
            api_key_env=per.api_key_env,
            headers_env=dict(per.headers_env or {}),
            userinfo_env=per.userinfo_env,
            timeout_s=float(per.timeout_s or self.timeout_s),
            concurrency=int(concurrency),
            requests_per_minute=_over(per.requests_per_minute, self.requests_per_minute),
            tokens_per_minute=_over(per.tokens_per_minute, self.tokens_per_minute),
            max_failure_rate=float(_over(per.max_failure_rate, self.max_failure_rate)),
            malformed_retries=int(_over(per.malformed_retries, _over(self.malformed_retries, self.max_retries))),
            price=None if price is None else price.per_token(),
            drop_params=self.drop_params.get(name, ()),
            server=self.local.get(local) if (local := kind.local_name(name)) is not None else None,
        )

    def with_model(self, model: ModelSpec) -> LLMSpec:
        """This spec with ``model`` resolved as given (a job's share of calls in flight and of cores)."""
        out = replace(self)
        out._models.update(self._models)  # type: ignore[attr-defined]
        out._models[model.name] = model  # type: ignore[attr-defined]
        return out

    def for_job(self, name: str, in_flight: int | None, threads: int | None) -> LLMSpec:
        """The spec of one job calling ``name``: its ``in_flight`` share (the job's ``llm_api`` units)
        caps the model's concurrency, and its kind fits the servers to the job's granted ``threads``."""
        model = self.resolve(name)
        if in_flight:
            model = replace(model, concurrency=min(in_flight, model.concurrency))
        return self.with_model(model.kind.fit(model, threads) if threads else model)


def _over(own, default):
    """A per-model value over the ``llm`` one (None: not set)."""
    return default if own is None else own

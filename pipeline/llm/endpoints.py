"""Per-model endpoints: where a hosted model is called, with which key, and whether it answers.

Why: one run mixes hosted models and self-hosted OpenAI-compatible servers (vLLM, llama.cpp,
Ollama), each under ``llm.per_model.<model>``: ``api_base`` (the server; over ``llm.api_base``),
``api_key_env`` (the environment variable holding its key; ``null`` for a keyless server, which is
then sent a placeholder so litellm's ``openai/`` route does not ask for ``OPENAI_API_KEY``) and
``timeout_s``. The endpoint is part of the model's hashed params and of its cache keys; keys and
timeouts are not.

Before any job of a real run the main Snakemake process asks each configured endpoint once which
models it serves (``GET {api_base}/models``, :func:`probe`): one that does not answer, or serves
another model id than configured, is a line in the plan and stops the run before its first call.
The ids served are written beside the cache (``endpoints.json``) and copied into the manifests of
the jobs that use the model (:func:`manifest_entry`), so a drifting alias is visible.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.llm.serving import api_key_kwargs
from pipeline.llm.work import LLMWork
from pipeline.llm_models import LLMSpec, ModelSpec

RECORD = "endpoints.json"  # in the cache folder: the last probe of each endpoint


def served_name(model: str) -> str:
    """The id a server should list for a litellm model string: ``openai/<name>`` -> ``<name>``."""
    return model.split("/", 1)[1] if "/" in model else model


def endpoint_models(work: LLMWork) -> list[ModelSpec]:
    """Every model the configured variants call at an endpoint of its own (mocked variants and
    models served on this machine call none)."""
    return [m for m in (work.llm.resolve(name) for name in sorted(work.users())) if m.endpoint]


@dataclass
class EndpointStatus:
    """One endpoint as the probe found it: the model configured at it, the ids it serves, what is wrong."""

    model: str
    api_base: str
    served: list[str] = field(default_factory=list)
    problem: str = ""  # empty when it answers and serves the configured id

    @property
    def ok(self) -> bool:
        return not self.problem

    def line(self) -> str:
        """One line of the plan."""
        if self.ok:
            return f"endpoint {self.api_base}: serves {served_name(self.model)} (for {self.model})"
        return f"endpoint {self.api_base} ({self.model}): {self.problem}"


def _auth_headers(model: ModelSpec) -> dict[str, str]:
    key = api_key_kwargs(model).get("api_key")
    if key is None and model.name.startswith("openai/"):
        key = os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def probe_one(model: ModelSpec, timeout_s: float = 5.0) -> EndpointStatus:
    """``GET {api_base}/models`` once, with a short timeout."""
    assert model.endpoint is not None  # endpoint_models: only models at an endpoint
    status = EndpointStatus(model.name, model.endpoint)
    req = urllib.request.Request(model.endpoint.rstrip("/") + "/models", headers=_auth_headers(model))
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except (OSError, ValueError) as exc:  # refused, timed out, HTTP error, not JSON
        status.problem = f"does not answer GET /models ({type(exc).__name__}: {exc})"
        return status
    status.served = sorted(str(m.get("id")) for m in (body.get("data") or []) if isinstance(m, dict))
    if served_name(model.name) not in status.served:
        status.problem = f"serves {status.served or 'no model'}, not the configured '{served_name(model.name)}'"
    return status


def probe(work: LLMWork, timeout_s: float = 5.0) -> list[EndpointStatus]:
    """Every configured endpoint, asked once (the plan printer shows :meth:`EndpointStatus.line`)."""
    return [probe_one(m, timeout_s) for m in endpoint_models(work) if not m.serving.cache_only]  # replay: none


def record(cache_dir: str | Path, statuses: list[EndpointStatus]) -> None:
    """The probe's findings beside the cache, for the jobs' manifests (merged with earlier probes)."""
    from pipeline.io import atomic_write_json

    path = Path(cache_dir) / RECORD
    known = json.loads(path.read_text()) if path.exists() else {}
    for s in statuses:
        known.setdefault(s.api_base, {})[s.model] = {
            k: v for k, v in asdict(s).items() if k not in ("api_base", "model")
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, known)


def manifest_entry(cache_dir: str | Path, model: ModelSpec) -> dict:
    """What a job's manifest records of its model's endpoint: ``{api_base, served}`` ({} without one)."""
    if not model.endpoint:
        return {}
    path = Path(cache_dir) / RECORD
    known = json.loads(path.read_text()) if path.exists() else {}
    found = (known.get(model.endpoint) or {}).get(model.name) or {}
    return {"endpoint": {"api_base": model.endpoint, "model": model.name, "served": found.get("served")}}


def _base_key(llm: LLMSpec, model: str) -> str:
    """The config key that set a model's endpoint."""
    per = llm.per_model.get(model)
    return f"llm.per_model.{model}.api_base" if per and per.api_base else "llm.api_base"


def check_endpoints(work: LLMWork, timeout_s: float = 5.0, statuses: list[EndpointStatus] | None = None) -> list[str]:
    """Probe (unless the plan printer did: ``statuses``), record and print; raise
    :class:`~pipeline.config.ConfigError` (one line per bad endpoint) when one does not answer or
    serves another model, so a real run stops before its first call."""
    from pipeline.config import ConfigError

    statuses = probe(work, timeout_s) if statuses is None else statuses
    if statuses:
        record(work.cache_dir, statuses)
    lines = [s.line() for s in statuses]
    for line in lines:
        print(line, file=sys.stderr)
    bad = [s for s in statuses if not s.ok]
    if bad:
        raise ConfigError("; ".join(f"config key '{_base_key(work.llm, s.model)}': {s.line()}" for s in bad))
    return lines

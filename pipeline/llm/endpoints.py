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

import base64
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pipeline.credentials import carried, redact, url_userinfo, without_userinfo
from pipeline.llm.serving import KEYLESS, api_key_kwargs, connection_secrets, endpoint_url, env_headers
from pipeline.llm.work import LLMWork
from pipeline.llm_models import LLMSpec, ModelSpec

RECORD = "endpoints.json"  # in the cache folder: the last probe of each endpoint
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # where plain http:// carries credentials nowhere


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
    """What the probe sends, as a call would: the model's headers (``headers_env``), its key as a bearer
    token, or HTTP Basic from the ``user:password`` of its endpoint (as httpx does for a URL carrying one)."""
    key = api_key_kwargs(model).get("api_key")
    if key is None and model.name.startswith("openai/"):
        key = os.environ.get("OPENAI_API_KEY")
    headers = env_headers(model)
    url = endpoint_url(model) or ""
    if url_userinfo(url):
        user, _, password = urlsplit(url).netloc.rsplit("@", 1)[0].partition(":")
        basic = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        return {**headers, "Authorization": f"Basic {basic}"}
    return {**headers, **({"Authorization": f"Bearer {key}"} if key else {})}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: urllib would send the key on to whatever host a 3xx names."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _models_url(model: ModelSpec) -> str:
    """``{api_base}/models`` without any ``user:password@`` (urllib would read it as part of the host)."""
    parts = urlsplit((model.endpoint or "").rstrip("/") + "/models")
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]).geturl()


def plain_http_warning(model: ModelSpec) -> str | None:
    """A warning when credentials would cross the network unencrypted: an ``http://`` endpoint other than
    this machine's loopback for a model that sends a key, headers or a password."""
    parts = urlsplit(model.endpoint or "")
    sent = [v for v in _auth_headers(model).values() if v != f"Bearer {KEYLESS}"]  # a keyless server's placeholder
    if parts.scheme != "http" or not sent or (parts.hostname or "") in LOOPBACK:
        return None
    return (
        f"endpoint {without_userinfo(model.endpoint or '')} ({model.name}): plain http:// carries its credentials "
        "unencrypted over the network; use https:// (http:// is fine on 127.0.0.1/localhost)"
    )


def probe_one(model: ModelSpec, timeout_s: float = 5.0) -> EndpointStatus:
    """``GET {api_base}/models`` once, with a short timeout, following no redirect; nothing it says repeats
    a credential (the endpoint's ``user:password`` masked, the values sent redacted from errors)."""
    assert model.endpoint is not None  # endpoint_models: only models at an endpoint
    status = EndpointStatus(model.name, without_userinfo(model.endpoint))
    headers = _auth_headers(model)
    req = urllib.request.Request(_models_url(model), headers=headers)
    try:
        with urllib.request.build_opener(_NoRedirect).open(req, timeout=timeout_s) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except (OSError, ValueError) as exc:  # refused, timed out, an HTTP error or a redirect, not JSON
        status.problem = _why(exc, model, headers)
        return status
    status.served = sorted(str(m.get("id")) for m in (body.get("data") or []) if isinstance(m, dict))
    if served_name(model.name) not in status.served:
        status.problem = f"serves {status.served or 'no model'}, not the configured '{served_name(model.name)}'"
    return status


def _why(exc: Exception, model: ModelSpec, headers: dict[str, str]) -> str:
    """The probe's problem line for ``exc``, without a credential in it."""
    if isinstance(exc, urllib.error.HTTPError) and 300 <= exc.code < 400:
        where = urlsplit(exc.headers.get("Location") or "").netloc.rsplit("@", 1)[-1] or "elsewhere"
        return (
            f"redirects (HTTP {exc.code} to {where}), not followed with its credentials: set api_base to where it leads"
        )
    return f"does not answer GET /models ({type(exc).__name__}: {redact(str(exc), _secrets(model, headers))})"


def _secrets(model: ModelSpec, headers: dict[str, str]) -> list[str]:
    """The credentials a probe carried (its header values, the endpoint's user:password)."""
    return [*connection_secrets(model), *headers.values(), *carried({"api_base": model.endpoint or ""})]


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
    shown = without_userinfo(model.endpoint)
    found = (known.get(shown) or {}).get(model.name) or {}
    return {"endpoint": {"api_base": shown, "model": model.name, "served": found.get("served")}}


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
    for warning in filter(None, map(plain_http_warning, endpoint_models(work))):
        print(f"warning: {warning}", file=sys.stderr)
    bad = [s for s in statuses if not s.ok]
    if bad:
        raise ConfigError("; ".join(f"config key '{_base_key(work.llm, s.model)}': {s.line()}" for s in bad))
    return lines

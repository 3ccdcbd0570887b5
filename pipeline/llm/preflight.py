"""Preflight: before any job starts, every model the configured variants use can be reached.

Why: a run with a missing API key used to go to "100% done", rc 0, with every LLM answer a
recorded failure — and the next run said "Nothing to be done". Now the Snakefile calls
:func:`preflight` right after the config is validated: a hosted model whose credentials are
not in the environment (``litellm.validate_environment``) stops the run with one line naming
the variable and the variants that need it. Replay mode is exempt (no call leaves), and so are
mocked variants (``params.mock_response``); ``local/<name>`` models need their server config.
Spend: with ``llm.max_cost_usd`` set, every model the run calls must be priced (``llm.prices`` or
litellm's map), or the cap could not count it.
"""

from __future__ import annotations

from pipeline.answer_backends import calls_llm
from pipeline.config import ConfigError
from pipeline.llm.gateway import LOCAL_PREFIX
from pipeline.llm.prices import unpriced


def llm_users(cfg: dict) -> dict[str, list[str]]:
    """model -> the answering variants and LLM planners (``retrieval.<name>``) that call it."""
    llm = cfg.get("llm") or {}
    users: dict[str, list[str]] = {}
    for name, v in sorted(cfg.get("answering", {}).items()):
        if calls_llm(v["backend"]) and "mock_response" not in (v.get("params") or {}):
            users.setdefault(v.get("model") or llm.get("model") or "", []).append(name)
    for name, r in sorted(cfg.get("retrieval", {}).items()):
        planner = r.get("planner") or {}
        if planner.get("kind") == "llm" and "mock_response" not in (planner.get("params") or {}):
            users.setdefault(planner.get("model") or llm.get("model") or "", []).append(f"retrieval.{name}")
    return users


def missing_keys(model: str, api_base: str | None = None) -> list[str]:
    """The environment variables ``model`` needs that are not set (litellm knows which)."""
    import litellm

    report = litellm.validate_environment(model=model, api_base=api_base)
    return [] if report.get("keys_in_environment") else sorted(report.get("missing_keys") or [])


def preflight(cfg: dict) -> None:
    """Raise :class:`ConfigError` (one line) when a model the run needs cannot be reached."""
    llm = cfg.get("llm") or {}
    check_spend_config(llm, llm_users(cfg))
    if llm.get("mode") == "replay":
        return
    users = llm_users(cfg)
    need: dict[str, list[str]] = {}
    for model, variants in sorted(users.items()):
        if model.startswith(LOCAL_PREFIX):
            if model[len(LOCAL_PREFIX) :] not in (llm.get("local") or {}):
                raise ConfigError(
                    f"preflight: model '{model}' (used by {', '.join(variants)}) has no server config under llm.local"
                )
            continue
        for var in missing_keys(model, llm.get("api_base")):
            need.setdefault(var, []).extend(f"{v} ({model})" for v in variants)
    if need:
        var, variants = sorted(need.items())[0]
        more = f"; also missing: {', '.join(sorted(need)[1:])}" if len(need) > 1 else ""
        raise ConfigError(
            f"preflight: environment variable {var} is not set; needed by {', '.join(variants)} "
            f"(export it, or set llm.mode: replay to use only cached replies){more}"
        )


def check_spend_config(llm: dict, users: dict[str, list[str]]) -> None:
    """With a cap set, every model the run calls must be priced (a cap cannot count the rest)."""
    if llm.get("max_cost_usd") is None or llm.get("mode") == "replay":
        return
    missing = unpriced(llm, [m for m in users if m])
    if missing:
        who = ", ".join(f"{m} ({', '.join(users[m])})" for m in missing)
        raise ConfigError(
            f"preflight: llm.max_cost_usd is set but {who} has no price; add it to llm.prices "
            f"(USD per million input and output tokens), e.g. llm.prices.{missing[0]}: {{input: 0.5, output: 1.5}}"
        )

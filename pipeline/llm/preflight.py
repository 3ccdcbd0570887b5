"""Preflight: before any job starts, every model the configured variants use can be reached.

Why: a run with a missing API key used to go to "100% done", rc 0, with every LLM answer a
recorded failure — and the next run said "Nothing to be done". Now a hosted model whose credentials are
not in the environment (``litellm.validate_environment``) stops the run with one line naming
the variable and the variants that need it. It checks the work of the jobs the run will start
(:class:`pipeline.plan.RunWork`, once Snakemake has built its DAG), so a run asked for targets
that call no LLM needs no key. Replay mode is exempt (no call leaves), and so are
mocked variants (``params.mock_response``); a model's kind of serving says what else it needs
(``local/<name>`` models: their server config).
Only the keys of the models the variants call are checked: ``llm.per_model.<model>.api_key_env``
names a model's variable (``null``: a keyless server, nothing to check), else litellm says which.
A dry run (``snakemake -n``) needs no key: the same findings are warnings there.
Spend: with ``llm.max_cost_usd`` set, every model the run calls must be priced (``llm.prices`` or
litellm's map), or the cap could not count it.
"""

from __future__ import annotations

import os
import sys

from pipeline.config import ConfigError
from pipeline.llm.prices import unpriced
from pipeline.llm.work import LLMWork
from pipeline.llm_models import LLMSpec, ModelSpec


def missing_keys(model: ModelSpec) -> list[str]:
    """The environment variables ``model`` needs that are not set: the one its
    ``llm.per_model.<model>.api_key_env`` names (none when that is null: a keyless server), else
    those litellm knows the provider needs."""
    if model.keyed:
        var = model.api_key_env
        return [var] if var and not os.environ.get(var) else []
    import litellm

    report = litellm.validate_environment(model=model.name, api_base=model.endpoint)
    return [] if report.get("keys_in_environment") else sorted(report.get("missing_keys") or [])


def required_envvars(work: LLMWork) -> list[str]:
    """The variables Snakemake's ``envvars:`` declares (it checks them and passes them to cluster jobs):
    ``llm.envvars`` plus the ``api_key_env``, ``headers_env`` and ``userinfo_env`` variables of every model the
    variants call (keyless: none); none when no job of ``work`` calls an LLM (a run asked only for targets
    without one needs no key)."""
    if not work.calls_llm():
        return []
    names = list(work.llm.envvars)
    for model in work.users():
        spec = work.llm.resolve(model)
        for var in (spec.api_key_env, *spec.headers_env.values(), spec.userinfo_env):
            if var and var not in names:
                names.append(var)
    return names


def declared_envvars(work: LLMWork, dry_run: bool = False) -> list[str]:
    """:func:`required_envvars` for the Snakefile; on a dry run (``-n``), and while the Snakefile is
    parsed (before Snakemake says which it is), only the set ones (a preview needs no key; the unset are
    :func:`dry_run_checks`' warnings), on a real run all: Snakemake stops on the unset."""
    if work.llm.cache_only:  # replay: no call leaves, no key
        return []
    names = required_envvars(work)
    return [n for n in names if os.environ.get(n)] if dry_run else names


def unused_per_model(work: LLMWork) -> list[str]:
    """``llm.per_model`` entries no variant, planner or vision captioner calls (most likely a typo)."""
    return sorted(set(work.llm.per_model) - work.named_models())


def warn_unused_per_model(work: LLMWork) -> None:
    """A warning per :func:`unused_per_model` entry: a property of the config, so said of the whole grid's work."""
    for unused in unused_per_model(work):
        _warn(f"config key 'llm.per_model.{unused}': no variant calls model '{unused}'")


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def dry_run_checks(work: LLMWork) -> None:
    """What a dry run checks once its jobs are known, as warnings (it calls nothing): the keys
    (:func:`preflight`) and the declared variables; a real run stops on the same in :func:`real_run_checks`."""
    preflight(work, dry_run=True, warn_unused=False)
    unset = [] if work.llm.cache_only else [n for n in required_envvars(work) if not os.environ.get(n)]
    if unset:
        _warn(f"llm.envvars: {', '.join(unset)} not set (fine for a dry run; a real run stops on it)")


def real_run_checks(work: LLMWork) -> list[str]:
    """What a real run checks in the main Snakemake process before its first job (``onstart``, which
    a dry run skips): the keys (:func:`preflight`), every declared variable set, and every endpoint
    answering with the configured model (:func:`pipeline.llm.endpoints.check_endpoints`); the endpoint
    lines, which the plan prints again without probing twice."""
    from pipeline.llm.endpoints import check_endpoints

    preflight(work, warn_unused=False)
    if work.llm.cache_only:  # replay: no call leaves, no key, no endpoint
        return []
    unset = [n for n in required_envvars(work) if not os.environ.get(n)]
    if unset:
        raise ConfigError(
            f"config key 'llm.envvars': environment variable {', '.join(unset)} is not set "
            "(llm.envvars and each called model's llm.per_model.<model>.api_key_env, headers_env and userinfo_env "
            "must be set for a real run)"
        )
    return check_endpoints(work)


def preflight(work: LLMWork, dry_run: bool = False, warn_unused: bool = True) -> None:
    """Raise :class:`ConfigError` (one line) when a model the run needs cannot be reached; a dry
    run only warns (it calls nothing)."""
    llm = work.llm
    if warn_unused:
        warn_unused_per_model(work)
    users = work.users()
    check_spend_config(llm, users)
    need: dict[str, list[str]] = {}
    for name, variants in sorted(users.items()):
        model = llm.resolve(name)
        if model.serving.cache_only:  # replay: no call leaves, no key needed
            continue
        problem = model.kind.problem(model)
        if problem:
            raise ConfigError(f"preflight: model '{name}' (used by {', '.join(variants)}) {problem}")
        for var in missing_keys(model) if model.kind.calls_out else []:
            need.setdefault(var, []).extend(f"{v} ({name})" for v in variants)
    if need:
        var, variants = sorted(need.items())[0]
        more = f"; also missing: {', '.join(sorted(need)[1:])}" if len(need) > 1 else ""
        message = (
            f"preflight: environment variable {var} is not set; needed by {', '.join(variants)} "
            f"(export it, set llm.per_model.<model>.api_key_env: null for a keyless server, "
            f"or set llm.mode: replay to use only cached replies){more}"
        )
        if dry_run:
            _warn(message)
            return
        raise ConfigError(message)


def check_spend_config(llm: LLMSpec, users: dict[str, list[str]]) -> None:
    """With a cap set, every model the run calls must be priced (a cap cannot count the rest); models
    answered from the cache alone (replay) pay nothing."""
    if llm.max_cost_usd is None:
        return
    missing = unpriced([m for m in (llm.resolve(name) for name in users if name) if not m.serving.cache_only])
    if missing:
        who = ", ".join(f"{m} ({', '.join(users[m])})" for m in missing)
        raise ConfigError(
            f"preflight: llm.max_cost_usd is set but {who} has no price; add it to llm.prices "
            f"(USD per million input and output tokens), e.g. llm.prices.{missing[0]}: {{input: 0.5, output: 1.5}}"
        )

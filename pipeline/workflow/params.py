"""The rules' hashed ``params``: canonical JSON of each stage's config slice (a changed slice reruns the job)."""

from __future__ import annotations

import json
import shlex

from pipeline.config import answering_slice, config_hash, index_slice, retrieval_slice, versioned


def as_json(obj) -> str:
    """Canonical JSON of a params value. A shell command takes it through ``{params.x:q}`` (Snakemake's
    shlex quoting) or :func:`shell_arg`, never inside hand-written quotes (a ``'`` in a value would end them)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def shell_arg(value: str) -> str:
    """One shell word, whatever ``value`` holds (quotes, spaces, ``$``): for arguments a helper assembles."""
    return shlex.quote(str(value))


def index_params(cfg: dict, index: str) -> str:
    return as_json(versioned(index_slice(cfg, index)))


def retrieval_params(cfg: dict, variant: str) -> str:
    return as_json(versioned(retrieval_slice(cfg, variant)))


def answering_params(cfg: dict, variant: str) -> str:
    return as_json(versioned(answering_slice(cfg, variant)))


def with_hash(params: dict) -> str:
    """Params plus the hash of exactly what they contain: a report reruns (and its hash changes)
    only when something it shows changed, not when an unrelated part of the config did."""
    return as_json({**params, "config_hash": config_hash(params)})


def limit_param(cfg: dict) -> dict:
    """``{"limit": N}`` for a smoke run's report params (its pages say so, its hash differs); ``{}`` for a
    full run, whose params stay as they were."""
    return {"limit": cfg["limit"]} if cfg.get("limit") else {}


def metrics_param(cfg: dict) -> dict:
    """``{"metrics": [...]}``: the measures ``report.metrics`` picks, for a report rule's params; ``{}`` when the
    config picks none (every registered measure: the params stay as they were)."""
    picked = (cfg.get("report") or {}).get("metrics")
    return {"metrics": list(picked)} if picked else {}


def llm_exec_json(cfg: dict) -> str:
    """Execution-only LLM settings for the answer rule (not params: changing them reruns nothing)."""
    from pipeline.config import llm_execution

    return as_json(llm_execution(cfg))

"""The gateway config of one job calling a model: the hashed slice, the execution-only settings, and
the job's share of calls in flight and of cores (what Snakemake granted it)."""

from __future__ import annotations

from pipeline.cores import granted_threads
from pipeline.llm.limits import model_limits
from pipeline.llm.local_server import fit_local_servers


def model_job_config(llm: dict, execution: dict, in_flight: int | None, model: str) -> dict:
    """The gateway config of one job calling ``model`` (answering, or an LLM query planner): the
    computed slice plus the execution-only settings; ``in_flight`` (the job's ``llm_api`` share) caps
    the model's concurrency, and a local model's servers and their threads fit the job's granted
    threads (:mod:`pipeline.cores`, :func:`pipeline.llm.local_server.fit_local_servers`)."""
    cfg = {**llm, **execution}
    hashed, run = llm.get("per_model") or {}, execution.get("per_model") or {}
    if hashed:  # the hashed slice's per-model keys (api_base) over the execution-only ones, model by model
        cfg["per_model"] = {m: {**run.get(m, {}), **hashed.get(m, {})} for m in {*run, *hashed}}
    if in_flight:
        per_model = dict(cfg.get("per_model") or {})
        per_model[model] = {
            **per_model.get(model, {}),
            "concurrency": min(in_flight, model_limits(cfg, model).concurrency),
        }
        cfg["per_model"] = per_model
    granted = granted_threads()
    return fit_local_servers(cfg, model, granted) if granted else cfg

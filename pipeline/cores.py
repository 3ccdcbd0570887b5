"""How many threads a job may use: what its config asks for, at most what Snakemake granted it.

Why: each heavy rule declares ``threads:`` (from the same config values), and Snakemake fits jobs
into ``--cores``, scaling a job's threads down when the machine has fewer cores. Snakemake tells a
shell job its grant through ``OMP_NUM_THREADS`` (set for every shell command it runs), so the
encoders, the attention pass and the llama.cpp servers read it here and never start more threads
than the job holds: ``snakemake --cores 8`` on a 2-core machine no longer oversubscribes.
Outside Snakemake (no ``OMP_NUM_THREADS``) the configured number holds.
"""
from __future__ import annotations

import os

GRANT_VARIABLE = "OMP_NUM_THREADS"


def machine_cores() -> int:
    """The cores this process may run on (what ``nproc`` prints: the affinity mask, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def granted_threads() -> int | None:
    """The threads this process was granted (Snakemake's ``OMP_NUM_THREADS``), None when unset."""
    try:
        n = int(os.environ.get(GRANT_VARIABLE, ""))
    except ValueError:
        return None
    return n if n > 0 else None


def job_threads(configured: int) -> int:
    """``configured`` threads, at most the job's grant: never below 1."""
    granted = granted_threads()
    return max(1, min(int(configured), granted) if granted else int(configured))


def local_llm_threads(llm_cfg: dict, model: str) -> int:
    """Cores a job answering with ``model`` keeps busy: a ``local/<name>`` model runs one llama.cpp
    server per call in flight (``concurrency``), each with ``n_threads``; a hosted model waits on
    the network (1)."""
    from pipeline.answer.limits import model_limits
    from pipeline.answer.local_server import DEFAULTS

    if not model.startswith("local/"):
        return 1
    local = {**DEFAULTS, **((llm_cfg.get("local") or {}).get(model[len("local/"):]) or {})}
    return max(1, model_limits(llm_cfg, model).concurrency) * max(1, int(local["n_threads"]))


def fit_local_servers(llm_cfg: dict, model: str, threads: int) -> dict:
    """``llm_cfg`` with a local model's servers fitted to ``threads`` cores: as many servers as its
    ``concurrency`` asks while each keeps its ``n_threads`` (at least one server), then each server's
    ``n_threads`` at most its share of the cores. Hosted models are returned unchanged."""
    from pipeline.answer.limits import model_limits
    from pipeline.answer.local_server import DEFAULTS

    if not model.startswith("local/"):
        return llm_cfg
    name = model[len("local/"):]
    local = {**DEFAULTS, **((llm_cfg.get("local") or {}).get(name) or {})}
    n_threads = max(1, int(local["n_threads"]))
    servers = max(1, min(model_limits(llm_cfg, model).concurrency, threads // n_threads))
    per_model = dict(llm_cfg.get("per_model") or {})
    per_model[model] = {**(per_model.get(model) or {}), "concurrency": servers}
    local_cfg = dict(llm_cfg.get("local") or {})
    local_cfg[name] = {**((llm_cfg.get("local") or {}).get(name) or {}),
                       "n_threads": max(1, min(n_threads, threads // servers))}
    return {**llm_cfg, "per_model": per_model, "local": local_cfg}

"""The rules' ``threads:``: the cores each heavy job keeps busy. Snakemake scales them down to
``--cores`` and the job fits its encoder or LLM servers to what it got (pipeline/cores.py)."""

from __future__ import annotations

from collections.abc import Callable

from pipeline.workflow.answering import answer_spec, uses_llm
from pipeline.workflow.planner import planner_model, uses_llm_planner


def answer_threads(cfg: dict, variant: str) -> int:
    """The ``threads:`` of an answering job: the cores its local LLM servers keep busy (servers x
    ``n_threads``: 2 for the default Gemma), 1 for the extractive backend and hosted models. Snakemake
    scales it down to ``--cores``; the job fits its servers to what it got (pipeline/cores.py)."""
    if not uses_llm(cfg, variant):
        return 1
    from pipeline.registry.answer_backends import variant_model
    from pipeline.workflow.llm_shares import model_threads

    return model_threads(cfg, variant_model(answer_spec(cfg, variant), (cfg.get("llm") or {}).get("model")))


def planner_threads(cfg: dict, variant: str) -> int:
    """The ``threads:`` of a retrieval job: its local LLM planner's servers x ``n_threads`` (as
    :func:`answer_threads`), else 1 (a retrieval embeds only its queries, on one core)."""
    if not uses_llm_planner(cfg, variant):
        return 1
    from pipeline.workflow.llm_shares import model_threads

    return model_threads(cfg, planner_model(cfg, variant))


def encoder_threads(cfg: dict) -> int:
    """The ``threads:`` of an embedding job (index): ``embedding.threads``; the encoder uses at most
    what Snakemake granted (pipeline/cores.py)."""
    from pipeline.specs import EncoderSpec

    return EncoderSpec.from_dict(cfg["embedding"]).threads


def sprout_threads(cfg: dict) -> int:
    """The ``threads:`` of the SproutRAG attention and training-pair jobs: ``sprout.threads`` (its declared default)."""
    from pipeline.specs import SproutSpec

    return SproutSpec.from_dict(cfg["sprout"]).attention.threads


# A retried job gets more: each attempt doubles the rule's declared memory and time, up to this many times
# them, so a cluster job that ended in OUT_OF_MEMORY or TIMEOUT is resubmitted with room (profiles/slurm's
# restart-times; docs/cluster.md). A first attempt, and so every local run, asks exactly what is declared.
RETRY_GROWTH_CAP = 4


def per_attempt(declared: int) -> Callable[..., int]:
    """A rule's ``mem_mb`` / ``runtime`` as Snakemake's ``attempt`` scales it: ``declared`` x 2^(attempt-1),
    at most ``declared`` x :data:`RETRY_GROWTH_CAP`."""

    def grown(wildcards: object, attempt: int) -> int:
        return declared * min(2 ** (attempt - 1), RETRY_GROWTH_CAP)

    return grown

"""The ``llm_api`` resource: LLM calls in flight across jobs. Each LLM job takes its model's
``concurrency`` units, so jobs run side by side while their shares fit in the run's total."""

from __future__ import annotations

from pipeline.llm_models import LLMSpec, ModelSpec
from pipeline.workflow.answering import answer_spec, uses_llm
from pipeline.workflow.planner import planner_model, uses_llm_planner


def llm_model(cfg: dict, model: str) -> ModelSpec:
    """``model``'s settings as the run's ``llm`` block resolves them (``per_model`` over ``llm``)."""
    return LLMSpec.from_dict(cfg.get("llm") or {}).resolve(model)


def model_threads(cfg: dict, model: str) -> int:
    """Cores a job calling ``model`` keeps busy, as its kind of serving counts them (a local model:
    one llama.cpp server per call in flight, each with ``n_threads``; a hosted one waits on the network)."""
    spec = llm_model(cfg, model)
    return spec.kind.threads(spec)


def llm_share(cfg: dict, variant: str, total: int | None) -> int:
    """The ``llm_api`` units an answering job takes: its model's ``concurrency`` (calls in flight),
    at most the run's total (``--resources llm_api=K``); 0 for a variant without an LLM. Jobs
    whose shares fit in the total run side by side."""
    if not uses_llm(cfg, variant):
        return 0
    return model_share(cfg, answer_spec(cfg, variant).resolved_model((cfg.get("llm") or {}).get("model")), total)


def planner_share(cfg: dict, variant: str, total: int | None) -> int:
    """The ``llm_api`` units a retrieval job takes: its LLM query planner's model's ``concurrency``,
    as an answering job of that model (:func:`llm_share`); 0 without an LLM planner."""
    return model_share(cfg, planner_model(cfg, variant), total) if uses_llm_planner(cfg, variant) else 0


def model_share(cfg: dict, model: str, total: int | None) -> int:
    """A job's calls in flight to ``model``: its ``concurrency``, at most the run's ``llm_api`` total."""
    share = llm_model(cfg, model).concurrency
    total = getattr(total, "value", total)  # Snakemake 9 wraps global resources in Resource objects
    return max(1, min(share, int(total))) if total else share


def default_llm_api(cfg: dict) -> int:
    """The default total of LLM calls in flight across jobs: the largest share of any answering
    variant or LLM query planner (so by default one LLM job runs at a time, at its full concurrency)."""
    planners = [planner_share(cfg, v, None) for v in cfg["retrieval"]]
    return max([llm_share(cfg, v, None) for v in cfg["answering"]] + planners + [1])

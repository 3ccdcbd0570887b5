"""The ``llm_api`` resource: LLM calls in flight across jobs. Each LLM job takes its model's
``concurrency`` units, so jobs run side by side while their shares fit in the run's total. And the
LLM side of the grid, typed once (:func:`llm_work`) for the preflight, the estimate and the plan."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline import paths
from pipeline.llm_models import LLMSpec, ModelSpec
from pipeline.workflow.answering import answer_spec, uses_llm
from pipeline.workflow.planner import planner_model, uses_llm_planner

if TYPE_CHECKING:
    from pipeline.llm.work import LLMWork


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


def llm_work(cfg: dict) -> LLMWork:
    """The run's LLM work, typed once for the preflight, the endpoint probe, the estimate and the plan:
    every answering variant and query planner, and which of them the estimate counts on which split
    (WattBot's, when its folder is there: LLM planners on the score split and on their answerers'
    splits, answerers on theirs; then each corpus's LLM answerers on ``<corpus>/questions``)."""
    from pipeline.config import answer_splits, corpus_answer_variants, wattbot_present
    from pipeline.llm.work import LLMWork
    from pipeline.registry.answer_backends import calls_llm, variant_spec
    from pipeline.registry.answer_backends import get as get_backend
    from pipeline.specs import PlannerSpec
    from pipeline.workflow.power import sample_caps

    answering = {n: variant_spec(n, v) for n, v in cfg["answering"].items()}
    planners = {
        n: PlannerSpec.from_dict(r.get("planner"), f"retrieval.{n}.planner") for n, r in cfg["retrieval"].items()
    }
    plans: list[tuple[str, str]] = []
    answers: list[tuple[str, str]] = []
    if wattbot_present(cfg):
        for rv, planner in sorted(planners.items()):
            if not planner.calls_llm or planner.n < 2:  # n < 2: the question is the one query, no call
                continue
            splits = {cfg["wattbot"]["score_split"]}
            for av, a in cfg["answering"].items():
                if a.get("retrieval") == rv and not get_backend(a["backend"]).votes_members:
                    splits |= set(answer_splits(cfg, av))
            plans += [(rv, split) for split in sorted(splits)]
        answers += [(n, s) for n in sorted(answering) if calls_llm(answering[n].backend) for s in answer_splits(cfg, n)]
    for corpus in sorted(cfg.get("corpora") or {}):
        answers += [
            (n, f"{corpus}/questions") for n in corpus_answer_variants(cfg, corpus) if calls_llm(answering[n].backend)
        ]
    corpora = cfg.get("corpora") or {}
    questions = {
        split: corpora[split.split("/")[0]]["questions"]
        if "/" in split and split.split("/")[0] in corpora
        else str(Path(cfg["wattbot"]["dir"]) / cfg["wattbot"]["splits"][split])
        for split in {s for _, s in plans + answers}
    }
    vision = ((cfg.get("parsing") or {}).get("vision") or {}).get("model")
    return LLMWork(
        LLMSpec.from_dict(cfg.get("llm") or {}),
        answering,
        planners,
        tuple(answers),
        tuple(plans),
        questions,
        sample_caps(cfg),
        (vision,) if vision else (),
        str(cfg.get("cache_dir", "cache")),
        cfg.get("limit") or None,
    )


# The rules whose jobs call an LLM, and the wildcard naming their variant (pipeline/rules/wattbot.smk, retrieval.smk)
LLM_RULES = {"answer": "av", "retrieve_llm": "rv"}


def needed_llm_work(work: LLMWork, jobs: Iterable[tuple[str, Mapping[str, str]]]) -> LLMWork:
    """``work`` cut to the LLM jobs among ``jobs`` (rule name, wildcards: the jobs Snakemake will run,
    :func:`pipeline.workflow.dag_jobs.needrun_jobs`): a WattBot job's split is its split, a corpus's or a
    suite dataset's ``<dataset>/<split>``, as :func:`llm_work` names them."""
    pairs: dict[str, set[tuple[str, str]]] = {rule: set() for rule in LLM_RULES}
    for rule, w in jobs:
        if rule in LLM_RULES:
            split = w["split"] if w["dataset"] == paths.WATTBOT else f"{w['dataset']}/{w['split']}"
            pairs[rule].add((w[LLM_RULES[rule]], split))
    return work.only(pairs["answer"], pairs["retrieve_llm"])

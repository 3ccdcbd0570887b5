"""What a run asks of LLMs, typed once: which variant or planner calls which model, on which questions.

Built by the workflow from the validated config (:func:`pipeline.workflow.llm_shares.llm_work`) and
read by the preflight, the endpoint probe, the estimate and the plan, so none of them reads the
config dict: each model's settings are the :class:`~pipeline.llm_models.ModelSpec` that
:meth:`~pipeline.llm_models.LLMSpec.resolve` gives, the same the gateway uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pipeline.llm_models import LLMSpec
from pipeline.registry.answer_backends import LLMCallsSpec, VariantSpec, calls_llm
from pipeline.specs import PlannerSpec


@dataclass(frozen=True)
class LLMWork:
    """The LLM side of a run's grid. ``answers`` and ``plans`` are the (variant, split) pairs the
    estimate counts, in the order it lists them; a split is a WattBot split or ``<corpus>/questions``."""

    llm: LLMSpec
    answering: dict[str, VariantSpec]  # every answering variant
    planners: dict[str, PlannerSpec]  # every retrieval variant's query planner
    answers: tuple[tuple[str, str], ...] = ()  # (answering variant calling an LLM, split)
    plans: tuple[tuple[str, str], ...] = ()  # (retrieval variant with an LLM planner, split)
    questions: dict[str, str] = field(default_factory=dict)  # split -> its questions CSV
    # (variant, split) -> the most questions it answers there: a power_subsets sample's largest cap (the estimate
    # counts that many of the split's questions; pipeline/workflow/power.py)
    question_caps: dict[tuple[str, str], int] = field(default_factory=dict)
    other_models: tuple[str, ...] = ()  # models called outside the grid's variants (parsing.vision)
    cache_dir: str = "cache"
    limit: int | None = None  # a smoke run's ``limit``: its jobs ask the first N questions of each split

    def users(self) -> dict[str, list[str]]:
        """model -> the answering variants and LLM planners (``retrieval.<name>``) that call it (mocked
        ones call none)."""
        users: dict[str, list[str]] = {}
        for name, v in sorted(self.answering.items()):
            if calls_llm(v.backend) and isinstance(v, LLMCallsSpec) and "mock_response" not in v.params:
                users.setdefault(v.model or self.llm.model or "", []).append(name)
        for name, planner in sorted(self.planners.items()):
            if planner.calls_llm and "mock_response" not in (planner.params or {}):
                users.setdefault(planner.model or self.llm.model or "", []).append(f"retrieval.{name}")
        return users

    def only(self, answers: set[tuple[str, str]], plans: set[tuple[str, str]]) -> LLMWork:
        """This work cut to the LLM jobs a run starts: answering jobs ``answers`` and retrieval jobs with
        an LLM planner ``plans``, as (variant, split) pairs. Why: a run asked for a few targets, or resumed,
        is preflighted, probed, estimated and planned for what it will do, not for the whole grid. The
        order of :attr:`answers` and :attr:`plans` stays, so the whole grid's jobs give this work back."""
        names, rvs = {v for v, _ in answers}, {rv for rv, _ in plans}
        return replace(
            self,
            answering={n: v for n, v in self.answering.items() if n in names},
            planners={n: p for n, p in self.planners.items() if n in rvs},
            answers=tuple(pair for pair in self.answers if pair in answers),
            plans=tuple(pair for pair in self.plans if pair in plans),
        )

    def calls_llm(self) -> bool:
        """Whether a job of this work calls an LLM, mocked or not (a query planner on a corpus too)."""
        answerers = any(calls_llm(v.backend) for v in self.answering.values())
        return answerers or any(p.calls_llm for p in self.planners.values())

    def named_models(self) -> set[str | None]:
        """Every model the config names (``llm.model``, variants, planners, the vision captioner)."""
        named = {self.llm.model, *self.other_models, *(p.model for p in self.planners.values())}
        return named | {getattr(v, "model", None) for v in self.answering.values()}

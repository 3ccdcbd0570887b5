"""Failures that cannot pass for results: a job whose provider left too many questions without
a reply fails, so Snakemake reruns it, and the rerun makes only the calls that failed.

A question counts when some sample of it ended without any reply from the provider
(transport, rate-limit and server errors after all retries); a malformed reply the model did
give is the model's answer and is scored. Every reply received is already in the cache when
the job fails (the gateway stores each one as it arrives), so nothing is bought twice.
"""

from __future__ import annotations

from pipeline.answer.llm_answer import unanswered
from pipeline.llm_models import ModelSpec


class FailureRateExceeded(ValueError):
    """More questions without a provider reply than ``llm.max_failure_rate`` allows."""


def unanswered_ids(answers: list[dict]) -> list[str]:
    return [r["id"] for r in answers if "call" in r and unanswered(r["call"])]


def check_failure_rate(answers: list[dict], model: ModelSpec) -> list[str]:
    """The ids without a provider reply; raise :class:`FailureRateExceeded` (one line) when their
    share is above the model's tolerance (``llm.per_model.<model>.max_failure_rate``, else
    ``llm.max_failure_rate``). At or under it, the job keeps its partial results (the records carry
    the failures; the leaderboard's ``failures`` column shows them)."""
    lost = unanswered_ids(answers)
    allowed = model.max_failure_rate
    if answers and len(lost) / len(answers) > allowed:
        raise FailureRateExceeded(
            f"{len(lost)} of {len(answers)} question(s) got no reply from {model.name} ({len(lost) / len(answers):.1%} > "
            f"llm.max_failure_rate {allowed:g}): {', '.join(lost[:5])}{' ...' if len(lost) > 5 else ''}; every reply "
            f"received is cached: rerun to make only the failed calls"
        )
    return lost

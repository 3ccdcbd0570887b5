"""A toy third WattBot metric profile for tests/score/test_metric_registry.py: 2026's rules with other
weights. A module of its own, found by its distribution's entry point (wattbench.metrics): one registration, and the evaluate stage
scores it, the leaderboards show it beside the others and the score verb offers it."""
from __future__ import annotations

from dataclasses import replace

from pipeline.registry import metrics
from pipeline.registry.metrics import ANSWERS, Measure, everywhere, register
from pipeline.score.wattbot import PROFILE_RULES

RULES = replace(PROFILE_RULES["wattbot2026"], name="wattbot2027", weights={"value": 0.6, "ref": 0.3, "na": 0.1})

register(
    Measure(
        "wattbot2027",
        ANSWERS,
        "a toy third profile (2026's rules, weights 0.6, 0.3, 0.1)",
        everywhere(metrics.LEADERBOARD, metrics.LEADERBOARD_PAGE, metrics.MLFLOW, metrics.DOCS_LEADERBOARD),
        column="score_2027",
        label="score 2027",
        doc_label="`wattbot2027`",
        compute=RULES,
    )
)

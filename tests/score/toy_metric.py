"""A toy retrieval-suite measure for tests/score/test_metric_registry.py: how many of the top k units touch a gold
span. A module of its own, outside pipeline/score/, found by its distribution's entry point (group
wattbench.metrics), exactly as docs/architecture.md ("Adding a metric") says: one registration, no other edit."""
from __future__ import annotations

from pipeline.registry import metrics
from pipeline.registry.metrics import SUITE, SUITE_KS, Measure, everywhere, register


def gold_units(cut) -> float:
    """``cut``: one query's top k units judged against its gold (pipeline/score/retrieval_metrics.py ``Cut``)."""
    return float(cut.relevant)


register(
    Measure(
        "gold_units",
        SUITE,
        "top-k units that touch a gold span (a count)",
        everywhere(metrics.SUITE_TABLE, metrics.SUITE_PAGE, metrics.MLFLOW, metrics.CLAIMS, metrics.DOCS_SUITE),
        cutoffs=SUITE_KS,
        better=metrics.NEITHER,
        defined_on="queries",
        compute=gold_units,
    )
)

"""Which figures the `figures` rule draws, from its params alone (no data, no plotting library).

Snakemake needs every output before it runs, so the stems are planned when the DAG is: this module
imports only the standard library, the backend registry and the params' dataclasses, and
`snakemake -n` never loads matplotlib or scikit-learn (tests/test_paths.py checks it).
The drawing code (pipeline/report/pages/figures.py) uses the same names.
"""

from __future__ import annotations

from pipeline.registry.answer_backends import get as get_backend
from pipeline.report.params import Ablation, FiguresParams

SUITE_NAME = "retrieval-suite"  # the pseudo-ablation over every suite variant
QUESTION_TYPES = "question-types"  # the score per question type, when another labelled split has type flags


def suite_variants_of(params: FiguresParams, ablation: Ablation) -> list[str] | None:
    """The retrieval variants behind an ablation when the suite ran all of them, else None."""
    rvs = (
        list(ablation.variants)
        if ablation.stage == "retrieval"
        else [params.answering[v]["retrieval"] for v in ablation.variants]
    )
    suite = params.suite
    if len(set(rvs)) < 2 or not suite.datasets or not set(rvs) <= set(suite.variants):
        return None
    return list(dict.fromkeys(rvs))


def ablations_with_suite(params: FiguresParams) -> dict[str, Ablation]:
    """The configured ablations plus the suite-wide comparison of every suite variant."""
    abl = dict(params.ablations)
    suite = params.suite
    if suite.datasets and len(suite.variants) >= 2:
        abl[SUITE_NAME] = Ablation("retrieval", suite.variants, "every suite variant", suite_only=True)
    return abl


def ensemble_variants(params: FiguresParams) -> list[str]:
    """LLM answering variants that vote two samples or more (each gets an ensemble-size curve over
    its samples: KohakuRAG's ensemble is N sampled answers voted, issue #33 item 4)."""
    return [
        v
        for v in sorted(params.answering)
        if get_backend(params.answering[v]["backend"]).calls_llm and int(params.answering[v].get("samples", 1)) > 1
    ]


def ensemble_stem(variant: str) -> str:
    return f"ensemble-size-{variant}"


def suite_stem(name: str, ab: Ablation) -> str:
    return "retrieval-suite-ie" if ab.suite_only else f"ablation-{name}-suite"


def figure_stems(params: FiguresParams) -> list[str]:
    """Figure file stems under ``reports/figures/`` (each written as .png and .svg)."""
    stems = ["leaderboard-ci", "attribution-grid", "attribution-counts", "pareto-tokens"]
    abl = ablations_with_suite(params)
    if abl:
        stems.append("ablation-differences")
    if params.embedding_index:
        stems.append("embedding-map")
    if params.parse_quality:
        stems.append("parse-quality")
    if params.by_type:
        stems.append(QUESTION_TYPES)
    for name, ab in sorted(abl.items()):
        if not ab.suite_only:
            stems.append(f"ablation-{name}")
        if suite_variants_of(params, ab):
            stems.append(suite_stem(name, ab))
    return stems + [ensemble_stem(v) for v in ensemble_variants(params)]

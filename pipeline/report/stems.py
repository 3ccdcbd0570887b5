"""Which figures the `figures` rule draws, from its params alone (no data, no plotting library).

Snakemake needs every output before it runs, so the stems are planned when the DAG is: this module
imports only the standard library and the backend registry, and `snakemake -n` never loads matplotlib or scikit-learn
(tests/test_layout.py checks it). The drawing code (pipeline/report/pages/figures.py) uses the same names.
"""

from __future__ import annotations

from pipeline.answer_backends import get as get_backend

SUITE_NAME = "retrieval-suite"  # the pseudo-ablation over every suite variant


def suite_variants_of(params: dict, ablation: dict) -> list[str] | None:
    """The retrieval variants behind an ablation when the suite ran all of them, else None."""
    rvs = (
        ablation["variants"]
        if ablation["stage"] == "retrieval"
        else [params["answering"][v]["retrieval"] for v in ablation["variants"]]
    )
    suite = params.get("suite") or {}
    if len(set(rvs)) < 2 or not suite.get("datasets") or not set(rvs) <= set(suite.get("variants", [])):
        return None
    return list(dict.fromkeys(rvs))


def ablations_with_suite(params: dict) -> dict[str, dict]:
    """The configured ablations plus the suite-wide comparison of every suite variant."""
    abl = dict(params["report"]["ablations"])
    suite = params.get("suite") or {}
    if suite.get("datasets") and len(suite.get("variants", [])) >= 2:
        abl[SUITE_NAME] = {
            "stage": "retrieval",
            "variants": list(suite["variants"]),
            "note": "every suite variant",
            "suite_only": True,
        }
    return abl


def ensemble_variants(params: dict) -> list[str]:
    """Answering variants that vote two members or more (an ensemble; each gets a curve)."""
    return [
        v
        for v in sorted(params["answering"])
        if get_backend(params["answering"][v]["backend"]).votes_members and len(params["answering"][v]["members"]) > 1
    ]


def ensemble_stem(variant: str) -> str:
    return f"ensemble-size-{variant}"


def suite_stem(name: str, ab: dict) -> str:
    return "retrieval-suite-ie" if ab.get("suite_only") else f"ablation-{name}-suite"


def figure_stems(params: dict) -> list[str]:
    """Figure file stems under ``reports/figures/`` (each written as .png and .svg)."""
    stems = ["leaderboard-ci", "attribution-grid", "attribution-counts", "pareto-tokens"]
    abl = ablations_with_suite(params)
    if abl:
        stems.append("ablation-differences")
    if params["report"].get("embedding_index"):
        stems.append("embedding-map")
    if params.get("parse_quality"):
        stems.append("parse-quality")
    for name, ab in sorted(abl.items()):
        if not ab.get("suite_only"):
            stems.append(f"ablation-{name}")
        if suite_variants_of(params, ab):
            stems.append(suite_stem(name, ab))
    return stems + [ensemble_stem(v) for v in ensemble_variants(params)]

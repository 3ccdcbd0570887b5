"""The WattBot report and figures rules: their hashed params and the files they read, by name."""

from __future__ import annotations

import json

from pipeline import paths
from pipeline.config import DROPPED, answering_slice
from pipeline.workflow.answering import split_variants
from pipeline.workflow.named_files import NamedFiles
from pipeline.workflow.params import limit_param, metrics_param, with_hash
from pipeline.workflow.parse_quality import parse_quality_report
from pipeline.workflow.suite import suite_datasets, suite_ks, suite_variants
from pipeline.workflow.wattbot import extra_labelled_splits, labels_source, pdf_fallback_docs


def report_params(cfg: dict) -> str:
    fallback = pdf_fallback_docs(cfg)  # stated in index.md; only present when used (the default grid's bytes stay)
    return with_hash(
        {
            "default_variant": cfg["default_variant"],
            "score_split": cfg["wattbot"]["score_split"],
            "variants": {v: answering_slice(cfg, v) for v in sorted(cfg["answering"])},
            "report": {k: cfg["report"][k] for k in ("seed", "bootstrap")},
        }
        | ({"pdf_fallback": {cfg["wattbot"]["pdf_fallback"]: fallback}} if fallback else {})
        | limit_param(cfg)
        | metrics_param(cfg)
    )


def claims_file() -> str:
    """claims.yaml, an input of the figures rule (a changed claim redraws the claims table)."""
    return str(paths.CLAIMS_FILE)


def registration_file() -> str:
    """The claims' registration, an input of the figures rule (a new registration re-marks the claims' rows)."""
    return str(paths.REGISTRATION_FILE)


CLAIMS_CONFIG = "config.claims.yaml"  # every claim of pipeline/report/claims/claims.yaml runs in it (issue #33 item 6)


def ablations_in_other_configs() -> dict[str, list[str]]:
    """Ablation names of the repo's larger configs (config.mpnet.yaml, config.full.yaml) and of the claims
    run's (config.claims.yaml), so a claim that did not run can say where it would."""
    import yaml

    from pipeline.config import OVERLAY_CONFIGS
    from pipeline.datasets.paths import REPO

    out = {}
    for name in (*OVERLAY_CONFIGS, CLAIMS_CONFIG):
        path = REPO / name
        if not path.exists():
            continue
        ablations = sorted(((yaml.safe_load(path.read_text()) or {}).get("report") or {}).get("ablations") or {})
        if ablations:  # a grid of none (config.suite-full.yaml) has no claim to point to
            out[name] = ablations
    return out


def check_claims_left_out(cfg: dict) -> None:
    """``report.claims_left_out`` names claims of pipeline/report/claims/claims.yaml that this grid does not
    run (its ablation absent): a typo, or a claim the grid runs after all, fails here, before any job."""
    from pipeline.config import ConfigError
    from pipeline.report.claims.claim import load_claims

    left_out = (cfg.get("report") or {}).get("claims_left_out") or {}
    if not left_out:
        return
    by_id = {c.id: c for c in load_claims()}
    ablations = (cfg.get("report") or {}).get("ablations") or {}
    for cid in left_out:
        c = by_id.get(cid)
        if c is None:
            raise ConfigError.at(f"report.claims_left_out.{cid}", "no such claim in pipeline/report/claims/claims.yaml")
        if c.ablation in ablations:
            raise ConfigError.at(
                f"report.claims_left_out.{cid}", f"the grid runs it (report.ablations.{c.ablation}): not left out"
            )


def figures_params(cfg: dict) -> str:
    check_claims_left_out(cfg)
    b = cfg.get("suite") or {}
    suite = {"datasets": suite_datasets(cfg), "variants": suite_variants(cfg), "ks": suite_ks(cfg)} if b else {}
    corpora = {"corpora": sorted(cfg["corpora"])} if cfg.get("corpora") else {}  # none: the params as before
    dropped = {DROPPED: cfg[DROPPED]} if cfg.get(DROPPED) else {}  # for the claims; none: the params as before
    by_type = {"by_type": by_type_report(cfg)[0]} if by_type_report(cfg) else {}  # none: the params as before
    return with_hash(
        {
            **corpora,
            **dropped,
            **by_type,
            **limit_param(cfg),
            "report": cfg["report"],
            "score_split": cfg["wattbot"]["score_split"],
            "default_variant": cfg["default_variant"],
            "answering": {v: cfg["answering"][v] for v in sorted(cfg["answering"])},
            "retrieval": {v: cfg["retrieval"][v] for v in sorted(cfg["retrieval"])},
            "suite": suite,
            "parse_quality": (parse_quality_report(cfg) or [""])[0],
            "claims_elsewhere": ablations_in_other_configs(),
        }
    )


def figure_stems(cfg: dict) -> list[str]:
    from pipeline.report.stems import figure_stems as stems
    from pipeline.workflow import report_settings

    return stems(report_settings.figures_params(json.loads(figures_params(cfg))))


def split_scores_inputs(cfg: dict) -> NamedFiles:
    """Scores on the labelled splits besides the score split (named SPLIT:VARIANT), for the variants that
    answer each split; none (no new input, no new argument) without ``wattbot.solutions``."""
    pairs = [(s, av) for s in extra_labelled_splits(cfg) for av in split_variants(cfg, s)]
    if not pairs:
        return {}
    return {
        "split_scores": {f"{s}:{av}": paths.split_scores(s, av) for s, av in pairs},
        "split_per_question": {f"{s}:{av}": paths.split_per_question(s, av) for s, av in pairs},
    }


def by_type_report(cfg: dict) -> list[str]:
    """The per-question-type CSV the report rule writes with other labelled splits, which the figures rule
    draws (reports/index.html#question-types); [] without them."""
    return [paths.reports.leaderboard_by_type] if split_scores_inputs(cfg) else []


def claimed_retrievals(cfg: dict) -> list[str]:
    """The retrieval variants of WattBot claims on a retrieval-stage ablation of this config (claims.yaml):
    run on every labelled split so the claim gets a row there too."""
    from pipeline.report.claims.claim import load_claims

    ablations = cfg.get("report", {}).get("ablations") or {}
    out = set()
    for c in load_claims():
        ab = ablations.get(c.ablation) or {}
        if paths.WATTBOT in c.datasets and ab.get("stage") == "retrieval":
            out |= {v for v in c.variants if v in cfg["retrieval"]}
    return sorted(out)


def split_retrievals(cfg: dict, split: str) -> list[str]:
    """Retrieval variants measured on a labelled split: those its answering variants use, and the claimed ones."""
    used = {
        cfg["answering"][av]["retrieval"] for av in split_variants(cfg, split) if "retrieval" in cfg["answering"][av]
    }
    return sorted(used | set(claimed_retrievals(cfg)))


def report_inputs(cfg: dict) -> NamedFiles:
    """The report rule's files: scores of every answering variant, the test submissions, the retrieval runs."""
    avs, split = sorted(cfg["answering"]), cfg["wattbot"]["score_split"]
    tests = split_variants(cfg, "test") if "test" in cfg["wattbot"]["splits"] else []
    return {
        "scores": {av: paths.scores(av) for av in avs},
        "per_question": {av: paths.per_question(av) for av in avs},
        "submissions": {av: paths.answers_csv(av, "test") for av in tests},
        "retrieval": {rv: paths.retrieval(paths.WATTBOT, rv, split) for rv in sorted(cfg["retrieval"])},
        **split_scores_inputs(cfg),
    }


def figures_inputs(cfg: dict) -> NamedFiles:
    """The figures rule's files: per answering variant its scores and answers, per retrieval variant its
    run, the suite's per-query tables and runs (named DATASET:VARIANT) and the index the embedding map draws."""
    avs, split = sorted(cfg["answering"]), cfg["wattbot"]["score_split"]
    name = cfg["report"].get("embedding_index")
    extras = [s for s in extra_labelled_splits(cfg) if split_variants(cfg, s)]
    return {
        "scores": {av: paths.scores(av) for av in avs},
        "per_question": {av: paths.per_question(av) for av in avs},
        "answers": {av: paths.answers(av, split) for av in avs},
        "retrieval": {rv: paths.retrieval(paths.WATTBOT, rv, split) for rv in sorted(cfg["retrieval"])},
        "suite": {f"{d}:{rv}": paths.suite_per_query(d, rv) for d in suite_datasets(cfg) for rv in suite_variants(cfg)},
        # the suite's retrieval runs (split "queries", as suite.smk): a claim whose variants score alike is
        # checked for identical retrieved ids
        "suite_run": {
            f"{d}:{rv}": paths.retrieval(d, rv, "queries") for d in suite_datasets(cfg) for rv in suite_variants(cfg)
        },
        # the suite's gold spans: each query's documents, the units of a claim's test where queries share one
        **({"suite_gold": {d: paths.export_gold(d) for d in suite_datasets(cfg)}} if suite_datasets(cfg) else {}),
        "index": {name: paths.index(paths.WATTBOT, name)} if name else {},
        # the corpora's leaderboards: a section each on the page, only when configured (else no new input)
        **(
            {"corpora": {c: paths.reports.corpus_leaderboard(c) for c in sorted(cfg["corpora"])}}
            if cfg.get("corpora")
            else {}
        ),
        # the other labelled splits (wattbot.solutions): the claims' rows there; only when configured
        **({"split_per_question": split_scores_inputs(cfg)["split_per_question"]} if extras else {}),
        **(
            {
                "split_answers": {f"{s}:{av}": paths.answers(av, s) for s in extras for av in split_variants(cfg, s)},
                "split_retrieval": {
                    f"{s}:{rv}": paths.retrieval(paths.WATTBOT, rv, s)
                    for s in extras
                    for rv in split_retrievals(cfg, s)
                },
                "labels": {s: labels_source(cfg, s) for s in extras},
            }
            if extras
            else {}
        ),
    }

"""The report rules' params as typed specs, one per rule. The workflow writes each rule's params as
JSON (what Snakemake hashes: pipeline/workflow/reports.py); the driver reads them back into these
(pipeline/workflow/report_settings.py), so report/ never indexes a params dict.

``hashed`` keeps the params exactly as the rule was given them: the outputs' manifests record that
slice (and its hash), byte for byte as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.registry.metrics import EVERYTHING, Pick
from pipeline.report_specs import DEFAULT_REPORT


def smoke_note(limit: int | None) -> str:
    """The line a smoke run's pages lead with (config ``limit: N``; '' for a full run)."""
    return f"smoke run: first {limit} questions per split" if limit else ""


# An answering variant's hashed slice (backend, retrieval, members, upstream indexes, ...), shown as
# is in reports/wattbot/index.md; its keys are the answering backends' specs' (pipeline/answer/backends.py lists their modules).
VariantSlice = dict


@dataclass(frozen=True)
class Resampling:
    """``report.seed``/``bootstrap``/``permutations``: the bootstrap of one mean and the paired sign-flip test."""

    seed: int
    bootstrap: int
    permutations: int


# ``report``'s declared defaults: a comparison made outside a run's config, `compare` (kept runs)
DEFAULT_RESAMPLING = Resampling(DEFAULT_REPORT.seed, DEFAULT_REPORT.bootstrap, DEFAULT_REPORT.permutations)


@dataclass(frozen=True)
class Leaderboard:
    """What a leaderboard ranks: the answering variants (each its hashed slice) and their intervals."""

    variants: dict[str, VariantSlice]
    resampling: Resampling
    metrics: Pick = EVERYTHING  # the measures report.metrics picks (pipeline/registry/metrics.py)


@dataclass(frozen=True)
class ReportParams:
    """The report rule: WattBot's leaderboard, submissions and reports/wattbot/index.md."""

    board: Leaderboard
    default_variant: str  # whose test answers become submission.csv
    score_split: str
    config_hash: str
    hashed: dict
    pdf_fallback: dict[str, list[str]] = field(default_factory=dict)  # fallback kind -> documents
    limit: int | None = None  # a smoke run's questions per split (config limit)


@dataclass(frozen=True)
class CorpusReportParams:
    """A corpus's report rule: its leaderboard (scored with labels) and submission."""

    board: Leaderboard
    corpus: str
    labelled: bool
    submission_variant: str  # whose answers become reports/<corpus>/submission.csv
    hashed: dict
    ablations: dict[str, Ablation] = field(default_factory=dict)  # report.ablations the corpus ran (labelled only)
    limit: int | None = None  # a smoke run's (config ``limit``): its page leads with :func:`smoke_note`


@dataclass(frozen=True)
class Ablation:
    """One entry of ``report.ablations`` (or the suite-wide pseudo-ablation): variants of one stage,
    the first the reference."""

    stage: str  # answering | retrieval
    variants: tuple[str, ...]
    note: str = ""
    suite_only: bool = False  # compared on the retrieval suite alone (no WattBot rows)


@dataclass(frozen=True)
class SuiteRuns:
    """The retrieval suite the figures rule reads: datasets x variants, IE@k at ``ks``."""

    datasets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    ks: tuple[int, ...] = ()


@dataclass(frozen=True)
class Dropped:
    """What the config dropped (``name: null``, pipeline/config/drops.py) that a claim may need."""

    variants: tuple[str, ...] = ()  # answering and retrieval variants
    ablations: dict[str, tuple[str, ...]] = field(default_factory=dict)  # ablation -> the dropped variants it compared

    def why(self, ablation: str, variants: list[str]) -> str:
        """Why a claim comparing ``variants`` in ``ablation`` did not run because of a drop ('' when not):
        the claims table reads "not run: variant X dropped by the config"."""
        hit = [v for v in variants if v in self.variants]
        hit += [v for v in self.ablations.get(ablation, ()) if v not in hit]
        if hit:
            return f"variant{'s' if len(hit) > 1 else ''} {', '.join(hit)} dropped by the config"
        return f"ablation {ablation} dropped by the config" if ablation in self.ablations else ""


@dataclass(frozen=True)
class FiguresParams:
    """The figures rule: ablations, attribution, cost, ensembles, the embedding map, claims and index.html."""

    resampling: Resampling
    ablations: dict[str, Ablation]  # report.ablations
    answering: dict[str, VariantSlice]  # answering variant -> its config
    retrieval: tuple[str, ...]  # retrieval variant names
    suite: SuiteRuns
    gold: str  # the scored split's labelled CSV
    config_hash: str
    hashed: dict
    embedding_index: str | None = None
    embedding_sample: int = 0
    ensemble_subsets: int = 0
    corpora: tuple[str, ...] = ()
    parse_quality: str = ""  # the parse-quality sources CSV, when the config asks for the report
    by_type: str = ""  # the report rule's per-question-type CSV, when another split is labelled (wattbot.solutions)
    claims_elsewhere: dict[str, list[str]] = field(default_factory=dict)  # other config -> its ablations
    dropped: Dropped = field(default_factory=Dropped)
    left_out: dict[str, str] = field(default_factory=dict)  # report.claims_left_out: claim id -> why the grid skips it
    limit: int | None = None  # a smoke run's questions per split (config limit)
    metrics: Pick = EVERYTHING  # the measures report.metrics picks


@dataclass(frozen=True)
class SuiteReportParams:
    config_hash: str
    hashed: dict
    limit: int | None = None  # a smoke run's queries per dataset (config limit)
    metrics: Pick = EVERYTHING  # the measures report.metrics picks


@dataclass(frozen=True)
class SproutReportParams:
    sweep: dict[str, int]  # retrieval variant -> its beam width
    ks: tuple[int, ...]
    hashed: dict
    metrics: Pick = EVERYTHING  # the measures report.metrics picks

"""The registry of measures: every number the report shows about answers and retrieval, declared once and
picked by a string, as ir_measures and ranx pick theirs (``"ie@3"``, ``"nDCG@10"``, ``"doc_recall@5"``,
``"wattbot2026"``).

A :class:`Measure` says what it is: its name, the cutoffs it takes, which direction is better, what it is
defined on (:data:`DEFINED_ON`), where its values come from (:data:`TABLES`: a WattBot metric profile, WattBot
retrieval against the gold documents, the answers' counts, the retrieval suite's span overlap) and where it is
shown (:data:`VIEWS`: the suite table, the leaderboards, the figures, MLflow, the claims, docs/results.md), at
which cutoffs in each. Every table, page, figure and docs block reads its columns here (:func:`columns`): a
registered measure appears in every view it names, with no other edit. A view lists its measures table by
table, in :data:`TABLES` order, each table's in the order they were registered.

The built-in measures register beside the code that computes them (WattBot's profiles in
pipeline/score/wattbot.py, its document measures in wattbot_retrieval.py, the answers' counts in evaluate.py,
the suite's span measures in retrieval_metrics.py), modules the ``pipeline.score`` package imports; a driver
imports it (pipeline/register_builtins.py). A measure kept outside the package registers in its own module,
which its distribution's entry point in the group ``wattbench.metrics`` names (a plugin, found in every job
whose Python has the distribution installed: tests/score/toy_metric.py).
``report.metrics`` in the config picks which measures the report shows (:class:`Pick`). Standard library
only: validating a config computes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.registry.base import Registry

# --- where a measure's values come from (a view lists its measures in this order of tables) ---

ANSWERS = "answers"  # a WattBot metric profile's score and its components, per question (the evaluate stage)
DOCUMENTS = "documents"  # WattBot retrieval against the gold documents, per answerable question
ANSWER_COUNTS = "answer_counts"  # what a variant's answers cost and how many failed, per variant
SUITE = "suite"  # the retrieval suite: span overlap with the gold evidence, per query (suite_evaluate)
TABLES = (ANSWERS, DOCUMENTS, ANSWER_COUNTS, SUITE)

# --- what a measure is averaged over ---

DEFINED_ON = {
    "questions": "every question of the scored split",
    "answerable": "the answerable questions (those with a gold document)",
    "quoted": "the answerable questions whose gold evidence is a quote",
    "queries": "every suite query with a gold span",
    "graded": "every suite query with a gold span, the units graded by the best span they overlap",
    "variants": "each variant's answers as a whole",
}

HIGHER, LOWER, NEITHER = "higher", "lower", "neither"  # which values are better
SUITE_KS = "benchmarks.ks"  # the cutoffs of a suite measure computed at every k the config's suite asks for

# --- where a measure is shown: each view is one table, figure or list of the outputs ---

SUITE_TABLE = "suite.csv"
SUITE_PAGE = "suite.md"
SUITE_FIGURE = "suite.figure"
LEADERBOARD = "leaderboard.md"
LEADERBOARD_PAGE = "leaderboard.html"
LEADERBOARD_FIGURE = "leaderboard.figure"
CORPUS_PAGE = "corpus.html"
CORPUS_GIST = "corpus.gist"
ABLATIONS_ANSWERING = "ablations.answering"
ABLATIONS_RETRIEVAL = "ablations.retrieval"
HEADLINE = "headline"
SPROUT = "sprout"
KEPT = "kept"
MLFLOW = "mlflow"
CLAIMS = "claims"
DOCS_LEADERBOARD = "docs.leaderboard"
DOCS_ENSEMBLES = "docs.ensembles"
DOCS_RETRIEVAL = "docs.retrieval"
DOCS_SUITE = "docs.suite"
DOCS_ABLATIONS = "docs.ablations"

VIEWS = {
    SUITE_TABLE: "reports/retrieval/metrics.csv: a row per dataset, variant and k",
    SUITE_PAGE: "reports/retrieval/index.md's table per dataset",
    SUITE_FIGURE: "reports/retrieval/<dataset>.png: a panel per measure against k",
    LEADERBOARD: "reports/index.md's leaderboard",
    LEADERBOARD_PAGE: "reports/index.html's leaderboard",
    LEADERBOARD_FIGURE: "reports/wattbot/score_by_variant.png: a panel per measure",
    CORPUS_PAGE: "a corpus's own page's leaderboard (reports/<name>/index.html)",
    CORPUS_GIST: "a corpus's section of reports/index.html",
    ABLATIONS_ANSWERING: "reports/wattbot/ablations.csv and its figures, for an answering-stage ablation",
    ABLATIONS_RETRIEVAL: "reports/wattbot/ablations.csv and its figures, for a retrieval-stage ablation",
    HEADLINE: "the one measure per ablation and dataset index.html's forest plot shows: the first it has",
    SPROUT: "reports/retrieval/sprout_beam.csv: against SproutRAG's beam width",
    KEPT: "the per-question scores kept under runs/<id>/ that `compare` tests",
    MLFLOW: "each variant's MLflow run (python -m pipeline track), with intervals",
    CLAIMS: "what a claim in pipeline/report/claims/claims.yaml may name",
    DOCS_LEADERBOARD: "docs/results.md's leaderboard block",
    DOCS_ENSEMBLES: "docs/ensembles.md's ensembles block",
    DOCS_RETRIEVAL: "docs/results.md's WattBot retrieval block",
    DOCS_SUITE: "docs/results.md's retrieval-suite block",
    DOCS_ABLATIONS: "docs/results.md's ablations block: the comparisons it lists",
}
# Views that show a measure, then its parts (IE@k, then recall and precision), whatever their registration order.
WHOLE_FIRST = frozenset({SUITE_FIGURE, DOCS_SUITE})

# The cutoffs a view shows a measure at: EVERY cutoff it was computed at, the LARGEST of them, or those listed.
Cutoffs = tuple[int, ...]
EVERY: Cutoffs = ()
LARGEST: Cutoffs = (0,)  # no cutoff is 0


@dataclass(frozen=True)
class Measure:
    """One measure: what the config, a claim and the ``score`` verb name it by, and where it is shown."""

    name: str  # lower case; with a cutoff, ``<name>@<k>`` is its column
    table: str  # where its values come from: one of TABLES
    description: str  # one line: what it measures
    shown: Mapping[str, Cutoffs]  # view -> the cutoffs shown there (EVERY, LARGEST or listed)
    cutoffs: Cutoffs | str | None = None  # None: takes none; those computed; a str: the config key that sets them
    better: str = HIGHER
    defined_on: str = "questions"  # a key of DEFINED_ON
    column: str = ""  # its column when it takes no cutoff (default: its name)
    label: str = ""  # its header on the pages (default: its name, "_" read as " ")
    doc_label: str = ""  # its header in docs/results.md (default: label)
    parts: tuple[str, ...] = ()  # the measures of its table it is made of (a profile's components; IE's factors)
    whole: bool = False  # a count: shown as a whole number
    interval: bool = False  # a 95% bootstrap interval of its per-question values stands beside it (<column>_lo, _hi)
    compute: Any = None  # how its table computes it (that table's module reads it; pipeline/score/)

    def at(self, k: int | None = None) -> str:
        """Its column, at cutoff ``k`` when it takes one."""
        return f"{self.name}@{k}" if k is not None else (self.column or self.name)

    @property
    def page_label(self) -> str:
        return self.label or self.name.replace("_", " ")

    @property
    def docs_label(self) -> str:
        return self.doc_label or self.page_label

    def computed(self, ks: Sequence[int] = ()) -> Cutoffs:
        """The cutoffs its table computes: its own, or ``ks`` (the config's, for one set by a config key)."""
        if self.cutoffs is None:
            return ()
        return tuple(ks) if isinstance(self.cutoffs, str) else self.cutoffs

    def cutoffs_in(self, view: str, ks: Sequence[int] = ()) -> tuple[int | None, ...]:
        """The cutoffs ``view`` shows it at (``(None,)``: it takes none)."""
        if self.cutoffs is None:
            return (None,)
        declared, computed = self.shown[view], self.computed(ks)
        if declared == EVERY:
            return computed
        if declared == LARGEST:
            return (max(computed),) if computed else ()
        return declared


GROUP = "wattbench.metrics"  # the entry-point group of measures kept outside the package (plugins)
METRICS: Registry[Measure] = Registry("metric", GROUP, builtins="pipeline.score")
register = METRICS.register
unregister = METRICS.unregister


def everywhere(*views: str) -> dict[str, Cutoffs]:
    """``shown`` for views that show every cutoff (or a measure that takes none)."""
    return dict.fromkeys(views, EVERY)


def in_order(tables: Iterable[str] = TABLES) -> list[Measure]:
    """The registered measures of ``tables``, table by table (TABLES order), each in registration order."""
    chosen = set(tables)
    entries = METRICS.registered()
    return [m for t in TABLES if t in chosen for m in entries if m.table == t]


def find(name: str) -> Measure:
    """The measure named ``name`` (case-insensitive), or whose column ``name`` is (``score``: wattbot2025)."""
    low = name.lower()
    for m in METRICS.registered():
        if low in (m.name, m.column):
            return m
    raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS.names())}")


def parse(text: str) -> tuple[Measure, int | None]:
    """``"nDCG@10"`` -> (ndcg, 10); ``"mrr"`` -> (mrr, None). A cutoff must be one the measure takes."""
    name, at, k = text.strip().partition("@")
    m = find(name)
    if not at:
        return m, None
    if m.cutoffs is None or not k.isdigit() or int(k) < 1:
        takes = "no cutoff" if m.cutoffs is None else "a cutoff k >= 1"
        raise ValueError(f"metric {text!r}: {m.name} takes {takes}")
    if isinstance(m.cutoffs, tuple) and int(k) not in m.cutoffs:
        raise ValueError(f"metric {text!r}: {m.name} is computed at k in {list(m.cutoffs)}")
    return m, int(k)


def column_measure(column: str) -> tuple[Measure, int | None] | None:
    """The measure (and cutoff) a table's column holds; None for a column that is no measure's (a count, a name)."""
    try:
        return parse(column)
    except (KeyError, ValueError):
        return None


def profiles() -> list[Measure]:
    """WattBot's metric profiles: the measures of ANSWERS that are computed (their ``compute`` is the profile's
    rules, pipeline/score/wattbot.py ``Profile``); the others of ANSWERS are their parts."""
    return [m for m in in_order([ANSWERS]) if m.compute is not None]


PRIMARY = "score"  # the column of the profile that ranks the leaderboards


def primary() -> Measure:
    """The profile whose score is the leaderboard's ``score`` (the others have columns of their own)."""
    return next(m for m in profiles() if m.at() == PRIMARY)


def profile_of(part: Measure) -> Measure:
    """The profile ``part`` is a component of (a profile is its own)."""
    return next(p for p in profiles() if part.name == p.name or part.name in p.parts)


def primary_columns() -> list[str]:
    """The primary profile's score and its parts: the measures of a per-question scores CSV."""
    p = primary()
    return [p.at(), *(find(n).at() for n in p.parts)]


@dataclass(frozen=True)
class Pick:
    """The measures ``report.metrics`` picks: ``names`` None picks every registered one, each at the cutoffs
    its views show it at; a picked ``name@k`` shows that measure at the picked cutoffs only, in every view."""

    names: tuple[str, ...] | None = None
    cuts: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)  # name -> picked cutoffs

    @classmethod
    def of(cls, names: Sequence[str] | None) -> Pick:
        if not names:
            return cls()
        cuts: dict[str, list[int]] = {}
        for text in names:
            m, k = parse(text)
            cuts.setdefault(m.name, [])
            if k is not None:
                cuts[m.name].append(k)
        return cls(tuple(names), {n: tuple(sorted(set(ks))) for n, ks in cuts.items()})

    def picks(self, m: Measure) -> bool:
        """Whether ``m`` is picked (the primary profile always is: it ranks the leaderboards)."""
        return self.names is None or m.name in self.cuts or (m.table == ANSWERS and m.at() == PRIMARY)

    def cutoffs(self, m: Measure, view: str, ks: Sequence[int] = ()) -> tuple[int | None, ...]:
        """Where ``m`` is picked: the cutoffs ``view`` shows it at (the picked ones, when some are)."""
        return self.cuts.get(m.name) or m.cutoffs_in(view, ks)

    def keeps(self, column: str, view: str | None = None) -> bool:
        """Whether a table's ``column`` stays: a measure's when picked (and shown in ``view``, when named), at a
        picked cutoff; an interval column with its measure; any column that is no measure's."""
        found = column_measure(column.removesuffix("_lo").removesuffix("_hi")) or column_measure(column)
        if found is None:
            return True
        m, k = found
        if (view is not None and view not in m.shown) or not self.picks(m):
            return False
        picked = self.cuts.get(m.name)
        return k is None or not picked or k in picked


EVERYTHING = Pick()


def measures(view: str, tables: Iterable[str] = TABLES, pick: Pick = EVERYTHING) -> list[Measure]:
    """The picked measures ``view`` shows, of ``tables``, in the view's order (:data:`WHOLE_FIRST`: each measure,
    then its parts)."""
    shown = [m for m in in_order(tables) if view in m.shown and pick.picks(m)]
    if view not in WHOLE_FIRST:
        return shown
    names = {m.name for m in shown}
    inside = {p for m in shown for p in m.parts if p in names}
    out: list[Measure] = []
    for m in shown:
        if m.name not in inside:
            out += [m, *(x for x in shown if x.name in m.parts)]
    return out


def columns(
    view: str, tables: Iterable[str] = TABLES, ks: Sequence[int] = (), pick: Pick = EVERYTHING, intervals: bool = False
) -> list[str]:
    """The columns ``view`` shows, of ``tables`` (``ks``: the suite's cutoffs, for measures the config's
    ``benchmarks.ks`` sets): each measure at each of its cutoffs there (``intervals``: then its interval's
    columns, where it has one)."""
    out = []
    for m in measures(view, tables, pick):
        for k in pick.cutoffs(m, view, ks):
            out += [m.at(k), *((f"{m.at(k)}_lo", f"{m.at(k)}_hi") if intervals and m.interval else ())]
    return out


def check_picks(names: Sequence[str], suite_ks: Sequence[int] | None) -> None:
    """``report.metrics``: every name a registered measure at a cutoff it is computed at (``suite_ks``: the
    configured ``benchmarks.ks``, None without a suite); ValueError naming the first that is not."""
    for text in names:
        m, k = parse(text)
        if k is not None and isinstance(m.cutoffs, str) and suite_ks is not None and k not in suite_ks:
            raise ValueError(f"metric {text!r}: {m.name} is computed at {m.cutoffs} {list(suite_ks)}")

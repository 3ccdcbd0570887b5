"""The `figures` stage: ablations with intervals, attribution, cost, the embedding map and
``reports/index.html`` (the answer first: the headline, the leaderboard, the claims), all computed
from results/ files alone.

Which figures exist follows from the config alone (:func:`figure_stems`), so Snakemake knows
every output before it runs.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

import pipeline.paths
from pipeline.answer.ensemble import sample_members
from pipeline.answer.vote import VoteSettings
from pipeline.io import atomic_write_text, read_jsonl
from pipeline.provenance import write_manifest
from pipeline.registry import metrics
from pipeline.registry.metrics import EVERYTHING, Pick
from pipeline.report.claims.claim import load_claims
from pipeline.report.claims.documents import suite_clusters, wattbot_clusters
from pipeline.report.claims.measure import ClaimsInputs, SplitTables, measure_claims, verdict_counts
from pipeline.report.claims.registration import claims_sha256, read_registration
from pipeline.report.header import RunHeader
from pipeline.report.pages import ensemble_size as ES
from pipeline.report.pages import question_types as QT
from pipeline.report.pages.claims_table import claims_html, claims_md
from pipeline.report.pages.headline import TIE_RULE, Headline, best_variant, headline_html
from pipeline.report.params import FiguresParams, Resampling, smoke_note
from pipeline.report.render import ablation_figures
from pipeline.report.render.embedding_map import LEVELS, load_vectors, project
from pipeline.report.render.html import FigureEntry, Section, render_html, table_html
from pipeline.report.render.views import SIGN, board_caption, board_view, differences_view
from pipeline.report.sections import LABELLED_SET, SPLIT_COLUMN, labelled_rows, section_of, split_dataset
from pipeline.report.stats.ablation import (
    InputFiles,
    ablation_stats,
    suite_tables,
    summary_numbers,
    variant_interval,
    wattbot_tables,
)
from pipeline.report.stats.outputs import Outputs
from pipeline.report.stems import (
    ablations_with_suite,
    ensemble_stem,
    ensemble_variants,
    figure_stems,
    suite_stem,
    suite_variants_of,
)
from pipeline.report.telemetry.cost import cost_table, pareto_front
from pipeline.score.attribution import CLASSES, QUESTION_TYPES, attribute_variant


def parse_quality_section(sources_csv: str, figs: Path, entries: dict) -> list[Section]:
    """The parse-quality figure and table (per source heading F1 of the three heading methods), if measured."""
    if not sources_csv:
        return []
    from pipeline.report.pages.parse_quality import PAGE_COLUMNS, quality_figure

    table = pd.read_csv(sources_csv)
    quality_figure(table.to_dict("records"), figs / "parse-quality")
    entries["parse-quality"] = FigureEntry(
        "parse-quality",
        "Heading F1 against each PDF's own outline, macro-averaged per typesetting source, for "
        "the rules alone, PyMuPDF's layout model alone, and their combination (dashed: 0.85 target, dotted: "
        "0.75 floor); the independent-check source is never tuned on.",
        [sources_csv],
    )
    cols = [c for c in PAGE_COLUMNS if c in table]
    return [
        Section(
            "Parsing",
            table_html(table[cols]),
            ["parse-quality"],
            f"From {sources_csv}; per document in quality.csv next to it; parse times per page, which differ "
            "on every run, in quality.telemetry.csv (docs/parsing.md).",
        )
    ]


def headline(summary: pd.DataFrame, suite_ks: list[int]) -> pd.DataFrame:
    """One metric per comparison and dataset for the forest plot: the first of its dataset section's
    headline metrics the comparison has (score, else doc_hit@1 on WattBot; IE at the largest k on the suite)."""
    keep = pd.Series(False, index=summary.index)
    for (_, dataset), part in summary.groupby(["ablation", "dataset"], sort=False):
        have = set(part["metric"])
        first = next((m for m in section_of(dataset).headline_metrics(suite_ks) if m in have), None)
        keep.loc[part.index] = (part["metric"] == first).to_numpy()
    return summary[keep].reset_index(drop=True)


def attribution(params: FiguresParams, paths: InputFiles, gold: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Long table id, type, variant, class over every answering variant."""
    parts = []
    for av in order:
        spec = params.answering[av]
        pq = pd.read_csv(paths.per_question(av), dtype={"id": str})
        t = attribute_variant(
            gold, read_jsonl(paths.answers(av)), pq, read_jsonl(paths.retrieval(spec["retrieval"])), spec["backend"]
        )
        parts.append(t.assign(variant=av))
    return pd.concat(parts, ignore_index=True)[["id", "type", "variant", "class"]]


def csv_text(df: pd.DataFrame) -> str:
    return df.to_csv(index=False, lineterminator="\n")


@dataclass
class FigureRun:
    """What every section of the figures stage shares: its params and input files, where figures go,
    and the entries drawn so far (stem -> caption and input files)."""

    params: FiguresParams
    paths: InputFiles
    out: pipeline.paths.Reports
    entries: dict[str, FigureEntry] = field(default_factory=dict)

    @property
    def rep(self) -> Resampling:
        return self.params.resampling

    @property
    def figs(self) -> Path:
        return Path(self.out.figures_dir)

    def inputs_of(self, avs=(), rvs=(), suite_pairs=()) -> list[str]:
        """The files a figure of these answering / retrieval variants and suite runs was drawn from."""
        params, paths = self.params, self.paths
        out = [params.gold]
        for av in avs:
            out += [str(paths.per_question(av)), str(paths.answers(av)), str(paths.scores(av))]
            rvs = [*rvs, params.answering[av]["retrieval"]]
        out += [str(paths.retrieval(rv)) for rv in dict.fromkeys(rvs)]
        out += [str(paths.suite(d, rv)) for d, rv in suite_pairs]
        return list(dict.fromkeys(out))


def draw_cost(run: FigureRun, wattbot: dict, answering: list[str], answers: dict, scores: dict) -> pd.DataFrame:
    """wattbot/cost.csv with score intervals (best first), the leaderboard and Pareto figures."""
    figs = run.figs
    cost = cost_table(answering, answers, scores)
    ci = {av: variant_interval(wattbot[("answering", av)]["score"], run.rep) for av in answering}
    cost["score_lo"] = [round(ci[v][1], 4) for v in cost["variant"]]
    cost["score_hi"] = [round(ci[v][2], 4) for v in cost["variant"]]
    cost = cost.sort_values(["score", "variant"], ascending=[False, True], kind="stable").reset_index(drop=True)
    atomic_write_text(run.out.cost, csv_text(cost))
    ablation_figures.leaderboard_ci(cost, figs / "leaderboard-ci")
    run.entries["leaderboard-ci"] = FigureEntry(
        "leaderboard-ci",
        "WattBot score per answering variant, 95% paired bootstrap interval over the train questions.",
        run.inputs_of(answering),
    )
    ablation_figures.pareto(
        cost,
        pareto_front(cost, "tokens_per_question", "score"),
        pareto_front(cost, "context_tokens", "score"),
        figs / "pareto-tokens",
    )
    run.entries["pareto-tokens"] = FigureEntry(
        "pareto-tokens",
        "Score against LLM tokens per question (prompt + "
        "completion, from the answer records) and against the context tokens "
        "retrieval shows; red: Pareto front.",
        run.inputs_of(answering),
    )
    return cost


def draw_ablations(run: FigureRun, wattbot: dict, suite: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """wattbot/ablations.csv and its differences, a figure per ablation (WattBot and suite) and the
    forest of every difference; returns (stats, summary, the ablations with their suite variants)."""
    params, out, figs, entries = run.params, run.out, run.figs, run.entries
    stats = ablation_stats(params, wattbot, suite)
    atomic_write_text(out.ablations, csv_text(stats))
    summary = summary_numbers(stats)
    atomic_write_text(out.ablation_differences, csv_text(summary))
    abl = ablations_with_suite(params)
    ks = list(params.suite.ks)
    for name, ab in sorted(abl.items()):
        part = stats[stats["ablation"] == name]
        avs = ab.variants if ab.stage == "answering" else ()
        rvs = ab.variants if ab.stage == "retrieval" else ()
        if not ab.suite_only:
            stem = f"ablation-{name}"
            ablation_figures.ablation_bars(part[labelled_rows(part["dataset"])], name, ab.note, figs / stem)
            entries[stem] = FigureEntry(
                stem,
                f"WattBot train, {ab.stage} variants {', '.join(ab.variants)} (reference: {ab.variants[0]}). {ab.note}",
                run.inputs_of(avs, rvs),
            )
        srvs = suite_variants_of(params, ab)
        if srvs:
            stem = suite_stem(name, ab)
            ablation_figures.ablation_suite(
                part[~labelled_rows(part["dataset"])], f"{name}: IE@k on the retrieval suite", figs / stem
            )
            pairs = [(d, rv) for d in params.suite.datasets for rv in srvs]
            entries[stem] = FigureEntry(
                stem,
                f"Retrieval suite IE@k of {', '.join(srvs)} (95% paired bootstrap over queries).",
                run.inputs_of(suite_pairs=pairs),
            )
    if abl:
        ablation_figures.differences_forest(headline(summary, ks), figs / "ablation-differences")
        entries["ablation-differences"] = FigureEntry(
            "ablation-differences",
            "Every A-vs-B comparison on its headline metric (score, doc hit@1, IE@k): "
            "paired bootstrap 95% interval and randomisation-test p-value; all metrics in wattbot/ablations.csv.",
            [out.ablations],
        )
    return stats, summary, abl


def draw_ensemble_sizes(run: FigureRun, answers: dict) -> pd.DataFrame:
    """One score-by-size curve per ensemble variant (figure each) and their table."""
    params, rep, out = run.params, run.rep, run.out
    curves = []
    for ev in ensemble_variants(params):
        spec = params.answering[ev]
        members = sample_members(ev, answers[ev])
        vote = VoteSettings.from_dict(spec.get("vote"), f"answering.{ev}.vote")
        curve = ES.size_curve(ev, members, vote, pd.read_csv(params.gold), rep, params.ensemble_subsets)
        curves.append(curve)
        ES.draw_curve(curve, run.figs / ensemble_stem(ev))
        run.entries[ensemble_stem(ev)] = FigureEntry(
            ensemble_stem(ev),
            f"Score of sub-ensembles of the {len(members)} samples of '{ev}' "
            f"({spec.get('vote', {}).get('mode', 'answer_priority')} vote, temperature "
            f"{spec.get('params', {}).get('temperature')}) by number of samples k: mean over every k-subset (a seeded "
            f"sample of {params.ensemble_subsets} when there are more), paired bootstrap 95% interval; grey: the "
            f"range of single subsets. Table: {out.relative(out.ensemble_size)}.",
            run.inputs_of([ev]),
        )
    curve_table = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=ES.COLUMNS)
    atomic_write_text(out.ensemble_size, csv_text(curve_table))
    return curve_table


def draw_attribution(run: FigureRun, gold: pd.DataFrame, order: list[str], answering: list[str]) -> pd.DataFrame:
    """The attribution tables (per question, counts, by question type) and their two figures;
    returns the class counts per variant."""
    out = run.out
    attr = attribution(run.params, run.paths, gold, order)
    atomic_write_text(out.attribution, csv_text(attr))
    counts = pd.crosstab(attr["variant"], attr["class"]).reindex(index=order, columns=list(CLASSES), fill_value=0)
    atomic_write_text(out.attribution_counts, csv_text(counts.reset_index()))
    by_type_v = attr.groupby(["variant", "type", "class"]).size().rename("count").reset_index()
    atomic_write_text(out.attribution_by_type, csv_text(by_type_v))
    by_type = pd.crosstab(attr["type"], attr["class"]).reindex(columns=list(CLASSES), fill_value=0)
    by_type["questions"] = attr.drop_duplicates("id")["type"].value_counts()
    by_type = by_type.reindex([t for t in QUESTION_TYPES if t in by_type.index])
    grid = attr.pivot(index="id", columns="variant", values="class").reindex(index=gold["id"], columns=order)
    types = attr.drop_duplicates("id").set_index("id")["type"]
    ablation_figures.attribution_grid(grid, types, run.figs / "attribution-grid")
    ablation_figures.attribution_counts(counts, by_type, run.figs / "attribution-counts")
    for stem, cap in (
        (
            "attribution-grid",
            "Outcome class of every train question (rows, with question type) under "
            "every answering variant (columns, best first): which variant fixed which question.",
        ),
        ("attribution-counts", "Attribution class counts per variant, and per question type."),
    ):
        run.entries[stem] = FigureEntry(stem, cap, run.inputs_of(answering))
    return counts


def draw_embedding_map(run: FigureRun) -> None:
    """The PCA map of one index's vectors, when the config names an index for it."""
    params = run.params
    if params.embedding_index:
        index_path = run.paths.index(params.embedding_index)
        meta, vecs = load_vectors(index_path, params.embedding_sample, params.resampling.seed)
        xy, var = project(vecs)
        levels = [lv for lv in LEVELS if (meta["level"] == lv).any()]
        ablation_figures.embedding_map(meta, xy, var, levels, run.figs / "embedding-map")
        run.entries["embedding-map"] = FigureEntry(
            "embedding-map",
            f"PCA of the '{params.embedding_index}' index "
            f"vectors (at most {params.embedding_sample} per level, seeded), one "
            f"projection for all levels, coloured by document.",
            [str(index_path)],
        )


@dataclass(frozen=True)
class PageTables:
    """The tables reports/index.html shows, one per section (named: all five are DataFrames), and its headline."""

    headline: Headline  # the best variant, its ties and the claims' verdicts
    claims: pd.DataFrame  # published claims against this run
    board: pd.DataFrame  # the leaderboard
    summary: pd.DataFrame  # the ablations' paired differences
    curve: pd.DataFrame  # ensemble size curves
    counts: pd.DataFrame  # attribution class counts


# A corpus's section of this page: the gist (the measures of its view), its own page (reports/<name>/index.html)
# has every column.
CORPUS_NAMES = ("variant", "backend", "retrieval")
CORPUS_COUNTS = ("n", "asked", "answered", "blank")


def corpus_sections(params: FiguresParams, paths: InputFiles) -> list[Section]:
    """One section per ``corpora:`` entry, its leaderboard's gist and a link to its own page (none when no
    corpus is configured: the page of a grid without corpora is what it was)."""
    out = []
    gist = metrics.columns(metrics.CORPUS_GIST, pick=params.metrics, intervals=True)
    for name in params.corpora:
        board = pd.read_csv(paths.corpora_of[name])
        labelled = metrics.PRIMARY in board.columns
        cols = [c for c in (*CORPUS_NAMES, *gist, *CORPUS_COUNTS) if c in board.columns]
        text = (
            f"Your corpus '{name}': scored on its labelled questions (bootstrap 95% intervals); "
            if labelled
            else f"Your corpus '{name}' has no labels: answered and blank counts, no score; "
        )
        text += f"every column: {name}/leaderboard.csv; its Kaggle-format submission: {name}/submission.csv."
        page = html.escape(f"{name}/index.html")
        link = f'<p>Its own page, with its figures and ablations: <a href="{page}">{page}</a></p>'
        shown = board_view(board[cols], view=metrics.CORPUS_GIST, pick=params.metrics)
        view = link + table_html(shown, caption=board_caption(board))
        out.append(Section(f"Corpus: {name}", view, [], text, anchor=f"corpus-{name}", fold=False))
    return out


def other_profiles(pick: Pick) -> str:
    """The leaderboard caption's words on each other profile the page shows ('; score 2026: the same answers
    scored by WattBot's 2026 metric profile')."""
    shown = metrics.measures(metrics.LEADERBOARD_PAGE, [metrics.ANSWERS], pick)
    others = [m for m in metrics.profiles() if m in shown and m.at() != metrics.PRIMARY]
    return "".join(f"; {m.page_label}: the same answers scored by {m.description}" for m in others)


def leaderboard_table(
    board: pd.DataFrame, best: str | None = None, ties: tuple[str, ...] = (), pick: Pick = EVERYTHING
) -> str:
    """The leaderboard as index.html shows it (one screen wide, one line a row, also with test labels' four blocks
    and the default grid's names: tests/report/test_browser.py measures it): the measures of its view, as views.py
    names them, its caption."""
    shown = board_view(board, best, ties, metrics.LEADERBOARD_PAGE, pick)
    return table_html(shown, caption=board_caption(board, TIE_RULE))


def page_sections(
    run: FigureRun,
    tables: PageTables,
    parse_sources: list[Section],
    corpora: list[Section] | None = None,
    types: Section | None = None,
) -> list[Section]:
    """The sections of reports/index.html, in page order: the answer (headline, leaderboard, claims) first,
    then the corpora's, then what explains it (the score per question type first, with other labelled splits)."""
    params, rep = run.params, run.rep
    ks = list(params.suite.ks)
    board, top = tables.board, tables.headline
    return [
        Section("The answer", headline_html(top), [], fold=False),
        Section(
            "Leaderboard",
            leaderboard_table(board, top.best, top.ties, params.metrics),
            ["leaderboard-ci", "pareto-tokens"],
            (
                "Scores per labelled split, one block each (train, then test and its Kaggle Public/Private "
                "parts), ranked within its block; the best and its ties are chosen on train"
                if SPLIT_COLUMN in board.columns
                else "Scores on the labelled train split"
            )
            + "; intervals are paired bootstrap 95% over questions "
            f"(seed {rep.seed}, {rep.bootstrap} resamples){other_profiles(params.metrics)}. Every column, failure "
            "reasons included: "
            "wattbot/leaderboard.csv; cost: wattbot/cost.csv; run telemetry (latency, cache hits, wall time): "
            "wattbot/leaderboard.telemetry.csv.",
            anchor="leaderboard",
            fold=False,
        ),
        Section("Published claims", claims_html(tables.claims), [], anchor="claims", fold=False),
        *(corpora or []),
        *([types] if types else []),
        Section(
            "Ablations",
            table_html(differences_view(headline(tables.summary, ks))),
            [s for s in figure_stems(params) if s.startswith(("ablation", "retrieval-suite"))],
            f"Paired differences on each comparison's headline metric, {SIGN} as in the claims: an ablation's "
            f"first variant is the control, each other variant a treatment. p-values from a paired randomisation "
            f"test ({rep.permutations} sign patterns, exact when fewer exist); every metric: wattbot/ablations.csv.",
        ),
        Section(
            "Ensemble size",
            table_html(tables.curve),
            [ensemble_stem(v) for v in ensemble_variants(params)],
            "Sampled LLM variants (samples > 1): subsets of their samples voted by the variant's own rule at "
            "every size; differences are paired against single samples (k = 1).",
        ),
        Section(
            "Per-question attribution",
            table_html(tables.counts.reset_index()),
            ["attribution-grid", "attribution-counts"],
            "Classes in order: correct; value right but citation not exact; no gold document in the context; "
            "abstained although the gold document was shown; gold document shown but a wrong value; answered "
            "an unanswerable question.",
        ),
        Section("Inside the index", "", [s for s in ("embedding-map",) if s in run.entries], ""),
        *parse_sources,
    ]


@dataclass(frozen=True)
class SplitFiles:
    """Another labelled split's files (``wattbot.solutions``): its variants' per-question scores, answers
    and retrieval runs (the answers and runs: whether a claim's two variants return the same there), and
    its labels (a solutions file: only the report rules read it)."""

    files: InputFiles
    labels: str


def split_tables(params: FiguresParams, splits: dict[str, SplitFiles], wattbot: dict) -> dict[str, dict]:
    """Per-question tables of each other labelled split, for the variants that ran there, then the score
    split's (``wattbot``) last: the claims' rows per split; {} without other splits."""
    out = {}
    for split, sf in sorted(splits.items()):
        rvs = tuple(sorted(sf.files.retrieval_of))
        avs = {av: params.answering[av] for av in sf.files.per_question_of if params.answering[av]["retrieval"] in rvs}
        gold = pd.read_csv(sf.labels, dtype=str, keep_default_na=False)
        out[split] = wattbot_tables(replace(params, retrieval=rvs, answering=avs), sf.files, gold)
    if out:
        out[params.hashed.get("score_split", "train")] = wattbot
    return out


def claims_inputs(
    params: FiguresParams, paths: InputFiles, gold: pd.DataFrame, splits: dict[str, SplitFiles], outputs: Outputs
) -> ClaimsInputs:
    """The claims' outputs, document clusters (each labelled WattBot split's from its ``ref_id``, each suite
    dataset's from its gold spans) and the registration."""
    score = params.hashed.get("score_split", "train")
    named = {split_dataset(s): sf.labels for s, sf in splits.items()}
    clusters = {split_dataset(score) if splits else LABELLED_SET: wattbot_clusters(gold)}
    clusters |= {d: wattbot_clusters(pd.read_csv(f, dtype=str, keep_default_na=False)) for d, f in named.items()}
    clusters |= {d: suite_clusters(f) for d, f in paths.suite_gold_of.items()}
    return ClaimsInputs(outputs.of, clusters, read_registration())


def build_figures_stage(
    params: FiguresParams,
    paths: InputFiles,
    reports: str,
    leaderboard: str | None = None,
    claims_file: str | Path = pipeline.paths.CLAIMS_FILE,
    splits: dict[str, SplitFiles] | None = None,
) -> dict:
    """Every output of the figures rule, from the files it was passed (``params.gold``: the scored
    split's labels; ``leaderboard``: the report rule's table, shown on the page when given)."""
    run = FigureRun(params, paths, pipeline.paths.Reports(reports))
    out = run.out
    gold = pd.read_csv(params.gold, dtype=str, keep_default_na=False)
    wattbot, suite = wattbot_tables(params, paths, gold), suite_tables(params, paths)
    answering = sorted(params.answering)
    scores = {av: json.loads(paths.scores(av).read_text()) for av in answering}
    answers = {av: read_jsonl(paths.answers(av)) for av in answering}

    cost = draw_cost(run, wattbot, answering, answers, scores)
    order = list(cost["variant"])
    stats, summary, abl = draw_ablations(run, wattbot, suite)
    curve_table = draw_ensemble_sizes(run, answers)

    # published claims against this run (reports/claims.csv, claims.md, first section of index.html)
    labelled = split_tables(params, splits or {}, wattbot)
    retrieval_of = {av: spec["retrieval"] for av, spec in params.answering.items() if "retrieval" in spec}
    outputs = Outputs(paths, retrieval_of, {s: sf.files for s, sf in (splits or {}).items()})
    claims_of = SplitTables(labelled) if labelled else wattbot
    inputs = claims_inputs(params, paths, gold, splits or {}, outputs)
    claims = measure_claims(params, claims_of, suite, abl, load_claims(Path(claims_file)), inputs)
    atomic_write_text(out.claims_csv, csv_text(claims))
    atomic_write_text(out.claims_md, claims_md(claims, params.config_hash, claims_sha256(claims_file)))

    counts = draw_attribution(run, gold, order, answering)
    draw_embedding_map(run)
    # parse quality (pipeline/report/pages/parse_quality.py wrote the table; drawn here so index.html shows it)
    parse_sources = parse_quality_section(params.parse_quality, run.figs, run.entries)
    board = pd.read_csv(leaderboard) if leaderboard else cost
    types = None
    if params.by_type:  # other labelled splits: the score per question type (the report rule's table)
        types, run.entries[QT.STEM] = QT.section(
            params.by_type, board, run.figs, [params.by_type, *([leaderboard] if leaderboard else [])], run.rep
        )

    missing = set(figure_stems(params)) - set(run.entries)
    if missing:
        raise ValueError(f"figures not drawn: {sorted(missing)}")
    top = best_variant(
        board,
        {av: wattbot[("answering", av)] for av in answering},
        run.rep,
        verdict_counts(claims),
        str(params.hashed.get("score_split", "train")),
    )
    tables = PageTables(top, claims, board, summary, curve_table, counts)
    sections = page_sections(run, tables, parse_sources, corpus_sections(params, paths), types)
    header = RunHeader.of(Path(reports).parent).html()
    html = render_html(header, sections, run.entries, Path(reports), note=smoke_note(params.limit))
    atomic_write_text(out.index_html, html)
    all_inputs = sorted({i for e in run.entries.values() for i in e.inputs})
    write_manifest(out.index_html, params.hashed, all_inputs)
    split_inputs = [
        p
        for sf in (splits or {}).values()
        for p in [*sf.files.per_question_of.values(), *sf.files.answers_of.values(), *sf.files.retrieval_of.values()]
    ]
    claims_read = [str(claims_file), str(pipeline.paths.REGISTRATION_FILE), *paths.suite_gold_of.values()]
    write_manifest(out.claims_csv, params.hashed, [*all_inputs, *split_inputs, *claims_read])
    return {"figures": len(run.entries), "ablation_rows": len(stats)}

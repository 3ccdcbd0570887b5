"""reports/<corpus>/index.html: a ``corpora:`` entry's own page, so a run without WattBot data gets a
report to read, not only two CSVs. Laid out as reports/index.html is (pipeline/report/render/html.py):
the headline (best variant on the labelled questions, its interval, n and paired ties), the formatted
leaderboard with its interval figure, then each answering ablation the corpus ran (``report.ablations``
whose reference it runs: pipeline/workflow/corpora.py ``corpus_ablations``) as bars with the raw
differences folded below, in the claims' sign convention (treatment − control).

An unlabelled corpus has no score: its page is the leaderboard of answered and blank counts.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from pipeline.io import atomic_write_text
from pipeline.registry import metrics
from pipeline.report.header import RunHeader
from pipeline.report.pages.headline import TIE_RULE, best_variant, headline_html
from pipeline.report.params import CorpusReportParams, smoke_note
from pipeline.report.render import ablation_figures
from pipeline.report.render.html import FigureEntry, PageHead, Section, render_html, table_html
from pipeline.report.render.views import SIGN, board_caption, board_view, differences_view
from pipeline.report.stats.ablation import compare

LABELLED_SPLIT = "its labelled questions"


def score_tables(per_question: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Variant -> its per-question scores (index: question id), for the paired comparisons."""
    return {v: pd.read_csv(p, dtype={"id": str}).set_index("id") for v, p in sorted(per_question.items())}


def ablation_rows(params: CorpusReportParams, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per ablation and metric, each variant's mean and interval and its paired difference to the
    reference (the columns of wattbot/ablations.csv)."""
    rep = params.board.resampling
    compared = metrics.columns(metrics.ABLATIONS_ANSWERING, [metrics.ANSWERS], pick=params.board.metrics)
    rows = [
        {"ablation": name, "dataset": params.corpus, **r}
        for name, ab in sorted(params.ablations.items())
        for m in compared
        for r in compare(tables, list(ab.variants), m, rep)
    ]
    return pd.DataFrame(rows)


def labelled_sections(
    params: CorpusReportParams, board: pd.DataFrame, per_question: dict[str, str], figs: Path, entries: dict
) -> list[Section]:
    """The headline, the leaderboard with its interval figure, and one section of bars per ablation."""
    tables, pick = score_tables(per_question), params.board.metrics
    top = best_variant(board, tables, params.board.resampling, None, LABELLED_SPLIT, unlabelled="")
    ablation_figures.leaderboard_ci(board, figs / "leaderboard-ci")
    entries["leaderboard-ci"] = FigureEntry(
        "leaderboard-ci",
        f"Score per answering variant on {params.corpus}'s labelled questions, paired bootstrap 95% interval.",
        sorted(per_question.values()),
    )
    sections = [
        Section("The answer", headline_html(top), [], fold=False),
        Section(
            "Leaderboard",
            table_html(
                board_view(board, top.best, top.ties, metrics.CORPUS_PAGE, pick),
                caption=board_caption(board, TIE_RULE),
            ),
            ["leaderboard-ci"],
            "Every column (the wattbot2026 score, LLM tokens and doc recall@k too): leaderboard.csv; the "
            "Kaggle-format submission: submission.csv.",
            fold=False,
        ),
    ]
    stats = ablation_rows(params, tables)
    for name, ab in sorted(params.ablations.items()):
        part = stats[stats["ablation"] == name]
        ablation_figures.ablation_bars(part, name, ab.note, figs / f"ablation-{name}")
        entries[f"ablation-{name}"] = FigureEntry(
            f"ablation-{name}",
            f"{params.corpus}, variants {', '.join(ab.variants)} (control: {ab.variants[0]}). {ab.note}",
            sorted(per_question[v] for v in ab.variants),
        )
        diffs = part[part["diff"].notna()]
        sections.append(
            Section(
                f"Ablation: {name}",
                table_html(differences_view(diffs)),
                [f"ablation-{name}"],
                f"Paired differences, {SIGN}: the first variant is the control.",
                anchor=f"ablation-{name}",
            )
        )
    return sections


def unlabelled_headline(corpus: str, board: pd.DataFrame) -> str:
    """No score to lead with: what answered most (the browser check looks for ``id="headline"``)."""
    top = board.iloc[0]  # the board is sorted by answered, most first
    return (
        f'<div class="headline" id="headline"><p>{html.escape(corpus)} has no labels, so no variant is scored. '
        f"Most questions answered: <b>{html.escape(str(top['variant']))}</b> ({int(top['answered'])} of "
        f"{int(top['asked'])}).</p></div>"
    )


def corpus_page(
    params: CorpusReportParams, board: pd.DataFrame, per_question: dict[str, str], page: str, figures: str
) -> str:
    """Draw the corpus's figures into ``figures`` and return its page (written to ``page`` by the caller)."""
    figs = Path(figures)
    figs.mkdir(parents=True, exist_ok=True)
    entries: dict[str, FigureEntry] = {}
    if params.labelled:
        sections = labelled_sections(params, board, per_question, figs, entries)
    else:
        sections = [
            Section("The answer", unlabelled_headline(params.corpus, board), [], fold=False),
            Section(
                "Leaderboard",
                table_html(board_view(board, view=metrics.CORPUS_PAGE), caption=board_caption(board)),
                [],
                f"{params.corpus} has no labels: each variant's answered and blank counts, no score, interval or "
                "ablation (add a solutions file for them). Its Kaggle-format submission: submission.csv.",
                fold=False,
            ),
        ]
    return render_html(
        RunHeader.of(Path(page).parents[2]).html(),  # reports/<corpus>/index.html: the run folder holds reports/
        sections,
        entries,
        Path(page).parent,
        PageHead(f"wattbench report: corpus {params.corpus}", figs.name, markdown=None),
        note=smoke_note(params.limit),
    )


def write_corpus_page(
    params: CorpusReportParams, board: pd.DataFrame, per_question: dict[str, str], page: str, figures: str
) -> None:
    atomic_write_text(page, corpus_page(params, board, per_question, page, figures))

"""The report stage: leaderboard, Kaggle submissions, a figure and ``reports/index.md``.

The leaderboard's measures are the registered ones (pipeline/registry/metrics.py) that ``report.metrics`` picks:
every profile's score, the document measures of each variant's retrieval and the answers' counts; index.md
shows those of its view."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline import markdown
from pipeline.io import atomic_write_bytes, atomic_write_text, read_jsonl
from pipeline.paths import Reports
from pipeline.provenance import write_manifest
from pipeline.registry import metrics
from pipeline.registry.metrics import DOCUMENTS, Pick
from pipeline.report.header import RunHeader
from pipeline.report.pages import question_types, split_blocks
from pipeline.report.pages.split_blocks import primary_scores, score_cells
from pipeline.report.params import Leaderboard, ReportParams, Resampling, smoke_note
from pipeline.report.render.plots import doc_recall_by_variant, score_by_variant
from pipeline.report.sections import SPLIT_COLUMN, primary_block
from pipeline.report.stats.resampling import bootstrap_mean
from pipeline.score.wattbot import SPLITS as USAGES
from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics

TOKENS = "tokens_per_question"  # computed here: the answers' LLM tokens over the questions scored


def score_interval(per_question_path: str, rep: Resampling) -> dict:
    """Paired-bootstrap 95% interval of the score from the evaluate stage's per-question CSV (same seed
    and resamples as the figures)."""
    score = metrics.PRIMARY
    pq = pd.read_csv(per_question_path)
    ci = bootstrap_mean(pq[score].to_numpy(dtype=float), rep.bootstrap, rep.seed)
    return {f"{score}_lo": round(ci.lo, 4), f"{score}_hi": round(ci.hi, 4)}


def picked(row: dict, pick: Pick) -> dict:
    """``row`` without the measures ``report.metrics`` leaves out."""
    return {k: v for k, v in row.items() if pick.keeps(k)}


def best_first(table: pd.DataFrame, column: str, name: str) -> pd.DataFrame:
    """``table`` sorted by ``column`` (the measure's better values first; NaN last), ties by ``name``."""
    better = metrics.column_measure(column)
    descending = better is None or better[0].better != metrics.LOWER
    table = table.sort_values([column, name], ascending=[not descending, True], kind="stable", na_position="last")
    return table.reset_index(drop=True)


def leaderboard(board: Leaderboard, score_paths: dict[str, str], per_question_paths: dict[str, str]) -> pd.DataFrame:
    """One row per answering variant (``score_paths``: variant -> scores JSON), best score first."""
    rows = []
    rep, pick = board.resampling, board.metrics
    for name, path in sorted(score_paths.items()):
        res = json.loads(Path(path).read_text())
        v = board.variants[name]
        n = primary_scores(res, "all")["n"]
        tokens = res["answers"].get("prompt_tokens", 0) + res["answers"].get("completion_tokens", 0)
        rows.append(
            {
                "variant": name,
                "backend": v["answering"]["backend"],
                "retrieval": v["answering"]["retrieval"],
                "indexes": "+".join(sorted(v["upstream"]["indexes"])),
                **score_cells(res, "all", score_interval(per_question_paths[name], rep), pick),
                **picked({TOKENS: round(tokens / max(n, 1), 1)}, pick),
                **picked(res["retrieval"], pick),
                **picked(res["answers"], pick),
                "n": n,
            }
        )
    return best_first(pd.DataFrame(rows), metrics.PRIMARY, "variant")


@dataclass(frozen=True)
class TypeSection:
    """index.md's per-question-type section: the table the report rule wrote, and the figure the figures rule draws."""

    table: pd.DataFrame  # reports/wattbot/leaderboard_by_type.csv
    figure: str  # its small multiples, as a link from index.md


def fallback_lines(fallback: dict[str, list[str]]) -> list[str]:
    """The documents whose PDF was missing from wattbot.pdf_dir, parsed from the stated fallback instead."""
    return [
        f"- `wattbot.pdf_fallback: {kind}`: {len(docs)} document(s) have no PDF in `wattbot.pdf_dir` and were "
        f"parsed from the extracted text: {', '.join(docs)}"
        for kind, docs in fallback.items()
    ]


def index_md(
    params: ReportParams, n_test: int, board: pd.DataFrame, figure: str, recall_figure: str, header: RunHeader
) -> str:
    """reports/index.md: the run (pipeline/report/header.py) and split, the leaderboard, its figures and every
    variant's slice (then, with other labelled splits, the score per question type: :func:`build_reports`)."""
    blocks = [SPLIT_COLUMN] if SPLIT_COLUMN in board.columns else []
    cols = [*blocks, "variant", *metrics.columns(metrics.LEADERBOARD, pick=params.board.metrics, intervals=True)]
    lines = [
        "# wattbench report",
        "",
        f"- {header.markdown()}",
        *([f"- **{smoke_note(params.limit)}**"] if params.limit else []),
        f"- scored split: `{params.score_split}` ({profiles_note(params.board.metrics)})",
        f"- default variant: `{params.default_variant}` → `wattbot/submission.csv` "
        f"(Kaggle format, {n_test} test questions)",
        *fallback_lines(params.pdf_fallback),
        *(split_blocks.split_notes(board) if blocks else []),
        "",
        "## Leaderboard",
        "",
        *markdown.table_lines(cols, ([row.get(c, "") for c in cols] for row in board.to_dict("records"))),
    ]
    lines += [
        "",
        f"![score by variant]({figure})",
        "",
        "Score intervals: paired bootstrap 95% over questions. Figures, ablations with paired differences and "
        "p-values, attribution and cost: `index.html` (the `figures` rule).",
        "",
        "Retrieval alone (LLM-independent): `wattbot/retrieval.csv`",
        "",
        f"![doc recall by retrieval variant]({recall_figure})",
        "",
        "## Variants",
        "",
    ]
    variants = params.board.variants
    for name in sorted(variants):
        lines.append(f"- `{name}`: `{json.dumps(variants[name], sort_keys=True)}`")
    return "\n".join(lines) + "\n"


def profiles_note(pick: Pick) -> str:
    """index.md's line on the profiles: the primary's name, then each other one's column."""
    p = metrics.primary()
    others = [m for m in metrics.profiles() if m.name != p.name and pick.picks(m)]
    return f"WattBot metric profile `{p.name}`" + "".join(f"; `{m.at()}` = profile `{m.name}`" for m in others)


def retrieval_table(retrieval_paths: dict[str, str], gold_path: str, pick: Pick) -> pd.DataFrame:
    """One row per retrieval variant (``retrieval_paths``: variant -> its run on the scored split), best first on
    the document measure the forest plot heads with (doc hit@1)."""
    gold = pd.read_csv(gold_path, dtype=str, keep_default_na=False)
    rows = [
        {"retrieval": rv, **picked(wattbot_retrieval_metrics(read_jsonl(p), gold)[1], pick)}
        for rv, p in sorted(retrieval_paths.items())
    ]
    table = pd.DataFrame(rows)
    head = [c for c in metrics.columns(metrics.HEADLINE, [DOCUMENTS]) if c in table]
    return best_first(table, head[0], "retrieval") if head else table


@dataclass(frozen=True)
class ReportInputs:
    """The report rule's input files, each by variant name."""

    scores: dict[str, str]  # answering variant -> the evaluate stage's scores JSON
    per_question: dict[str, str]  # answering variant -> its per-question CSV (the score intervals)
    submissions: dict[str, str]  # answering variant -> the test split's answer CSV
    retrieval: dict[str, str] = field(default_factory=dict)  # retrieval variant -> run JSONL (scored split)
    gold: str | None = None  # the labelled split's CSV (with ``retrieval``: wattbot/retrieval.csv)
    split_scores: dict[str, str] = field(default_factory=dict)  # SPLIT:VARIANT -> scores on another labelled split
    split_per_question: dict[str, str] = field(default_factory=dict)  # SPLIT:VARIANT -> its per-question CSV


def labelled_board(params: ReportParams, inputs: ReportInputs) -> pd.DataFrame:
    """The leaderboard: the score split's block, then one per other labelled split and Usage value
    (pipeline/report/pages/split_blocks.py); the score split's table alone when no other split is labelled."""
    board = leaderboard(params.board, inputs.scores, inputs.per_question)
    if not inputs.split_scores:
        return board
    blocks = [split_blocks.with_split(board, params.score_split, inputs.scores)]
    scores, pq = split_blocks.by_split(inputs.split_scores), split_blocks.by_split(inputs.split_per_question)
    for split in sorted(scores):
        blocks.append(
            split_blocks.with_split(leaderboard(params.board, scores[split], pq[split]), split, scores[split])
        )
        if split_blocks.has_usage(scores[split]):
            blocks += [split_blocks.usage_block(params.board, split, u, scores[split], pq[split]) for u in USAGES]
    table = pd.concat(blocks, ignore_index=True)
    # counts stay integers (empty on the Usage blocks' rows, which have no such column)
    counts = [c for c in blocks[0].columns if blocks[0][c].dtype.kind == "i"]
    return table.astype(dict.fromkeys(counts, "Int64"))


def build_reports(params: ReportParams, inputs: ReportInputs, reports: str) -> None:
    """The report rule's outputs from the files it was passed."""
    out = Reports(reports)
    if inputs.retrieval and inputs.gold:
        rtable = retrieval_table(inputs.retrieval, inputs.gold, params.board.metrics)
        atomic_write_text(out.retrieval_table, rtable.to_csv(index=False, lineterminator="\n"))
        recall = metrics.find("doc_recall")  # the figure draws it at every cutoff the table has
        ks = [k for k in recall.computed() if recall.at(k) in rtable]
        doc_recall_by_variant(rtable, out.doc_recall_figure, ks)
    board = labelled_board(params, inputs)
    atomic_write_text(out.leaderboard, board.to_csv(index=False, lineterminator="\n"))
    types = None
    if inputs.split_per_question:  # other labelled splits: their question types (Kaggle's flags)
        table = split_blocks.by_type(params.board, split_blocks.by_split(inputs.split_per_question))
        atomic_write_text(out.leaderboard_by_type, table.to_csv(index=False, lineterminator="\n"))
        types = TypeSection(table, out.relative(out.figure(question_types.STEM)))
    n_test = 0
    for name, path in sorted(inputs.submissions.items()):
        data = Path(path).read_bytes()
        atomic_write_bytes(out.submission_of(name), data)
        if name == params.default_variant:
            atomic_write_bytes(out.submission, data)
            n_test = len(pd.read_csv(path))
    panels = metrics.columns(metrics.LEADERBOARD_FIGURE, pick=params.board.metrics)
    score_by_variant(primary_block(board), out.score_figure, panels, metrics.primary().name)
    figures = out.relative(out.score_figure), out.relative(out.doc_recall_figure)
    page = index_md(params, n_test, board, *figures, RunHeader.of(Path(reports).parent))
    if types:  # other labelled splits: the score per question type, after the variants
        page += "\n" + "\n".join(question_types.markdown_lines(board, types.table, types.figure)) + "\n"
    atomic_write_text(out.index_md, page)
    recorded = {**params.hashed, "n_test": n_test}
    read = list(inputs.scores.values()) + list(inputs.split_scores.values()) + list(inputs.submissions.values())
    write_manifest(out.index_md, recorded, read)
    write_manifest(out.leaderboard, recorded, read)  # reports/wattbot/ and its submissions/ folder
    write_manifest(out.submissions_dir, recorded, list(inputs.submissions.values()))  # -> submissions.manifest.json

"""Per question type (#33 item 7): which type, if any, is clearly a variant's weakest on a labelled block.

The numbers are reports/wattbot/leaderboard_by_type.csv (the report rule: pipeline/report/pages/split_blocks.py),
one row per block (``test``, ``test/Public``, ``test/Private``), variant and question type; a variant's overall
score on the block is the leaderboard's row. A type is named only where its 95% interval lies entirely below that
overall score. The types are small (is_NA has 8 questions and Math 12 in the Public split), so every line says n,
and a type whose questions all scored alike is never named: its bootstrap interval is a point because it saw no
variation, not because the score is certain.

A Usage block with every question of its split (the Public file alone: ``test/Public`` is ``test``) is said once,
as its split.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.report.params import Resampling
from pipeline.report.render.html import FigureEntry, Section
from pipeline.report.render.plots import score_by_type
from pipeline.report.render.tables import fmt
from pipeline.report.sections import SPLIT_COLUMN
from pipeline.report.stems import QUESTION_TYPES

STEM = QUESTION_TYPES  # the figure's stem (stems.py plans it when the report rule writes the per-type CSV)
NONE_WEAKER = "no type is clearly weaker"


@dataclass(frozen=True)
class TypeScore:
    """One question type's score on a block: n, the mean score and its paired-bootstrap 95% interval."""

    type: str
    n: int
    score: float
    lo: float
    hi: float

    @classmethod
    def of(cls, row: dict) -> TypeScore:
        """From a row of the per-type table."""
        return cls(str(row["type"]), int(row["n"]), float(row["score"]), float(row["score_lo"]), float(row["score_hi"]))

    def text(self) -> str:
        return f"{self.type} {fmt(self.score)} [95% CI {fmt(self.lo)}, {fmt(self.hi)}], n={self.n}"


@dataclass(frozen=True)
class Verdict:
    """A variant on a block: its overall score, and the weakest of the types clearly below it (None: none is)."""

    block: str
    variant: str
    overall: float
    n: int  # questions behind the overall score
    weakest: TypeScore | None
    also: tuple[TypeScore, ...] = ()  # the other types clearly below the overall score
    alike: tuple[TypeScore, ...] = ()  # below it, but every question scored alike (a point interval): not named

    def line(self) -> str:
        """The summary line (plain text: the page escapes it, index.md shows it as is)."""
        head = f"{self.variant} on {self.block} (overall {fmt(self.overall)}, n={self.n}): "
        if self.weakest is None:
            said = NONE_WEAKER
        else:
            said = f"weakest type {self.weakest.text()}"
            if self.also:
                said += "; also below the overall score: " + ", ".join(f"{t.type} (n={t.n})" for t in self.also)
        for t in self.alike:
            said += f"; not named: {t.type}, whose {t.n} question(s) all scored {fmt(t.score)} (a point interval)"
        return head + said + "."


def clearly_below(t: TypeScore, overall: float) -> bool:
    """The type's whole 95% interval under the overall score, from questions that did not all score alike."""
    return t.hi < overall and t.lo < t.hi


def judge(block: str, variant: str, overall: float, n: int, types: list[TypeScore]) -> Verdict:
    """The verdict of one variant on one block from its types' scores (types with no question are left out)."""
    scored = [t for t in types if t.n > 0]
    below = sorted((t for t in scored if clearly_below(t, overall)), key=lambda t: (t.score, t.type))
    alike = tuple(t for t in scored if t.hi < overall and t.lo == t.hi)
    return Verdict(block, variant, overall, n, below[0] if below else None, tuple(below[1:]), alike)


def shown_blocks(board: pd.DataFrame, types: pd.DataFrame) -> list[str]:
    """The blocks of the per-type table with a labelled question, in its order, less a Usage block that holds
    every question of its split (the same numbers twice)."""
    n = board.groupby(SPLIT_COLUMN, sort=False)["n"].max() if SPLIT_COLUMN in board else pd.Series(dtype=float)
    out = []
    for block, part in types.groupby(SPLIT_COLUMN, sort=False):
        whole = str(block).split("/")[0]
        if part["n"].max() > 0 and not (whole != block and whole in n and n.get(block) == n[whole]):
            out.append(str(block))
    return out


def overall_scores(board: pd.DataFrame, block: str) -> pd.DataFrame:
    """The leaderboard's rows of ``block`` with a score: variant, score, n (best first)."""
    if SPLIT_COLUMN not in board:
        return board.iloc[0:0][["variant", "score", "n"]]
    rows = board[(board[SPLIT_COLUMN] == block) & board["score"].notna()]
    return rows.sort_values(["score", "variant"], ascending=[False, True], kind="stable")[["variant", "score", "n"]]


def verdicts(board: pd.DataFrame, types: pd.DataFrame) -> list[Verdict]:
    """One verdict per shown block and variant with an overall score there, in the leaderboard's order."""
    out = []
    for block in shown_blocks(board, types):
        part = types[types[SPLIT_COLUMN] == block]
        for row in overall_scores(board, block).to_dict("records"):
            mine = part[part["variant"] == row["variant"]]
            scores = [TypeScore.of(t) for t in mine.to_dict("records") if t["n"] > 0]
            out.append(judge(block, str(row["variant"]), float(row["score"]), int(row["n"]), scores))
    return out


def summary_lines(board: pd.DataFrame, types: pd.DataFrame) -> list[str]:
    """index.md's and the page's lines: one per variant and shown block (one saying so when there is none)."""
    return [v.line() for v in verdicts(board, types)] or [f"{NONE_WEAKER}: no labelled block has a flagged question."]


def figure_table(board: pd.DataFrame, types: pd.DataFrame) -> pd.DataFrame:
    """What the small multiples draw (pipeline/report/render/plots.py:score_by_type): the shown blocks' rows
    with the variant's overall score there and whether the type is clearly below it; variants in the first
    shown block's order (best first), which every panel shares."""
    rows = []
    for block in shown_blocks(board, types):
        overall = overall_scores(board, block).set_index("variant")["score"]
        part = types[(types[SPLIT_COLUMN] == block) & types["variant"].isin(overall.index)]
        for t in part.to_dict("records"):
            o = float(overall[t["variant"]])
            rows.append({**t, "overall": o, "below": t["n"] > 0 and clearly_below(TypeScore.of(t), o)})
    table = pd.DataFrame(rows, columns=[*types.columns, "overall", "below"])
    first = (
        overall_scores(board, str(table[SPLIT_COLUMN].iloc[0]))["variant"] if len(table) else pd.Series(dtype=object)
    )
    order = {v: i for i, v in enumerate(dict.fromkeys([*first, *table["variant"]]))}
    return table.assign(rank=table["variant"].map(order))  # 0: the best, drawn at the top


TITLE = "Per question type"  # the page's section (#per-question-type) and index.md's


def about(types: pd.DataFrame) -> str:
    """What the lines say, and the n of the two smallest types (of the first block) they rest on."""
    sized = types[types["n"] > 0]
    first = sized[sized[SPLIT_COLUMN] == sized[SPLIT_COLUMN].iloc[0]] if len(sized) else sized
    small = first.drop_duplicates("type").sort_values(["n", "type"], kind="stable").head(2)
    sizes = ", ".join(f"{t} n={n}" for t, n in zip(small["type"], small["n"]))
    note = f"The smallest types ({sizes} on {first[SPLIT_COLUMN].iloc[0]}) rest on few questions. " if sizes else ""
    return (
        "Score per question type (Kaggle's flags; a question may carry several) on each labelled test block. "
        f"{note}A variant's weakest type is named only where its whole 95% interval lies below the variant's "
        "overall score on the block, else: no type is clearly weaker; a type whose questions all scored alike "
        "(a point interval) is never named. Every number, components included: wattbot/leaderboard_by_type.csv."
    )


def section(
    by_type: str, leaderboard: pd.DataFrame, figs: Path, inputs: list[str], rep: Resampling
) -> tuple[Section, FigureEntry]:
    """The page's section: the summary lines above the small multiples, drawn into ``figs``; returns it with
    its figure's entry."""
    types = pd.read_csv(by_type)
    score_by_type(figure_table(leaderboard, types), figs / STEM)
    entry = FigureEntry(
        STEM,
        "One panel per question type (rows: blocks, where Public and Private differ from the whole split), n in "
        "each title, variants best first: dot and paired bootstrap 95% interval over that type's questions "
        f"(seed {rep.seed}, {rep.bootstrap} resamples); grey tick: the variant's overall score on the block; "
        "red: the interval lies entirely below it; a dot without a line: every question of the type scored "
        "alike (a point interval, never named in the lines above).",
        inputs,
    )
    body = "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(leaderboard, types)) + "</ul>"
    return Section(TITLE, body, [STEM], about(types), fold=False), entry


def markdown_lines(leaderboard: pd.DataFrame, types: pd.DataFrame, figure: str) -> list[str]:
    """index.md's section: the summary lines and where the figure and the table are."""
    return [
        f"## {TITLE}",
        "",
        about(types),
        "",
        *(f"- {line}" for line in summary_lines(leaderboard, types)),
        "",
        f"Small multiples (score and 95% interval per type, n in each panel title): [{figure}]({figure}), "
        f"drawn by the `figures` rule into `index.html` (section '{TITLE}').",
    ]

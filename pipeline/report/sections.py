"""What each dataset shows in the report, looked up by the ``dataset`` column of its rows: the
report never compares a dataset's name.

Two sections exist. The labelled set (WattBot's scored split) has every answering and retrieval
variant scored per question; its ablations are drawn as bars per stage and its headline is the score
(doc hit@1 for an ablation without answers). A retrieval-suite dataset has IE@k per query; its rows
are drawn in the suite's IE@k panels and its headline is IE at the largest k. Which measures those are is
the registry's (pipeline/registry/metrics.py: the views ``headline`` and ``docs.ablations``, of the tables a
section's rows come from). A dataset registered in pipeline/registry/suite_datasets.py gets the suite section
by that registration alone; a name registered nowhere is an error, not a silent guess.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.paths import WATTBOT
from pipeline.registry import metrics, suite_datasets
from pipeline.registry.metrics import EVERYTHING, Pick


@dataclass(frozen=True)
class Section:
    """Which rows a dataset has in the ablation tables and which of them the page and docs headline."""

    labelled: bool  # per-question answer and retrieval metrics of every variant (else IE@k per suite query)
    tables: tuple[str, ...]  # where its rows' measures come from (pipeline/registry/metrics.py TABLES)

    def headline_metrics(self, ks: Sequence[int], pick: Pick = EVERYTHING) -> list[str]:
        """The forest plot's candidates, in order: the first one an ablation has is its headline."""
        return metrics.columns(metrics.HEADLINE, self.tables, ks, pick)

    @property
    def results(self) -> list[str]:
        """The metrics docs/results.md lists per comparison."""
        return metrics.columns(metrics.DOCS_ABLATIONS, self.tables)


LABELLED = Section(labelled=True, tables=(metrics.ANSWERS, metrics.DOCUMENTS))
SUITE = Section(labelled=False, tables=(metrics.SUITE,))
LABELLED_SET = WATTBOT  # the ``dataset`` value of the labelled set's rows
SECTIONS = {LABELLED_SET: LABELLED}  # datasets with a section of their own; a suite dataset gets SUITE


SPLIT_COLUMN = "split"  # the leaderboard's block column, present when more than one WattBot split is labelled


def in_primary_block(board: pd.DataFrame) -> pd.Series:
    """Per row of a leaderboard, whether it is the score split's (its first block): every row when it has one."""
    if SPLIT_COLUMN not in board.columns or board.empty:
        return pd.Series(True, index=board.index)
    return board[SPLIT_COLUMN] == board[SPLIT_COLUMN].iloc[0]


def primary_block(board: pd.DataFrame) -> pd.DataFrame:
    """The score split's rows of a leaderboard (its first block): the whole table when it has one block."""
    if SPLIT_COLUMN not in board.columns or board.empty:
        return board
    return board[in_primary_block(board)].reset_index(drop=True)


def read_block(path: str | Path, split: str | None = None, **read_csv) -> pd.DataFrame:
    """One block of a leaderboard CSV (``split``; None: the score split's, the first), read with ``read_csv``'s
    options as if the file held it alone (the other blocks' empty cells do not change its columns' types);
    an empty frame when there is no such block."""
    whole = pd.read_csv(path, dtype=str, keep_default_na=False)
    if SPLIT_COLUMN not in whole.columns or whole.empty:
        return pd.read_csv(path, **read_csv) if split is None else whole.iloc[0:0]
    block = whole[whole[SPLIT_COLUMN] == (whole[SPLIT_COLUMN].iloc[0] if split is None else split)]
    return pd.read_csv(io.StringIO(block.to_csv(index=False)), **read_csv)


def read_primary_block(path: str | Path, **read_csv) -> pd.DataFrame:
    """The score split's block of a leaderboard CSV (:func:`read_block`)."""
    return read_block(path, None, **read_csv)


TEST = "test"  # the labelled test split's block (pages/split_blocks.py labels a whole split by its name)


def leading_blocks(path: str | Path, **read_csv) -> list[tuple[str | None, pd.DataFrame]]:
    """The blocks a summary leads with: the labelled test split's (when the leaderboard has one), then the
    score split's (named, or None for a leaderboard of one block). The report's headline does the same."""
    test = read_block(path, TEST, **read_csv)
    primary = read_primary_block(path, **read_csv)
    split = str(primary[SPLIT_COLUMN].iloc[0]) if SPLIT_COLUMN in primary and len(primary) else None
    return ([(TEST, test)] if len(test) and split != TEST else []) + [(split, primary)]


def split_dataset(split: str) -> str:
    """The ``dataset`` value of the labelled set's rows on one of several labelled splits: ``wattbot/test``."""
    return f"{LABELLED_SET}/{split}"


def section_of(dataset: str) -> Section:
    """The section of a ``dataset`` value: the labelled set's (also ``wattbot/<split>``), or the suite's for a
    registered suite dataset."""
    if dataset.split("/")[0] in SECTIONS:
        return SECTIONS[dataset.split("/")[0]]
    suite_datasets.get(dataset)  # KeyError naming the registered datasets
    return SUITE


def is_labelled(dataset: str) -> bool:
    return section_of(dataset).labelled


def labelled_rows(datasets: pd.Series) -> pd.Series:
    """True where a row belongs to the labelled set (by its dataset's section)."""
    return datasets.map(is_labelled).astype(bool)

"""Cross-fitted retrieval (#45 item 2): each fold's queries against the indexes built with that fold's
heads (trained without its documents and queries), the rows merged back in the questions' order, so the
file reads like any other retrieval of the split."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pipeline.retrieve.run import RetrieveJob, retrieve
from pipeline.sprout.folds import Folds


def fold_questions(questions: Mapping[str, Sequence[str]], folds: Folds, fold: int) -> dict[str, list[str]]:
    """The columns of ``questions`` restricted to the rows of ``fold`` (in file order)."""
    rows = [i for i, q in enumerate(questions["id"]) if folds.query_fold.get(q) == fold]
    return {c: [questions[c][i] for i in rows] for c in questions}


def retrieve_folds(
    questions: Mapping[str, Sequence[str]], jobs: list[RetrieveJob], folds: Folds, progress: bool = True
) -> list[dict]:
    """``jobs[f]`` retrieves fold ``f``'s questions; every question belongs to exactly one fold."""
    missing = [q for q in questions["id"] if q not in folds.query_fold]
    if missing:
        raise ValueError(f"cross-fitted retrieval: {len(missing)} question(s) in no fold (e.g. {missing[0]})")
    by_id: dict[str, dict] = {}
    for fold, job in enumerate(jobs):
        by_id.update((r["id"], r) for r in retrieve(fold_questions(questions, folds, fold), job, progress))
    return [by_id[q] for q in questions["id"]]


def fold_jobs(job: RetrieveJob, fold_files: dict[str, list[str]], k: int) -> list[RetrieveJob]:
    """One job per fold: ``job`` with ``fold_files[index][f]`` as the file of each index named there."""
    return [
        replace(
            job,
            indexes=tuple(
                (kind, Path(fold_files[name][f]) if name in fold_files else path)
                for (kind, path), name in zip(job.indexes, job.spec.index_names)
            ),
        )
        for f in range(k)
    ]

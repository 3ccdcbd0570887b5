"""What each variant returned per question, so that a claim whose two variants return the same thing
on every question reads "not testable: identical outputs" instead of "undecided".

Equal per-question scores do not show equal outputs (two different wrong answers both score 0), and
different scores do show different outputs, so the files are read only for comparisons whose every
paired score is equal. An answer is what the scorer reads (value, unit, cited documents); a retrieval
run is its ranked hit ids and the prompt context's node ids, on WattBot and on the retrieval suite alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.io import read_jsonl
from pipeline.report.sections import is_labelled
from pipeline.report.stats.ablation import InputFiles

ANSWER_FIELDS = ("answer_value", "answer_unit", "ref_id")  # what the WattBot scorer reads of an answer


def answer_key(record: dict) -> tuple:
    """One answer as the scorer sees it (the explanation and the call log are not compared)."""
    return tuple(json.dumps(record.get(f), sort_keys=True) for f in ANSWER_FIELDS)


def retrieval_key(record: dict) -> tuple:
    """One query's ranked hit ids and the ids of the context built from them."""
    return tuple(tuple(h.get("node_id") for h in record.get(part) or []) for part in ("hits", "context"))


def keyed(path: Path, key) -> dict[str, tuple]:
    """question id -> output key, for every record of a JSONL file."""
    return {str(r["id"]): key(r) for r in read_jsonl(path)}


def differing(a: dict[str, tuple], b: dict[str, tuple], ids) -> int:
    """How many of ``ids`` the two variants answer (or retrieve) differently; a missing id differs."""
    return sum(1 for q in ids if q not in a or q not in b or a[q] != b[q])


def reordered(a: dict[str, tuple], b: dict[str, tuple], ids) -> int:
    """How many of ``ids`` two retrieval runs answer with the same ids in another order (a rerank's effect)."""
    as_sets = lambda key: tuple(frozenset(part) for part in key)  # noqa: E731
    return sum(1 for q in ids if q in a and q in b and a[q] != b[q] and as_sets(a[q]) == as_sets(b[q]))


@dataclass
class Outputs:
    """Reads a variant's outputs from the files the figures rule was passed (each file once): the scored
    split's, and each other labelled split's (``splits``) for that split's claim rows."""

    files: InputFiles
    retrieval_of: dict[str, str] = field(default_factory=dict)  # answering variant -> its retrieval variant
    splits: dict[str, InputFiles] = field(default_factory=dict)  # another labelled split -> its files
    _read: dict[tuple[str, str, str], dict[str, tuple] | None] = field(default_factory=dict)

    def of(self, dataset: str, stage: str, variant: str) -> dict[str, tuple] | None:
        """question id -> output key of ``variant`` on ``dataset``; None when no file was passed for it."""
        k = (dataset, stage, variant)
        if k not in self._read:
            self._read[k] = self._load(dataset, stage, variant)
        return self._read[k]

    def _load(self, dataset: str, stage: str, variant: str) -> dict[str, tuple] | None:
        # a row of another labelled split (``wattbot/test``) reads that split's files, any other the scored split's
        f = self.splits.get(dataset.partition("/")[2], self.files)
        if not is_labelled(dataset):
            name = f"{dataset}:{variant}"
            return keyed(f.suite_run(dataset, variant), retrieval_key) if name in f.suite_run_of else None
        if stage == "answering":
            return keyed(f.answers(variant), answer_key) if variant in f.answers_of else None
        return keyed(f.retrieval(variant), retrieval_key) if variant in f.retrieval_of else None

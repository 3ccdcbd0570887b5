"""A toy retrieval-suite dataset, added as docs/architecture.md ("Adding a dataset") says for one kept outside
the package: a loader module with ``load(root, **subset)``, ``DEFAULT_SUBSET`` and its ``Subset`` keys (as
pipeline/datasets/hotpotqa.py) and its registration, the last line; a plugin, declared by its distribution's
pyproject.toml as entry point ``toy = "toy_suite"`` of group ``wattbench.suite_datasets`` and pip-installed
(tests/datasets/test_toy_dataset.py's PLUGIN). It reads ``toy.json`` under its folder: documents and questions,
each question naming the document sentence that answers it."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.config_schema import key, parse_spec
from pipeline.datasets.suite import SuiteTables, make_suite_tables
from pipeline.registry.suite_datasets import SuiteDataset, SuiteSubset, register

FILE = "toy.json"
DEFAULT_SUBSET = {"n_questions": None}


@dataclass(frozen=True, kw_only=True)
class Subset(SuiteSubset):
    """The questions a run loads: ``suite.datasets.toy``."""

    n_questions: int | None = key("the first n questions (null: all)", type=("integer", "null"), default=None)


def load(root: str | Path, **subset) -> SuiteTables:
    n_questions = parse_spec(Subset, subset, "suite.datasets.toy").n_questions
    data = json.loads((Path(root) / FILE).read_text(encoding="utf-8"))
    questions = data["questions"][:n_questions] if n_questions else data["questions"]
    docs = [{"doc_id": f"toy-{d['id']}", "title": d["title"], "text": d["text"], "source_id": d["id"]}
            for d in data["docs"]]
    texts = {d["doc_id"]: d["text"] for d in docs}
    gold = []
    for q in questions:
        doc_id = f"toy-{q['doc']}"
        start = texts[doc_id].index(q["evidence"])  # the evidence sentence, as a character span
        gold.append({"query_id": q["id"], "doc_id": doc_id, "start": start, "end": start + len(q["evidence"]),
                     "grade": 1})
    return make_suite_tables("toy", docs, [{"id": q["id"], "question": q["question"]} for q in questions], gold)


register(SuiteDataset("toy", loader=__name__, folder="toy", subset=Subset))

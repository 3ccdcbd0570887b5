"""MS MARCO TREC-DL loader on the real pool: graded whole-passage gold plus distractors."""
from __future__ import annotations

import csv

import pytest

from pipeline.datasets.suite import default_root, load_suite_tables

pytestmark = pytest.mark.data  # the benchmark as shipped in ../shared/data/retrieval

ROOT = default_root("msmarco")


@pytest.fixture(scope="module")
def small():
    assert ROOT.exists(), f"retrieval data not found at {ROOT}; set WATTBENCH_DATA"
    return load_suite_tables("msmarco", ROOT, {"n_queries": 4, "judged_per_query": 20, "n_distractors": 30})


def test_graded_whole_passage_gold(small):
    with open(ROOT / "qrels_with_text.tsv", newline="") as fh:
        qrels = {(r["qid"], r["pid"]): int(r["relevance"]) for r in csv.DictReader(fh, delimiter="\t")}
    texts = dict(zip(small.docs["doc_id"], small.docs["text"]))
    assert 0 < len(small.queries) <= 4 and set(small.queries["track"]) <= {"dl19", "dl20"}
    for g in small.gold:
        pid = g["doc_id"].removeprefix("msmarco-")
        assert g["grade"] == qrels[(g["query_id"], pid)] >= 1
        assert (g["start"], g["end"]) == (0, len(texts[g["doc_id"]]))
    assert {g["grade"] for g in small.gold} > {1}  # graded, not binary


def test_sizes_and_determinism(small):
    assert len(small.docs) <= 4 * 20 + 30
    again = load_suite_tables("msmarco", ROOT, {"n_queries": 4, "judged_per_query": 20, "n_distractors": 30})
    assert again.docs["doc_id"] == small.docs["doc_id"] and again.gold["doc_id"] == small.gold["doc_id"]
    strict = load_suite_tables("msmarco", ROOT, {"n_queries": 4, "judged_per_query": 20, "n_distractors": 30,
                                              "min_grade": 2})
    assert min(strict.gold["grade"]) >= 2 and len(strict.gold) < len(small.gold)

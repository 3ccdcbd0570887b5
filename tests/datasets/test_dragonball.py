"""DragonBall loader on the real documents and queries: reference quotes as spans, filters."""
from __future__ import annotations

import json

import pytest

from pipeline.datasets.suite import default_root, load_suite_tables
from pipeline.datasets.dragonball import QUERIES

pytestmark = pytest.mark.data  # the benchmark as shipped in ../shared/data/retrieval

ROOT = default_root("dragonball")


@pytest.fixture(scope="module")
def raw() -> dict[str, dict]:
    assert ROOT.exists(), f"retrieval data not found at {ROOT}; set WATTBENCH_DATA"
    rows = [json.loads(line) for line in (ROOT / QUERIES).read_text(encoding="utf-8").splitlines()]
    return {f"{r['language']}-{r['query']['query_id']}": r for r in rows}


def test_default_is_english_and_quotes_are_the_gold(raw):
    bench = load_suite_tables("dragonball")
    assert set(bench.docs["language"]) == {"en"} and set(bench.queries["language"]) == {"en"}
    assert set(bench.queries["domain"]) == {"Finance", "Law", "Medical"}
    texts = dict(zip(bench.docs["doc_id"], bench.docs["text"]))
    gold = bench.gold.to_pandas()
    for qid in bench.queries["id"]:
        refs = raw[qid]["ground_truth"]["references"]
        got = {texts[g.doc_id][g.start:g.end] for g in gold[gold.query_id == qid].itertuples()}
        assert got and got <= set(refs)
    assert set(gold.doc_id) <= set(texts)


def test_filters_and_dropped_queries(raw):
    zh_law = load_suite_tables("dragonball", ROOT, {"full": True, "language": "zh", "domain": "Law"})
    assert set(zh_law.docs["domain"]) == {"Law"} and set(zh_law.docs["language"]) == {"zh"}
    assert len(zh_law.docs) == 30 and 0 < len(zh_law.queries) <= 19
    full = load_suite_tables("dragonball", ROOT, {"full": True})
    assert len(full.docs) == 216
    ids = set(full.queries["id"])
    assert not ids & {"en-4665", "en-4679", "en-4703"}  # gold documents missing upstream
    unanswerable = {q for q, r in raw.items() if not r["ground_truth"]["references"]}
    assert unanswerable and not ids & unanswerable

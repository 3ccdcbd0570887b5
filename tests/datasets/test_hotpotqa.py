"""HotpotQA loader on real questions: supporting-fact sentences become spans of pooled paragraphs."""
from __future__ import annotations

import json

import pytest

from pipeline.datasets import hotpotqa
from pipeline.datasets.suite import default_root, load_suite_tables

pytestmark = pytest.mark.data  # the benchmark as shipped in ../shared/data/retrieval

ROOT = default_root("hotpotqa")


@pytest.fixture(scope="module")
def raw() -> dict[str, dict]:
    assert ROOT.exists(), f"retrieval data not found at {ROOT}; set WATTBENCH_DATA"
    rows = [json.loads(line) for line in (ROOT / hotpotqa.FILE).read_text().splitlines()]
    return {r["_id"]: r for r in rows}


@pytest.fixture(scope="module")
def small():
    return load_suite_tables("hotpotqa", ROOT, {"n_questions": 12})


def test_gold_spans_are_the_supporting_sentences(small, raw):
    texts = dict(zip(small.docs["doc_id"], small.docs["text"]))
    titles = dict(zip(small.docs["doc_id"], small.docs["title"]))
    by_query: dict[str, list[str]] = {}
    for g in small.gold:
        by_query.setdefault(g["query_id"], []).append((titles[g["doc_id"]], texts[g["doc_id"]][g["start"]:g["end"]]))
    assert set(by_query) == set(small.queries["id"]) and len(small.queries) == 12
    for qid, got in by_query.items():
        r = raw[qid]
        assert r["all_supporting_facts_in_context"]
        context = dict((t, s) for t, s in r["context"])
        want = {(t, context[t][i].strip()) for t, i in r["supporting_facts"]}
        assert set(got) == want


def test_paragraphs_are_pooled_and_ids_stable(small, raw):
    assert len(small.docs) == len(set(small.docs["doc_id"])) >= 10 * 12 * 0.9  # a few titles recur
    again = load_suite_tables("hotpotqa", ROOT, {"n_questions": 12})
    assert again.docs["doc_id"] == small.docs["doc_id"] and again.queries["id"] == small.queries["id"]
    r = raw[small.queries["id"][0]]
    title, sentences = r["context"][0]
    doc = small.docs.filter(lambda d: d["source_id"] == title and d["text"] == "".join(sentences))
    assert len(doc) == 1 and doc[0]["doc_id"].startswith("hotpotqa-")


def test_full_keeps_only_questions_with_gold_in_context(raw):
    full = load_suite_tables("hotpotqa", ROOT, {"full": True})
    assert len(full.queries) == sum(r["all_supporting_facts_in_context"] for r in raw.values()) == 351
    dev = load_suite_tables("hotpotqa", ROOT, {"full": True, "sources": ["amor_dev"]})
    assert len(dev.queries) == 100


def test_hub_dict_form_is_read_like_the_list_form(raw):
    r = next(iter(raw.values()))
    hub = dict(r, context={"title": [t for t, _ in r["context"]], "sentences": [s for _, s in r["context"]]},
               supporting_facts={"title": [t for t, _ in r["supporting_facts"]],
                                 "sent_id": [i for _, i in r["supporting_facts"]]})
    assert hotpotqa._context(hub) == [tuple(c) for c in r["context"]]
    assert hotpotqa._gold_sentences(hub) == hotpotqa._gold_sentences(r)
    text, spans = hotpotqa._paragraph(["First one.", " Second one.", "Third."])
    assert text == "First one. Second one. Third."
    assert [text[s:e] for s, e in spans] == ["First one.", "Second one.", "Third."]

"""Shared schema, ids, the original->tree offset alignment and the export round trip on real docs."""
from __future__ import annotations

import pandas as pd
import pytest

from pipeline.datasets.suite import load_suite_tables, make_suite_tables, safe_id
from pipeline.parse.suite_export import OffsetMap, export_suite_tables, read_gold, squeeze
from pipeline.parse.text import parse_text
from pipeline.tree import DocTree

SMALL = {
    "legalbench_rag": {"n_docs": 2},
    "hotpotqa": {"n_questions": 5},
    "dragonball": {"docs_per_domain": 1},
    "msmarco": {"n_queries": 2, "judged_per_query": 15, "n_distractors": 10},
}


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.data  # real documents from ../shared/data/retrieval
def test_export_round_trip_on_real_docs(name, tmp_path):
    bench = load_suite_tables(name, subset=SMALL[name])
    (tmp_path / "trees").mkdir()
    (tmp_path / "trees" / "left-over-from-a-bigger-export.json").write_text("{}")
    counts = export_suite_tables(bench, tmp_path)
    assert sorted(p.stem for p in (tmp_path / "trees").glob("*.json")) == sorted(bench.docs["doc_id"])
    assert counts["docs"] == len(bench.docs) and counts["queries"] == len(bench.queries)
    assert counts["gold"] == len(bench.gold) and counts["gold_dropped"] == 0 and counts["unaligned_chars"] == 0
    originals = dict(zip(bench.docs["doc_id"], bench.docs["text"]))
    trees = {}
    for doc_id in originals:
        tree = DocTree.load(tmp_path / "trees" / f"{doc_id}.json")
        tree.check()
        assert tree.doc_id == doc_id and tree.metadata["benchmark"] == bench.name
        trees[doc_id] = tree
    assert counts["sentences"] == sum(sum(1 for _ in t.at_level("sentence")) for t in trees.values())
    for g in read_gold(tmp_path / "gold.jsonl"):
        original = originals[g["doc_id"]][g["orig_start"]:g["orig_end"]]
        projected = trees[g["doc_id"]].text[g["start"]:g["end"]]
        assert squeeze(projected) == squeeze(original), g
        assert not projected[0].isspace() and not projected[-1].isspace()
    queries = pd.read_csv(tmp_path / "queries.csv", dtype=str, keep_default_na=False)
    assert list(queries.columns[:2]) == ["id", "question"] and list(queries["id"]) == bench.queries["id"]
    docs = pd.read_csv(tmp_path / "docs.csv", dtype=str, keep_default_na=False)
    assert list(docs["doc_id"]) == bench.docs["doc_id"] and "source_id" in docs


def test_alignment_survives_what_parse_text_rewrites():
    """Whitespace runs, CRLF, a ligature, a glued and a kept line-end hyphen, a dropped heading line
    (parse_text glues "effi-" + "ciency" because "efficiency" occurs elsewhere in the text)."""
    original = ("Intro   line one of the\r\ndocument. The eﬃ-\r\n   ciency is high.\r\n\r\n"
                "2 Background\r\nA state-of-the-\nart model, effi-\nciency. End of efficiency.\n")
    tree = parse_text(original, "d", "Doc")
    assert "efficiency" in tree.text and "state-of-the-art" in tree.text and "Background" not in tree.text
    spans = OffsetMap(original, tree)
    assert spans.unaligned_chars == 0

    def where(phrase: str) -> tuple[int, int]:
        start = original.index(phrase)
        return start, start + len(phrase)

    assert tree.text[slice(*spans.project(*where("line one of the\r\ndocument")))] == "line one of the document"
    assert tree.text[slice(*spans.project(*where("eﬃ-\r\n   ciency")))] == "efficiency"
    assert tree.text[slice(*spans.project(*where("state-of-the-\nart")))] == "state-of-the-art"
    # kept and glued hyphens in one sentence: only the tolerant (regex) path finds it
    phrase = "state-of-the-\nart model, effi-\nciency"
    assert tree.text[slice(*spans.project(*where(phrase)))] == "state-of-the-art model, efficiency"
    # a span starting inside the dropped heading keeps only what survived
    assert tree.text[slice(*spans.project(*where("Background\r\nA state")))] == "A state"
    assert spans.project(*where("2 Background")) is None
    whole = spans.project(0, len(original))
    assert whole == (0, len(tree.text))


def test_safe_ids_are_stable_and_filesystem_safe():
    assert safe_id("msmarco-887") == "msmarco-887"
    a = safe_id("cuad/ABC Corp: SERVICES AGREEMENT")
    assert a == safe_id("cuad/ABC Corp: SERVICES AGREEMENT") and a.startswith("cuad_ABC_Corp_SERVICES_AGREEMENT-")
    assert safe_id("a b") != safe_id("a_b") and ":" not in a and "/" not in a
    assert len(safe_id("x" * 500)) <= 64 + 9
    assert safe_id("Same", key="text one") != safe_id("Same", key="text two")


@pytest.mark.data  # reads a benchmark from ../shared/data/retrieval
def test_schema_checks_and_subset_semantics():
    docs = [{"doc_id": "d", "title": "", "text": "abc", "source_id": "d"}]
    queries = [{"id": "q", "question": "?"}]
    with pytest.raises(ValueError, match="outside"):
        make_suite_tables("x", docs, queries, [{"query_id": "q", "doc_id": "d", "start": 0, "end": 4, "grade": 1}])
    with pytest.raises(ValueError, match="unknown"):
        make_suite_tables("x", docs, queries, [{"query_id": "q", "doc_id": "e", "start": 0, "end": 1, "grade": 1}])
    empty = make_suite_tables("x", docs, queries, [])
    assert empty.gold.column_names == ["query_id", "doc_id", "start", "end", "grade"]
    small = load_suite_tables("dragonball", subset={"docs_per_domain": 1})
    assert small.params == {"language": "en", "docs_per_domain": 1, "seed": 0}
    zh = load_suite_tables("dragonball", subset={"full": True, "language": "zh"})
    assert zh.params == {"language": "zh"} and len(zh.docs) == 108
    with pytest.raises(KeyError):
        load_suite_tables("scidocs")
    with pytest.raises(FileNotFoundError):  # a missing local folder is not mistaken for a hub name
        load_suite_tables("dragonball", "/nonexistent/dragonball")

"""LegalBench-RAG loader on the real CUAD benchmark JSON and contracts."""
from __future__ import annotations

import json

import pytest

from pipeline.datasets.suite import default_root, load_suite_tables

pytestmark = pytest.mark.data  # the benchmark as shipped in ../shared/data/retrieval

ROOT = default_root("legalbench_rag")


@pytest.fixture(scope="module")
def small():
    assert ROOT.exists(), f"retrieval data not found at {ROOT}; set WATTBENCH_DATA"
    return load_suite_tables("legalbench_rag", ROOT, {"n_docs": 3})


def test_schema_and_spans_inside_their_contract(small):
    assert set(small.docs.column_names) >= {"doc_id", "title", "text", "source_id"}
    assert set(small.queries.column_names) >= {"id", "question", "category"}
    assert small.gold.column_names == ["query_id", "doc_id", "start", "end", "grade"]
    assert len(small.docs) == 3 and len(small.queries) > 0
    texts = dict(zip(small.docs["doc_id"], small.docs["text"]))
    for g in small.gold:
        assert 0 <= g["start"] < g["end"] <= len(texts[g["doc_id"]]) and g["grade"] == 1
        assert texts[g["doc_id"]][g["start"]:g["end"]].strip()
    assert all(d.replace("-", "").replace("_", "").replace(".", "").isalnum() for d in small.docs["doc_id"])


def test_default_is_the_mini_set_and_is_deterministic():
    a, b = load_suite_tables("legalbench"), load_suite_tables("legalbench")
    assert a.docs["doc_id"] == b.docs["doc_id"] and a.queries["id"] == b.queries["id"]
    mini = set((ROOT / "benchmarks" / "cuad_mini_doc_list.txt").read_text().split("\n")) - {""}
    assert set(a.docs["source_id"]) <= mini


def test_spans_match_the_benchmark_json_read_with_newline_kept(small):
    tests = json.loads((ROOT / "benchmarks" / "cuad.json").read_text())["tests"]
    q = small.queries[0]
    test = tests[int(q["id"].split("-")[1])]
    assert test["query"] == q["question"]
    with open(ROOT / "corpus" / test["snippets"][0]["file_path"], encoding="utf-8", newline="") as fh:
        raw = fh.read()
    s, e = test["snippets"][0]["span"]
    texts = dict(zip(small.docs["source_id"], small.docs["text"]))
    assert texts[test["snippets"][0]["file_path"]][s:e] == raw[s:e]


def test_path_driven_and_filter(tmp_path):
    """Any benchmark JSON works (here a two-test copy); LegalBench-RAG's exclusions are applied."""
    tests = json.loads((ROOT / "benchmarks" / "cuad.json").read_text())["tests"]
    excluded = next(t for t in tests if t["excluded_by_legalbenchrag_filter"])
    kept = next(t for t in tests if not t["excluded_by_legalbenchrag_filter"])
    path = tmp_path / "benchmarks" / "mine.json"
    path.parent.mkdir()
    tests = [{k: v for k, v in t.items() if k != "in_legalbenchrag_mini_doc_set"} for t in (excluded, kept)]
    path.write_text(json.dumps({"tests": tests}))
    (tmp_path / "corpus").symlink_to(ROOT / "corpus")
    bench = load_suite_tables("legalbench_rag", tmp_path, {"full": True, "benchmark": "mine"})
    assert bench.queries["id"] == ["mine-1"] and bench.name == "legalbench_rag-mine"
    assert len(load_suite_tables("legalbench_rag", tmp_path, {"full": True, "benchmark": str(path),
                                                            "apply_filter": False}).queries) == 2
    with pytest.raises(ValueError, match="mini"):
        load_suite_tables("legalbench_rag", tmp_path, {"full": True, "benchmark": "mine", "mini": True})

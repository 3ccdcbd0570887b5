"""BM25 tokenisation and search, on hand-made strings and three real WattBot documents."""
import pytest

from pipeline.index_structures.bm25 import BM25Searcher, build_bm25_index, stem, tokenize
from pipeline.index_structures.store import IndexWriter


@pytest.mark.parametrize("text, expected", [
    ("Training GShard-600B", ["train", "gshard-600b", "gshard", "600b"]),   # entity kept whole and split
    ("LLaMA-3.1 and GPT-3.5", ["llama-3.1", "llama", "3.1", "gpt-3.5", "gpt", "3.5"]),
    ("4.3 net tCO2e", ["4.3", "net", "tco2e"]),                              # decimals stay whole
    ("5,842 entries", ["5842", "entri"]),                                    # thousands separator dropped
    ("2.50 and 7.0 but 100", ["2.5", "7", "100"]),                           # trailing decimal zeros dropped
    ("a 6.1B-parameter model", ["6.1b-parameter", "6.1b", "parameter", "model"]),
    ("CO₂ emissions", ["co2", "emission"]),                                  # NFKC folds sub/superscripts
    ("What is the name of the benchmark?", ["name", "benchmark"]),           # stopwords dropped
    ("", []),
])
def test_tokenize(text, expected):
    assert tokenize(text) == expected


@pytest.mark.parametrize("words", [
    ["train", "trains", "trained", "training"],
    ["emission", "emissions"],
    ["measure", "measured", "measures", "measuring"],
    ["gpu", "gpus"],
    ["process", "processes", "processing"],
    ["h100", "h100s"],
    ["efficiency", "efficiencies"],
])
def test_inflections_meet(words):
    assert len({stem(w) for w in words}) == 1, {w: stem(w) for w in words}


@pytest.mark.parametrize("a, b", [("class", "classes"), ("hop", "hopping"), ("use", "used")])
def test_porter_step1_cases(a, b):
    assert stem(a) == stem(b)


@pytest.mark.parametrize("word", ["gshard-600b", "4.3", "a100", "co2", "data", "is"])
def test_stem_leaves_short_and_non_words_alone(word):
    assert stem(word) == word


def test_stem_keeps_distinct_words_apart():
    assert len({stem(w) for w in ["energy", "emission", "inference", "carbon", "power", "compute"]}) == 6


@pytest.fixture(scope="module")
def bm25_path(three_trees, tmp_path_factory):
    path = tmp_path_factory.mktemp("bm25") / "bm25.sqlite"
    w = IndexWriter(path, None, {"model_id": "bm25", "levels": ["sentence", "paragraph"]})
    counts = build_bm25_index(three_trees, ["sentence", "paragraph"], w)
    w.close()
    assert counts["sentence"] > counts["paragraph"] > 0
    return path


QUERY = "GShard-600B net CO2e emissions"


def test_sentence_search_finds_the_fact(bm25_path):
    hits = BM25Searcher(bm25_path, ["sentence"]).search(QUERY, 5)
    top, _ = hits[0]
    assert top.doc_id == "patterson2021" and top.level == "sentence"
    assert "4.3 net tCO 2 e" in top.text
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_both_levels_find_the_fact(bm25_path, fusion):
    hits = BM25Searcher(bm25_path, ["sentence", "paragraph"]).search(QUERY, 6, fusion)
    assert 1 <= len(hits) <= 6 and len({n.node_id for n, _ in hits}) == len(hits)
    assert {n.level for n, _ in hits} == {"sentence", "paragraph"}
    assert hits[0][0].doc_id == "patterson2021" and "4.3 net tCO 2 e" in hits[0][0].text


def test_rrf_level_fusion_interleaves_level_winners(bm25_path):
    hits = BM25Searcher(bm25_path, ["sentence", "paragraph"]).search(QUERY, 4, "rrf")
    assert [n.level for n, _ in hits[:2]] == ["sentence", "paragraph"]  # rank 1 of each level ties; first level first


def test_searcher_rejects_unknown_fusion_and_unindexed_level(bm25_path):
    with pytest.raises(ValueError, match="level fusion"):
        BM25Searcher(bm25_path, ["sentence"]).search(QUERY, 3, "max")
    with pytest.raises(ValueError, match="no 'section' nodes"):
        BM25Searcher(bm25_path, ["section"])


def test_no_match_returns_nothing(bm25_path):
    assert BM25Searcher(bm25_path, ["sentence", "paragraph"]).search("zzzqqq the of", 5) == []

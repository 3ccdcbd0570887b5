"""Config validation names the bad key (on the tests' own grid; the shipped configs: test_shipped_configs.py)."""
import copy

import pytest
import yaml

from pipeline.config import ConfigError, answering_slice, validate
from pipeline.datasets.paths import REPO


@pytest.fixture()
def raw():
    return yaml.safe_load((REPO / "tests" / "grid.yaml").read_text())  # the tests' own grid, not config.yaml


@pytest.mark.parametrize("mutate, key", [
    (lambda c: c.update(bogus=1), "bogus"),  # an unknown key named by itself, not "<top level>"
    (lambda c: c["embedding"].update(backend="word2vec"), "embedding.backend"),
    (lambda c: c["retrieval"]["hier-dense"].update(top_k=0), "retrieval.hier-dense.top_k"),
    (lambda c: c["retrieval"]["hier-dense"].update(index="nope"), "retrieval.hier-dense.index"),
    (lambda c: c["answering"]["hier-extractive"].update(retrieval="nope"), "answering.hier-extractive.retrieval"),
    (lambda c: c.update(default_variant="nope"), "default_variant"),
    (lambda c: c["indexes"]["flat"].update(overlap_tokens=600), "indexes.flat.overlap_tokens"),
    (lambda c: c["retrieval"]["flat-dense"].update(levels=["sentence"]), "retrieval.flat-dense.levels"),
    (lambda c: c["retrieval"]["hier-dense"].update(hybrid={"index": "flat", "mode": "rrf", "top_k": 5}),
     "retrieval.hier-dense.hybrid.index"),
    (lambda c: [c["llm"].pop("model"), [c["answering"].pop(v) for v in list(c["answering"]) if v.startswith("llm-")],
                c["retrieval"]["hier-convex"].update(planner={"kind": "llm"})], "retrieval.hier-convex.planner.model"),
    (lambda c: c["answering"]["hier-extractive"].update(backend="llm", model="local/nope"),
     "answering.hier-extractive.model"),
    (lambda c: c["answering"]["llm-cf"].update(splits=["test"]), "answering.llm-cf.splits"),
    (lambda c: c["answering"]["llm-cf"].update(vote={"mode": "plurality"}), "answering.llm-cf.vote.mode"),
    (lambda c: c.update(default_variant="llm-cf"), "default_variant"),
    (lambda c: c["wattbot"].update(score_split="dev"), "wattbot.score_split"),
    (lambda c: c["retrieval"]["hier-dense"].update(level_fusion="rrf"), "retrieval.hier-dense.level_fusion"),
    (lambda c: c["retrieval"]["bm25"].update(level_fusion="max"), "retrieval.bm25.level_fusion"),
    (lambda c: c["retrieval"]["hier-dense"].update(hybrid={"index": "bm25", "mode": "append", "top_k": 5, "weight": .7}),
     "retrieval.hier-dense.hybrid.weight"),
    (lambda c: c["retrieval"]["hier-dense"].update(hybrid={"index": "bm25", "mode": "convex", "top_k": 5, "weight": 2}),
     "retrieval.hier-dense.hybrid.weight"),
])
def test_bad_values_name_the_key(raw, mutate, key):
    cfg = copy.deepcopy(raw)
    mutate(cfg)
    with pytest.raises(ConfigError, match=f"config key '{key}'"):
        validate(cfg)


def test_slices_follow_the_variant_chain(raw):
    cfg = validate(raw)
    s = answering_slice(cfg, "rrf-extractive")
    assert s["upstream"]["retrieval"]["index"] == "hier"
    assert set(s["upstream"]["indexes"]) == {"hier", "bm25"}
    assert s["upstream"]["embedding"]["backend"] == cfg["embedding"]["backend"]


def test_fusion_knobs_are_accepted(raw):
    raw["retrieval"]["bm25"]["level_fusion"] = "rrf"
    raw["retrieval"]["hier-dense"]["hybrid"] = {"index": "bm25", "mode": "convex", "top_k": 16, "weight": 0.7}
    raw["retrieval"]["hier-dense"]["level_fusion"] = "score"
    cfg = validate(raw)
    assert cfg["retrieval"]["hier-dense"]["hybrid"]["weight"] == 0.7


def test_parsing_section_defaults_and_errors(raw):
    cfg = copy.deepcopy(raw)
    cfg.pop("parsing", None)
    parsing = validate(cfg)["parsing"]
    assert parsing == {"strict": False, "quality_dir": "data/parse-corpus", "headings": "combined",
                       "max_pdf_mb": 200, "max_pdf_pages": 2000, "vision": {"model": None, "params": {}}}
    cfg["parsing"] = {"strict": "yes"}
    with pytest.raises(ConfigError, match="config key 'parsing.strict'"):
        validate(cfg)

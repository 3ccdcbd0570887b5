"""The retrieval side's registries and typed specs: a toy planner kind and fusion mode are configured by
registering them; every spec takes the schema's defaults and names an unknown key by its dotted path."""
import copy

import pytest
import yaml

from pipeline.config import full_schema, validate
from pipeline.config_schema import ConfigError, declared_defaults
from pipeline.datasets.paths import REPO
from pipeline.registry.index_kinds import get_kind
from pipeline.registry.base import Registry
from pipeline.registry.retrieval_modes import FUSIONS, PLANNERS, FusionMode, PlannerKind
from pipeline.retrieve.planner import make_planner
from pipeline.specs import ContextSpec, EncoderSpec, RetrievalSpec


@pytest.fixture()
def raw():
    return yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())


def test_a_lookup_before_the_builtins_are_imported_names_the_package():
    reg = Registry("toy kind", builtins="pipeline.no_such_package")
    with pytest.raises(LookupError, match="import pipeline.no_such_package first"):
        reg.names()


class Echo:
    def __init__(self, n):
        self.n = n

    def plan_all(self, questions, units, progress=True):
        return [[q] * self.n for q in questions]


@pytest.fixture()
def toys():
    PLANNERS.register(PlannerKind("echo", lambda spec, acronyms, gateway: Echo(spec.n)))
    FUSIONS.register(FusionMode("dense-only", lambda dense, lexical, k, hybrid: dense[:k]))
    yield
    PLANNERS.unregister("echo")
    FUSIONS.unregister("dense-only")


def test_a_toy_planner_kind_and_fusion_mode_are_configured_by_registering(raw, toys):
    raw["retrieval"]["toy"] = {"index": "hier", "top_k": 4, "planner": {"kind": "echo", "n": 2},
                               "hybrid": {"index": "bm25", "mode": "dense-only", "top_k": 4}}
    cfg = validate(raw)
    spec = RetrievalSpec.from_dict("toy", cfg["retrieval"]["toy"], cfg["indexes"])
    assert spec.hybrid is not None and spec.hybrid.weight is None and spec.index_names == ("hier", "bm25")
    assert FUSIONS.get(spec.hybrid.mode).fuse([("a", 1.0), ("b", 0.5)], [("c", 9.0)], 1, spec.hybrid) == [("a", 1.0)]
    planner = make_planner(spec.planner, dict, None)
    assert isinstance(planner, Echo) and planner.plan_all(["q"], [None]) == [["q", "q"]]
    raw["retrieval"]["toy"]["hybrid"]["weight"] = 0.5  # the toy mode takes no weight
    with pytest.raises(ConfigError, match=r"'retrieval\.toy\.hybrid\.weight': only convex and rrf take a weight"):
        validate(raw)


def test_an_unregistered_planner_kind_or_fusion_mode_names_its_key(raw):
    bad = copy.deepcopy(raw)
    bad["retrieval"]["hier-dense"]["hybrid"] = {"index": "bm25", "mode": "dense-only", "top_k": 4}
    with pytest.raises(ConfigError, match=r"'retrieval\.hier-dense\.hybrid\.mode'"):
        validate(bad)
    raw["retrieval"]["bm25"]["planner"] = {"kind": "echo"}
    with pytest.raises(ConfigError, match=r"'retrieval\.bm25\.planner\.kind'"):
        validate(raw)


@pytest.mark.parametrize("parse, key", [
    (lambda: get_kind("bm25").parse("bm25-par", {"kind": "bm25", "k1": 1.2}), "indexes.bm25-par.k1"),
    (lambda: get_kind("tree").parse("hier", {"kind": "tree", "levels": ["sentence"]}), "indexes.hier.levels"),
    (lambda: RetrievalSpec.from_dict("v", {"index": "hier", "top_k": 3, "levels": ["sentence"], "expand": "none",
                                           "beam_width": 3}, {"hier": {"kind": "tree"}}), "retrieval.v.beam_width"),
    (lambda: ContextSpec.from_dict({"depth": 1}, "retrieval.v.context"), "retrieval.v.context.depth"),
    (lambda: EncoderSpec.from_dict({"backend": "torch", "thread": 2}), "embedding.thread"),
    (lambda: EncoderSpec.from_dict({"model": "m"}), "embedding.backend"),
])
def test_a_spec_names_an_unknown_or_missing_key(parse, key):
    with pytest.raises(ConfigError) as err:
        parse()
    assert err.value.key == key and str(err.value).startswith(f"config key '{key}': ")


def test_kind_and_searcher_defaults_are_their_declarations(raw):
    raw["indexes"]["flat"] = {"kind": "chunks"}
    cfg = validate(raw)
    assert get_kind("chunks").parse("flat", cfg["indexes"]["flat"]).chunk_tokens == cfg["indexes"]["flat"]["chunk_tokens"]
    assert cfg["indexes"]["flat"] == {"kind": "chunks", "chunk_tokens": 512, "overlap_tokens": 64}  # hashed as before
    spec = RetrievalSpec.from_dict("bm25", cfg["retrieval"]["bm25"], cfg["indexes"])
    assert spec.searchers == {"bm25": get_kind("bm25").search_spec("score")} and spec.context.parent_depth is None
    assert EncoderSpec.from_dict({"backend": "torch"}).threads == full_schema()["properties"]["embedding"]["properties"]["threads"]["default"] == 2
    # the schema's part for a kind's and a searcher's keys is generated from the declarations beside their fields,
    # without their defaults (the schema holds every kind's keys; validation writes the entry's own kind's)
    full = full_schema()["properties"]
    index = full["indexes"]["additionalProperties"]["properties"]
    assert "default" not in index["chunk_tokens"] and declared_defaults(get_kind("chunks").spec)["chunk_tokens"] == 512
    searcher = full["retrieval"]["additionalProperties"]["properties"]["level_fusion"]
    assert searcher["enum"] == ["score", "rrf"] and "default" not in searcher and searcher["description"]
    assert cfg["retrieval"]["bm25"]["level_fusion"] == "score" and "beam_width" not in cfg["retrieval"]["bm25"]

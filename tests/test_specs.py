"""Typed specs and the schema as the one place of defaults and enumerations; what is hashed is unchanged."""
import copy

import pytest
import yaml

from pipeline import config_schema
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.answer_backends import LLMAnswerSpec, variant_spec
from pipeline.specs import PROMPTS, TREE_LEVELS, LLMSpec

@pytest.fixture()
def raw():
    return yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())


def test_defaults_come_from_the_schema(raw, monkeypatch):
    cfg = validate(raw)
    schema_llm = config_schema.node("llm")["properties"]
    assert "timeout_s" not in raw["llm"] and cfg["llm"]["timeout_s"] == schema_llm["timeout_s"]["default"]
    assert cfg["sprout"]["window_tokens"] == config_schema.node("sprout", "window_tokens")["default"]
    assert cfg["indexes"]["bm25"]["levels"] == ["sentence", "paragraph"] and "chunk_tokens" not in cfg["indexes"]["hier"]
    # x-default: read by the specs, never written into the (hashed) variant dicts
    assert "prompt" not in cfg["answering"]["mock-llm"]
    assert variant_spec("mock-llm", cfg["answering"]["mock-llm"]).prompt == config_schema.node(
        "answering", "*", "prompt")["x-default"] == "context_first"
    # one place: a changed schema default is what validation and the specs use
    patched = copy.deepcopy(config_schema.schema())
    patched["properties"]["llm"]["properties"]["timeout_s"]["default"] = 77
    patched["properties"]["answering"]["additionalProperties"]["properties"]["samples"]["x-default"] = 3
    monkeypatch.setattr(config_schema, "schema", lambda: patched)
    cfg = validate(raw)
    assert cfg["llm"]["timeout_s"] == 77 and LLMSpec.from_dict(cfg["llm"]).timeout_s == 77
    assert LLMAnswerSpec.from_dict("dense-x", cfg["answering"]["dense-x"]).samples == 3


def test_gateway_defaults_are_the_schemas(tmp_path):
    from pipeline.llm.gateway import LLMGateway

    gw = LLMGateway.from_config(tmp_path, {})
    spec = LLMSpec.from_dict({})
    assert (gw.mode, gw.timeout_s, gw.max_retries, gw.backoff_s) == (spec.mode, spec.timeout_s, spec.max_retries,
                                                                     spec.backoff_s) == ("live", 120, 3, 2.0)
    gw.close()


@pytest.mark.parametrize("where, key", [
    (lambda c: c["answering"]["mock-llm"].update(prompt="haiku"), "answering.mock-llm.prompt"),
    (lambda c: c["llm"].update(mode="dream"), "llm.mode"),
    (lambda c: c["embedding"].update(backend="word2vec"), "embedding.backend"),
    (lambda c: c["retrieval"]["bm25"].update(planner={"kind": "oracle"}), "retrieval.bm25.planner.kind"),
    (lambda c: c["indexes"]["bm25"].update(levels=["chapter"]), "indexes.bm25.levels.0"),
    (lambda c: c["answering"]["ens"]["vote"].update(tiebreak="coin"), "answering.ens.vote.tiebreak"),
])
def test_an_unknown_enum_value_is_one_line_naming_the_key(raw, where, key):
    where(raw)
    with pytest.raises(ConfigError) as err:
        validate(raw)
    message = str(err.value)
    assert message.startswith(f"config key '{key}': ") and "\n" not in message


def test_enumerations_are_the_schemas():
    from pipeline.llm.gateway import MODES
    from pipeline.answer.vote import MODES as VOTE_MODES
    from pipeline.embed import BACKENDS
    from pipeline.retrieve.expand import DEDUP_MODES
    from pipeline.tree import LEVELS

    assert LEVELS == TREE_LEVELS == ("document", "section", "paragraph", "sentence")
    assert PROMPTS == config_schema.enum("answering", "*", "prompt")
    assert MODES == config_schema.enum("llm", "mode")
    assert VOTE_MODES == config_schema.enum("answering", "*", "vote", "mode")
    assert DEDUP_MODES == config_schema.enum("retrieval", "*", "context", "dedup")
    assert BACKENDS == config_schema.enum("definitions", "embed_backend")

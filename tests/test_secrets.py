"""Secrets: API keys come only from the environment and are never written by a run."""
import subprocess

import pytest

from dag_runner import PLANTED_KEY, command, environment
from pipeline.config import ConfigError, load_config, validate
from pipeline.datasets.paths import REPO


@pytest.mark.slow
def test_a_planted_key_appears_in_no_file_the_run_wrote(tiny_run):
    """tests/tiny.yaml declares OPENAI_API_KEY in llm.envvars and every test run plants a fake one;
    grep every file of the run: results, reports, logs, caches, manifests, Snakemake's own metadata."""
    work, _ = tiny_run
    files = [p for p in work.rglob("*") if p.is_file()]
    assert any("llm.sqlite" in p.name for p in files) and any(p.suffix == ".log" for p in files)
    leaked = [str(p.relative_to(work)) for p in files if PLANTED_KEY.encode() in p.read_bytes()]
    assert leaked == []


@pytest.mark.slow
def test_a_declared_variable_that_is_not_set_is_a_clear_error(tmp_path):
    """A dry run needs no key (a warning names it); a real run stops on it before its first job."""
    env = environment()
    env.pop("OPENAI_API_KEY")
    dry = subprocess.run(command(tmp_path, "-n", configfile=REPO / "tests" / "tiny.yaml"), env=env,
                         capture_output=True, text=True, timeout=600)
    assert dry.returncode == 0 and "OPENAI_API_KEY not set" in dry.stdout + dry.stderr
    real = subprocess.run(command(tmp_path, configfile=REPO / "tests" / "tiny.yaml"), env=env,
                          capture_output=True, text=True, timeout=600)
    assert real.returncode != 0 and "OPENAI_API_KEY" in real.stdout + real.stderr
    assert not (tmp_path / "results").exists()  # stopped before any job


@pytest.mark.parametrize("where", [
    ("answering", "x", "params", "api_key"), ("llm", "OPENAI_API_KEY"), ("retrieval", "p", "planner", "secret"),
])
def test_credentials_in_the_config_are_refused_naming_the_key(where):
    cfg = load_config(REPO / "tests" / "tiny.yaml")
    node = cfg
    for key in where[:-1]:
        node = node.setdefault(key, {})
    node[where[-1]] = "sk-should-never-be-here"
    with pytest.raises(ConfigError, match="config key '" + ".".join(where).replace(".", r"\.") + "'.*environment"):
        validate(cfg)

"""Preflight: a missing key stops the run before any job, in one line naming the variable and the
variants that need it; replay mode and mocked variants are exempt."""
import subprocess

import pytest
import yaml

from dag_runner import command, environment
from pipeline.workflow import llm_work
from pipeline.llm.preflight import preflight
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO, data_root


def tiny(**answering):
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["answering"].update(answering)
    cfg["data_root"] = str(data_root())
    return cfg


HOSTED = {"hosted": {"retrieval": "bm25", "backend": "llm", "model": "openai/gpt-4o-mini", "splits": ["train"]},
          "hosted-r1": {"retrieval": "bm25", "backend": "llm", "model": "openai/gpt-4o-mini", "max_retries": 1,
                        "splits": ["train"]}}


def test_missing_key_is_one_line_naming_the_variable_and_variants(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"^preflight: environment variable OPENAI_API_KEY is not set; needed by "
                                          r"hosted \(openai/gpt-4o-mini\), hosted-r1 \(openai/gpt-4o-mini\)"):
        preflight(llm_work(validate(tiny(**HOSTED))))


def test_key_set_replay_mode_and_mocks_pass(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    preflight(llm_work(validate(tiny())))  # the tiny grid's LLM variants are mocked: nothing leaves the process
    cfg = tiny(**HOSTED)
    cfg["llm"]["mode"] = "replay"
    preflight(llm_work(validate(cfg)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    preflight(llm_work(validate(tiny(**HOSTED))))


@pytest.mark.data  # runs the tiny DAG over ../shared
def test_no_key_stops_the_dag_before_any_job(tmp_path):
    cfg = tiny(**HOSTED)
    cfg["llm"].pop("envvars")
    config = tmp_path / "hosted.yaml"
    config.write_text(yaml.safe_dump(cfg))
    env = {k: v for k, v in environment().items() if k != "OPENAI_API_KEY"}
    work = tmp_path / "run"
    out = subprocess.run(command(work, configfile=config), capture_output=True, text=True, env=env, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert "preflight: environment variable OPENAI_API_KEY is not set; needed by hosted" in text, text[-2000:]
    assert not (work / "results").exists() and not (work / "logs").exists()  # no job started


@pytest.mark.data  # plans the tiny DAG over ../shared
def test_dry_run_needs_no_key_and_says_so(tmp_path):
    """`snakemake -n` previews without any key: preflight and the declared `envvars:` only warn there
    (a real run stops on them in `onstart`, which a dry run skips: the test above)."""
    cfg = tiny(**HOSTED)  # llm.envvars: [OPENAI_API_KEY], and hosted variants that need it
    config = tmp_path / "hosted.yaml"
    config.write_text(yaml.safe_dump(cfg))
    env = {k: v for k, v in environment().items() if k != "OPENAI_API_KEY"}
    out = subprocess.run(command(tmp_path / "run", "-n", configfile=config), capture_output=True, text=True,
                         env=env, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert "warning: preflight: environment variable OPENAI_API_KEY is not set; needed by hosted" in text
    assert "warning: llm.envvars: OPENAI_API_KEY not set (fine for a dry run" in text
    assert "Job stats:" in text

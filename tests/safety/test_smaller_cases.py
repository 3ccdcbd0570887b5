"""Issue 46, case 9 (the smaller ones): split names reached the HTML headline unescaped and the schema allowed
any; `fetch` built a path from a metadata.csv id (``../../x`` wrote two folders up); SQLite caches ignored the
umask policy of pipeline/io.py (0640 under umask 007); the report header and run.json named config files by
absolute path. Plus the other names that become paths: suite datasets a plugin registers."""
from __future__ import annotations

import json
import os
import stat

import pytest
import yaml

from pipeline.config import ConfigError, validate
from pipeline.datasets.fetch import fetch_pdfs
from pipeline.datasets.paths import REPO
from pipeline.report.pages.headline import Headline, headline_html
from test_fetch import pdf_server  # noqa: F401  (a fixture: a PDF served on 127.0.0.1)

SCRIPT = "<script>alert(1)</script>"


def test_a_split_name_is_text_in_the_headline():
    h = Headline("bm25-x", chosen_on=f"train{SCRIPT}", reported_on=f"test{SCRIPT}", score=0.5, lo=0.4, hi=0.6, n=10,
                 ties=(), verdicts=None)
    page = headline_html(h)
    assert SCRIPT not in page and "&lt;script&gt;" in page


@pytest.mark.parametrize("where", ["splits", "solutions"])
def test_a_split_name_that_is_no_name_is_a_config_error(where):
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["wattbot"].setdefault(where, {})[f"x{SCRIPT}"] = "train_QA.csv"
    with pytest.raises(ConfigError, match=f"config key 'wattbot.{where}': "):
        validate(cfg)


def test_a_suite_dataset_registered_under_a_path_is_refused():
    from pipeline.registry.suite_datasets import SuiteDataset

    with pytest.raises(ValueError, match="suite dataset registered by toy: '../x'"):
        SuiteDataset("../x", "toy", "toy")


def test_fetch_writes_no_pdf_outside_its_folder(tmp_path, pdf_server):
    """A metadata.csv id ``../../x`` wrote two folders up; now the metadata is refused where it is read."""
    meta = tmp_path / "metadata.csv"
    meta.write_text(f"id,type,title,year,citation,url\n../../x,paper,T,2024,C,{pdf_server}/paper.pdf\n", encoding="cp1252")
    out = tmp_path / "a" / "b" / "pdfs"
    with pytest.raises(ValueError, match=r"metadata.csv: row 2, field id: document id '\.\./\.\./x' has characters"):
        fetch_pdfs(meta, out, tmp_path / "status.json", timeout_s=5)
    assert [p for p in tmp_path.rglob("*.pdf") if "site" not in p.parts] == []


@pytest.fixture()
def group_umask():
    import pipeline.io

    old = os.umask(0o007)
    pipeline.io._umask.cache_clear()
    yield
    os.umask(old)
    pipeline.io._umask.cache_clear()


def test_sqlite_caches_and_their_wal_and_shm_follow_the_umask_policy(tmp_path, group_umask):
    """Under umask 007 (a group's shared folder) every output is 0660, the caches too, so a colleague of the
    group can write the shared LLM cache; they were 0640."""
    from pipeline.embed.cache import EmbeddingCache
    from pipeline.llm.cache import LLMCache, LLMRequest, LLMResult
    from pipeline.llm.limits import SharedBuckets

    llm = LLMCache(tmp_path / "llm.sqlite")
    llm.put("k", LLMRequest("m", []), LLMResult("x", True))
    SharedBuckets(tmp_path / "llm.limits.sqlite").take("rpm:m", 1, 60)
    EmbeddingCache(tmp_path / "embeddings.sqlite")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert {"llm.sqlite", "llm.sqlite-wal", "llm.sqlite-shm", "embeddings.sqlite", "llm.limits.sqlite"} <= set(files)
    modes = {name: oct(stat.S_IMODE((tmp_path / name).stat().st_mode)) for name in files}
    assert set(modes.values()) == {"0o660"}, modes


def test_a_run_names_its_config_files_relative_to_the_checkout(tmp_path, monkeypatch):
    """The report header and run.json named them by absolute path (``/home/<user>/…`` travelled with a shared
    run): inside the checkout relative to it, inside the run's folder relative to that, else the name alone."""
    from pipeline.report.header import RunHeader
    from pipeline.run_ids import begin_run

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WATTBENCH_RUN_ID", raising=False)
    elsewhere = tmp_path.parent / "private-home" / "mine.yaml"
    (tmp_path / "conf").mkdir()
    begin_run("logs/run.json", [REPO / "config.yaml", tmp_path / "conf" / "extra.yaml", elsewhere], "abc")
    recorded = json.loads((tmp_path / "logs" / "run.json").read_text())["config_files"]
    assert recorded == ["config.yaml", "conf/extra.yaml", "mine.yaml"]
    header = RunHeader.of(tmp_path).html()
    assert str(tmp_path) not in header and str(REPO) not in header and "private-home" not in header


def test_a_split_with_a_dash_plans_and_one_with_a_dot_is_a_config_error(tmp_path):
    """The DAG takes every split the config takes: ``dev-1`` (refused by the old wildcard ``[A-Za-z0-9_]+``)
    plans its retrieval; ``dev.1`` is refused where the config is read, naming the key."""
    from dag_runner import snakemake

    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["wattbot"]["splits"] = {"train": "train_QA.csv", "dev-1": "train_QA.csv"}
    cfg["wattbot"]["solutions"] = {"train": "train_QA.csv"}
    cfg.pop("suite")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))
    target = "results/wattbot/retrieval/bm25/dev-1.jsonl"
    done = snakemake(tmp_path / "work", "-n", target, configfile=config)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert "dev-1" in done.stdout
    cfg["wattbot"]["splits"]["dev.1"] = cfg["wattbot"]["splits"].pop("dev-1")
    with pytest.raises(ConfigError, match="config key 'wattbot.splits': "):
        validate(cfg)

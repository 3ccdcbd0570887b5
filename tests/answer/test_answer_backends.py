"""Adding an answering backend: a toy backend (tests/answer/toy_backend.py) registered in
pipeline/answer_backends.py (the one registration point the built-in ``extractive`` and ``llm`` use)
is accepted by the config, answers the tiny grid's train split through the ``answer`` verb on real
WattBot retrieval, its submission is scored, and (slow test) Snakemake runs it from the tiny grid
(docs/architecture.md, "Adding an answering backend")."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline import answer_backends
from pipeline import workflow as wf
from pipeline.answer_backends import EXTRA_ENV
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO

HERE = Path(__file__).parent


@pytest.fixture
def toy_backend(monkeypatch):
    """The toy registered by its module (named in WATTBENCH_ANSWER_BACKENDS); unregistered afterwards."""
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv(EXTRA_ENV, "toy_backend")
    yield answer_backends.get("top-doc")
    answer_backends.unregister("top-doc")
    sys.modules.pop("toy_backend", None)


def tiny_with(backend: str) -> dict:
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["answering"]["toy"] = {"retrieval": "bm25", "backend": backend}
    return raw


def test_builtin_backends_are_registered():
    assert answer_backends.names() == ["ensemble", "extractive", "llm"]
    assert [answer_backends.get(n).calls_llm for n in ("extractive", "llm")] == [False, True]


def test_an_unregistered_backend_is_a_config_error():
    with pytest.raises(ConfigError, match=r"answering\.toy\.backend"):
        validate(tiny_with("top-doc"))


def test_a_toy_backend_answers_and_is_scored_through_the_cli(toy_backend, three_trees, wattbot_dir, tmp_path):
    from pipeline.cli import main

    cfg = validate(tiny_with("top-doc"))
    assert not answer_backends.get(cfg["answering"]["toy"]["backend"]).calls_llm  # no llm_api slot, no model
    meta, train = tmp_path / "metadata.csv", tmp_path / "train.csv"
    main(["ingest", "--metadata", str(wattbot_dir / "metadata.csv"), "--metadata-out", str(meta),
          "--split", f"train={wattbot_dir / 'train_QA.csv'}", "--out-split", f"train={train}"])
    trees = tmp_path / "trees"
    trees.mkdir()
    for tree in three_trees:
        tree.save(trees / f"{tree.doc_id}.json")
    cache, index = str(tmp_path / "cache"), tmp_path / "index" / "bm25.sqlite"
    main(["index", "--trees", str(trees), "--params", wf.index_params(cfg, "bm25"), "--cache-dir", cache,
          "--out", str(index)])
    run = tmp_path / "bm25.jsonl"
    main(["retrieve", "--index-dir", str(index.parent), "--questions", str(train), "--params",
          wf.retrieval_params(cfg, "bm25"), "--cache-dir", cache, "--out", str(run)])
    answers, csv = tmp_path / "toy.jsonl", tmp_path / "toy.csv"
    main(["answer", "--retrieval", str(run), "--questions", str(train), "--metadata", str(meta), "--params",
          wf.answering_params(cfg, "toy"), "--cache-dir", cache, "--out", str(answers), "--out-csv", str(csv)])

    records = [json.loads(line) for line in answers.read_text().splitlines()]
    hits = {json.loads(line)["id"]: json.loads(line)["hits"] for line in run.read_text().splitlines()}
    assert [r["id"] for r in records] == list(pd.read_csv(train, dtype=str)["id"])
    from toy_backend import top_document

    for r in records:  # the toy's own rule, applied to the real retrieval
        assert r["ref_id"] == [top_document(hits[r["id"]])]
    score = tmp_path / "score.json"
    main(["score", "--solution", str(wattbot_dir / "train_QA.csv"), "--submission", str(csv), "--out", str(score)])
    result = json.loads(score.read_text())
    assert result["n_missing"] == 0
    assert 0 < result["all"]["ref"] < 1  # it cites the right document for some questions, not all


@pytest.mark.slow
def test_a_toy_backend_runs_in_the_dag(tmp_path):
    """Planned and run by Snakemake from the tiny grid plus a toy variant: ingest -> tree -> index ->
    retrieve -> answer, in jobs that load the toy's module through WATTBENCH_ANSWER_BACKENDS."""
    from dag_runner import snakemake_with_module

    out = snakemake_with_module(tmp_path, tiny_with("top-doc"), "results/wattbot/answers/toy/train.jsonl", EXTRA_ENV,
                                "toy_backend", HERE)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records and all(r["answer_value"] == "is_blank" and len(r["ref_id"]) == 1 for r in records)

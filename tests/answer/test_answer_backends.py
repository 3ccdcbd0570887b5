"""Adding an answering backend: a toy backend registered in pipeline/answer_backends.py (the one
registration point the built-in ``extractive`` and ``llm`` use) is accepted by the config, answers
the tiny grid's train split through the ``answer`` verb on real WattBot retrieval, and its
submission is scored (docs/architecture.md, "Adding an answering backend")."""
from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest
import yaml

from pipeline import answer_backends
from pipeline import workflow as wf
from pipeline.answer.record import Answer
from pipeline.answer_backends import AnswerBackend
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO


def cite_top_document(questions: pd.DataFrame, by_id: dict, spec, job) -> list[dict]:
    """The toy: cite the document most of a question's hits come from (first on ties); answer nothing."""
    out = []
    for q in questions.itertuples(index=False):
        docs = Counter(h["doc_id"] for h in by_id[q.id]["hits"])
        top = docs.most_common(1)[0][0] if docs else None
        ans = Answer("is_blank", "is_blank", [top] if top else [], f"most hits from {top}")
        out.append({"id": q.id, "question": q.question, "answer_unit": q.answer_unit, **ans.__dict__})
    return out


@pytest.fixture
def toy_backend():
    yield answer_backends.register(AnswerBackend("top-doc", cite_top_document))
    answer_backends.unregister("top-doc")


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
    for r in records:  # the toy's own rule, applied to the real retrieval
        assert r["ref_id"] == [Counter(h["doc_id"] for h in hits[r["id"]]).most_common(1)[0][0]]
    score = tmp_path / "score.json"
    main(["score", "--solution", str(wattbot_dir / "train_QA.csv"), "--submission", str(csv), "--out", str(score)])
    result = json.loads(score.read_text())
    assert result["n_missing"] == 0
    assert 0 < result["all"]["ref"] < 1  # it cites the right document for some questions, not all

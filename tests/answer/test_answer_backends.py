"""Adding an answering backend: a toy backend (tests/answer/toy_backend.py) registered in its own module (the
way pipeline/answer/extractive.py registers the built-in ``extractive``), a plugin found through its pip-installed
distribution's entry point, is accepted by the config, its declared key is parsed and checked with no other
edit, answers the tiny grid's train split through the ``answer`` verb on real WattBot retrieval, its submission
is scored, and (slow test) Snakemake runs it from the tiny grid (docs/architecture.md, "Adding an answering
backend")."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.workflow import llm_work
from pipeline.llm_models import LLMSpec
from pipeline.registry import answer_backends
from pipeline import workflow as wf
from pipeline.registry.answer_backends import BACKENDS, GROUP, AnswerBackend, LLMCallsSpec
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO, data_root

HERE = Path(__file__).parent
# the toy's distribution: its module, and its pyproject.toml's [project.entry-points."wattbench.answer_backends"]
PLUGIN = ("wattbench-toy-backend", [HERE / "toy_backend.py"], {GROUP: {"top-doc": "toy_backend"}})


@pytest.fixture
def toy_backend(monkeypatch, plugin_site):
    """The toy's distribution, pip-installed into a folder put on sys.path; unregistered afterwards."""
    monkeypatch.syspath_prepend(str(plugin_site(*PLUGIN)))
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


def test_a_toy_backends_declared_key_is_parsed_and_checked(toy_backend):
    """Registration alone: the key its spec declares is in the schema, has its default, and a bad value or
    an unknown key is a ConfigError naming the dotted key."""
    from pipeline.config import full_schema

    assert "explanation" in full_schema()["properties"]["answering"]["additionalProperties"]["properties"]
    cfg = validate(tiny_with("top-doc"))
    assert cfg["answering"]["toy"]["explanation"] == "most hits from"  # its declared default, written in (hashed)
    assert "explanation" not in cfg["answering"]["bm25-x"]  # another backend's variant: not its key
    assert answer_backends.variant_spec("toy", cfg["answering"]["toy"]).explanation == "most hits from"
    raw = tiny_with("top-doc")
    raw["answering"]["toy"]["explanation"] = "cited:"
    assert answer_backends.variant_spec("toy", validate(raw)["answering"]["toy"]).explanation == "cited:"
    for bad in ({"explanation": 3}, {"explanaton": "x"}):
        raw = tiny_with("top-doc")
        raw["answering"]["toy"].update(bad)
        with pytest.raises(ConfigError, match=rf"^config key 'answering\.toy\.{next(iter(bad))}'") as err:
            validate(raw)
        assert err.value.key == f"answering.toy.{next(iter(bad))}"
    with pytest.raises(ConfigError, match=r"^config key 'answering\.toy\.explanation': 3 is not of type string"):
        answer_backends.variant_spec("toy", {"backend": "top-doc", "retrieval": "bm25", "explanation": 3})


def test_a_toy_backend_answers_and_is_scored_through_the_cli(toy_backend, three_trees, wattbot_dir, tmp_path):
    from pipeline.cli import main

    cfg = validate(tiny_with("top-doc"))
    assert not answer_backends.get(cfg["answering"]["toy"]["backend"]).calls_llm  # no llm_api slot, no model
    assert BACKENDS.origin("top-doc") == "wattbench-toy-backend 0.1.0"  # its entry point, not an import of ours
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
def test_a_toy_backend_runs_in_the_dag(tmp_path, plugin_site):
    """Planned and run by Snakemake from the tiny grid plus a toy variant: ingest -> tree -> index ->
    retrieve -> answer, in jobs that find the toy through the installed distribution's entry point (its folder
    on their PYTHONPATH)."""
    from dag_runner import snakemake_with_plugin

    out = snakemake_with_plugin(tmp_path, tiny_with("top-doc"), "results/wattbot/answers/toy/train.jsonl",
                                plugin_site(*PLUGIN))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records and all(r["answer_value"] == "is_blank" and len(r["ref_id"]) == 1 for r in records)


# --- a backend that calls an LLM: its own keys, priced by its own prompts ---

@dataclass(frozen=True, kw_only=True)
class EchoSpec(LLMCallsSpec):
    """The toy's keys: the LLM ones plus its own ``preamble`` (the stock llm backend has no such key)."""

    preamble: str


def echo_prompt_tokens(spec: EchoSpec, model: str, question: str, unit: str, attempt: int) -> int:
    return len(spec.preamble) + 1000 * (attempt + 1)  # nothing like the stock prompts' count


@pytest.fixture
def echo_backend():
    answer_backends.register(AnswerBackend("echo", None, EchoSpec, calls_llm=True,
                                           prompt_tokens=echo_prompt_tokens))
    yield
    answer_backends.unregister("echo")


def with_echo(**keys) -> dict:
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["data_root"] = str(data_root())
    raw["answering"]["echo"] = {"retrieval": "bm25", "backend": "echo", "model": "openai/mock", "splits": ["train"],
                                "max_retries": 2, **keys}
    raw["llm"]["prices"] = {"openai/mock": {"input": 1000, "output": 1000}}
    return raw


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_a_new_llm_backend_is_priced_by_its_own_prompts(echo_backend):
    from pipeline.estimate import estimate
    from pipeline.plan import routes

    cfg = validate(with_echo(preamble="say it twice"))
    est = estimate(llm_work(cfg))
    line = next(x for x in est.lines if x.what == "answer echo")
    n = len(pd.read_csv(Path(cfg["wattbot"]["dir"]) / cfg["wattbot"]["splits"]["train"]))
    per_question = [len("say it twice") + 1000 * (a + 1) for a in range(3)]
    assert line.prompt_tokens == (n * per_question[0], n * sum(per_question))  # the toy's count, every attempt
    assert line.calls == (n, 3 * n) and line.usd is not None and line.usd[0] > 0
    assert any(r.what == "answer echo" and r.model == "openai/mock" for r in routes(LLMSpec.from_dict(cfg["llm"]), est))


def test_a_key_the_backend_does_not_take_is_an_error_naming_it(echo_backend):
    with pytest.raises(ConfigError, match=r"^config key 'answering\.echo\.temprature': not a key of answering\.echo"):
        validate(with_echo(preamble="x", temprature=0.2))
    with pytest.raises(ConfigError, match=r"^config key 'answering\.echo\.preamble': required"):
        validate(with_echo())
    raw = with_echo(preamble="x")
    raw["answering"]["bm25-x"]["samples"] = 3  # an llm key on an extractive variant
    with pytest.raises(ConfigError, match=r"^config key 'answering\.bm25-x\.samples': not a key of answering\.bm25-x"):
        validate(raw)

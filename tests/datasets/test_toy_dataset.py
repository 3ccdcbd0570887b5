"""Adding a retrieval-suite dataset: a toy dataset (tests/datasets/toy_suite.py, data written here in tmp_path),
a plugin registered in pipeline/registry/suite_datasets.py, the registry the real datasets use, and found through
its pip-installed distribution's entry point, is validated in a config and run through the stage verbs a suite
dataset's DAG branch runs: suite-export -> index -> retrieve -> suite-evaluate, and (slow test) by Snakemake from
a config that lists it (docs/architecture.md, "Adding a dataset")."""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.registry import suite_datasets
from pipeline import workflow as wf
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.registry.suite_datasets import GROUP, SUITE_DATASETS, SuiteDataset

HERE = Path(__file__).parent
# the toy's distribution: its module, and its pyproject.toml's [project.entry-points."wattbench.suite_datasets"]
PLUGIN = ("wattbench-toy-suite", [HERE / "toy_suite.py"], {GROUP: {"toy": "toy_suite"}})
DOCS = [
    {"id": "bees", "title": "Bees", "text": "Honey bees dance to show the hive where flowers are. "
     "A colony keeps one queen.\n\nWorker bees live about six weeks in summer."},
    {"id": "tides", "title": "Tides", "text": "Tides follow the pull of the moon. "
     "Spring tides come when sun and moon align.\n\nNeap tides are the weakest tides of the month."},
    {"id": "ferns", "title": "Ferns", "text": "Ferns reproduce by spores instead of seeds. "
     "Their young leaves unroll from tight fiddleheads."},
]
QUESTIONS = [
    {"id": "q1", "question": "How long do worker bees live in summer?", "doc": "bees",
     "evidence": "Worker bees live about six weeks in summer."},
    {"id": "q2", "question": "When do spring tides come?", "doc": "tides",
     "evidence": "Spring tides come when sun and moon align."},
    {"id": "q3", "question": "How do ferns reproduce without seeds?", "doc": "ferns",
     "evidence": "Ferns reproduce by spores instead of seeds."},
]


def write_toy_data(root: Path) -> Path:
    """The toy's documents and questions under ``root/toy`` (``root``: the config's suite.root)."""
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "toy.json").write_text(json.dumps({"docs": DOCS, "questions": QUESTIONS}))
    return root


@pytest.fixture
def toy_dataset(monkeypatch, tmp_path, plugin_site):
    """The toy's distribution, pip-installed into a folder put on sys.path, its data under
    tmp_path/retrieval/toy; unregistered afterwards."""
    monkeypatch.syspath_prepend(str(plugin_site(*PLUGIN)))
    write_toy_data(tmp_path / "retrieval")
    yield suite_datasets.get("toy")
    suite_datasets.unregister("toy")
    sys.modules.pop("toy_suite", None)


def tiny_with_toy(root: Path) -> dict:
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["suite"] = {"root": str(root), "datasets": {"toy": {}}, "retrieval": ["bm25"], "ks": [1, 3]}
    return raw


def test_an_unregistered_dataset_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"suite\.datasets\.toy': not a key of suite\.datasets"):
        validate(tiny_with_toy(tmp_path))


def run_branch(cfg: dict, tmp_path: Path, scores: Path, per_query: Path) -> tuple[Path, Path]:
    """The toy through the stage verbs a suite dataset's DAG branch runs: suite-export -> index (BM25) ->
    retrieve -> suite-evaluate at ks 1 and 3, into ``scores`` and ``per_query``; the export folder and the run."""
    from pipeline.cli import main

    export, cache = tmp_path / "export", str(tmp_path / "cache")
    main(["suite-export", "--params", wf.suite_export_params(cfg, "toy"), "--out-dir", str(export)])
    index = tmp_path / "index" / "bm25.sqlite"
    main(["index", "--trees", str(export / "trees"), "--params", wf.index_params(cfg, "bm25"), "--cache-dir", cache,
          "--out", str(index)])
    run = tmp_path / "bm25.jsonl"
    main(["retrieve", "--index-dir", str(index.parent), "--questions", str(export / "queries.csv"), "--params",
          wf.retrieval_params(cfg, "bm25"), "--cache-dir", cache, "--out", str(run)])
    main(["suite-evaluate", "--retrieval", str(run), "--gold", str(export / "gold.jsonl"), "--ks", "1", "3",
          "--out", str(scores), "--per-query", str(per_query)])
    return export, run


def test_a_toy_dataset_runs_export_index_retrieve_and_scoring(toy_dataset, tmp_path):
    cfg = validate(tiny_with_toy(tmp_path / "retrieval"))
    assert wf.suite_datasets(cfg) == ["toy"] and "toy" in suite_datasets.names()
    assert SUITE_DATASETS.origin("toy") == "wattbench-toy-suite 0.1.0"  # its entry point, not an import of ours
    scores, per_query = tmp_path / "scores.json", tmp_path / "per_query.csv"
    export, run = run_branch(cfg, tmp_path, scores, per_query)
    gold = [json.loads(line) for line in (export / "gold.jsonl").read_text().splitlines()]
    assert sorted(g["query_id"] for g in gold) == ["q1", "q2", "q3"]
    assert sorted(p.name for p in (export / "trees").iterdir()) == ["toy-bees.json", "toy-ferns.json", "toy-tides.json"]
    summary = json.loads(scores.read_text())["summary"]
    # each question shares its distinctive words with its evidence sentence only, so BM25 ranks the
    # gold sentence first: the scores see the projected gold spans of the toy's own documents
    top = {json.loads(line)["id"]: json.loads(line)["hits"][0] for line in run.read_text().splitlines()}
    assert {q: h["doc_id"] for q, h in top.items()} == {"q1": "toy-bees", "q2": "toy-tides", "q3": "toy-ferns"}
    assert summary["queries"] == 3 and summary["hit@1"] == 1.0 and summary["recall@1"] == 1.0
    assert summary["precision@3"] < 1.0  # two of the three hits at k=3 are not gold


def test_a_training_group_makes_it_a_sprout_training_set(toy_dataset, tmp_path):
    raw = copy.deepcopy(tiny_with_toy(tmp_path))
    raw["sprout"] = {"train": {"datasets": {"toy": {}}}}
    with pytest.raises(ConfigError, match=r"sprout\.train\.datasets"):
        validate(raw)  # no train_group: not offered for head training
    suite_datasets.unregister("toy")
    suite_datasets.register(SuiteDataset("toy", loader="toy_suite", folder="toy", train_group="query"))
    assert validate(raw)["sprout"]["train"]["datasets"] == {"toy": {}}


@pytest.mark.slow
def test_a_toy_dataset_runs_in_the_dag(tmp_path, plugin_site):
    """Planned and run by Snakemake from a config listing the toy: suite_export -> index -> retrieve ->
    suite_evaluate, in jobs that find the toy through the installed distribution's entry point (its folder on
    their PYTHONPATH)."""
    from dag_runner import snakemake_with_plugin

    out = snakemake_with_plugin(tmp_path, tiny_with_toy(write_toy_data(tmp_path / "retrieval")),
                                "results/toy/scores/bm25.json", plugin_site(*PLUGIN))
    summary = json.loads(out.read_text())["summary"]
    assert summary["queries"] == 3 and summary["hit@1"] == 1.0

"""The registry of index kinds: a toy kind (tests/index/toy_lead_kind.py, a plugin: a distribution declaring it
in group wattbench.index_kinds, pip-installed) is configured, validated, planned, built and searched through the
same entry points as the built-in kinds (config.validate, workflow params/inputs, the ``index`` and ``retrieve``
verbs, and in the slow test the Snakemake DAG, whose jobs find it in the installed metadata)."""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline import workflow as wf
from pipeline.config import ConfigError, validate
from pipeline.config.slices import PARAMS_VERSION
from pipeline.datasets.paths import REPO
from pipeline.registry.index_kinds import GROUP, KINDS, get_kind, kind_names, unregister

HERE = Path(__file__).parent
# the toy's distribution: its module, and its pyproject.toml's [project.entry-points."wattbench.index_kinds"]
PLUGIN = ("wattbench-toy-lead", [HERE / "toy_lead_kind.py"], {GROUP: {"lead": "toy_lead_kind"}})


@pytest.fixture
def toy_kind(monkeypatch, plugin_site):
    """The toy's distribution, pip-installed into a folder put on sys.path; unregistered afterwards."""
    monkeypatch.syspath_prepend(str(plugin_site(*PLUGIN)))
    yield get_kind("lead")
    unregister("lead")  # other tests see the built-in kinds only
    sys.modules.pop("toy_lead_kind", None)


def tiny_with_lead() -> dict:
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["indexes"]["lead"] = {"kind": "lead"}
    raw["retrieval"]["lead"] = {"index": "lead", "top_k": 5}
    return raw


def test_builtin_kinds_are_registered():
    assert set(kind_names()) == {"tree", "chunks", "bm25", "sprout"}
    assert get_kind("bm25").source == "bm25" and not get_kind("bm25").embeds and get_kind("tree").embeds
    with pytest.raises(KeyError, match="unknown index kind 'nope'"):
        get_kind("nope")


def test_a_toy_kind_is_found_by_its_entry_point(toy_kind):
    assert KINDS.origin("lead") == "wattbench-toy-lead 0.1.0" and "lead" in kind_names()
    assert toy_kind.source == "lead" and KINDS.origin("bm25") == "built-in"


@pytest.mark.data  # tree_files lists tiny.yaml's documents from the real metadata
def test_a_toy_kind_is_configured_by_its_module(toy_kind):
    cfg = validate(tiny_with_lead())
    assert cfg["retrieval"]["lead"]["levels"] == ["sentence"] and cfg["retrieval"]["lead"]["expand"] == "none"
    assert json.loads(wf.index_params(cfg, "lead")) == {"index": {"kind": "lead"}, "name": "lead",
                                                        "params_version": PARAMS_VERSION}  # no encoder
    assert wf.index_inputs(cfg, "wattbot", "lead") == wf.tree_files(cfg, "wattbot")
    assert wf.index_extra_args(cfg, "wattbot", "lead") == ""
    assert json.loads(wf.retrieval_params(cfg, "lead"))["embedding"] is None
    for edit, key in [(lambda r: r["retrieval"]["lead"].update(levels=["paragraph"]), "retrieval.lead.levels"),
                      (lambda r: r["retrieval"]["lead"].update(expand="paragraph"), "retrieval.lead.expand"),
                      (lambda r: r["retrieval"]["lead"].update(beam_width=3), "retrieval.lead.beam_width"),
                      (lambda r: r["indexes"]["lead"].update(heads="uniform"), "indexes.lead.heads"),
                      (lambda r: r["indexes"]["lead"].update(kind="nope"), "indexes.lead.kind")]:
        raw = copy.deepcopy(tiny_with_lead())
        edit(raw)
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            validate(raw)


def test_a_toy_kind_builds_and_searches_through_the_cli(toy_kind, three_trees, tmp_path):
    from pipeline.cli import main

    cfg = validate(tiny_with_lead())
    trees = tmp_path / "trees"
    trees.mkdir()
    for tree in three_trees:
        tree.save(trees / f"{tree.doc_id}.json")
    index = tmp_path / "index" / "lead.sqlite"
    main(["index", "--trees", str(trees), "--params", wf.index_params(cfg, "lead"), "--cache-dir",
          str(tmp_path / "cache"), "--out", str(index)])
    first = {t.doc_id: list(t.at_level("sentence"))[0] for t in three_trees}
    questions = tmp_path / "q.csv"
    pd.DataFrame({"id": list(first), "question": [n.text for n in first.values()]}).to_csv(questions, index=False)
    out = tmp_path / "lead.jsonl"
    main(["retrieve", "--index-dir", str(index.parent), "--questions", str(questions), "--params",
          wf.retrieval_params(cfg, "lead"), "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == list(first)
    for row in rows:  # a document's first sentence, asked back, is found first, from the lead index
        top = row["hits"][0]
        assert top["node_id"] == first[row["id"]].id and top["source"] == "lead" and top["level"] == "sentence"
        assert len(row["hits"]) <= 5 and all(h["node_id"].startswith(h["doc_id"]) for h in row["hits"])
        assert {c["node_id"] for c in row["context"]} == {h["node_id"] for h in row["hits"]}  # no parents


@pytest.mark.slow
def test_a_toy_kind_runs_in_the_dag(tmp_path, plugin_site):
    """Planned and run by Snakemake from a config naming the toy kind: parse -> index -> retrieve, in jobs that
    find the kind through the installed distribution's entry point (its folder on their PYTHONPATH)."""
    from dag_runner import snakemake_with_plugin

    out = snakemake_with_plugin(tmp_path, tiny_with_lead(), "results/wattbot/retrieval/lead/train.jsonl",
                                plugin_site(*PLUGIN))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(h["source"] == "lead" for r in rows for h in r["hits"])
    assert any(r["hits"] for r in rows)

"""One plugin mechanism for every registry (pipeline/registry/base.py; docs/architecture.md, "Plugins"): entry
points of installed distributions, one group per registry. A toy plugin package holding an index kind, an
answering backend and a suite dataset (the toys of tests/index/, tests/answer/ and tests/datasets/), built and
installed by pip, is found by the CLI in a fresh process and, installed in a venv, by Snakemake's jobs on a
cluster (SLURM's commands stood in by tests/cluster_standin/) with nothing in their environment; the old
``WATTBENCH_*`` variables, a plugin that registers another name and one that takes a built-in's are errors
that say what to do."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.datasets.paths import REPO
from pipeline.registry import answer_backends, index_kinds, metrics, suite_datasets
from pipeline.registry.base import PluginError, pluggable

TESTS = REPO / "tests"
TOYS = ("wattbench-toys", [TESTS / "index" / "toy_lead_kind.py", TESTS / "answer" / "toy_backend.py",
                           TESTS / "datasets" / "toy_suite.py", TESTS / "score" / "toy_metric.py"],
        {index_kinds.GROUP: {"lead": "toy_lead_kind"}, answer_backends.GROUP: {"top-doc": "toy_backend"},
         suite_datasets.GROUP: {"toy": "toy_suite"}, metrics.GROUP: {"gold_units": "toy_metric"}})
# a distribution declared wrong: a built-in's name, and an entry point whose module registers another name
BROKEN = ("wattbench-broken", [TESTS / "index" / "toy_lead_kind.py"],
          {index_kinds.GROUP: {"bm25": "toy_lead_kind"}, answer_backends.GROUP: {"nope": "toy_lead_kind"}})


def groups_in_code() -> set[str]:
    """Every entry-point group named in pipeline/: a registry's second argument, or a ``GROUP`` constant."""
    found = set()
    for path in (REPO / "pipeline").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r'(?:GROUP\s*=\s*|Registry\(\s*"[^"]*",\s*)"(wattbench\.[a-z_]+)"', text))
    return found


def test_every_registry_has_its_own_group_listed_by_the_cli_and_the_docs(capsys):
    from pipeline.cli import main

    assert main(["plugins"]) == 0
    listed = set(re.findall(r"^\S.* \((wattbench\.[a-z_]+), \d+\):$", capsys.readouterr().out, re.M))
    groups = [r.group for r in pluggable()]
    assert len(groups) == len(set(groups)) and listed == set(groups) == groups_in_code()
    docs = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert {g for g in listed if f"`{g}`" not in docs} == set()  # the registries' table names each group


def test_one_plugin_package_is_found_by_the_cli(plugin_site, tmp_path):
    """A fresh CLI process with the toys' distribution on its path (as installed in a venv) lists each toy with
    its distribution, and validates a config that names all three."""
    env = {**os.environ, "PYTHONPATH": str(plugin_site(*TOYS))}
    done = subprocess.run([sys.executable, "-m", "pipeline", "plugins"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    for name in ("lead", "top-doc", "toy", "gold_units"):
        assert re.search(rf"^  {re.escape(name)}\s+wattbench-toys 0\.1\.0$", done.stdout, re.M), done.stdout
    assert re.search(r"^  bm25\s+built-in$", done.stdout, re.M)
    config = tmp_path / "toys.yaml"
    config.write_text(yaml.safe_dump(with_toys(tmp_path / "retrieval")))
    done = subprocess.run([sys.executable, "-m", "pipeline", "config", "--config", str(config)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kind: lead" in done.stdout and "backend: top-doc" in done.stdout
    without = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # not installed: an unknown name, a config error
    done = subprocess.run([sys.executable, "-m", "pipeline", "config", "--config", str(config)],
                          capture_output=True, text=True, env=without)
    assert done.returncode == 2 and re.match(r"error: config key '(indexes\.lead\.kind|answering\.toy\.backend|"
                                             r"benchmarks\.datasets\S*)': ", done.stderr), done.stderr


def test_an_old_plugin_variable_is_an_error_saying_what_to_declare(monkeypatch, capsys):
    from pipeline.cli import main

    monkeypatch.setenv("WATTBENCH_INDEX_KINDS", "toy_lead_kind")
    assert main(["plugins"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: WATTBENCH_INDEX_KINDS is no longer read (#47)") and len(err.splitlines()) == 1
    assert '[project.entry-points."wattbench.index_kinds"] (<name> = "toy_lead_kind"' in err


def test_a_registry_names_an_entry_point_group_not_a_variable():
    from pipeline.registry.base import Registry

    with pytest.raises(ValueError, match=r"metric: 'WATTBENCH_METRICS' is no entry-point group; .*'wattbench\.<name>'"):
        Registry("metric", "WATTBENCH_METRICS")


def test_a_plugin_declared_wrong_is_an_error_naming_its_distribution(monkeypatch, plugin_site):
    monkeypatch.syspath_prepend(str(plugin_site(*BROKEN)))
    try:
        with pytest.raises(PluginError, match=r"^wattbench-broken 0\.1\.0 declares index kind 'bm25' "
                                              r"\(wattbench\.index_kinds\), a built-in's name"):
            index_kinds.get_kind("bm25")
        with pytest.raises(PluginError, match=r"^wattbench-broken 0\.1\.0: wattbench\.answer_backends entry point "
                                              r"nope = toy_lead_kind registered no answering backend 'nope'"):
            answer_backends.names()
    finally:
        index_kinds.unregister("lead")  # what importing the module registered
        sys.modules.pop("toy_lead_kind", None)


def with_toys(suite_root: Path) -> dict:
    """The tiny grid plus the toys: the lead kind's index and variant, a top-doc answering variant, the toy
    dataset as the suite's one dataset (its data under ``suite_root``: tests/datasets/test_toy_dataset.py)."""
    raw = yaml.safe_load((TESTS / "tiny.yaml").read_text())
    raw["indexes"]["lead"] = {"kind": "lead"}
    raw["retrieval"]["lead"] = {"index": "lead", "top_k": 5}
    raw["answering"]["toy"] = {"retrieval": "bm25", "backend": "top-doc"}
    raw["suite"] = {"root": str(suite_root), "datasets": {"toy": {}}, "retrieval": ["bm25"], "ks": [1, 3]}
    return raw


@pytest.mark.slow
def test_a_plugin_installed_in_the_venv_reaches_cluster_jobs(tmp_path, monkeypatch):
    """The toys' distribution pip-installed into a venv (tests/plugin_dist.py venv_with); Snakemake, run by that
    venv's Python through profiles/slurm, submits each job with sbatch and runs it with srun (stand-ins); no
    PYTHONPATH and no WATTBENCH_* variable: the jobs find the toys in the venv's installed metadata alone."""
    from dag_runner import snakemake
    from plugin_dist import venv_with

    monkeypatch.syspath_prepend(str(TESTS / "datasets"))  # the toy dataset's data, written by its own test
    from test_toy_dataset import write_toy_data

    python = venv_with(tmp_path / "plugin", *TOYS)
    config = tmp_path / "toys.yaml"
    config.write_text(yaml.safe_dump(with_toys(write_toy_data(tmp_path / "retrieval"))))
    targets = ["results/wattbot/retrieval/lead/train.jsonl", "results/wattbot/answers/toy/train.jsonl",
               "results/toy/scores/bm25.json"]
    work, state = tmp_path / "work", tmp_path / "state"
    env = {"PATH": f"{TESTS / 'cluster_standin'}:{os.environ['PATH']}", "STANDIN_STATE": str(state), "PYTHONPATH": ""}
    assert not any(k.startswith("WATTBENCH_") for k in os.environ if k != "WATTBENCH_DATA")
    done = snakemake(work, "--workflow-profile", str(REPO / "profiles" / "slurm"), *targets, configfile=config,
                     env=env, python=str(python))
    assert done.returncode == 0, done.stderr[-3000:]
    submitted = (state / "submissions.log").read_text().splitlines()
    jobs = {re.search(r"--comment '?(rule_\S+?)'? ", s).group(1) for s in submitted}
    assert {"rule_index_wildcards_wattbot_lead", "rule_answer_wildcards_wattbot_toy_train",
            "rule_suite_export_wildcards_toy", "rule_suite_evaluate_wildcards_toy_bm25"} <= jobs, jobs
    assert all(f"--wrap={python} -m snakemake " in s for s in submitted)  # each job runs the venv's Python
    lead = [json.loads(line) for line in (work / targets[0]).read_text().splitlines()]
    assert lead and all(h["source"] == "lead" for r in lead for h in r["hits"]) and any(r["hits"] for r in lead)
    answers = [json.loads(line) for line in (work / targets[1]).read_text().splitlines()]
    assert answers and all(r["answer_value"] == "is_blank" and len(r["ref_id"]) == 1 for r in answers)
    assert json.loads((work / targets[2]).read_text())["summary"]["hit@1"] == 1.0

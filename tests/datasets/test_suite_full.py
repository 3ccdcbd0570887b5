"""config.suite-full.yaml (#45 item 1) on the shipped data: every query each loader keeps at full size, less the
pilot's (config.pilot.yaml), DragonBall in English only, and no LLM anywhere in the grid. The counts are
computed from ../shared (the raw files where a loader's rule is simple to restate), not typed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import pipeline.register_builtins  # noqa: F401 - the registries' built-in entries, as the CLI loads them
from pipeline.config import load_config, retrieval_root
from pipeline.datasets.suite import dataset_root, load_suite_tables, suite_sizes

pytestmark = pytest.mark.data  # the benchmarks as shipped in ../shared/data/retrieval

REPO = Path(__file__).resolve().parents[2]
CFG = load_config([str(REPO / "config.suite-full.yaml")])
PILOT = yaml.safe_load((REPO / "config.pilot.yaml").read_text())["suite"]["datasets"]
ROOT = retrieval_root(CFG)
DATASETS = sorted(CFG["suite"]["datasets"])


def ids(name: str, subset: dict) -> set[str]:
    return set(load_suite_tables(name, dataset_root(ROOT, name), subset).queries["id"])


@pytest.mark.parametrize("name", DATASETS)
def test_every_query_the_loader_keeps_less_the_pilots(name):
    subset = CFG["suite"]["datasets"][name]
    assert subset["full"] and subset["exclude_pilot"] == PILOT[name]  # the pilot's own entry, not a copy that drifts
    full = ids(name, {k: v for k, v in subset.items() if k != "exclude_pilot"})
    pilot = ids(name, PILOT[name])
    scored = ids(name, subset)
    assert pilot and pilot <= full and scored == full - pilot
    sizes = suite_sizes(name, dataset_root(ROOT, name), subset)
    assert (sizes["queries"], sizes["pilot_queries_left_out"]) == (len(full) - len(pilot), len(pilot))


def test_msmarco_is_every_judged_trec_dl_query_over_every_passage():
    root = dataset_root(ROOT, "msmarco")
    judged = set()
    for track in ("qrels.dl19-passage.txt", "qrels.dl20-passage.txt"):
        judged |= {line.split()[0] for line in (root / track).read_text().splitlines() if int(line.split()[3]) >= 1}
    passages = sum(1 for line in (root / "passages.jsonl").read_text().splitlines() if line.strip())
    full = load_suite_tables("msmarco", root, {"full": True})
    assert set(full.queries["id"]) == judged and len(full.docs) == passages


def test_dragonball_is_english_only():
    root = dataset_root(ROOT, "dragonball")
    raw = [json.loads(line) for line in (root / "dragonball_queries_subset.jsonl").read_text().splitlines()]
    english = [q for q in raw if q["language"] == "en"]
    kept = {f"en-{q['query']['query_id']}" for q in english  # a gold span, every gold document released
            if any(q.get("reference_char_spans") or []) and not q.get("missing_doc_ids")}
    full = load_suite_tables("dragonball", root, {**CFG["suite"]["datasets"]["dragonball"], "exclude_pilot": None})
    assert set(full.queries["id"]) == kept and len(kept) < len(english)  # no gold: unanswerable by design
    assert set(full.queries["language"]) == {"en"} and set(full.docs["language"]) == {"en"}
    both = load_suite_tables("dragonball", root, {"full": True})
    assert set(both.queries["language"]) == {"en", "zh"}  # what `full: true` alone would score


def test_legalbench_is_every_kept_cuad_query_over_the_contracts_they_cite():
    root = dataset_root(ROOT, "legalbench_rag")
    tests = json.loads((root / "benchmarks" / "cuad.json").read_text())["tests"]
    full = load_suite_tables("legalbench_rag", root, {**CFG["suite"]["datasets"]["legalbench_rag"], "exclude_pilot": None})
    assert 0 < len(tests) - len(full.queries) < len(tests) // 50  # the loader's filter drops few
    assert set(full.docs["doc_id"]) == set(full.gold["doc_id"])  # the contracts the kept queries cite


def test_hotpotqa_is_every_question_with_its_gold_in_context():
    root = dataset_root(ROOT, "hotpotqa")
    rows = [json.loads(line) for line in (root / "hotpotqa_subset.jsonl").read_text().splitlines() if line.strip()]
    full = load_suite_tables("hotpotqa", root, {"full": True})
    assert 0 < len(full.queries) < len(rows) and len(set(full.gold["query_id"])) == len(full.queries)


def test_the_grid_runs_no_llm():
    answering = CFG["answering"]
    assert answering and all(a["backend"] != "llm" for a in answering.values())
    assert all(answering[m]["backend"] != "llm" for a in answering.values() for m in a.get("members", []))
    assert all((r.get("planner") or {}).get("kind") != "llm" for r in CFG["retrieval"].values())
    assert CFG["sprout"]["train"]["folds"] >= 2  # every scored query of the training datasets: cross-fitted heads
    with open(REPO / "config.yaml", encoding="utf-8") as fh:
        assert CFG["suite"]["retrieval"] == yaml.safe_load(fh)["suite"]["retrieval"]  # every variant of the suite

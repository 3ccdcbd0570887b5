"""Which of a run's scores are kept under runs/<id>/ (pipeline/kept_runs/store.py), read off its config.

Per dataset and split the run scored: WattBot's score split (gold: its labelled question file) and every
other labelled split (``wattbot.solutions``: test; gold: its solutions file), each labelled corpus's
questions (gold: the ingested solutions), each retrieval-suite dataset's queries (gold: the exported gold
spans); each with its per-question score files. Only the files there are kept: a run of a few targets keeps
what it made. The encoders are read off the index manifests of the datasets it scored (what built the
indexes its retrieval searched).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pipeline import paths
from pipeline.config import suite_present, wattbot_present
from pipeline.kept_runs.store import RUNS, ScoredSet, keep_run, wattbot_profile
from pipeline.provenance import manifest_path
from pipeline.registry import metrics
from pipeline.registry.metrics import Pick
from pipeline.run_ids import ENV, read_state
from pipeline.workflow.answering import split_variants
from pipeline.workflow.corpora import corpus_names, corpus_report_inputs
from pipeline.workflow.reports import report_inputs
from pipeline.workflow.suite import suite_datasets, suite_ks, suite_variants
from pipeline.workflow.wattbot import extra_labelled_splits, labels_source, split_source


def _picked(cfg: dict) -> Pick:
    return Pick.of((cfg.get("report") or {}).get("metrics"))


def _answered(cfg: dict, dataset: str, split: str, gold: str, per_question: dict[str, str]) -> ScoredSet:
    kept = tuple(metrics.columns(metrics.KEPT, [metrics.ANSWERS], pick=_picked(cfg)))
    return ScoredSet(dataset, split, gold, wattbot_profile(), kept, "id", per_question)


def _suite(cfg: dict, dataset: str) -> ScoredSet:
    ks = suite_ks(cfg)
    scores = {rv: paths.suite_per_query(dataset, rv) for rv in suite_variants(cfg)}
    profile = {"name": "retrieval-suite", "ks": list(ks)}
    kept = tuple(metrics.columns(metrics.KEPT, [metrics.SUITE], ks, _picked(cfg)))
    return ScoredSet(dataset, "queries", paths.export_gold(dataset), profile, kept, "query_id", scores)


def scored_sets(cfg: dict) -> list[ScoredSet]:
    """The run's scored datasets and splits, each with the per-question files that exist (sets without
    their gold file or any score file are left out)."""
    sets = []
    if wattbot_present(cfg) and cfg.get("answering"):
        split = cfg["wattbot"]["score_split"]
        sets.append(_answered(cfg, paths.WATTBOT, split, split_source(cfg, split), report_inputs(cfg)["per_question"]))
        for other in extra_labelled_splits(cfg):  # test: the split the claims and the headline read
            per_question = {av: paths.split_per_question(other, av) for av in split_variants(cfg, other)}
            sets.append(_answered(cfg, paths.WATTBOT, other, labels_source(cfg, other), per_question))
    for name in corpus_names(cfg, labelled=True):
        gold = paths.corpus_ingest(name, "solutions")
        sets.append(_answered(cfg, name, paths.CORPUS_SPLIT, gold, corpus_report_inputs(cfg, name)["per_question"]))
    if suite_present(cfg):
        sets += [_suite(cfg, d) for d in suite_datasets(cfg)]
    out = []
    for s in sets:
        there = {v: p for v, p in s.scores.items() if Path(p).is_file()}
        if there and Path(s.gold).is_file():
            out.append(ScoredSet(s.dataset, s.split, s.gold, s.profile, s.metrics, s.id_column, there))
    return out


def index_encoders(cfg: dict, sets: list[ScoredSet]) -> dict[str, str]:
    """ "<dataset>/<index>" -> the encoder cache key the index's manifest records (``model_id``: e.g.
    ``all-MiniLM-L6-v2/onnx-qint8-b1-<sha>`` or ``…/onnx-fp32-<sha>``, the file ``precision: auto`` chose
    on this CPU), for each configured index of each scored dataset that was built with one (not BM25)."""
    out = {}
    for dataset in dict.fromkeys(s.dataset for s in sets):
        for name in cfg.get("indexes") or {}:
            m = manifest_path(paths.index(dataset, name))
            model_id = json.loads(m.read_text()).get("model_id") if m.is_file() else None
            if model_id and model_id != "bm25":
                out[f"{dataset}/{name}"] = str(model_id)
    return out


def keep_this_run(cfg: dict, reports_dir: str = paths.reports.root, this_process: bool = False) -> Path | None:
    """Keep the run of logs/run.json; its folder, or None when there is none. ``this_process`` (``onsuccess``):
    only when it is the run this process began (``WATTBENCH_RUN_ID``), so ``--touch``, which begins no
    run, keeps no earlier run's folder again."""
    state = read_state()
    if state is None or (this_process and os.environ.get(ENV) != state.id):
        return None
    sets = scored_sets(cfg)
    return keep_run(state, reports_dir, sets, RUNS, index_encoders(cfg, sets))

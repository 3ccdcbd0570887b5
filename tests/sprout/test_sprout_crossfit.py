"""Cross-fitted SproutRAG heads end to end on a real HotpotQA slice (#45 item 2): the folds split the scored
documents, no query is scored with heads trained on it or on its documents, and the verbs the DAG runs
(sprout-train-fold, index, retrieve-crossfit, suite-evaluate) train, build, retrieve and score."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from pipeline.cli import main
from pipeline.index_structures.store import IndexReader
from pipeline.datasets.paths import data_root
from pipeline.io import read_csv_columns, read_jsonl
from pipeline.parse.suite_export import export_dataset
from pipeline.retrieve.run import RetrieveJob, retrieve
from pipeline.retrieve.crossfit import fold_jobs, fold_questions
from pipeline.specs import AttentionSpec, TrainSpec
from pipeline.sprout.folds import export_folds, kept_examples
from pipeline.sprout.stage import compute_attention
from pipeline.sprout.train import TrainPairsJob, load_pairs, prepare_pairs

pytestmark = [pytest.mark.data, pytest.mark.slow]  # exports a HotpotQA slice, runs the encoder (~2 min)

K = 3
SUBSET = {"n_questions": 30, "seed": 0}  # scored, and the heads' training subset: every example is scored
TRAIN = {"datasets": {"hotpotqa": SUBSET}, "max_pairs_per_query": 8, "lambda": 0.1, "temperature": 0.05,
         "lr": 0.05, "epochs": 5, "batch_size": 4, "seed": 0, "folds": K}
INDEX = {"kind": "sprout", "heads": "trained"}
RETRIEVAL = {"name": "sprout", "embedding": None, "indexes": {"sprout": INDEX},
             "retrieval": {"index": "sprout", "top_k": 5, "beam_width": 3, "per_document_top_k": 3,
                           "threshold": 0.0, "levels": ["chunk"], "expand": "none"}}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """What the DAG's cross-fitted jobs write for one dataset, fold by fold."""
    root = tmp_path_factory.mktemp("crossfit")
    export = root / "export"
    export_dataset("hotpotqa", str(data_root() / "retrieval"), SUBSET, export)
    train = TrainSpec.from_dict(TRAIN)
    pairs = root / "pairs.safetensors"
    prepare_pairs(TrainPairsJob(train, AttentionSpec.from_dict({}), str(data_root() / "retrieval"), {},
                                str(root / "work"), str(pairs)), progress=False)
    trees = sorted(str(p) for p in (export / "trees").glob("*.json"))
    attention = root / "attention.safetensors"
    compute_attention(trees, AttentionSpec.from_dict({}), str(attention), progress=False)
    params = json.dumps({"train": train.as_dict()})
    fold_index = []
    for f in range(K):
        main(["sprout-train-fold", "--pairs", str(pairs), "--params", params, "--dataset", "hotpotqa",
              "--export-dir", str(export), "--fold", str(f), "--out", str(root / f"fold{f}.json")])
        fold_index.append(root / "index" / f"fold{f}" / "sprout.sqlite")
        main(["index", "--trees", str(export / "trees"), "--params", json.dumps({"index": INDEX}),
              "--cache-dir", str(root / "cache"), "--out", str(fold_index[f]),
              "--input", f"sprout_attention={attention}", "--input", f"head_weights={root / f'fold{f}.json'}"])
    out = root / "retrieval.jsonl"
    main(["retrieve-crossfit", "--index-dir", str(root / "index"), "--questions", str(export / "queries.csv"),
          "--params", json.dumps(RETRIEVAL), "--cache-dir", str(root / "cache"), "--export-dir", str(export),
          "--folds", str(K), *[a for p in fold_index for a in ("--fold-index", f"sprout={p}")], "--out", str(out)])
    return root, export, pairs, fold_index, out


def test_folds_split_the_scored_documents(run):
    _, export, _, _, _ = run
    folds = export_folds(export, K)
    docs = [set(folds.docs(f)) for f in range(K)]
    assert all(docs) and sum(map(len, docs)) == len(set().union(*docs)) == len(list((export / "trees").glob("*.json")))
    queries = read_csv_columns(export / "queries.csv")["id"]
    assert sorted(folds.query_fold) == sorted(queries)
    for g in read_jsonl(export / "gold.jsonl"):
        assert g["doc_id"] in docs[folds.query_fold[g["query_id"]]]


def test_no_query_is_scored_by_heads_trained_on_it_or_its_documents(run):
    root, export, pairs, _, _ = run
    meta, _ = load_pairs(pairs)
    ids = meta["example_ids"]
    assert {q for _, q, _ in ids} & set(read_csv_columns(export / "queries.csv")["id"])  # training overlaps the scored
    folds = export_folds(export, K)
    gold_docs: dict[str, set[str]] = {}
    for g in read_jsonl(export / "gold.jsonl"):
        gold_docs.setdefault(g["query_id"], set()).add(g["doc_id"])
    for q, f in folds.query_fold.items():  # the heads that score q: fold f's
        seen = [ids[i] for i in kept_examples(ids, "hotpotqa", folds, f)]
        assert seen and all(sq != q and sd not in gold_docs.get(q, set()) for _, sq, sd in seen)
        heads = json.loads((root / f"fold{f}.json").read_text())
        assert heads["data"]["cross_fit"]["examples_kept"] == len(seen) < len(ids)
    alphas = [json.loads((root / f"fold{f}.json").read_text())["alpha"] for f in range(K)]
    assert len({json.dumps(a) for a in alphas}) == K  # each fold's heads learnt from other data


def test_each_fold_is_retrieved_with_its_own_heads_and_scored(run, tmp_path):
    root, export, _, fold_index, out = run
    questions = read_csv_columns(export / "queries.csv")
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == questions["id"]  # every question once, in the file's order
    folds = export_folds(export, K)
    by_id = {r["id"]: r for r in rows}
    jobs = fold_jobs(RetrieveJob.from_params(RETRIEVAL, root / "index", root / "cache"),
                     {"sprout": list(map(str, fold_index))}, K)
    for f in range(K):
        assert jobs[f].indexes[0][1] == fold_index[f]  # fold f's questions go to fold f's index ...
        weights = IndexReader(fold_index[f]).meta["head_weights"]  # ... built with fold f's heads
        alpha = np.asarray(json.loads((root / f"fold{f}.json").read_text())["alpha"]).reshape(-1)
        assert np.allclose(weights, np.exp(alpha) / np.exp(alpha).sum(), atol=1e-7)
        mine = fold_questions(questions, folds, f)
        # the fold's questions alone against its index (its folder as the index folder)
        alone = retrieve(mine, RetrieveJob.from_params(RETRIEVAL, fold_index[f].parent, root / "cache"), progress=False)
        assert mine["id"] and alone == [by_id[q] for q in mine["id"]]
    manifest = json.loads(out.with_name(out.name + ".manifest.json").read_text())
    assert manifest["config"]["cross_fit"]["folds"] == K
    assert all(str(p) in manifest["inputs"] for p in fold_index)
    main(["suite-evaluate", "--retrieval", str(out), "--gold", str(export / "gold.jsonl"), "--ks", "1", "3",
          "--out", str(tmp_path / "scores.json"), "--per-query", str(tmp_path / "per_query.csv")])
    with open(tmp_path / "per_query.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)


def test_a_cross_fitted_retrieval_in_batches_joins_into_the_whole_jobs_bytes(run, tmp_path, capsys):
    """#45 item 3: the retrieve-crossfit verb on three batches of the 30 questions (--batch, each opening every
    fold's index), then joined (--questions QUESTIONS BATCH...): the whole job's file byte for byte, and its
    manifest's config and inputs; a batch's manifest names its batch."""
    from pipeline.shards import query_batches

    root, export, _, fold_index, out = run
    questions = export / "queries.csv"
    common = ["--index-dir", str(root / "index"), "--params", json.dumps(RETRIEVAL), "--cache-dir",
              str(root / "cache"), "--export-dir", str(export), "--folds", str(K),
              *[a for p in fold_index for a in ("--fold-index", f"sprout={p}")]]
    batches = query_batches(len(read_csv_columns(questions)["id"]), 12)
    assert len(batches) == 3
    parts = []
    for b in batches:
        parts.append(tmp_path / f"{b.id}.jsonl")
        main(["retrieve-crossfit", *common, "--questions", str(questions), "--batch", b.id, "--out", str(parts[-1])])
        assert json.loads(parts[-1].with_name(parts[-1].name + ".manifest.json").read_text())["batch"] == b.id
    joined = tmp_path / "joined.jsonl"
    main(["retrieve-crossfit", *common, "--questions", str(questions), *map(str, parts), "--out", str(joined)])
    assert joined.read_bytes() == out.read_bytes()
    manifest = ".manifest.json"
    assert joined.with_name(joined.name + manifest).read_bytes() == out.with_name(out.name + manifest).read_bytes()
    short = tmp_path / "short.jsonl"  # a batch missing: refused, nothing written
    assert main(["retrieve-crossfit", *common, "--questions", str(questions), *map(str, parts[:2]),
                 "--out", str(short)]) == 2
    assert "not the split's 30 questions" in capsys.readouterr().err and not short.exists()

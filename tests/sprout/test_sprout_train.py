"""Head training on real HotpotQA supporting-fact pairs: the cached pairs are real, the loss goes down."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.datasets.paths import data_root
from pipeline.sprout.chunks import Chunk
from pipeline.specs import AttentionSpec, TrainSpec
from pipeline.sprout.train import TrainPairsJob, corelevant_pairs, load_pairs, prepare_pairs, train_heads


def test_corelevant_pairs_by_span_and_by_query():
    chunks = {"d": [Chunk("d", i, 10 * i, 10 * i + 9, ()) for i in range(6)]}
    gold = [{"query_id": "q", "doc_id": "d", "start": 5, "end": 25},   # chunks 0-2
            {"query_id": "q", "doc_id": "d", "start": 41, "end": 45}]  # chunk 4
    by_span = corelevant_pairs(chunks, gold, "span", 10)
    assert by_span[("q", "d")] == ({0, 1, 2, 4}, [(0, 1), (1, 2), (0, 2)])  # nearest first, not across spans
    by_query = corelevant_pairs(chunks, gold, "query", 2)
    assert by_query[("q", "d")][1] == [(0, 1), (1, 2)]  # capped, nearest first


@pytest.mark.slow  # exports a HotpotQA slice and runs the encoder (~1-2 min on 2 busy cores)
def test_training_lowers_the_loss_on_real_pairs(tmp_path):
    train_cfg = {"datasets": {"hotpotqa": {"n_questions": 40, "seed": 3}}, "max_pairs_per_query": 8,
                 "lambda": 0.1, "temperature": 0.05, "lr": 0.05, "epochs": 20, "batch_size": 8, "seed": 0}
    train = TrainSpec.from_dict(train_cfg)
    meta = prepare_pairs(TrainPairsJob(train, AttentionSpec.from_dict({}), str(data_root() / "retrieval"), {},
                                       str(tmp_path / "work"), str(tmp_path / "pairs.safetensors")), progress=False)
    assert meta["pairs"] >= 3 and meta["pairs_without_window"] == 0
    _, arrays = load_pairs(tmp_path / "pairs.safetensors")
    assert (arrays["pair_values"] > 0).all() and arrays["pair_values"].shape[1] == 72
    out = train_heads(str(tmp_path / "pairs.safetensors"), train, str(tmp_path / "heads.json"))
    start, end = out["loss"]["start"], out["loss"]["end"]
    assert end["attention"] < start["attention"] and end["total"] < start["total"]
    assert end["retrieval"] == start["retrieval"]  # frozen encoder: the contrastive term is constant
    saved = json.loads((tmp_path / "heads.json").read_text())
    assert np.isclose(np.sum(saved["weights"]), 1.0) and saved["data"]["datasets"]["hotpotqa"]["pairs"] == meta["pairs"]

"""A sprout index on real text, searched through the retrieval stage; trained weights change the tree."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pipeline.index_structures.store import IndexReader
from pipeline.cli import main
from pipeline.retrieve.run import RetrieveJob, retrieve
from pipeline.specs import AttentionSpec
from pipeline.sprout.stage import SproutIndexJob, build_sprout_index, compute_attention
from pipeline.sprout.store import SproutIndex, dump_tree

WINDOWS = AttentionSpec.from_dict({"window_tokens": 64, "stride_tokens": 40})


@pytest.fixture(scope="module")
def sprout_dir(tmp_path_factory, small_trees):
    root = tmp_path_factory.mktemp("sprout")
    paths = []
    for t in small_trees:
        t.save(root / f"{t.doc_id}.json")
        paths.append(str(root / f"{t.doc_id}.json"))
    stats = compute_attention(paths, WINDOWS, str(root / "attention.safetensors"), progress=False)
    assert stats["chunks_without_tokens"] == 0 and stats["windows"] > 2
    (root / "index").mkdir()
    # the index verb, as the index rule calls it (wf.index_extra_args: the kind's extra inputs)
    main(["index", "--trees", ",".join(paths), "--params", json.dumps({"index": {"kind": "sprout", "heads": "uniform"}}),
          "--cache-dir", str(root / "cache"), "--out", str(root / "index" / "sp.sqlite"),
          "--input", f"sprout_attention={root / 'attention.safetensors'}"])
    return root, paths


def test_index_holds_full_binary_trees(sprout_dir, small_trees):
    root, _ = sprout_dir
    index = SproutIndex(root / "index" / "sp.sqlite")
    for tree in index.trees:
        assert tree.n_nodes == 2 * tree.n_leaves - 1
        assert sorted(tree.leaves(tree.root)) == list(range(tree.n_leaves))
    dumped = dump_tree(root / "index" / "sp.sqlite", small_trees[0].doc_id)
    internal = [n for n in dumped["nodes"] if n["left"] >= 0]
    assert [n["height"] for n in internal][-1] == max(n["height"] for n in dumped["nodes"])
    assert all(n["merge_score"] > 0 for n in internal)  # connected window graph: every merge has evidence


def test_retrieval_stage_dispatches_to_beam_search(sprout_dir, small_trees, tmp_path):
    root, _ = sprout_dir
    params = {"name": "sp", "embedding": None, "indexes": {"sp": {"kind": "sprout", "heads": "uniform"}},
              "retrieval": {"index": "sp", "top_k": 6, "beam_width": 3, "per_document_top_k": 4, "threshold": 0.0,
                            "levels": ["chunk"], "expand": "none"}}
    questions = pd.DataFrame({"id": ["q1", "q2"], "question": ["How much energy does training use?",
                                                               "What are the carbon emissions of AI?"]})
    rows = retrieve(questions, RetrieveJob.from_params(params, root / "index", tmp_path / "cache"), progress=False)
    texts = {t.doc_id: t.text for t in small_trees}
    for row in rows:
        hits = row["hits"]
        assert 0 < len(hits) <= 6
        assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
        for h in hits:
            assert h["source"] == "sprout" and h["level"] in ("chunk", "subtree")
            assert h["start"] == h["spans"][0][0] and h["end"] == h["spans"][-1][1]
            assert (h["leaves"] == 1) == (h["level"] == "chunk")
            covered = " ".join(texts[h["doc_id"]][s:e] for s, e in h["spans"])
            assert h["text"].split() == covered.split()  # exactly the leaves' text, nothing between spans
        assert {c["node_id"] for c in row["context"]} == {h["node_id"] for h in hits}  # nodes are their own context


def test_trained_head_weights_reshape_the_tree(sprout_dir, tmp_path):
    root, paths = sprout_dir
    alpha = np.full((6, 12), -8.0)
    alpha[0, 3] = 8.0  # essentially one head
    (tmp_path / "heads.json").write_text(json.dumps({"alpha": alpha.tolist()}))
    params = {"index": {"kind": "sprout", "heads": "trained"}}
    build_sprout_index(SproutIndexJob(paths, str(tmp_path / "trained.sqlite"), "trained",
                                      str(root / "attention.safetensors"), str(tmp_path / "heads.json"), params))
    uni, one = SproutIndex(root / "index" / "sp.sqlite"), SproutIndex(tmp_path / "trained.sqlite")
    assert any(a.merges() != b.merges() for a, b in zip(uni.trees, one.trees))
    meta = IndexReader(tmp_path / "trained.sqlite").meta
    assert max(meta["head_weights"]) > 0.99
    with pytest.raises(ValueError, match="head-weights"):
        build_sprout_index(SproutIndexJob(paths, str(tmp_path / "x.sqlite"), "trained",
                                          str(root / "attention.safetensors"), None, params))

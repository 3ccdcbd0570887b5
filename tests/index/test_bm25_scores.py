"""OkapiScores (the inverted-index BM25 of pipeline/index_structures/bm25.py) gives rank-bm25's
``BM25Okapi.get_scores`` bit for bit, on the sentences and paragraphs of three real WattBot
documents and on the real train questions tokenised as the searcher does."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rank_bm25 import BM25Okapi

from pipeline.index_structures.bm25 import OkapiScores, tokenize


def _corpus(trees, level):
    return [tokenize(n.text) or ["<empty>"] for t in trees for n in t.nodes.values() if n.level == level]


def test_identical_to_rank_bm25_on_real_nodes_and_questions(three_trees, wattbot_dir):
    questions = pd.read_csv(wattbot_dir / "train_QA.csv")["question"].tolist()
    queries = [tokenize(q) for q in questions] + [
        ["train", "train", "gshard"],  # a repeated term counts twice in both
        ["zzz-not-in-the-corpus", "energi"],  # a term no document holds
        [],
    ]
    for level in ("sentence", "paragraph"):
        bm25 = BM25Okapi(_corpus(three_trees, level))
        fast = OkapiScores(bm25)
        nonzero = 0
        for q in queries:
            expected, got = bm25.get_scores(q), fast(q)
            assert got.dtype == expected.dtype and np.array_equal(got, expected), (level, q)
            assert got.tobytes() == expected.tobytes()  # not close: the same bits
            nonzero += bool(expected.any())
        assert nonzero > len(questions) // 2  # the questions do match these documents

"""Windows cover every token and chunk; pooled attention equals the reference's loop definition."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.sprout.attention import WindowConfig, corpus_attention, plan_windows, token_chunks
from pipeline.sprout.chunks import leaf_chunks


@pytest.mark.parametrize("n,window,stride", [(0, 8, 4), (5, 8, 4), (8, 8, 4), (9, 8, 4), (100, 16, 16),
                                             (1000, 510, 384), (88000, 510, 255), (37, 10, 3)])
def test_windows_cover_every_token(n, window, stride):
    ws = plan_windows(n, window, stride)
    covered = np.zeros(n, bool)
    for s, e in ws:
        assert 0 <= s < e <= n and e - s == min(window, n)  # fixed length: comparable softmax scales
        covered[s:e] = True
    assert covered.all()
    if n:
        assert ws[-1][1] == n
        assert all(b[0] - a[0] <= stride for a, b in zip(ws, ws[1:]))


def test_leaf_chunks_are_sentence_pairs_of_the_shared_tree(three_trees):
    tree = three_trees[2]
    sents = sorted(tree.at_level("sentence"), key=lambda s: s.start)
    chunks = leaf_chunks(tree, 2)
    assert len(chunks) == (len(sents) + 1) // 2
    assert [s for c in chunks for s in c.sentence_ids] == [s.id for s in sents]
    c = chunks[3]
    assert (c.start, c.end) == (sents[6].start, sents[7].end)


def test_every_chunk_is_in_a_window_and_pairs_are_block_means(small_trees, attention_encoder):
    cfg = WindowConfig(window_tokens=64, stride_tokens=40)
    docs = [(t.doc_id, t.text, leaf_chunks(t, 2)) for t in small_trees]
    result = corpus_attention(attention_encoder, docs, cfg, progress=False)
    for (doc_id, text, chunks), da in zip(docs, result):
        ids, offsets = attention_encoder.tokenize(text)
        assert da.n_windows == len(plan_windows(len(ids), 64, 40)) > 1
        assert (da.chunk_windows > 0).all()  # no chunk left out
        have = {tuple(p) for p in da.pairs.tolist()}
        assert all((i, i + 1) in have for i in range(len(chunks) - 1))  # overlapping windows chain all chunks
        assert (da.head_values > 0).all() and (da.head_values < 1).all()
        np.testing.assert_allclose(np.linalg.norm(da.leaf_vectors, axis=1), 1, rtol=1e-5)
        assert da.head_values.shape[1] == 72


def test_single_window_matches_the_reference_loop(small_trees, attention_encoder):
    """One window over a whole short text: (A_ij + A_ji)/2 per head equals token-block means of the raw
    attention probabilities, specials excluded."""
    tree = small_trees[0]
    chunks = leaf_chunks(tree, 2)[:4]
    text = tree.text[: chunks[-1].end]
    [da] = corpus_attention(attention_encoder, [(tree.doc_id, text, chunks)], WindowConfig(510, 384), progress=False)
    ids, offsets = attention_encoder.tokenize(text)
    owner = token_chunks(offsets, chunks)
    full = np.concatenate([[attention_encoder.cls], ids, [attention_encoder.sep]])[None]
    _, attn = attention_encoder.forward(full, np.ones_like(full))
    attn = attn[:, 0].numpy()  # [L, H, T, T]
    for e, (i, j) in enumerate(da.pairs.tolist()):
        ti = np.nonzero(owner == i)[0] + 1
        tj = np.nonzero(owner == j)[0] + 1
        a_ij = attn[:, :, ti][:, :, :, tj].mean(axis=(2, 3))
        a_ji = attn[:, :, tj][:, :, :, ti].mean(axis=(2, 3))
        np.testing.assert_allclose(da.head_values[e], ((a_ij + a_ji) / 2).ravel(), rtol=1e-4, atol=1e-7)

"""Windows cover every token and chunk; pooled attention equals the reference's loop definition."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.sprout.attention import (AttentionEncoder, ChunkPool, _pooled_attention, _Window, attention_mask,
                                      dataset_attention, membership, plan_windows, token_chunks)
from pipeline.specs import AttentionSpec
from pipeline.sprout.chunks import leaf_chunks
from pipeline.sprout.heads import uniform_logits
from pipeline.sprout.speed import merge_order


@pytest.fixture(scope="module")
def eager_minilm():
    from transformers import AutoModel

    from pipeline.embed.base import minilm_path

    return AutoModel.from_pretrained(str(minilm_path()), local_files_only=True, attn_implementation="eager").eval()


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
    cfg = AttentionSpec.from_dict({"window_tokens": 64, "stride_tokens": 40})
    docs = [(t.doc_id, t.text, leaf_chunks(t, 2)) for t in small_trees]
    result = dataset_attention(attention_encoder, docs, cfg, progress=False)
    for (doc_id, text, chunks), da in zip(docs, result):
        ids, offsets = attention_encoder.tokenize(text)
        assert da.n_windows == len(plan_windows(len(ids), 64, 40)) > 1
        assert (da.chunk_windows > 0).all()  # no chunk left out
        have = {tuple(p) for p in da.pairs.tolist()}
        assert all((i, i + 1) in have for i in range(len(chunks) - 1))  # overlapping windows chain all chunks
        assert (da.head_values > 0).all() and (da.head_values < 1).all()
        np.testing.assert_allclose(np.linalg.norm(da.leaf_vectors, axis=1), 1, rtol=1e-5)
        assert da.head_values.shape[1] == 72


def test_single_window_matches_the_reference_loop(small_trees, attention_encoder, eager_minilm):
    """One window over a whole short text: (A_ij + A_ji)/2 per head equals token-block means of the raw
    attention probabilities, specials excluded."""
    tree = small_trees[0]
    chunks = leaf_chunks(tree, 2)[:4]
    text = tree.text[: chunks[-1].end]
    [da] = dataset_attention(attention_encoder, [(tree.doc_id, text, chunks)], AttentionSpec.from_dict({"window_tokens": 510, "stride_tokens": 384}), progress=False)
    ids, offsets = attention_encoder.tokenize(text)
    owner = token_chunks(offsets, chunks)
    full = torch.from_numpy(np.concatenate([[attention_encoder.cls], ids, [attention_encoder.sep]])[None])
    with torch.inference_mode():  # an independent, stock eager model: the probabilities themselves
        out = eager_minilm(input_ids=full, token_type_ids=torch.zeros_like(full), output_attentions=True)
    attn = torch.stack(out.attentions)[:, 0].numpy()  # [L, H, T, T]
    for e, (i, j) in enumerate(da.pairs.tolist()):
        ti = np.nonzero(owner == i)[0] + 1
        tj = np.nonzero(owner == j)[0] + 1
        a_ij = attn[:, :, ti][:, :, :, tj].mean(axis=(2, 3))
        a_ji = attn[:, :, tj][:, :, :, ti].mean(axis=(2, 3))
        np.testing.assert_allclose(da.head_values[e], ((a_ij + a_ji) / 2).ravel(), rtol=1e-4, atol=1e-7)


def test_membership_is_the_column_normalised_indicator():
    rng = np.random.default_rng(0)
    batch = [_Window(0, np.arange(n), rng.integers(-1, 5, n)) for n in (9, 12, 3)]
    batch.append(_Window(0, np.arange(4), np.full(4, -1)))  # no chunk at all: an all-zero block
    cids, S = membership(batch, 14)
    assert S.shape == (4, 14, max(len(c) for c in cids)) and len(cids[3]) == 0
    for b, w in enumerate(batch):
        assert list(cids[b]) == sorted(set(w.chunk_of[w.chunk_of >= 0]))
        for k, c in enumerate(cids[b]):
            tokens = np.nonzero(w.chunk_of == c)[0] + 1  # +1: after [CLS]
            expect = np.zeros(14, np.float32)
            expect[tokens] = 1 / len(tokens)
            np.testing.assert_allclose(S[b, :, k], expect, rtol=1e-6)
        assert not S[b, :, len(cids[b]):].any()


@pytest.mark.parametrize("kernel", ["sdpa", "eager"])
def test_pooled_attention_equals_probabilities_times_membership(kernel):
    """On random inputs, with padding masked: the kernel returns softmax(QK^T/sqrt d + mask) @ V as the layer
    output and leaves the same probabilities @ S in the pool (S^T of that = the chunk-pair block means)."""
    g = torch.Generator().manual_seed(0)
    B, H, T, d, c = 3, 4, 21, 8, 5
    q, k, v = (torch.randn(B, H, T, d, generator=g) for _ in range(3))
    S = torch.rand(B, T, c, generator=g)
    lengths = torch.tensor([21, 15, 9])
    keep = torch.arange(T)[None] < lengths[:, None]  # [B, T] padding
    S = S * keep[:, :, None]
    bias = torch.where(keep, 0.0, float("-inf"))[:, None, None, :]
    probs = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5 + bias, -1)
    pool = ChunkPool(S)
    out = _pooled_attention(kernel)(q, k, v, attention_mask(kernel, keep.long()), d ** -0.5, pool)
    torch.testing.assert_close(out, (probs @ v).transpose(1, 2), rtol=1e-5, atol=1e-6)
    [AS] = pool.out
    torch.testing.assert_close(AS, probs @ S[:, None], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel", ["sdpa", "eager"])
def test_masks_are_the_ones_transformers_builds(kernel):
    """The masks the plain-torch MiniLM hands its attention equal transformers' for BERT (None without padding;
    BertModel turns the 0/1 padding mask into booleans before building them)."""
    from transformers.masking_utils import bidirectional_mask_function, eager_mask, sdpa_mask

    for keep in (torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]), torch.ones(2, 4, dtype=torch.long)):
        make = sdpa_mask if kernel == "sdpa" else eager_mask
        theirs = make(batch_size=2, q_length=4, kv_length=4, q_offset=0, kv_offset=0,
                      mask_function=bidirectional_mask_function, attention_mask=keep.bool(),
                      allow_is_bidirectional_skip=True, dtype=torch.float32, device="cpu")
        ours = attention_mask(kernel, keep)
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.dtype == theirs.dtype and torch.equal(ours, theirs)


def test_plain_torch_minilm_is_bit_identical_to_transformers(small_trees, attention_encoder):
    """The sprout forward pass (pipeline.sprout.minilm) gives transformers' BertModel's last hidden states bit
    for bit, padded batch included: the attention files do not depend on which of the two ran."""
    from transformers import AutoModel

    from pipeline.embed.base import minilm_path

    stock = AutoModel.from_pretrained(str(minilm_path()), local_files_only=True, attn_implementation="sdpa").eval()
    enc = attention_encoder
    rows = [enc.tokenize(t.text[:400])[0][:n] for t, n in zip(small_trees, (60, 41))]
    ids = np.zeros((2, 62), np.int64)
    mask = np.zeros_like(ids)
    for b, r in enumerate(rows):
        ids[b, : len(r) + 2] = [enc.cls, *r, enc.sep]
        mask[b, : len(r) + 2] = 1
    S = torch.zeros(2, 62, 1)
    for m in (mask, np.ones_like(mask)):  # padded (a boolean mask) and unpadded (none)
        hidden, _ = enc.pooled(ids, m, S)
        with torch.inference_mode():
            want = stock(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(m),
                         token_type_ids=torch.zeros(2, 62, dtype=torch.long)).last_hidden_state
        assert torch.equal(hidden, want)


def test_fused_kernel_matches_the_eager_reference_on_a_real_document(small_trees, attention_encoder):
    """Same pairs, per-head values within 1e-5, identical Kruskal merges (the tree) for sdpa and eager."""
    cfg = AttentionSpec.from_dict({"window_tokens": 64, "stride_tokens": 40})
    docs = [(t.doc_id, t.text, leaf_chunks(t, 2)) for t in small_trees]
    fused = dataset_attention(attention_encoder, docs, cfg, progress=False)
    eager = dataset_attention(AttentionEncoder(threads=2, kernel="eager"), docs, cfg, progress=False)
    logits = uniform_logits(6, 12)
    for a, b in zip(fused, eager):
        np.testing.assert_array_equal(a.pairs, b.pairs)
        np.testing.assert_array_equal(a.pair_windows, b.pair_windows)
        np.testing.assert_allclose(a.head_values, b.head_values, atol=1e-5, rtol=0)
        np.testing.assert_allclose(a.leaf_vectors, b.leaf_vectors, atol=1e-5, rtol=0)
        assert merge_order(a, logits) and merge_order(a, logits) == merge_order(b, logits)

"""Chunk-to-chunk attention from windowed encoder passes (SproutRAG §1.3-1.5, §7.5).

The encoder (all-MiniLM-L6-v2: 6 layers x 12 heads, 512 positions) cannot see a whole document,
and the reference code silently truncated everything past the first ~510 tokens. Here every
document is covered by fixed-length, overlapping windows (``window_tokens`` content tokens plus
[CLS]/[SEP], ``stride_tokens`` apart, the last one aligned to the document end), so no chunk is
left out. Per window, for every layer and head, the block mean of the attention probabilities
from chunk i's tokens to chunk j's tokens (special tokens excluded from the blocks, kept in the
softmax) is ``S^T A S`` with S the column-normalised token x chunk indicator. A pair's per-head
value is the mean over the windows that contain both chunks (a chunk cut by a window edge counts
its in-window tokens). Values are stored symmetrised per head, (A_ij + A_ji)/2 for i < j: the
head mixture is linear, so the tree's mutual score is ``values @ softmax(alpha)`` for any weights,
and training needs nothing else. Leaf vectors are the mean over windows of the chunk's mean final
hidden state ("late chunking"), L2-normalised.

Speed: the probabilities themselves are never needed, only A @ S. With ``kernel: sdpa`` each attention
layer computes it inside PyTorch's fused scaled-dot-product kernel by appending S's columns to the
values, so the [L, B, H, T, T] tensor is never materialised (``kernel: eager`` does materialise it:
the reference the tests and ``bench --sprout`` compare against; docs/sprout-speed.md). The encoder runs
in plain torch (pipeline.sprout.minilm): the same ops as transformers' BERT, without importing it.
"""

from __future__ import annotations

import logging
import os
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from pipeline.heap import retain_freed_memory
from pipeline.specs import (
    ATTENTION_KERNELS as KERNELS,  # sdpa: fused, no T x T probabilities; eager: materialised (the reference)
)
from pipeline.specs import AttentionSpec  # the windows: window_tokens, stride_tokens, batch_tokens
from pipeline.sprout.chunks import Chunk
from pipeline.sprout.minilm import MiniLM

if TYPE_CHECKING:
    import torch  # imported lazily where it runs

log = logging.getLogger(__name__)


def plan_windows(n_tokens: int, window: int, stride: int) -> list[tuple[int, int]]:
    """[start, end) token ranges covering 0..n_tokens; the last window ends at n_tokens."""
    if n_tokens <= window:
        return [(0, n_tokens)] if n_tokens else []
    starts = list(range(0, n_tokens - window, stride)) + [n_tokens - window]
    return [(s, s + window) for s in sorted(set(starts))]


def token_chunks(offsets: np.ndarray, chunks: list[Chunk]) -> np.ndarray:
    """Chunk index of every token (by its first character), -1 for a token outside every chunk."""
    if not len(offsets):
        return np.zeros(0, dtype=np.int64)
    starts = np.array([c.start for c in chunks], dtype=np.int64)
    ends = np.array([c.end for c in chunks], dtype=np.int64)
    pos = offsets[:, 0]
    idx = np.searchsorted(starts, pos, side="right") - 1
    ok = (idx >= 0) & (pos < ends[np.clip(idx, 0, None)])
    return np.where(ok, idx, -1)


@dataclass
class DocAttention:
    """Everything the tree, the index and training need from one document's encoder passes."""

    doc_id: str
    n_chunks: int
    pairs: np.ndarray  # [E, 2] int32, i < j, pairs that share at least one window
    head_values: np.ndarray  # [E, L*H] float32, per-head symmetrised mean attention
    pair_windows: np.ndarray  # [E] int32, windows that contain both
    leaf_vectors: np.ndarray  # [n, D] float32, L2-normalised (zero for a chunk with no token)
    chunk_windows: np.ndarray  # [n] int32, windows containing each chunk (0: no token at all)
    n_tokens: int = 0
    n_windows: int = 0


@dataclass
class ChunkPool:
    """One forward pass's column-normalised token x chunk matrix S [B, T, c] and, filled layer by layer,
    A @ S [B, H, T, c]: each query token's mean attention to each chunk's tokens."""

    matrix: torch.Tensor
    out: list = field(default_factory=list)
    _buffers: tuple = ()

    def padded(self, query, key, value):
        """[Q | 0], [K | 0], [V | S] ([B, H, T, d + c]). The buffers are reused by every layer: their
        padding columns never change, so only the first d columns are rewritten."""
        B, H, T, d = query.shape
        if not self._buffers or self._buffers[0].shape != (B, H, T, d + self.matrix.shape[-1]):
            c = self.matrix.shape[-1]
            self._buffers = tuple(query.new_zeros(B, H, T, d + c) for _ in range(3))
            self._buffers[2][..., d:] = self.matrix[:, None]
        for buf, x in zip(self._buffers, (query, key, value)):
            buf[..., :d] = x
        return self._buffers


def _pooled_attention(kernel: str):
    """``attend(q, k, v, mask, scaling, chunk_pool)``: a layer's attention output [B, T, H, d] (q, k, v as
    [B, H, T, d]), leaving A @ S in ``chunk_pool.out``.

    sdpa: S rides along as extra value columns ([V | S]; Q and K zero-padded to the same width, so
    QK^T is unchanged), so the fused kernel returns A @ V and A @ S without ever materialising the
    [B, H, T, T] probabilities. eager: the probabilities written out (transformers' eager attention), then
    probabilities @ S. ``mask``: :func:`attention_mask`'s for the same kernel."""
    import torch

    def attend(query, key, value, attention_mask, scaling, chunk_pool=None):
        if kernel == "eager":
            weights = torch.matmul(query, key.transpose(2, 3)) * scaling
            if attention_mask is not None:
                weights = weights + attention_mask
            weights = torch.nn.functional.softmax(weights, dim=-1)
            if chunk_pool is not None:
                chunk_pool.out.append(weights @ chunk_pool.matrix[:, None])
            return torch.matmul(weights, value).transpose(1, 2).contiguous()
        B, H, T, d = query.shape
        if chunk_pool is None:
            chunk_pool = ChunkPool(query.new_zeros(B, T, 0))
        q, k, v = chunk_pool.padded(query, key, value)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, scale=scaling)
        chunk_pool.out.append(out[..., d:])
        return out[..., :d].transpose(1, 2).contiguous()

    return attend


def attention_mask(kernel: str, keep):
    """The mask transformers' BERT hands its attention for the [B, T] 0/1 padding mask ``keep``: none without
    padding, else [B, 1, T, T], boolean for sdpa (True: attend), additive float for eager (0, or float32's
    minimum for a padded key)."""
    import torch

    B, T = keep.shape
    if bool(keep.all()):
        return None
    allowed = keep.bool()[:, None, None, :].expand(B, 1, T, T)
    if kernel == "eager":
        return torch.where(allowed, torch.zeros((), dtype=torch.float32), torch.finfo(torch.float32).min)
    return allowed


class AttentionEncoder:
    """The frozen MiniLM whose attention layers pool their probabilities over chunks, and its tokenizer."""

    def __init__(self, threads: int, kernel: str, model_dir: str | Path | None = None):
        """``threads`` and ``kernel``: the ``sprout`` block's (pipeline.specs.AttentionSpec, its declared defaults)."""
        import torch
        from tokenizers import Tokenizer

        from pipeline.embed.base import MINILM_NAME, minilm_path

        if kernel not in KERNELS:
            raise ValueError(f"sprout: kernel {kernel!r} is not one of {KERNELS}")
        # Idle OpenMP threads sleep instead of spinning: on a shared 2-core machine spinning burnt CPU the other
        # jobs needed (docs/sprout-speed.md). OpenMP reads it when torch loads, which for the sprout commands is
        # here; an explicit setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        retain_freed_memory()  # a pass frees and re-faults 50 MB blocks every layer otherwise (pipeline.heap)
        model_dir = Path(model_dir) if model_dir else minilm_path()
        torch.set_num_threads(threads)
        self._torch = torch
        self.kernel = kernel
        self.model = MiniLM(model_dir)
        self._attend = _pooled_attention(kernel)
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        cls, sep = self.tok.token_to_id("[CLS]"), self.tok.token_to_id("[SEP]")
        assert cls is not None and sep is not None, "a WordPiece tokenizer has [CLS] and [SEP]"
        self.cls: int = cls
        self.sep: int = sep
        c = self.model.shape
        self.layers, self.heads, self.dim = c.layers, c.heads, c.dim
        self.max_positions = c.max_positions
        self.model_id = f"{MINILM_NAME}/torch-fp32-{kernel}"

    def tokenize(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        enc = self.tok.encode(text, add_special_tokens=False)
        return np.asarray(enc.ids, dtype=np.int64), np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)

    def pooled(self, ids: np.ndarray, mask: np.ndarray, S):
        """(last hidden states [B, T, D], chunk-pair block means S^T A S [B, L*H, c, c]) as torch tensors,
        for S [B, T, c] column-normalised (zero columns allowed)."""
        t = self._torch
        pool = ChunkPool(S)
        with t.inference_mode():
            hidden = self.model.forward(
                t.from_numpy(ids),
                attention_mask(self.kernel, t.from_numpy(mask)),
                lambda q, k, v, m, scaling: self._attend(q, k, v, m, scaling, pool),
            )
            AS = t.stack(pool.out, 1)  # [B, L, H, T, c]
            P = t.einsum("btc,blhtd->blhcd", S, AS)
        B, L, H, c, _ = P.shape
        return hidden, P.reshape(B, L * H, c, c)


@dataclass
class _Acc:
    """Per-document running sums while its windows stream through the encoder."""

    n: int
    dim: int
    lh: int
    keys: list = field(default_factory=list)
    vals: list = field(default_factory=list)
    vec_sum: np.ndarray = field(init=False)  # made in __post_init__
    vec_count: np.ndarray = field(init=False)

    def __post_init__(self):
        self.vec_sum = np.zeros((self.n, self.dim), dtype=np.float64)
        self.vec_count = np.zeros(self.n, dtype=np.int64)


@dataclass
class _Window:
    doc: int
    ids: np.ndarray  # content token ids
    chunk_of: np.ndarray  # chunk index per content token (-1: none)


def dataset_attention(
    encoder: AttentionEncoder,
    docs: list[tuple[str, str, list[Chunk]]],
    cfg: AttentionSpec,
    keep_window=None,
    progress: bool = True,
    cpu: defaultdict[str, float] | None = None,
) -> list[DocAttention]:
    """``docs`` = (doc_id, text, chunks). ``keep_window(doc_index, chunk_ids) -> bool`` may skip windows
    (training computes only the windows holding a labelled pair); by default every window runs.
    Windows of all documents are batched together by length (short documents share a pass).
    ``cpu``, when given, collects this process's CPU seconds per phase (tokenize, encoder, aggregate)."""
    cpu = defaultdict(float) if cpu is None else cpu
    t0 = time.process_time()
    windows, n_tokens, n_windows = _windows(encoder, docs, cfg, keep_window)
    cpu["tokenize"] += time.process_time() - t0
    batches = [[(windows[i], None) for i in b] for b in plan_batches(windows, cfg)]
    return _run(encoder, docs, batches, (n_tokens, n_windows), progress, cpu)


def _windows(
    encoder: AttentionEncoder, docs: list[tuple[str, str, list[Chunk]]], cfg: AttentionSpec, keep_window=None
) -> tuple[list[_Window], list[int], list[int]]:
    """Every document's windows in document order, and each document's tokens and kept windows."""
    if cfg.window_tokens + 2 > encoder.max_positions:
        raise ValueError(
            f"sprout: window_tokens {cfg.window_tokens} + 2 exceeds the encoder's {encoder.max_positions} positions"
        )
    windows: list[_Window] = []
    n_tokens, n_windows = [], []
    for d, (_doc_id, text, chunks) in enumerate(docs):
        ids, offsets = encoder.tokenize(text)
        chunk_of = token_chunks(offsets, chunks)
        n_tokens.append(len(ids))
        planned = plan_windows(len(ids), cfg.window_tokens, cfg.stride_tokens)
        kept = 0
        for s, e in planned:
            w = _Window(d, ids[s:e], chunk_of[s:e])
            if keep_window is not None and not keep_window(d, np.unique(w.chunk_of[w.chunk_of >= 0])):
                continue
            windows.append(w)
            kept += 1
        n_windows.append(kept)
    return windows, n_tokens, n_windows


def plan_batches(windows: list[_Window], cfg: AttentionSpec) -> list[list[int]]:
    """The windows' passes: by length (little padding), then by chunk count (little padding of S's columns in
    a batch), each pass up to ``batch_tokens`` padded tokens."""
    order = sorted(range(len(windows)), key=lambda i: (len(windows[i].ids), _n_chunks(windows[i]), i))
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        width = len(windows[i].ids) + 2
        if cur and (len(cur) + 1) * width > cfg.batch_tokens:
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


def _run(
    encoder: AttentionEncoder,
    docs: list[tuple[str, str, list[Chunk]]],
    batches: Sequence[Sequence[tuple[_Window, BatchShape | None]]],
    counts: tuple[list[int], list[int]],
    progress: bool,
    cpu: defaultdict[str, float],
) -> list[DocAttention]:
    """The passes in order (each padded to its shape, None: to its own windows), accumulated per document."""
    accs = [_Acc(len(chunks), encoder.dim, encoder.layers * encoder.heads) for _, _, chunks in docs]
    bar = tqdm(total=sum(len(b) for b in batches), desc="sprout windows", unit="win", disable=not progress)
    for batch in batches:
        _run_batch(encoder, [w for w, _ in batch], accs, cpu, batch[0][1])
        bar.update(len(batch))
    bar.close()
    t0 = time.process_time()
    n_tokens, n_windows = counts
    out = [_finish(doc_id, acc, n_tokens[d], n_windows[d]) for d, ((doc_id, _, _), acc) in enumerate(zip(docs, accs))]
    cpu["aggregate"] += time.process_time() - t0
    return out


@dataclass(frozen=True)
class BatchShape:
    """A pass's position in the dataset's passes and its padded shape: a window's values depend on the
    shape it is padded to (measured: 5 of 100 HotpotQA paragraphs differed at 1e-7 when run in their own
    shard's passes) and not on the other windows of its pass, so a shard's job pads each window to the shape
    of the whole dataset's pass it belongs to and gets the whole job's bytes (pipeline/shards.py)."""

    batch: int
    width: int  # tokens, with [CLS] and [SEP]
    columns: int  # chunk columns of S


def window_shapes(
    encoder: AttentionEncoder, docs: list[tuple[str, str, list[Chunk]]], cfg: AttentionSpec
) -> list[list[BatchShape]]:
    """Per document, per window in its order, the shape of the pass :func:`dataset_attention` runs it in."""
    windows, _, _ = _windows(encoder, docs, cfg)
    shapes: list[BatchShape | None] = [None] * len(windows)
    for b, batch in enumerate(plan_batches(windows, cfg)):
        shape = BatchShape(b, max(len(windows[i].ids) for i in batch) + 2, max(_n_chunks(windows[i]) for i in batch))
        for i in batch:
            shapes[i] = shape
    per_doc: list[list[BatchShape]] = [[] for _ in docs]
    for w, planned in zip(windows, shapes):
        assert planned is not None
        per_doc[w.doc].append(planned)
    return per_doc


def shard_attention(
    encoder: AttentionEncoder,
    docs: list[tuple[str, str, list[Chunk]]],
    cfg: AttentionSpec,
    shapes: list[list[BatchShape]],
    progress: bool = True,
) -> list[DocAttention]:
    """:func:`dataset_attention` of a shard's documents, each window padded to the shape of its pass in the
    whole dataset (``shapes``: :func:`window_shapes` of every document, these documents' entries) and
    accumulated in the whole dataset's pass order: the values the whole dataset's job computes for them."""
    cpu: defaultdict[str, float] = defaultdict(float)
    windows, n_tokens, n_windows = _windows(encoder, docs, cfg)
    mine = [s for doc_shapes in shapes for s in doc_shapes]
    if len(mine) != len(windows):
        raise ValueError(
            f"the window plan has {len(mine)} windows for these documents, their texts make {len(windows)}"
        )
    by_pass: dict[int, list[int]] = defaultdict(list)
    for i in sorted(range(len(windows)), key=lambda i: (len(windows[i].ids), _n_chunks(windows[i]), i)):
        by_pass[mine[i].batch].append(i)
    batches = [[(windows[i], mine[i]) for i in by_pass[b]] for b in sorted(by_pass)]
    return _run(encoder, docs, batches, (n_tokens, n_windows), progress, cpu)


def _n_chunks(w: _Window) -> int:
    return len(np.unique(w.chunk_of[w.chunk_of >= 0]))


def membership(batch: list[_Window], width: int, columns: int | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Per window its chunk ids, and S [B, width, c_max]: token t+1 (after [CLS]) of window b belongs to
    its chunk's column, columns normalised to sum 1 (a block mean), unused columns zero (``columns``: c_max
    given, the pass's in the whole dataset)."""
    cids_all, cols = [], []
    for w in batch:
        valid = np.nonzero(w.chunk_of >= 0)[0]
        cids, inv = np.unique(w.chunk_of[valid], return_inverse=True)
        cids_all.append(cids)
        cols.append((valid, inv))
    S = np.zeros((len(batch), width, columns or max([len(c) for c in cids_all] + [1])), dtype=np.float32)
    for b, (valid, inv) in enumerate(cols):
        S[b, valid + 1, inv] = 1.0
    S /= np.maximum(S.sum(1, keepdims=True), 1.0)
    return cids_all, S


def _run_batch(
    encoder: AttentionEncoder,
    batch: list[_Window],
    accs: list[_Acc],
    cpu: defaultdict[str, float],
    shape: BatchShape | None = None,
) -> None:
    torch = encoder._torch
    t0 = time.process_time()
    width = shape.width if shape else max(len(w.ids) for w in batch) + 2
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for b, w in enumerate(batch):
        n = len(w.ids)
        ids[b, 0], ids[b, 1 : n + 1], ids[b, n + 1] = encoder.cls, w.ids, encoder.sep
        mask[b, : n + 2] = 1
    cids_all, S = membership(batch, width, shape.columns if shape else None)
    S = torch.from_numpy(S)
    t1 = time.process_time()
    hidden, P = encoder.pooled(ids, mask, S)  # [B, T, D], [B, LH, c, c]
    t2 = time.process_time()
    vecs = torch.einsum("btc,btd->bcd", S, hidden).double().numpy()
    P = ((P + P.transpose(-1, -2)) / 2).numpy()
    for b, (w, cids) in enumerate(zip(batch, cids_all)):
        if not len(cids):
            continue
        acc = accs[w.doc]
        acc.vec_sum[cids] += vecs[b, : len(cids)]
        acc.vec_count[cids] += 1
        if len(cids) < 2:
            continue
        iu, ju = np.triu_indices(len(cids), 1)
        acc.keys.append(cids[iu].astype(np.int64) * acc.n + cids[ju])
        acc.vals.append(P[b][:, iu, ju].T.astype(np.float32))
    cpu["encoder"] += t2 - t1
    cpu["aggregate"] += (t1 - t0) + (time.process_time() - t2)


def _finish(doc_id: str, acc: _Acc, n_tokens: int, n_windows: int) -> DocAttention:
    vecs = acc.vec_sum / np.maximum(acc.vec_count, 1)[:, None]
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = (vecs / np.maximum(norms, 1e-12)).astype(np.float32)
    if acc.keys:
        keys = np.concatenate(acc.keys)
        vals = np.concatenate(acc.vals).astype(np.float64)
        order = np.argsort(keys, kind="stable")
        keys, vals = keys[order], vals[order]
        first = np.concatenate([[0], np.nonzero(np.diff(keys))[0] + 1])
        counts = np.diff(np.concatenate([first, [len(keys)]]))
        means = (np.add.reduceat(vals, first, axis=0) / counts[:, None]).astype(np.float32)
        uniq = keys[first]
        pairs = np.stack([uniq // acc.n, uniq % acc.n], axis=1).astype(np.int32)
    else:
        pairs, means, counts = np.zeros((0, 2), np.int32), np.zeros((0, acc.lh), np.float32), np.zeros(0, np.int64)
    return DocAttention(
        doc_id, acc.n, pairs, means, counts.astype(np.int32), vecs, acc.vec_count.astype(np.int32), n_tokens, n_windows
    )

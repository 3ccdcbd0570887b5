"""Stage functions the CLI calls: the attention pass over a dataset and the sprout index build."""

from __future__ import annotations

import logging
import time

import numpy as np

from pipeline.config import SPROUT_ATTENTION_DEFAULTS
from pipeline.cores import job_threads
from pipeline.index.store import IndexWriter
from pipeline.provenance import write_manifest
from pipeline.sprout.attention import AttentionEncoder, WindowConfig, corpus_attention
from pipeline.sprout.build import build_tree
from pipeline.sprout.chunks import leaf_chunks
from pipeline.sprout.corpus import load_attention, save_attention
from pipeline.sprout.heads import load_logits, mutual_scores, softmax, uniform_logits
from pipeline.sprout.store import write_trees
from pipeline.tree import DocTree

log = logging.getLogger(__name__)


def attention_config(cfg: dict | None) -> dict:
    return {**SPROUT_ATTENTION_DEFAULTS, **(cfg or {})}


def attention_encoder(cfg: dict) -> AttentionEncoder:
    cfg = attention_config(cfg)
    return AttentionEncoder(threads=job_threads(cfg["threads"]), kernel=cfg["kernel"])  # at most the job's threads


def window_config(cfg: dict) -> WindowConfig:
    return WindowConfig(cfg["window_tokens"], cfg["stride_tokens"], cfg["batch_tokens"])


def compute_attention(tree_paths: list[str], cfg: dict, out: str, progress: bool = True) -> dict:
    """One dataset's attention file (+ manifest). Returns counts and throughput."""
    cfg = attention_config(cfg)
    trees = [DocTree.load(p) for p in sorted(tree_paths)]
    encoder = attention_encoder(cfg)
    chunks = [leaf_chunks(t, cfg["max_sentences_per_chunk"]) for t in trees]
    docs = [(t.doc_id, t.text, c) for t, c in zip(trees, chunks) if c]
    t0 = time.perf_counter()
    result = corpus_attention(encoder, docs, window_config(cfg), progress=progress)
    seconds = time.perf_counter() - t0
    missing = [f"{d.doc_id}::leaf::{i}" for d in result for i in np.nonzero(d.chunk_windows == 0)[0]]
    stats = {
        "docs": len(result),
        "chunks": sum(d.n_chunks for d in result),
        "pairs": sum(len(d.pairs) for d in result),
        "tokens": sum(d.n_tokens for d in result),
        "windows": sum(d.n_windows for d in result),
        "chunks_without_tokens": len(missing),
        "seconds": round(seconds, 2),
        "windows_per_s": round(sum(d.n_windows for d in result) / max(seconds, 1e-9), 2),
    }
    if missing:  # counted and kept (zero vector, joined in document order), never dropped silently
        log.warning("%d chunk(s) have no token (e.g. %s)", len(missing), missing[:3])
    meta = {"model_id": encoder.model_id, "layers": encoder.layers, "heads": encoder.heads, "attention": cfg}
    spans = [[(c.start, c.end) for c in ch] for _, _, ch in docs]
    save_attention(out, result, spans, meta)
    write_manifest(
        out,
        {"sprout": cfg},
        inputs=sorted(tree_paths),
        model_id=encoder.model_id,
        counts={k: v for k, v in stats.items() if k not in ("seconds", "windows_per_s")},
    )
    log.info("sprout attention %s: %s", out, stats)
    return stats


def build_sprout_index(
    tree_paths: list[str], out: str, index_cfg: dict, attention_path: str, head_weights: str | None, config_slice: dict
) -> dict:
    """Trees from the attention file with uniform or trained head weights -> one sqlite index."""
    meta, attn, spans = load_attention(attention_path)
    L, H = meta["layers"], meta["heads"]
    heads = index_cfg.get("heads", "uniform")
    if heads == "trained":
        if not head_weights:
            raise ValueError("sprout index with heads: trained needs the head-weights file (run sprout_train)")
        logits = load_logits(head_weights, L, H)
    else:
        logits = uniform_logits(L, H)
    k = meta["attention"]["max_sentences_per_chunk"]
    trees = [DocTree.load(p) for p in sorted(tree_paths)]
    writer = IndexWriter(
        out,
        int(next(iter(attn.values())).leaf_vectors.shape[1]) if attn else 384,
        {
            "model_id": meta["model_id"],
            "index": index_cfg,
            "attention": meta["attention"],
            "head_weights": [round(float(w), 8) for w in softmax(logits)],
        },
    )
    t0 = time.perf_counter()
    built = []
    for tree in trees:
        chunks = leaf_chunks(tree, k)
        if not chunks:
            continue
        da = attn.get(tree.doc_id)
        if da is None or [tuple(s) for s in spans[tree.doc_id].tolist()] != [(c.start, c.end) for c in chunks]:
            raise ValueError(f"{tree.doc_id}: the attention file does not match this tree (rerun sprout_attention)")
        built.append(
            (
                tree,
                chunks,
                build_tree(tree.doc_id, len(chunks), da.pairs, mutual_scores(da.head_values, logits), da.leaf_vectors),
            )
        )
    tree_seconds = time.perf_counter() - t0
    counts = write_trees(writer, built)
    writer.close()
    stats = {
        "counts": counts,
        "tree_seconds": round(tree_seconds, 3),
        "tree_ms_per_doc": round(1000 * tree_seconds / max(len(built), 1), 2),
        "heads": heads,
    }
    trained_heads = [head_weights] if head_weights and heads == "trained" else []
    write_manifest(
        out,
        config_slice,
        inputs=sorted(tree_paths) + [attention_path] + trained_heads,
        model_id=meta["model_id"],
        counts=counts,
    )
    log.info("sprout index %s: %s", out, stats)
    return stats

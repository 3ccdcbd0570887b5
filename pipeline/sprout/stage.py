"""Stage functions the CLI calls: the attention pass over a dataset and the sprout index build."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.cores import job_threads
from pipeline.index_structures.store import IndexWriter
from pipeline.io import atomic_write_json
from pipeline.provenance import write_manifest
from pipeline.specs import AttentionSpec
from pipeline.sprout.attention import AttentionEncoder, BatchShape, dataset_attention, shard_attention, window_shapes
from pipeline.sprout.attention_file import load_attention, save_attention
from pipeline.sprout.build import build_tree
from pipeline.sprout.chunks import leaf_chunks
from pipeline.sprout.heads import load_logits, mutual_scores, softmax, uniform_logits
from pipeline.sprout.store import write_trees
from pipeline.tree import DocTree

log = logging.getLogger(__name__)


def attention_encoder(spec: AttentionSpec) -> AttentionEncoder:
    return AttentionEncoder(threads=job_threads(spec.threads), kernel=spec.kernel)  # at most the job's threads


def _chunked_docs(tree_paths: list[str], spec: AttentionSpec) -> list[tuple[str, str, list]]:
    """(doc_id, text, chunks) of every tree with a chunk, in document order (the files sorted)."""
    trees = [DocTree.load(p) for p in sorted(tree_paths)]
    chunks = [leaf_chunks(t, spec.max_sentences_per_chunk) for t in trees]
    return [(t.doc_id, t.text, c) for t, c in zip(trees, chunks) if c]


def _meta(encoder: AttentionEncoder, spec: AttentionSpec) -> dict:
    # the spec with its threads, as recorded since the first attention files (the hashed slice has none)
    return {"model_id": encoder.model_id, "layers": encoder.layers, "heads": encoder.heads, "attention": spec.as_dict()}


def compute_attention(tree_paths: list[str], spec: AttentionSpec, out: str, progress: bool = True) -> dict:
    """One dataset's attention file (+ manifest). Returns counts and throughput."""
    docs = _chunked_docs(tree_paths, spec)
    encoder = attention_encoder(spec)
    t0 = time.perf_counter()
    result = dataset_attention(encoder, docs, spec, progress=progress)
    spans = [[(c.start, c.end) for c in ch] for _, _, ch in docs]
    return _write_attention(out, tree_paths, result, spans, _meta(encoder, spec), time.perf_counter() - t0)


def _write_attention(out: str, tree_paths: list[str], result: list, spans: list, meta: dict, seconds: float) -> dict:
    """The attention file and its manifest, from every document's attention in document order (``meta``'s
    ``attention``: the spec, whose settings the manifest records)."""
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
    save_attention(out, result, spans, meta)
    write_manifest(
        out,
        {"sprout": meta["attention"]},
        inputs=sorted(tree_paths),
        model_id=meta["model_id"],
        counts={k: v for k, v in stats.items() if k not in ("seconds", "windows_per_s")},
    )
    log.info("sprout attention %s: %s", out, stats)
    return stats


# --- in shards (pipeline/shards.py): the dataset's passes planned once, each shard's documents run in them,
# the parts joined in document order into the file compute_attention writes ---


def plan_attention_windows(tree_paths: list[str], spec: AttentionSpec, out: str) -> dict:
    """Every window's pass and padded shape (pipeline.sprout.attention.window_shapes), by document: what each
    shard's job pads its windows to. Tokenises the dataset; runs no encoder pass."""
    docs = _chunked_docs(tree_paths, spec)
    shapes = window_shapes(attention_encoder(spec), docs, spec)
    plan = {doc_id: [[s.batch, s.width, s.columns] for s in doc] for (doc_id, _, _), doc in zip(docs, shapes)}
    atomic_write_json(out, plan)
    write_manifest(out, {"sprout": spec.as_dict()}, inputs=sorted(tree_paths))
    return {"docs": len(plan), "windows": sum(len(v) for v in plan.values())}


def compute_attention_part(tree_paths: list[str], spec: AttentionSpec, windows: str, out: str) -> dict:
    """One shard's part of the attention file: its documents run in the dataset's passes' shapes."""
    docs = _chunked_docs(tree_paths, spec)
    plan = json.loads(Path(windows).read_text(encoding="utf-8"))
    shapes = [[BatchShape(*s) for s in plan[doc_id]] for doc_id, _, _ in docs]
    encoder = attention_encoder(spec)
    t0 = time.perf_counter()
    result = shard_attention(encoder, docs, spec, shapes, progress=False)
    save_attention(out, result, [[(c.start, c.end) for c in ch] for _, _, ch in docs], _meta(encoder, spec))
    write_manifest(out, {"sprout": spec.as_dict()}, inputs=sorted(tree_paths) + [windows], model_id=encoder.model_id)
    return {"docs": len(result), "seconds": round(time.perf_counter() - t0, 2)}


def merge_attention(tree_paths: list[str], spec: AttentionSpec, parts: list[str], out: str) -> dict:
    """The dataset's attention file and manifest from its shards' parts, in order: compute_attention's bytes."""
    t0 = time.perf_counter()
    metas, result, spans = [], [], []
    for part in parts:
        meta, docs, doc_spans = load_attention(part)
        metas.append({k: v for k, v in meta.items() if k != "doc_ids"})
        result += [docs[d] for d in meta["doc_ids"]]
        spans += [[tuple(s) for s in doc_spans[d].tolist()] for d in meta["doc_ids"]]
    if any(m != metas[0] for m in metas):
        raise ValueError(f"the attention parts disagree on the encoder or settings: {parts}")
    if metas and metas[0]["attention"] != spec.as_dict():
        raise ValueError(f"the attention parts were computed with other settings than {spec.as_dict()}")
    return _write_attention(out, tree_paths, result, spans, metas[0], time.perf_counter() - t0)


@dataclass(frozen=True)
class SproutIndexJob:
    """One sprout index build: its trees, the attention file, and the head weights its ``heads`` names."""

    tree_paths: list[str]
    out: str
    heads: str  # indexes.<name>.heads: uniform | trained
    attention_path: str
    head_weights: str | None  # the sprout_train rule's file (needed by heads: trained)
    params: dict  # the hashed index slice: recorded in the index's meta and manifest, never read

    @property
    def trained_heads(self) -> list[str]:
        return [self.head_weights] if self.head_weights and self.heads == "trained" else []


def build_sprout_index(job: SproutIndexJob) -> dict:
    """Trees from the attention file with uniform or trained head weights -> one sqlite index."""
    meta, attn, spans = load_attention(job.attention_path)
    L, H = meta["layers"], meta["heads"]
    if job.heads == "trained":
        if not job.head_weights:
            raise ValueError("sprout index with heads: trained needs the head-weights file (run sprout_train)")
        logits = load_logits(job.head_weights, L, H)
    else:
        logits = uniform_logits(L, H)
    k = meta["attention"]["max_sentences_per_chunk"]
    trees = [DocTree.load(p) for p in sorted(job.tree_paths)]
    writer = IndexWriter(
        job.out,
        int(next(iter(attn.values())).leaf_vectors.shape[1]) if attn else 384,
        {
            "model_id": meta["model_id"],
            "index": job.params["index"],
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
        "heads": job.heads,
    }
    write_manifest(
        job.out,
        job.params,
        inputs=sorted(job.tree_paths) + [job.attention_path] + job.trained_heads,
        model_id=meta["model_id"],
        counts=counts,
    )
    log.info("sprout index %s: %s", job.out, stats)
    return stats

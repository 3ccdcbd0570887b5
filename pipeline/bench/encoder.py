"""`make bench`'s encoder comparison: the packaged "int8" ONNX file, the fp32 ONNX export and the
real int8 model (rule encoder_qint8; as the backend runs it, one text per pass, and batched) against the
fp32 torch reference, on WattBot's document sentences
and 512-token chunks: speed (wall and CPU seconds: the machine is shared), cosine fidelity, and doc
recall@k of a hier index built by each. Written to reports/bench/encoder.json; ``render`` turns it
into docs/encoder.md's generated block, so no measured number is typed by hand.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.cores import job_threads
from pipeline.datasets.wattbot import parse_ref_ids
from pipeline.embed.backends import get_backend, own_keys
from pipeline.embed.base import MINILM_MAX_TOKENS, Encoder
from pipeline.embed.factory import ensure_model_files, make_encoder
from pipeline.embed.fidelity import fidelity
from pipeline.embed.kernels import cpu_flags, encoder_path, has_int8_dot
from pipeline.embed.onnx_minilm import OnnxMiniLM
from pipeline.embed.quantize import INT8_VARIANTS, quantize_int8
from pipeline.index_structures.flat import chunk_tree
from pipeline.index_structures.hier import build_tree_index
from pipeline.index_structures.store import IndexReader, IndexWriter
from pipeline.specs import EncoderSpec
from pipeline.tree import DocTree

#: label -> backend config over the run's `embedding` (onnx-qint8 is the default)
ENCODERS = {
    "packaged-int8-file": {"backend": "onnx-int8"},
    "fp32-export": {"backend": "onnx-qint8", "precision": "fp32"},
    "qint8": {"backend": "onnx-qint8", "precision": "int8"},
    "torch-fp32": {"backend": "torch"},
}
REFERENCE = "torch-fp32"
INT8 = "qint8"  # the real int8 model: also run batched, and with precision auto (what the CPU gets)
#: the int8 file run in batches (``batch_size`` texts per pass), which the backend does not do: its
#: vectors depend on the batch (docs/encoder.md); measured to show what one text per pass costs
BATCHED_INT8 = "qint8-batched"
#: int8 variants for CPUs without VNNI (pipeline/embed/quantize.py), quantized by the bench from the fp32
#: export and run as the backend runs int8 (one text per pass): what an AVX2 CPU's bench measures
NO_VNNI_VARIANTS = ("rr", "u8u8")


def speed(encoder: Encoder, texts: list[str]) -> dict[str, float]:
    """Warm texts/s by wall clock and per CPU second of this process (all its threads)."""
    encoder.encode(texts[:8])
    w0, c0 = time.perf_counter(), time.process_time()
    encoder.encode(texts)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"per_s": len(texts) / wall, "per_cpu_s": len(texts) / max(cpu, 1e-9), "wall_s": wall, "cpu_s": cpu}


def best(rounds: list[dict[str, float]]) -> dict[str, float]:
    """The fastest of several rounds, by wall clock and by CPU time separately."""
    return {
        "per_s": max(r["per_s"] for r in rounds),
        "per_cpu_s": max(r["per_cpu_s"] for r in rounds),
        "wall_s": min(r["wall_s"] for r in rounds),
        "cpu_s": min(r["cpu_s"] for r in rounds),
    }


def recall_docs(doc_ids: list[str], questions: pd.DataFrame, n_docs: int) -> tuple[list[str], pd.DataFrame]:
    """The ``n_docs`` documents train questions cite most (ties by id), and the questions citing one of them."""
    gold = [set(parse_ref_ids(str(r))) for r in questions["ref_id"]]
    counts = Counter(d for g in gold for d in g if d in set(doc_ids))
    top = sorted(sorted(counts), key=lambda d: -counts[d])[:n_docs]
    keep = [bool(g & set(top)) for g in gold]
    return sorted(top), questions[keep].reset_index(drop=True)


def doc_hits(
    encoder: Encoder, trees: list, questions: pd.DataFrame, ks: tuple[int, ...], tmp: Path
) -> dict[int, list[int]]:
    """Per question and k: 1 if a gold document is among the top-k sentence/paragraph nodes' documents."""
    path = tmp / f"{len(list(tmp.iterdir()))}.sqlite"
    writer = IndexWriter(path, encoder.dim, {"model_id": encoder.model_id})
    build_tree_index(trees, encoder.encode, encoder.count_tokens, writer)
    writer.close()
    reader = IndexReader(path)
    qvecs = encoder.encode(questions["question"].tolist())
    hits: dict[int, list[int]] = {k: [] for k in ks}
    for q, ref in zip(qvecs, questions["ref_id"]):
        ranked = [n.doc_id for n, _ in reader.search(q, max(ks), ["sentence", "paragraph"])]
        gold = set(parse_ref_ids(str(ref)))
        for k in ks:
            hits[k].append(int(bool(gold & set(ranked[:k]))))
    reader.close()
    return hits


def paired_interval(a: list[int], b: list[int]) -> tuple[float, float, float]:
    """Mean of a - b per question with a normal 95% interval (paired: the same questions)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    half = 1.96 * d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def speed_texts(
    doc_trees: list[DocTree], tokens_of: Callable[[list[str]], list[int]], n_sentences: int, n_chunks: int
) -> tuple[list[str], list[str]]:
    """The speed test's texts: every k-th document sentence and every k-th 512-token chunk, evenly spread."""
    sentences = bench_sentences(doc_trees, n_sentences)
    chunks = []
    for t in doc_trees:
        sents = list(t.at_level("sentence"))
        chunks += [t.text[c.start : c.end] for c in chunk_tree(t, tokens_of([s.text for s in sents]), 512, 0)]
    chunks = chunks[:: max(1, len(chunks) // n_chunks)][:n_chunks]
    return sentences, chunks


def bench_sentences(doc_trees: list[DocTree], n_sentences: int) -> list[str]:
    """Every k-th sentence of the trees, ``n_sentences`` evenly spread: the bench sample the fidelity
    gate is read on (tests/embed/test_qint8.py checks the reduce-range file on it too)."""
    sentences = [n.text for t in doc_trees for n in t.at_level("sentence")]
    return sentences[:: max(1, len(sentences) // n_sentences)][:n_sentences]


@dataclass(frozen=True)
class Sizes:
    """How much the bench measures (the doc count of the recall test is the verb's own knob)."""

    n_sentences: int = 300  # speed: document sentences
    n_chunks: int = 16  # speed: 512-token chunks
    repeats: int = 3  # speed: interleaved rounds, best kept
    ks: tuple[int, ...] = (1, 3, 5, 10)  # recall@k


def shared_settings(embedding: EncoderSpec) -> dict:
    """The run's encoder settings every compared encoder takes: all but its backend, model, cache key and
    its backend's own keys (precision, dim)."""
    skip = {"backend", "model", "model_id", *own_keys()}
    return {k: v for k, v in embedding.as_dict().items() if k not in skip}


def bench_specs(embedding: EncoderSpec) -> dict[str, EncoderSpec]:
    """Each of :data:`ENCODERS` over the run's :func:`shared_settings`. A backend
    whose model files are built (onnx-qint8) reads them from the run's folder where the run uses it, else
    from its default one; they are built first where missing (no DAG rule has built them here)."""
    base = shared_settings(embedding)
    run_folder = embedding.model if get_backend(embedding.backend).build_files else None
    specs = {}
    for name, over in ENCODERS.items():
        model = {"model": run_folder} if run_folder and over["backend"] == embedding.backend else {}
        specs[name] = EncoderSpec.from_dict({**base, **over, **model})
        ensure_model_files(specs[name])
    return specs


def batched_int8(qint8: Encoder, embedding: EncoderSpec) -> OnnxMiniLM:
    """The int8 file of the onnx-qint8 encoder ``qint8``, run in batches of the run's ``batch_size``."""
    assert isinstance(qint8, OnnxMiniLM)  # the onnx-qint8 backend's encoder: its int8 file
    return OnnxMiniLM(
        model_file=qint8.model_file,
        batch_size=embedding.batch_size,
        max_tokens=embedding.max_tokens or MINILM_MAX_TOKENS,
        threads=job_threads(embedding.threads),
    )


def no_vnni_variants(export: Encoder, tmp: Path) -> dict[str, Encoder]:
    """``qint8-rr``, ``qint8-u8u8``: each variant quantized from the fp32 export into ``tmp`` and loaded
    (the session holds the graph: ``tmp`` may go once this returns)."""
    assert isinstance(export, OnnxMiniLM)  # the onnx-qint8 backend's fp32 export
    out: dict[str, Encoder] = {}
    for variant in NO_VNNI_VARIANTS:
        target = tmp / f"minilm-qint8-{variant}.onnx"
        quantize_int8(export.model_file, target, variant)
        out[f"{INT8}-{variant}"] = OnnxMiniLM(target, 1, export.max_tokens, export.threads)
    return out


def run_encoder_bench(
    embedding: EncoderSpec,
    load_tree: Callable[[str], DocTree],
    doc_ids: list[str],
    questions: pd.DataFrame,
    recall_n_docs: int = 4,
    sizes: Sizes = Sizes(),
) -> dict:
    """Measure every encoder of :data:`ENCODERS` (``embedding``: the run's encoder); `bench` saves the
    result as reports/bench/encoder.json."""
    specs = bench_specs(embedding)
    encoders = {name: make_encoder(spec) for name, spec in specs.items()}
    encoders[BATCHED_INT8] = batched_int8(encoders[INT8], embedding)
    with tempfile.TemporaryDirectory() as tmp:
        encoders |= no_vnni_variants(encoders["fp32-export"], Path(tmp))
    tokens_of = encoders[REFERENCE].count_tokens
    doc_trees = [load_tree(d) for d in sorted(doc_ids)[:3]]
    sentences, chunks = speed_texts(doc_trees, tokens_of, sizes.n_sentences, sizes.n_chunks)
    flags = cpu_flags()
    auto = make_encoder(replace(specs[INT8], precision="auto"))
    assert isinstance(auto, OnnxMiniLM)  # the onnx-qint8 backend's encoder: its model_file is what `auto` picked
    out: dict = {
        "docs_for_speed": [t.doc_id for t in doc_trees],
        "sentences": len(sentences),
        "chunks": len(chunks),
        "threads": embedding.threads,
        "int8_dot_product": has_int8_dot(flags),
        "auto_choice": auto.model_file.name,
        "auto_path": encoder_path(auto, flags).as_dict(),  # e.g. int8 (vnni): what precision auto runs here
        "encoders": {},
    }
    ref = encoders[REFERENCE]
    # Interleaved rounds, best kept: on a shared machine load comes and goes, and a round that ran
    # under less contention is the closer one to the encoder's own speed.
    rounds = [
        {
            (name, kind): speed(enc, texts)
            for name, enc in encoders.items()
            for kind, texts in (("sentences", sentences), ("chunks", chunks))
        }
        for _ in range(sizes.repeats)
    ]
    out["rounds"] = sizes.repeats
    for name, enc in encoders.items():
        row = {
            "model_id": enc.model_id,
            "path": encoder_path(enc, flags).label,
            **{kind: best([r[name, kind] for r in rounds]) for kind in ("sentences", "chunks")},
        }
        if name != REFERENCE:
            row["cosine_sentences"] = fidelity(enc, ref, sentences)
            row["cosine_chunks"] = fidelity(enc, ref, chunks)
        out["encoders"][name] = row
    packaged = out["encoders"]["packaged-int8-file"]["sentences"]["per_s"]
    for row in out["encoders"].values():
        row["sentence_speedup_vs_packaged"] = row["sentences"]["per_s"] / packaged
    rdocs, rq = recall_docs(doc_ids, questions, recall_n_docs)
    rtrees = [load_tree(d) for d in rdocs]
    out["recall"] = {"docs": [t.doc_id for t in rtrees], "questions": len(rq), "ks": list(sizes.ks), "by_encoder": {}}
    with tempfile.TemporaryDirectory() as tmp:
        hits = {name: doc_hits(enc, rtrees, rq, sizes.ks, Path(tmp)) for name, enc in encoders.items()}
    for name, h in hits.items():
        out["recall"]["by_encoder"][name] = {
            str(k): {
                "recall": float(np.mean(h[k])),
                **dict(zip(("diff_vs_ref", "lo", "hi"), paired_interval(h[k], hits[REFERENCE][k]))),
            }
            for k in sizes.ks
        }
    out["config"] = {
        "embedding": shared_settings(embedding),
        "encoders": {
            **ENCODERS,
            BATCHED_INT8: "the qint8 file, batched",
            **{f"{INT8}-{v}": f"quantize_dynamic {INT8_VARIANTS[v]}, one text per pass" for v in NO_VNNI_VARIANTS},
        },
    }
    return out

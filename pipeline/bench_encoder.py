"""`make bench`'s encoder comparison: the packaged "int8" ONNX file, the fp32 ONNX export and the
real int8 model (rule minilm_qint8; as the backend runs it, one text per pass, and batched) against the
fp32 torch reference, on WattBot corpus sentences
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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import markdown
from pipeline.cores import job_threads
from pipeline.datasets.wattbot import parse_ref_ids
from pipeline.embed.base import MINILM_MAX_TOKENS, Encoder
from pipeline.embed.factory import make_encoder
from pipeline.embed.fidelity import fidelity
from pipeline.embed.onnx_minilm import OnnxMiniLM
from pipeline.embed.quantize import QINT8_FILE, cpu_flags, ensure_qint8_model, has_int8_dot
from pipeline.index_files.flat import chunk_tree
from pipeline.index_files.hier import build_tree_index
from pipeline.index_files.store import IndexReader, IndexWriter
from pipeline.specs import EncoderSpec
from pipeline.tree import DocTree

REPORT = Path("bench") / "encoder.json"  # written by pipeline.report.bench_doc.save_bench
#: label -> backend config over the run's `embedding` (onnx-qint8 is the default)
ENCODERS = {
    "packaged-int8-file": {"backend": "onnx-int8"},
    "fp32-export": {"backend": "onnx-qint8", "precision": "fp32"},
    "qint8": {"backend": "onnx-qint8", "precision": "int8"},
    "torch-fp32": {"backend": "torch"},
}
REFERENCE = "torch-fp32"
#: the int8 file run in batches (``batch_size`` texts per pass), which the backend does not do: its
#: vectors depend on the batch (docs/encoder.md); measured to show what one text per pass costs
BATCHED_INT8 = "qint8-batched"


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
    corpus_trees: list[DocTree], tokens_of: Callable[[list[str]], list[int]], n_sentences: int, n_chunks: int
) -> tuple[list[str], list[str]]:
    """The speed test's texts: every k-th corpus sentence and every k-th 512-token chunk, evenly spread."""
    sentences = [n.text for t in corpus_trees for n in t.at_level("sentence")]
    sentences = sentences[:: max(1, len(sentences) // n_sentences)][:n_sentences]
    chunks = []
    for t in corpus_trees:
        sents = list(t.at_level("sentence"))
        chunks += [t.text[c.start : c.end] for c in chunk_tree(t, tokens_of([s.text for s in sents]), 512, 0)]
    chunks = chunks[:: max(1, len(chunks) // n_chunks)][:n_chunks]
    return sentences, chunks


@dataclass(frozen=True)
class Sizes:
    """How much the bench measures (the doc count of the recall test is the verb's own knob)."""

    n_sentences: int = 300  # speed: corpus sentences
    n_chunks: int = 16  # speed: 512-token chunks
    repeats: int = 3  # speed: interleaved rounds, best kept
    ks: tuple[int, ...] = (1, 3, 5, 10)  # recall@k


def run_encoder_bench(
    cfg: dict,
    load_tree: Callable[[str], DocTree],
    doc_ids: list[str],
    questions: pd.DataFrame,
    recall_n_docs: int = 4,
    sizes: Sizes = Sizes(),
) -> dict:
    """Measure every encoder of :data:`ENCODERS`; `bench` saves the result as reports/bench/encoder.json."""
    model_dir = ensure_qint8_model(cfg["embedding"] if cfg["embedding"]["backend"] == "onnx-qint8" else {})
    base = {k: v for k, v in cfg["embedding"].items() if k not in ("model", "model_id", "precision", "backend")}
    spec = EncoderSpec.from_dict(cfg["embedding"])  # the configured encoder, the schema's defaults filled
    encoders = {
        name: make_encoder({**base, **c, **({"model": str(model_dir)} if c["backend"] == "onnx-qint8" else {})})
        for name, c in ENCODERS.items()
    }
    encoders[BATCHED_INT8] = OnnxMiniLM(
        model_file=Path(model_dir) / QINT8_FILE,
        batch_size=spec.batch_size,
        max_tokens=spec.max_tokens or MINILM_MAX_TOKENS,
        threads=job_threads(spec.threads),
    )
    tokens_of = encoders[REFERENCE].count_tokens
    corpus_trees = [load_tree(d) for d in sorted(doc_ids)[:3]]
    sentences, chunks = speed_texts(corpus_trees, tokens_of, sizes.n_sentences, sizes.n_chunks)
    flags = cpu_flags()
    auto = make_encoder({**base, "backend": "onnx-qint8", "model": str(model_dir)})
    assert isinstance(auto, OnnxMiniLM)  # the onnx-qint8 backend's encoder: its model_file is what `auto` picked
    out: dict = {
        "docs_for_speed": [t.doc_id for t in corpus_trees],
        "sentences": len(sentences),
        "chunks": len(chunks),
        "threads": spec.threads,
        "int8_dot_product": has_int8_dot(flags),
        "auto_choice": auto.model_file.name,
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
    out["config"] = {"embedding": base, "encoders": {**ENCODERS, BATCHED_INT8: "the qint8 file, batched"}}
    return out


def render(reports_dir: Path) -> str:
    """docs/encoder.md's generated block: speed, fidelity and recall per encoder from reports/bench/encoder.json."""
    import json

    path = Path(reports_dir) / REPORT
    if not path.exists():
        return f"(no {path} yet: run `python -m pipeline bench`)"
    r = json.loads(path.read_text())
    lines = [
        f"Speed on {r['sentences']} corpus sentences and {r['chunks']} 512-token chunks of "
        f"{', '.join(r['docs_for_speed'])}, {r['threads']} thread{'' if r['threads'] == 1 else 's'}, "
        f"best of {r.get('rounds', 1)} interleaved rounds; "
        "int8 dot-product instructions: "
        f"{'yes' if r['int8_dot_product'] else 'no'} (so `precision: auto` uses `{r['auto_choice']}`).",
        "",
    ]
    rows = []
    for name, e in r["encoders"].items():
        cs, cc = e.get("cosine_sentences"), e.get("cosine_chunks")
        cos = (
            [f"{cs['mean_cosine']:.4f} / {cs['min_cosine']:.4f}", f"{cc['mean_cosine']:.4f} / {cc['min_cosine']:.4f}"]
            if cs
            else ["reference", "reference"]
        )
        rows.append(
            [
                name,
                f"{e['sentences']['per_s']:.0f}",
                f"{e['sentences']['per_cpu_s']:.0f}",
                f"{e['sentence_speedup_vs_packaged']:.2f}",
                f"{e['chunks']['per_s']:.1f}",
                f"{e['chunks']['per_cpu_s']:.1f}",
                *cos,
            ]
        )
    lines += markdown.table_lines(
        [
            "encoder",
            "sentences/s",
            "sentences/CPU-s",
            "× packaged",
            "chunks/s",
            "chunks/CPU-s",
            "cosine to fp32, sentences (mean / min)",
            "chunks (mean / min)",
        ],
        rows,
    )
    rec = r["recall"]
    lines += [
        "",
        f"Doc recall@k on the {rec['questions']} WattBot train questions citing one of "
        f"{', '.join(rec['docs'])} (a hier index of those documents per encoder; "
        f"difference to fp32 torch with a paired 95% interval):",
        "",
    ]

    def cell(name: str, v: dict) -> str:
        diff = "" if name == REFERENCE else f" ({v['diff_vs_ref']:+.3f} [{v['lo']:+.3f}, {v['hi']:+.3f}])"
        return f"{v['recall']:.3f}" + diff

    rows = [[name, *(cell(name, v) for v in by_k.values())] for name, by_k in rec["by_encoder"].items()]
    lines += markdown.table_lines(["encoder", *(f"recall@{k}" for k in rec["ks"])], rows)
    return "\n".join(lines)

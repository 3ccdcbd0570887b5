"""`make bench`: indexing throughput vs raw encoder throughput, dense-retrieval latency,
and the fidelity of the fast int8 encoder to the fp32 reference. Prints the figures.

Targets live here, not in timed unit tests: a slow machine should print slow numbers,
not fail the suite.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from pipeline.config import load_config, model_encoders
from pipeline.embed import EmbeddingCache, encoder_throughput, fidelity, make_encoder
from pipeline.embed.factory import ensure_model_files
from pipeline.index_structures.hier import build_tree_index
from pipeline.index_structures.store import IndexReader, IndexWriter
from pipeline.parse.payload import load_payload
from pipeline.specs import AttentionSpec, EncoderSpec
from pipeline.workflow import doc_ids, split_source


def run_bench(
    configfiles: Sequence[str | Path] = (), n_docs: int = 3, n_queries: int = 41, overrides: dict | None = None
) -> dict:
    cfg = load_config(configfiles, overrides)
    json_dir = Path(cfg["wattbot"]["dir"]) / "corpus"  # WattBot's pre-extracted JSON
    trees = [load_payload(json_dir / f"{d}.json") for d in doc_ids(cfg)[:n_docs]]
    sentences = [n.text for t in trees for n in t.at_level("sentence")]
    ensure_model_files(cfg["embedding"])  # a backend's built model files are a DAG output, missing outside it
    encoder = make_encoder(cfg["embedding"])
    out: dict = {
        "docs": [t.doc_id for t in trees],
        "sentences": len(sentences),
        "encoder": encoder.model_id,
        "cpus": os.cpu_count(),
    }

    out["encoder_sentences_per_s"] = round(encoder_throughput(encoder, sentences), 1)
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "emb.sqlite")  # cold cache: every sentence is really embedded
        writer = IndexWriter(Path(tmp) / "hier.sqlite", encoder.dim, {"model_id": encoder.model_id})
        t0 = time.perf_counter()
        build_tree_index(
            trees, lambda texts: cache.encode(encoder, texts, progress=False), encoder.count_tokens, writer
        )
        writer.close()
        out["indexing_sentences_per_s"] = round(len(sentences) / (time.perf_counter() - t0), 1)

        questions = pd.read_csv(split_source(cfg, cfg["wattbot"]["score_split"]), dtype=str)["question"].tolist()
        questions = questions[:n_queries]
        reader = IndexReader(Path(tmp) / "hier.sqlite")
        latencies = []
        for q in questions:
            t0 = time.perf_counter()
            reader.search(encoder.encode([q])[0], 16, ["sentence", "paragraph"])
            latencies.append((time.perf_counter() - t0) * 1000)
        out["retrieval_index_nodes"] = reader.count()
        reader.close()
        out["retrieval_ms_per_query_median"] = round(statistics.median(latencies), 2)
        out["retrieval_ms_per_query_p95"] = round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 2)

    try:  # the fp32 torch reference needs the optional torch extra
        reference = make_encoder({k: v for k, v in cfg["embedding"].items() if k != "model"} | {"backend": "torch"})
    except ImportError as exc:
        out["fp32_reference"] = f"skipped: {exc}"
        reference = None
    if reference is not None and reference.model_id != encoder.model_id:
        sample = sentences[:: max(1, len(sentences) // 300)][:300]
        out["fidelity_vs_fp32"] = {k: round(v, 5) for k, v in fidelity(encoder, reference, sample).items()}
        out["sample_sentences_per_s"] = {
            encoder.model_id: round(encoder_throughput(encoder, sample), 1),
            reference.model_id: round(encoder_throughput(reference, sample), 1),
        }

    out["encoders_sentences_per_s"] = encoder_costs(
        EncoderSpec.from_dict(cfg["embedding"]), model_encoders(cfg), sentences
    )
    print(json.dumps(out, indent=1))
    return out


def run_encoder_comparison(
    configfiles: Sequence[str | Path] = (), overrides: dict | None = None, recall_docs: int = 4
) -> dict:
    """The packaged / fp32-export / int8 / torch MiniLM comparison (pipeline/bench/encoder.py)."""
    from pipeline.bench.encoder import run_encoder_bench

    cfg = load_config(configfiles, overrides)
    json_dir = Path(cfg["wattbot"]["dir"]) / "corpus"  # WattBot's pre-extracted JSON
    train = pd.read_csv(split_source(cfg, cfg["wattbot"]["score_split"]), dtype=str)
    out = run_encoder_bench(
        EncoderSpec.from_dict(cfg["embedding"]),
        lambda d: load_payload(json_dir / f"{d}.json"),
        doc_ids(cfg),
        train,
        recall_n_docs=recall_docs,
    )
    print(json.dumps(out, indent=1))
    return out


def encoder_costs(
    default: EncoderSpec, models: Sequence[EncoderSpec], sentences: list[str], n: int = 300
) -> dict[str, float]:
    """Warm sentences/s of the default encoder and of every assembled ``embedding_models`` entry
    (``models``: those whose folder exists) on the same sample (the cost of a strong-encoder variant beside MiniLM's)."""
    sample = sentences[:: max(1, len(sentences) // n)][:n]
    specs = [default, *(m for m in models if m.model and Path(m.model).exists())]
    encoders = [make_encoder(s) for s in specs]
    return {e.model_id: round(encoder_throughput(e, sample), 1) for e in encoders}


def run_sprout_bench(
    configfiles: Sequence[str | Path] = (), n_docs: int = 3, n_queries: int = 41, overrides: dict | None = None
) -> dict:
    """SproutRAG costs over ``n_docs`` WattBot documents: the attention pass (windows/s, process CPU seconds
    per window and per phase) for the eager reference and the configured kernel, with their agreement;
    Kruskal tree build per document; beam search per query (query encoding reported apart).
    docs/sprout-speed.md renders the attention figures (pipeline.publish.bench_doc.render_sprout_speed)."""
    import numpy as np

    from pipeline.specs import SproutSpec
    from pipeline.sprout.build import build_tree
    from pipeline.sprout.chunks import leaf_chunks
    from pipeline.sprout.heads import mutual_scores, uniform_logits
    from pipeline.sprout.speed import merge_order

    cfg = load_config(configfiles, overrides)
    spec = SproutSpec.from_dict(cfg["sprout"]).attention  # with its threads: the bench runs as configured
    scfg = spec.as_dict()
    json_dir = Path(cfg["wattbot"]["dir"]) / "corpus"  # WattBot's pre-extracted JSON
    every = [load_payload(json_dir / f"{d}.json") for d in doc_ids(cfg)]
    trees = sorted(every, key=lambda t: (len(t.text), t.doc_id))[:n_docs]  # the smallest: a quick, fair sample
    docs = [(t.doc_id, t.text, leaf_chunks(t, spec.max_sentences_per_chunk)) for t in trees]
    runs = {k: _attention_run(replace(spec, kernel=k), docs) for k in dict.fromkeys(["eager", spec.kernel])}
    encoder, attn, speed = runs[spec.kernel]
    windows = sum(a.n_windows for a in attn)
    out: dict = {
        "docs": [t.doc_id for t in trees],
        "chunks": sum(a.n_chunks for a in attn),
        "windows": windows,
        "tokens": sum(a.n_tokens for a in attn),
        "cpus": os.cpu_count(),
        "attention": scfg,
        "windows_per_s": speed["windows_per_s"],
        "attention_seconds": speed["wall_s"],
        "kernels": {k: r[2] for k, r in runs.items()},
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
    }
    logits = uniform_logits(encoder.layers, encoder.heads)
    if len(runs) > 1:  # the reference's outputs: the fused kernel must give the same values and trees
        ref = runs["eager"][1]
        out["max_abs_head_value_diff_vs_eager"] = float(
            max(np.abs(a.head_values - b.head_values).max(initial=0) for a, b in zip(attn, ref))
        )
        out["trees_identical_to_eager"] = all(
            merge_order(a, logits) == merge_order(b, logits) for a, b in zip(attn, ref)
        )
        out["speedup_cpu_per_window_vs_eager"] = round(
            runs["eager"][2]["cpu_s_per_window"] / speed["cpu_s_per_window"], 2
        )
    t0 = time.perf_counter()
    built = [
        build_tree(a.doc_id, a.n_chunks, a.pairs, mutual_scores(a.head_values, logits), a.leaf_vectors) for a in attn
    ]
    out["tree_build_s_per_doc"] = round((time.perf_counter() - t0) / len(built), 5)
    out["max_height"] = int(max(t.height[t.root] for t in built))
    out["tree_nodes"] = int(sum(t.n_nodes for t in built))
    questions = pd.read_csv(split_source(cfg, cfg["wattbot"]["score_split"]), dtype=str)["question"].tolist()[
        :n_queries
    ]
    _beam_search_latency(out, questions, built, spec.threads)
    _wattbot_estimate(out, every, encoder, spec)
    print(json.dumps(out, indent=1))
    return out


def _beam_search_latency(out: dict, questions: list[str], built: list, threads: int) -> None:
    """Query encoding ms per question, then the median beam-search ms per query at beam widths 1..10."""
    import numpy as np

    from pipeline.embed import make_encoder
    from pipeline.specs import BeamSpec
    from pipeline.sprout.beam_search import search_documents
    from pipeline.sprout.searcher import query_encoder

    qenc = make_encoder(query_encoder(threads).as_dict())
    t0 = time.perf_counter()
    qvecs = qenc.encode(questions)
    out["query_encoding_ms"] = round(1000 * (time.perf_counter() - t0) / len(questions), 2)
    for b in (1, 3, 5, 10):
        beam = BeamSpec.from_dict({"beam_width": b})  # the declared defaults otherwise
        lat = []
        for q in qvecs:
            t0 = time.perf_counter()
            search_documents(built, np.asarray(q), beam, 10)
            lat.append((time.perf_counter() - t0) * 1000)
        out[f"beam_search_ms_per_query_b{b}"] = round(statistics.median(lat), 3)


def _wattbot_estimate(out: dict, every: list, encoder, spec: AttentionSpec) -> None:
    """All of WattBot's documents: their tokens and windows, and its attention minutes at the measured rates."""
    from pipeline.sprout.attention import plan_windows

    n_tok = [len(encoder.tokenize(t.text)[0]) for t in every]
    out["corpus_tokens"] = sum(n_tok)
    out["corpus_windows"] = sum(len(plan_windows(n, spec.window_tokens, spec.stride_tokens)) for n in n_tok)
    out["corpus_attention_minutes_at_this_rate"] = round(out["corpus_windows"] / out["windows_per_s"] / 60, 1)
    for r in out["kernels"].values():  # CPU-bound: an otherwise idle machine gives `threads` CPU seconds a second
        r["corpus_minutes_idle_estimate"] = round(out["corpus_windows"] * r["cpu_s_per_window"] / spec.threads / 60, 1)


def _attention_run(spec: AttentionSpec, docs: list) -> tuple:
    """(encoder, DocAttentions, speed) for one attention kernel: wall and process CPU seconds, per phase."""
    from collections import defaultdict

    from pipeline.sprout.attention import dataset_attention
    from pipeline.sprout.stage import attention_encoder

    encoder = attention_encoder(spec)
    cpu: defaultdict[str, float] = defaultdict(float)
    w0, c0 = time.perf_counter(), time.process_time()
    attn = dataset_attention(encoder, docs, spec, progress=False, cpu=cpu)
    wall, cpu_s = time.perf_counter() - w0, time.process_time() - c0
    windows = sum(a.n_windows for a in attn)
    return (
        encoder,
        attn,
        {
            "model_id": encoder.model_id,
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu_s, 2),
            "windows_per_s": round(windows / wall, 3),
            "cpu_s_per_window": round(cpu_s / windows, 4),
            "cpu_s_by_phase": {k: round(v, 2) for k, v in sorted(cpu.items())},
        },
    )

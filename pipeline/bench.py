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
from pathlib import Path

import pandas as pd

from pipeline.config import load_config
from pipeline.embed import EmbeddingCache, encoder_throughput, fidelity, make_encoder
from pipeline.index.hier import build_tree_index
from pipeline.index.store import IndexReader, IndexWriter
from pipeline.parse.payload import load_payload
from pipeline.workflow import doc_ids, split_source


def run_bench(config_path: str = "config.yaml", n_docs: int = 3, n_queries: int = 41) -> dict:
    cfg = load_config(config_path)
    corpus = Path(cfg["wattbot"]["dir"]) / "corpus"
    trees = [load_payload(corpus / f"{d}.json") for d in doc_ids(cfg)[:n_docs]]
    sentences = [n.text for t in trees for n in t.at_level("sentence")]
    encoder = make_encoder(cfg["embedding"])
    out: dict = {"docs": [t.doc_id for t in trees], "sentences": len(sentences), "encoder": encoder.model_id,
                 "cpus": os.cpu_count()}

    out["encoder_sentences_per_s"] = round(encoder_throughput(encoder, sentences), 1)
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "emb.sqlite")  # cold cache: every sentence is really embedded
        writer = IndexWriter(Path(tmp) / "hier.sqlite", encoder.dim, {"model_id": encoder.model_id})
        t0 = time.perf_counter()
        build_tree_index(trees, lambda texts: cache.encode(encoder, texts, progress=False), encoder.count_tokens, writer)
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
        out["sample_sentences_per_s"] = {encoder.model_id: round(encoder_throughput(encoder, sample), 1),
                                         reference.model_id: round(encoder_throughput(reference, sample), 1)}

    print(json.dumps(out, indent=1))
    return out

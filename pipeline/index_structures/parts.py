"""A dense index built in shards (pipeline/shards.py): each shard's job writes a part, one writer merges them.

A part is an index file of the shard's documents (the same writer, the same nodes and vectors as the whole
build makes for them: a dense kind's nodes and vectors are each document's own), plus a ``part`` row in its
``meta`` with what its build found (node counts, the encoder path). The merge copies the parts' nodes and
vectors in shard order, which is the document order a whole build walks, into a fresh index with the whole
build's meta and manifest: the same bytes whatever the cut (tests/index/test_index_shards.py). It reads one
batch of rows at a time, so its memory does not grow with the corpus; only its output does.

Parts whose encoder paths differ (shard jobs on nodes with different int8 kernels: pipeline/embed/kernels.py)
are refused: their vectors would not be one index's.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pipeline.index_structures.store import IndexReader, IndexWriter
from pipeline.provenance import write_manifest
from pipeline.registry.index_kinds import IndexJob

log = logging.getLogger(__name__)

PART_META = "part"  # the meta row a shard's part carries and a whole index does not


def write_part_meta(writer: IndexWriter, counts: dict, encoder_path: dict) -> None:
    """What the merge needs of a part besides its rows: its node counts and what its vectors were computed on."""
    writer.add_meta(PART_META, {"counts": counts, "encoder_path": encoder_path})


def _part_meta(reader: IndexReader, path: str, job: IndexJob) -> dict:
    if PART_META not in reader.meta:
        raise ValueError(f"{path}: not a shard's part (no '{PART_META}' meta row)")
    if reader.meta.get("index") != job.provenance["index"]:
        raise ValueError(f"{path}: a part of another index configuration than the one being merged")
    return reader.meta[PART_META]


def _same(values: list, what: str, paths: tuple[str, ...]) -> Any:
    if any(v != values[0] for v in values):
        raise ValueError(f"the parts disagree on {what}: " + "; ".join(f"{p}: {v}" for p, v in zip(paths, values)))
    return values[0]


def merge_parts(job: IndexJob) -> dict:
    """The index at ``job.out`` from ``job.parts`` in order; its manifest as a whole build writes it."""
    t0 = time.perf_counter()
    index_cfg = job.provenance["index"]
    readers = [IndexReader(p) for p in job.parts]
    metas = [_part_meta(r, p, job) for r, p in zip(readers, job.parts)]
    model_id = _same([r.meta["model_id"] for r in readers], "the encoder", job.parts)
    dim = _same([r.meta["dim"] for r in readers], "the vectors' dimension", job.parts)
    path = _same([m["encoder_path"] for m in metas], "the encoder path", job.parts)
    writer = IndexWriter(job.out, dim, {"model_id": model_id, "index": index_cfg})
    for reader in readers:
        for nodes, vectors in reader.nodes_with_vectors():
            writer.add(nodes, vectors)
        reader.close()
    writer.close()
    counts = {k: sum(m["counts"][k] for m in metas) for k in metas[0]["counts"]}
    write_manifest(
        job.out, job.provenance, inputs=sorted(job.trees), model_id=model_id, encoder_path=path, counts=counts
    )
    stats = {"counts": counts, "parts": len(job.parts), "seconds": round(time.perf_counter() - t0, 3)}
    log.info("index %s merged: %s", job.out, stats)
    return stats

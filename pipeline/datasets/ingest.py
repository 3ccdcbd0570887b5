"""The ingest stage: validate the raw WattBot files once, write clean UTF-8 copies.

Downstream stages read only these copies, so encoding quirks (metadata.csv is cp1252) and
bad rows are handled in one place and fail before any expensive work.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pipeline.datasets.wattbot import load_metadata, load_questions
from pipeline.io import atomic_write_text
from pipeline.provenance import write_manifest


def ingest(
    metadata_in: str | Path,
    questions_in: Mapping[str, str | Path],
    metadata_out: str | Path,
    questions_out: Mapping[str, str | Path],
) -> dict[str, int]:
    meta = load_metadata(metadata_in)
    docs = set(meta["id"])
    atomic_write_text(metadata_out, meta.to_csv(index=False, lineterminator="\n"))
    write_manifest(metadata_out, {}, [metadata_in])
    counts = {"documents": len(meta)}
    for split, src in questions_in.items():
        df = load_questions(src, known_docs=docs)
        atomic_write_text(questions_out[split], df.to_csv(index=False, lineterminator="\n"))
        write_manifest(questions_out[split], {"split": split}, [src, metadata_in])
        counts[split] = len(df)
    return counts

"""A split's retrieval in batches of consecutive queries (pipeline/shards.py: query_batches), joined by one
writer into the file the whole job writes: each batch runs the whole job's code on its rows (a query's row
depends on no other query: its plan, its vector and its search are its own), so the join is the batches'
bytes in query order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path


def join_batches(ids: Sequence[str], batches: Sequence[str | Path]) -> bytes:
    """The batches' rows as their jobs wrote them, in the order given, checked to be the split's questions
    ``ids`` in file order, each once (a batch missing, repeated or out of order is an error)."""
    blobs = [Path(b).read_bytes() for b in batches]
    got = [json.loads(line)["id"] for blob in blobs for line in blob.splitlines() if line.strip()]
    if got != list(ids):
        raise ValueError(
            f"the {len(batches)} batches hold {len(got)} rows that are not the split's {len(ids)} questions "
            "in file order: a batch is missing, repeated or out of order"
        )
    return b"".join(blobs)

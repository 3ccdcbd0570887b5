"""Each question's document, for tests whose units are documents where questions share one (issue #44 item 10).

WattBot's questions cite the papers their answers come from (``ref_id``), a LegalBench-RAG query's gold
spans lie in one contract, a DragonBall query's in one or a few documents. Questions of one
document are not independent evidence: the row's sign-flip test flips them together. A question's document
is the set it cites, made into one cluster with every question citing any of them (connected components:
:func:`pipeline.report.stats.signflip.document_clusters`); a question citing none (an unanswerable one,
``is_blank``) is a cluster of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from pipeline.datasets.wattbot import parse_ref_ids
from pipeline.io import read_jsonl
from pipeline.report.stats.signflip import document_clusters


def _clusters(ids: Sequence[str], refs: Sequence[list[str]]) -> pd.Series:
    return pd.Series(document_clusters(refs), index=pd.Index([str(i) for i in ids], name="id"), dtype=object)


def wattbot_clusters(labels: pd.DataFrame) -> pd.Series:
    """question id -> its document cluster, from a labelled split's ``ref_id`` column (none: an empty Series)."""
    if "ref_id" not in labels:
        return pd.Series(dtype=object)
    return _clusters(labels["id"].tolist(), [parse_ref_ids(r) for r in labels["ref_id"]])


def suite_clusters(gold: str | Path) -> pd.Series:
    """query id -> its document cluster, from a suite dataset's gold spans (``export/gold.jsonl``)."""
    docs: dict[str, list[str]] = {}
    for span in read_jsonl(gold):
        seen = docs.setdefault(str(span["query_id"]), [])
        if span["doc_id"] not in seen:
            seen.append(span["doc_id"])
    return _clusters(list(docs), list(docs.values()))

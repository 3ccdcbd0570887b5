"""DragonBall (RAGEval): synthetic finance/law/medical reports in English and Chinese.

Gold = the queries' reference quotes as character spans (the offline copy's ``reference_char_spans``:
first exact occurrence of each quote in a gold document; 3% of quotes are not verbatim and have
none). Queries with no mapped reference (the "Irrelevant Unsolvable" type, whose answer is
"Unable to answer") and the 3 queries whose gold documents are missing upstream are dropped:
retrieval recall is undefined for them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.config_schema import key, parse_spec
from pipeline.datasets.suite import PilotSubset, SuiteTables, make_suite_tables, pilot_draw, read_records
from pipeline.registry.suite_datasets import SuiteDataset, register

DOCS, QUERIES = "dragonball_docs.jsonl", "dragonball_queries_subset.jsonl"
# English, 12 seeded documents per domain among those some query cites, and their queries:
# 36 documents, 2,634 sentences after parse_text, 72 queries, 241 quote spans.
DEFAULT_SUBSET = {"language": "en", "docs_per_domain": 12, "seed": 0}


@dataclass(frozen=True, kw_only=True)
class Subset(PilotSubset):
    """The documents and queries a run loads: ``suite.datasets.dragonball`` (a sampling unit is a document of
    one language and domain)."""

    language: str | list[str] | None = key(
        "en, zh, or a list of them (null: both)", type=("string", "array", "null"), default=None
    )
    domain: str | list[str] | None = key(
        "Finance, Law, Medical, or a list of them (null: all)", type=("string", "array", "null"), default=None
    )
    docs_per_domain: int | None = key(
        "cited documents drawn per (language, domain), keeping the queries whose gold documents all made it; null: all",
        type=("integer", "null"),
        default=None,
        schema={"minimum": 1},
    )


def load(root: str | Path, **subset: Any) -> SuiteTables:
    """:class:`Subset` ``(**subset)``: filter by ``language`` (en, zh) and ``domain`` (Finance, Law,
    Medical); ``docs_per_domain`` samples cited documents per (language, domain) and keeps queries whose
    gold documents all made it;
    ``pilot`` samples up to that many per (language, domain) instead, none of which a draw of up to
    ``docs_per_domain`` takes (``pilot_draw``: a pilot query's gold documents all lie outside every such
    final selection, so no query is in both)."""
    sub = parse_spec(Subset, subset, "suite.datasets.dragonball")
    language, domain, docs_per_domain, seed, pilot = sub.language, sub.domain, sub.docs_per_domain, sub.seed, sub.pilot
    docs = read_records(root, DOCS)  # a local folder, or a hub repo holding the same two files
    queries = [q for q in read_records(root, QUERIES) if not q.get("missing_doc_ids")]
    keep = lambda r: _match(r["language"], language) and _match(r["domain"], domain)  # noqa: E731
    docs = [d for d in docs if keep(d)]
    queries = [q for q in queries if keep(q) and any(s for s in q.get("reference_char_spans") or [])]
    if docs_per_domain is not None or pilot is not None:
        cited = {d for q in queries for d in q["ground_truth"]["doc_ids"]}
        groups: dict[tuple, list[int]] = {}
        for group in sorted({(d["language"], d["domain"]) for d in docs}):
            groups[group] = sorted(
                d["doc_id"] for d in docs if (d["language"], d["domain"]) == group and d["doc_id"] in cited
            )
        draw = lambda k: _per_group(groups, k, seed)  # noqa: E731
        if pilot is None:
            chosen = set(draw(docs_per_domain))
        else:  # per group: a document no final of up to docs_per_domain per group takes
            cap = docs_per_domain or max(map(len, groups.values()))
            chosen = {i for ids in groups.values() for i in pilot_draw(ids, draw, cap, pilot, sub.pilot_seed)}
        docs = [d for d in docs if d["doc_id"] in chosen]
    present = {d["doc_id"] for d in docs}
    queries = [q for q in queries if set(q["ground_truth"]["doc_ids"]) <= present]

    doc_rows = [
        {
            "doc_id": _doc_id(d["doc_id"]),
            "title": _title(d),
            "text": d["content"],
            "source_id": str(d["doc_id"]),
            "language": d["language"],
            "domain": d["domain"],
        }
        for d in docs
    ]
    query_rows, gold = [], []
    for q in queries:
        qid = f"{q['language']}-{q['query']['query_id']}"
        query_rows.append(
            {
                "id": qid,
                "question": q["query"]["content"],
                "language": q["language"],
                "domain": q["domain"],
                "query_type": q["query"]["query_type"],
                "answer": q["ground_truth"]["content"],
                "gold_docs": ",".join(_doc_id(d) for d in q["ground_truth"]["doc_ids"]),
            }
        )
        spans = {(s["doc_id"], s["start"], s["end"]) for s in q["reference_char_spans"] if s}
        gold += [{"query_id": qid, "doc_id": _doc_id(d), "start": s, "end": e, "grade": 1} for d, s, e in sorted(spans)]
    return make_suite_tables("dragonball", doc_rows, query_rows, gold)


def _per_group(groups: dict[tuple, list[int]], k: int, seed: int) -> list[int]:
    """``k`` seeded documents of each (language, domain) group (all of a smaller one), one generator for all."""
    rng = random.Random(seed)
    return [i for ids in groups.values() for i in rng.sample(ids, min(k, len(ids)))]


def _title(doc: dict) -> str:
    """The entity the report is about: company (Finance), court (Law) or hospital_patient (Medical)."""
    return doc.get("company_name") or doc.get("court_name") or doc.get("hospital_patient_name") or ""


def _doc_id(source_id: int | str) -> str:
    return f"dragonball-{source_id}"


def _match(value: str, wanted: str | list[str] | None) -> bool:
    if wanted is None:
        return True
    wanted = [wanted] if isinstance(wanted, str) else wanted
    return value.lower() in {w.lower() for w in wanted}


register(SuiteDataset("dragonball", __name__, "dragonball", subset=Subset))

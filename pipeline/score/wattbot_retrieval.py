"""LLM-independent retrieval metrics on WattBot: do the hits point at the gold documents, how
much context do they cost, and is the gold supporting quote actually in the context?

Each is a measure of pipeline/registry/metrics.py (registered below, in the order the pages show them).
pandas and the WattBot loader are imported where the table is made, so registering loads neither."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pipeline.registry import metrics
from pipeline.registry.metrics import DOCUMENTS, Measure, everywhere, register

if TYPE_CHECKING:
    import pandas as pd

KS = (1, 3, 5, 10)
MIN_QUOTE_WORDS = 5

_EVERYWHERE = everywhere(metrics.MLFLOW, metrics.CLAIMS)
_FIRST, _FIFTH = (1,), (5,)
for _m in (
    Measure(
        "doc_hit",
        DOCUMENTS,
        "a gold document is among the first k distinct documents retrieved",
        {
            **_EVERYWHERE,
            **everywhere(metrics.LEADERBOARD_PAGE, metrics.CORPUS_PAGE),
            **dict.fromkeys((metrics.LEADERBOARD, metrics.CORPUS_GIST, metrics.HEADLINE, metrics.SPROUT), _FIRST),
            **dict.fromkeys((metrics.ABLATIONS_ANSWERING, metrics.ABLATIONS_RETRIEVAL), _FIRST),
            **dict.fromkeys((metrics.DOCS_LEADERBOARD, metrics.DOCS_RETRIEVAL, metrics.DOCS_ABLATIONS), _FIRST),
        },
        cutoffs=KS,
        defined_on="answerable",
    ),
    Measure(
        "doc_recall",
        DOCUMENTS,
        "the share of the gold documents among the first k distinct documents retrieved",
        {
            **_EVERYWHERE,
            **dict.fromkeys((metrics.LEADERBOARD, metrics.ABLATIONS_ANSWERING, metrics.ABLATIONS_RETRIEVAL), _FIFTH),
            **dict.fromkeys((metrics.DOCS_LEADERBOARD, metrics.DOCS_RETRIEVAL), _FIFTH),
            metrics.SPROUT: (5, 10),
        },
        cutoffs=KS,
        defined_on="answerable",
    ),
    Measure(
        "doc_precision",
        DOCUMENTS,
        "the share of the first k hits that come from a gold document",
        {**_EVERYWHERE, metrics.ABLATIONS_RETRIEVAL: _FIFTH, metrics.DOCS_RETRIEVAL: _FIFTH},
        cutoffs=KS,
        defined_on="answerable",
    ),
    Measure(
        "context_tokens",
        DOCUMENTS,
        "whitespace tokens of the context the hits make (what a prompt shows)",
        {**_EVERYWHERE, metrics.DOCS_RETRIEVAL: ()},
        better=metrics.LOWER,
        defined_on="answerable",
    ),
    Measure(
        "quote_in_context",
        DOCUMENTS,
        "the gold supporting quote is in the context",
        {**_EVERYWHERE, **everywhere(metrics.ABLATIONS_RETRIEVAL, metrics.DOCS_RETRIEVAL)},
        defined_on="quoted",
    ),
):
    register(_m)


def norm(text: str) -> str:
    """Lower-case alphanumerics separated by single spaces (PDF spacing and punctuation vary)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def quote_fragment(supporting: str, explanation: str) -> str | None:
    """The longest verbatim piece of a train answer's ``supporting_materials`` when it is a quote:
    text inside quotes if any, else the whole field when the explanation says "Quote"; ellipses
    split it into pieces. None when it is no quote (a table or figure reference, a calculation)."""
    s = (supporting or "").strip()
    if not s or s.lower() == "is_blank":
        return None
    quoted = re.findall(r"[\"“']([^\"”']{20,})[\"”']", s)
    if not quoted and "quote" not in (explanation or "").lower():
        return None
    pieces = [p for q in (quoted or [s]) for p in re.split(r"…|\.\.\.", q)]
    best = max((norm(p) for p in pieces), key=lambda p: len(p.split()), default="")
    return best if len(best.split()) >= MIN_QUOTE_WORDS else None


def question_metrics(
    hits: list[dict], gold_docs: set[str], quote: str | None, ks=KS, snippets: list[dict] | None = None
) -> dict:
    """``snippets``: the record's expanded context (what a prompt shows), when retrieval made one;
    else each hit's own context counts, once."""
    docs = list(dict.fromkeys(h["doc_id"] for h in hits))
    contexts: dict[str, str] = {}
    for h in snippets or hits:  # each context once, as first retrieved
        contexts.setdefault(h.get("context_id", h["node_id"]), h.get("context") or h["text"])
    row: dict = {"context_tokens": sum(len(c.split()) for c in contexts.values())}
    for k in ks:
        got = gold_docs & set(docs[:k])
        row[f"doc_recall@{k}"] = len(got) / len(gold_docs)
        row[f"doc_hit@{k}"] = float(bool(got))
        top = hits[:k]
        row[f"doc_precision@{k}"] = sum(h["doc_id"] in gold_docs for h in top) / k
    if quote is not None:
        row["quote_in_context"] = float(quote in norm(" ".join(contexts.values())))
    return row


def wattbot_retrieval_metrics(retrieval: list[dict], gold: pd.DataFrame, ks=KS) -> tuple[pd.DataFrame, dict]:
    """Per answerable question, and means (``quote_in_context`` over questions with a quote)."""
    import pandas as pd

    from pipeline.datasets.wattbot import parse_ref_ids

    by_id = {r["id"]: r for r in retrieval}
    rows = []
    for g in gold.itertuples(index=False):
        docs = set(parse_ref_ids(str(g.ref_id)))
        if not docs:
            continue
        rec = by_id.get(g.id, {"hits": []})
        quote = quote_fragment(str(getattr(g, "supporting_materials", "")), str(getattr(g, "explanation", "")))
        rows.append({"id": g.id, **question_metrics(rec["hits"], docs, quote, ks, rec.get("context"))})
    table = pd.DataFrame(rows)
    summary = {c: round(float(table[c].mean()), 4) for c in table.columns if c != "id"}
    summary["questions"] = len(table)
    summary["questions_with_quote"] = int(table["quote_in_context"].notna().sum()) if "quote_in_context" in table else 0
    return table, summary

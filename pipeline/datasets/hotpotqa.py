"""HotpotQA (distractor setting): each context paragraph is a document, supporting-fact sentences are gold.

Paragraphs of all kept questions are pooled into one document collection (deduplicated on title + text), so a
question's own distractors compete with every other question's paragraphs. Only questions whose
every supporting fact resolves to a non-empty sentence of their context are kept (the offline
AMOR test part replaced distractors with retrieved paragraphs and sometimes lost gold ones).
Reads the offline ``hotpotqa_subset.jsonl`` (list form ``[title, [sentences]]``) or the hub's
dict form (``{"title": [...], "sentences": [...]}``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.config_schema import key, parse_spec
from pipeline.datasets.suite import (
    PilotSubset,
    SuiteTables,
    make_suite_tables,
    pilot_draw,
    read_records,
    safe_id,
)
from pipeline.registry.suite_datasets import SuiteDataset, register

FILE = "hotpotqa_subset.jsonl"
# 70 seeded questions x their 10 paragraphs: 700 paragraphs, 2,858 sentences after parse_text,
# 170 supporting-fact spans.
DEFAULT_SUBSET = {"n_questions": 70, "seed": 0}


@dataclass(frozen=True, kw_only=True)
class Subset(PilotSubset):
    """The questions a run loads: ``suite.datasets.hotpotqa`` (a sampling unit is a question)."""

    n_questions: int | None = key(
        "questions drawn (seeded); null: every question with its gold in its context",
        type=("integer", "null"),
        default=None,
        schema={"minimum": 1},
    )
    sources: list[str] | None = key(
        "the offline file's source_file values kept: amor_dev, amor_test, hipporag_train (null: all)",
        type=("array", "null"),
        default=None,
        schema={"items": {"type": "string"}},
    )
    split: str = key("a hub copy's split", type="string", default="validation")
    hub_config: str = key("a hub copy's configuration", type="string", default="distractor")


def load(root: str | Path, **subset: Any) -> SuiteTables:
    """The dataset restricted to :class:`Subset` ``(**subset)``."""
    sub = parse_spec(Subset, subset, "suite.datasets.hotpotqa")
    if Path(root).is_dir():
        records = read_records(root, FILE)
    else:  # a hub name, e.g. "hotpotqa/hotpot_qa" (needs network)
        records = read_records(root, split=sub.split, name=sub.hub_config)
    if sub.sources is not None:
        records = [r for r in records if r.get("source_file") in set(sub.sources)]
    records = [r for r in records if _gold_sentences(r) is not None]
    draw = lambda k: random.Random(sub.seed).sample(records, min(k, len(records)))  # noqa: E731
    if sub.pilot is not None:
        cap = sub.n_questions or len(records)
        drawn = set(
            pilot_draw([_qid(r) for r in records], lambda k: map(_qid, draw(k)), cap, sub.pilot, sub.pilot_seed)
        )
        records = sorted((r for r in records if _qid(r) in drawn), key=_qid)
    elif sub.n_questions is not None:
        records = sorted(draw(sub.n_questions), key=_qid)

    docs: dict[str, dict] = {}
    queries, gold = [], []
    for r in records:
        qid = _qid(r)
        queries.append(
            {
                "id": qid,
                "question": r["question"],
                "answer": r.get("answer", ""),
                "type": r.get("type", ""),
                "level": r.get("level", ""),
                "source_file": r.get("source_file", ""),
            }
        )
        offsets: dict[str, tuple[str, list[tuple[int, int]]]] = {}
        for title, sentences in _context(r):
            text, spans = _paragraph(sentences)
            if not text.strip():
                continue
            doc_id = safe_id(title, prefix="hotpotqa-", key=f"{title}\n{text}")
            docs.setdefault(doc_id, {"doc_id": doc_id, "title": title, "text": text, "source_id": title})
            offsets.setdefault(title, (doc_id, spans))
        for title, sent_id in _gold_sentences(r) or []:  # None was filtered out above
            doc_id, spans = offsets[title]
            gold.append(
                {"query_id": qid, "doc_id": doc_id, "start": spans[sent_id][0], "end": spans[sent_id][1], "grade": 1}
            )
    return make_suite_tables("hotpotqa", sorted(docs.values(), key=lambda d: d["doc_id"]), queries, gold)


def _qid(r: dict) -> str:
    return str(r.get("_id", r.get("id")))


def _context(r: dict) -> list[tuple[str, list[str]]]:
    ctx = r["context"]
    if isinstance(ctx, dict):  # hub form
        return list(zip(ctx["title"], ctx["sentences"]))
    return [(title, sentences) for title, sentences in ctx]


def _gold_sentences(r: dict) -> list[tuple[str, int]] | None:
    """Supporting facts as (title, sentence index), or None when one is not in the context."""
    facts = r["supporting_facts"]
    pairs = list(zip(facts["title"], facts["sent_id"])) if isinstance(facts, dict) else [(t, i) for t, i in facts]
    context = dict(_context(r))
    for title, i in pairs:
        if title not in context or not 0 <= i < len(context[title]) or not context[title][i].strip():
            return None
    return sorted(set(pairs)) or None


def _paragraph(sentences: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Wikipedia paragraph text (HotpotQA sentences carry their leading space) and each sentence's span."""
    text, spans = "", []
    for s in sentences:
        if text and s and not s[0].isspace():
            text += " "
        start = len(text) + len(s) - len(s.lstrip())
        text += s
        spans.append((start, max(start, len(text.rstrip()))))
    return text, spans


register(SuiteDataset("hotpotqa", __name__, "hotpotqa", ("hotpot_qa",), train_group="query", subset=Subset))

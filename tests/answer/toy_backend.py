"""A toy answering backend, added as docs/architecture.md ("Adding an answering backend") says, the way a
built-in one is (pipeline/answer/extractive.py): one module with its spec, its answer function and its
registration, the last line. It cites the document most of a question's hits come from and answers no value.
Its one key of its own, ``explanation``, is declared beside its spec's field: the config's schema, validation
and the spec's parse take it from there, with no other edit. A plugin: its distribution's pyproject.toml
declares entry point ``top-doc = "toy_backend"`` of group ``wattbench.answer_backends``, and it is
pip-installed (tests/answer/test_answer_backends.py's PLUGIN)."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

import pandas as pd

from pipeline.answer.record import Answer
from pipeline.registry.answer_backends import AnswerBackend, VariantSpec, register
from pipeline.config_schema import key


@dataclass(frozen=True, kw_only=True)
class TopDocSpec(VariantSpec):
    explanation: str = key("what the explanation says before the document", type="string", default="most hits from")


def top_document(hits: list[dict]) -> str | None:
    """The document most hits come from (the first such on ties), None without hits."""
    docs = Counter(h["doc_id"] for h in hits)
    return docs.most_common(1)[0][0] if docs else None


def cite_top_document(questions: pd.DataFrame, by_id: dict, spec: TopDocSpec, job) -> list[dict]:
    out = []
    for q in questions.itertuples(index=False):
        top = top_document(by_id[q.id]["hits"])
        ans = Answer("is_blank", "is_blank", [top] if top else [], f"{spec.explanation} {top}")
        out.append({"id": q.id, "question": q.question, "answer_unit": q.answer_unit, **asdict(ans)})
    return out


register(AnswerBackend("top-doc", cite_top_document, TopDocSpec))

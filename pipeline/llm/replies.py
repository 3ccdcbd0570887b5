"""JSON in model replies: one extractor (first opening to last closing bracket), an optional
repair of the usual faults, and the check the gateway retries on (parse, then schema).

Why one module: every stage that asks a model for JSON (answers, planner queries) reads it the
same way; a reply's JSON is found by :func:`json_span`, and only :func:`repair_json` goes on to
fix what a small model gets wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator


def json_span(text: str, open_: str = "{", close: str = "}") -> str | None:
    """The text from the first ``open_`` to the last ``close`` (None when there is no such pair)."""
    start, end = text.find(open_), text.rfind(close)
    return text[start : end + 1] if start >= 0 and end > start else None


def json_values(text: str) -> Iterator[dict | list]:
    """Strict reading, no repair: the object spanning the first ``{`` to the last ``}``, then the
    list spanning the first ``[`` to the last ``]``, each when it parses."""
    for open_, close in ("{}", "[]"):
        span = json_span(text, open_, close)
        if span is None:
            continue
        try:
            yield json.loads(span)
        except json.JSONDecodeError:
            continue


def repair_json(text: str) -> dict:
    """The JSON object in a reply: first ``{`` to last ``}``, then common faults repaired (code
    fences, trailing commas, single quotes, a reply cut off mid-object). Raises ValueError."""
    text = re.sub(r"```(?:json)?", "", text)
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in response")
    end = text.rfind("}")
    body = json_span(text) or text[start:]
    candidates = [body, re.sub(r",\s*([}\]])", r"\1", body)]
    if "'" in body and '"' not in body:
        candidates.append(body.replace("'", '"'))
    if end <= start or body.count("{") > body.count("}"):  # truncated: close the string and braces
        cut = text[start:].rstrip().rstrip(",")
        if cut.count('"') % 2:
            cut += '"'
        cut += "]" * max(0, cut.count("[") - cut.count("]"))
        candidates.append(cut + "}" * max(1, cut.count("{") - cut.count("}")))
    for cand in candidates:
        try:
            data = json.loads(cand)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    raise ValueError(f"malformed JSON: {body[:80]!r}")


def json_problem(text: str) -> str | None:
    """What the gateway retries on: an empty reply or one with no parseable JSON object."""
    if not text.strip():
        return "empty response"
    try:
        repair_json(text)
    except ValueError as exc:
        return str(exc)
    return None


def schema_problem(schema: dict) -> Callable[[str], str | None]:
    """A gateway ``validate`` hook: :func:`json_problem`, then the (repaired) object checked
    against ``schema``. A reply that parses but breaks the schema is malformed like one that
    does not parse: retried, and after the last retry recorded as a failure with its words."""
    import jsonschema  # here: the retrieval planner imports this module, and most jobs never validate

    validator = jsonschema.Draft202012Validator(schema)

    def problem(text: str) -> str | None:
        bad = json_problem(text)
        if bad:
            return bad
        error = jsonschema.exceptions.best_match(validator.iter_errors(repair_json(text)))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "reply"
        return f"schema violation at {where}: {error.message}"[:300]

    return problem

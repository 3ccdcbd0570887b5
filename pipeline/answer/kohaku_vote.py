"""KohakuRAG's own vote (``scripts/wattbot_aggregate.py``), to reproduce the team's ensemble files.

wattbench's vote (pipeline/answer/vote.py) and KohakuRAG's agree on every answered question; they
differ where the script's rules give rows wattbench does not want, above all the all-blank case:
when the voted value is ``is_blank`` the script's ref modes still combine the refs of the blank
rows, so a union can write ``answer_value=is_blank, ref_id=['is_blank', 'luccioni2023']``
(../shared/docs/kohakurag.md, "The all-blank case"). This module votes the members' Kaggle rows
(cells as strings) by the script's rules and returns its row: a copy of the first member row
whose value equals the winner, with ``answer_value`` and ``ref_id`` replaced.

The rules, from the notes on the script:
- values and refs are stripped strings, an empty cell is ``is_blank`` (``normalize_value``);
- majority: the most common string, ties to the first seen; ``ignore_blank`` drops ``is_blank``
  votes when any other vote exists (for the ref votes too);
- tiebreak ``blank``: with more than one member and every value different (counted before blanks
  are dropped), an abstention row;
- ``independent``: refs voted over every row; ``answer_priority``: over the rows with the winning
  value; ``ref_priority``: the ref first, then the value among the rows citing it; these three
  write the winning raw ref string;
- ``union`` / ``intersection``: the parsed refs of the rows with the winning value combined and
  written ``str(sorted(ids))`` (``['a', 'b']``), ``is_blank`` for none.

Two details the notes leave open are chosen here and said so: the tiebreak's abstention row keeps
the first member's ``id``, ``question`` and ``answer_unit`` and writes ``is_blank`` in the six
fields KohakuRAG's own abstentions blank; a cell counts as ``is_blank`` case-sensitively.
"""

from __future__ import annotations

import ast

from pipeline.answer.vote import majority

BLANK = "is_blank"
ABSTAIN = ("answer", "answer_value", "ref_id", "ref_url", "supporting_materials", "explanation")


def normalize_value(value: object) -> str:
    """The script's cell rule: stripped, and an empty cell is ``is_blank``."""
    text = "" if value is None else str(value).strip()
    return text or BLANK


def parse_ref_ids(ref: object) -> set[str]:
    """The script's ref parser: empty or bare ``is_blank`` is no id; a Python/JSON list is its items
    (so a list holding ``"is_blank"`` gives the id ``is_blank``); anything else is split on commas."""
    text = "" if ref is None else str(ref).strip()
    if not text or text == BLANK:
        return set()
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        parsed = None
    if isinstance(parsed, (list, tuple, set)):
        return {str(x).strip() for x in parsed if str(x).strip()}
    parts = (p.strip().strip("'\"").strip() for p in text.strip("[]").split(","))
    return {p for p in parts if p}


def format_ref_ids(ids: set[str]) -> str:
    """``str(sorted(ids))``: ``['a', 'b']``; ``is_blank`` for the empty set."""
    return str(sorted(ids)) if ids else BLANK


def majority_vote(votes: list[str], ignore_blank: bool) -> str:
    """The most common vote, ties to the first seen; ``ignore_blank`` drops ``is_blank`` votes when
    any other vote exists."""
    if ignore_blank and any(v != BLANK for v in votes):
        votes = [v for v in votes if v != BLANK]
    return majority(votes)


def aggregate(rows: list[dict], mode: str, ignore_blank: bool, tiebreak: str) -> tuple[dict, list[int]]:
    """The script's output row for one question from the members' rows (member order), and the
    positions of the rows that voted for it (empty when the tiebreak blanked the question)."""
    if not rows:
        raise ValueError("vote: no answers")
    values = [normalize_value(r.get("answer_value")) for r in rows]
    refs = [normalize_value(r.get("ref_id")) for r in rows]
    if tiebreak == "blank" and len(rows) > 1 and len(set(values)) == len(values):
        return {**rows[0], **dict.fromkeys(ABSTAIN, BLANK)}, []
    if mode == "ref_priority":
        ref = majority_vote(refs, ignore_blank)
        citing = [i for i, r in enumerate(refs) if r == ref]
        value = majority_vote([values[i] for i in citing], ignore_blank)
        voters = [i for i in citing if values[i] == value]
    else:
        value = majority_vote(values, ignore_blank)
        voters = [i for i, v in enumerate(values) if v == value]
        if mode == "independent":
            ref = majority_vote(refs, ignore_blank)
        elif mode == "answer_priority":
            ref = majority_vote([refs[i] for i in voters], ignore_blank)
        elif mode == "union":
            ref = format_ref_ids(set().union(*(parse_ref_ids(refs[i]) for i in voters)))
        elif mode == "intersection":
            ref = format_ref_ids(set.intersection(*(parse_ref_ids(refs[i]) for i in voters)))
        else:
            raise ValueError(f"vote.mode: '{mode}' is not a KohakuRAG mode")
    base = rows[values.index(value)]
    return {**base, "answer_value": value, "ref_id": ref}, voters

"""Ensembles: N answers to one question voted into one (KohakuRAG's wattbot_aggregate).

One copy of the voting rules for both kinds of ensemble: the N samples of one variant and the
cross-run ensembles of pipeline/answer/ensemble.py (the ``ensemble`` backend and the ``vote`` CLI).
Values are compared normalised (``normalise=True``: "13900" and "13900.0" are one vote, the
default for samples) or as exact stripped strings (``normalise=False``: KohakuRAG's rule, the
default for cross-run ensembles). Ties go to the value seen first (sample or member order).
Cross-run ensembles can vote by KohakuRAG's own script instead (``KohakuVoteConfig``,
pipeline/answer/kohaku_vote.py), to reproduce the rows its aggregator writes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pipeline.answer.record import Answer, blank_answer
from pipeline.config_schema import ConfigTable, Key, declared_defaults, key, parse_spec

VOTE_MODES = ("independent", "ref_priority", "answer_priority", "union", "intersection")
TIEBREAKS = ("first", "blank")


@dataclass(frozen=True)
class VoteSettings:
    """``answering.<name>.vote``: how an LLM variant's samples, or an ensemble's members, are voted
    (:class:`VoteConfig` takes these defaults)."""

    mode: str = key("how the refs are chosen (docs/ensembles.md)", choices=VOTE_MODES, default="answer_priority")
    ignore_blank: bool = key("drop is_blank votes when any member answered", type="boolean", default=True)
    tiebreak: str = key(
        "first: a tie goes to the earliest member; blank: all differ -> blank", choices=TIEBREAKS, default="first"
    )
    normalise: bool | None = key("compare normalised values (samples: default true; ensembles: false)", type="boolean")
    kohaku_compat: bool | None = key(
        "ensembles only: KohakuRAG's own vote, its rows (docs/ensembles.md)", type="boolean"
    )

    @classmethod
    def from_dict(cls, vote: ConfigTable | None = None, where: str = "vote") -> VoteSettings:
        """A ``vote:`` block (None or {}: every default; normalise and kohaku_compat stay None when not given)."""
        return parse_spec(cls, vote or {}, where)


# the `vote` key of the backends that vote (llm's samples: pipeline/answer/llm_answer.py; ensemble's members)
VOTE = Key("how samples (or members) are voted", spec=VoteSettings, default={})
_DEFAULTS = declared_defaults(VoteSettings)  # the declared defaults of answering.<name>.vote


@dataclass
class VoteConfig:
    mode: str = _DEFAULTS["mode"]  # answer_priority: the competition's choice
    ignore_blank: bool = _DEFAULTS["ignore_blank"]
    tiebreak: str = _DEFAULTS["tiebreak"]
    normalise: bool = True  # compare value_key()s; False: exact stripped strings (cross-run ensembles)

    def key(self, value: str) -> str:
        return value_key(value) if self.normalise else str(value).strip()

    def __post_init__(self):
        if self.mode not in VOTE_MODES:
            raise ValueError(f"vote.mode: '{self.mode}' is not one of {VOTE_MODES}")
        if self.tiebreak not in TIEBREAKS:
            raise ValueError(f"vote.tiebreak: '{self.tiebreak}' is not one of {TIEBREAKS}")


@dataclass
class KohakuVoteConfig(VoteConfig):
    """``vote: {kohaku_compat: true}``: vote cross-run members with KohakuRAG's own script
    (pipeline/answer/kohaku_vote.py) instead of wattbench's rules. A subclass, not a field of
    VoteConfig, so the hashed vote of every ensemble without the key stays what it was."""

    normalise: bool = False  # exact stripped strings, as the script compares
    kohaku_compat: bool = True

    def __post_init__(self):
        super().__post_init__()
        if self.normalise:
            raise ValueError(
                "vote.normalise: KohakuRAG's vote compares exact stripped strings (drop it or kohaku_compat)"
            )


def value_key(value: str) -> str:
    """13900 == 13900.0 == 1.39e4; other strings compare stripped and lower-cased."""
    try:
        f = float(value)
        return repr(float(f))
    except (TypeError, ValueError):
        return str(value).strip().lower()


def majority(keys: list) -> Any:
    """Most common key; ties go to the key that appears first."""
    counts = Counter(keys)
    best = max(counts.values())
    return next(k for k in keys if counts[k] == best)


def vote(answers: list[Answer], cfg: VoteConfig) -> Answer:
    return tally(answers, cfg)[0]


def tally(answers: list[Answer], cfg: VoteConfig) -> tuple[Answer, list[int]]:
    """The voted answer and the positions (in ``answers``) of the answers that voted for it
    (empty when the tiebreak blanked the question)."""
    if not answers:
        raise ValueError("vote: no answers")
    if len(answers) == 1:
        return answers[0], [0]
    if cfg.tiebreak == "blank" and len({cfg.key(a.answer_value) for a in answers}) == len(answers):
        return blank_answer(f"ensemble of {len(answers)}: every answer differs (tiebreak: blank)"), []
    positions = list(range(len(answers)))
    if cfg.ignore_blank and any(not a.is_blank for a in answers):
        positions = [i for i in positions if not answers[i].is_blank]
    rows = [answers[i] for i in positions]
    vkey = [cfg.key(a.answer_value) for a in rows]
    rkey = [tuple(sorted(a.ref_id)) for a in rows]
    if cfg.mode == "ref_priority":
        ref = majority(rkey)
        matching = [i for i, r in enumerate(rkey) if r == ref]
        value = majority([vkey[i] for i in matching])
        matching = [i for i in matching if vkey[i] == value]
        refs = list(ref)
    else:
        value = majority(vkey)
        matching = [i for i, v in enumerate(vkey) if v == value]
        if cfg.mode == "independent":
            refs = list(majority(rkey))
        elif cfg.mode == "answer_priority":
            refs = list(majority([rkey[i] for i in matching]))
        elif cfg.mode == "union":
            refs = sorted({r for i in matching for r in rkey[i]})
        else:  # intersection
            refs = sorted(set.intersection(*(set(rkey[i]) for i in matching)))
    winner = rows[matching[0]]
    voters = [positions[i] for i in matching]
    note = f" [ensemble {cfg.mode}: {len(matching)}/{len(answers)} votes]"
    if winner.is_blank or not refs:
        return blank_answer((winner.explanation if winner.is_blank else "no common reference") + note), voters
    return Answer(
        winner.answer, winner.answer_value, refs, winner.explanation + note, winner.supporting_materials, False
    ), voters

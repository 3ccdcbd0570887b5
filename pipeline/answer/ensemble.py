"""Cross-run ensembles: the answers of several runs voted per question (how KohakuRAG won).

A member is one run: an answering variant's answer records (the ``ensemble`` backend, a DAG
node over its members' answer files) or anyone's Kaggle submission CSV (``python -m pipeline
vote``). The voting rules are pipeline/answer/vote.py's, shared with the N-sample votes; this
module only turns runs into per-question answer lists, checks that the runs answer the same
questions, and writes the result back as records or as a submission. ``vote: {kohaku_compat:
true}`` (``vote --kohaku-compat``) votes the members' Kaggle rows with KohakuRAG's own script
instead (pipeline/answer/kohaku_vote.py), to reproduce the team's ensemble files.

The ``ensemble`` answering backend is this module: its keys (:class:`EnsembleSpec`, checked against the
other variants it names) and its registration, the last line (no answer function: its rule votes). What
reads and writes Kaggle rows (pandas) is imported inside the functions that do, so validating a config,
which imports every backend, loads none of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.answer import kohaku_vote
from pipeline.answer.record import BLANK, COLUMNS, Answer
from pipeline.answer.vote import VOTE, KohakuVoteConfig, VoteConfig, VoteSettings, tally
from pipeline.config_schema import ConfigError, ConfigTable, ConfigTree, key, key_field
from pipeline.registry.answer_backends import AnswerBackend, VariantSpec, get, register

if TYPE_CHECKING:
    import pandas as pd

NEEDED = ("id", "answer_value", "ref_id")  # what a vote reads; the other Kaggle columns are optional


@dataclass(frozen=True, kw_only=True)
class EnsembleSpec(VariantSpec):
    """``backend: ensemble``: its members' answers voted (no call of its own)."""

    members: tuple[str, ...] = key(
        "other answering variants, in vote (tie) order",
        type="array",
        schema={"minItems": 1, "items": {"type": "string"}},
    )
    vote: VoteSettings = key_field(
        VOTE, field_factory=VoteSettings.from_dict
    )  # typed here; the hashed params keep the dict

    @classmethod
    def from_dict(cls, name: str, v: ConfigTable) -> EnsembleSpec:
        spec = super().from_dict(name, v)
        vote = VoteSettings.from_dict(v.get("vote"), f"answering.{name}.vote")
        return dataclasses.replace(spec, members=tuple(spec.members), vote=vote)

    @classmethod
    def resolve(cls, name: str, variant: ConfigTree, cfg: ConfigTree) -> None:
        """Members are other, non-ensemble answering variants (no nesting, so no cycles); the splits
        are those every member answers (or a subset of them); the retrieval (for the retrieval columns
        of the leaderboard and attribution) is the first member's."""
        if _kohaku_vote(name, variant.get("vote") or {}):
            del variant["vote"]  # `vote: {kohaku_compat: false}` is no vote block
        answering, members = cfg["answering"], variant["members"]
        for m in members:
            if m not in answering:
                raise ConfigError.at(f"answering.{name}.members", f"unknown answering variant '{m}'")
            if get(answering[m]["backend"]).votes_members:
                raise ConfigError.at(f"answering.{name}.members", f"'{m}' is an ensemble (list its members instead)")
        if len(set(members)) != len(members):
            raise ConfigError.at(f"answering.{name}.members", "a member is listed twice")
        every = set(cfg["wattbot"]["splits"])
        common = every.intersection(*(answering[m].get("splits") or every for m in members))
        bad = sorted(set(variant.get("splits") or []) - common)
        if bad:
            raise ConfigError.at(f"answering.{name}.splits", f"{bad} not answered by every member")
        if not variant.get("splits") and common != every:
            variant["splits"] = sorted(common)
        variant.setdefault("retrieval", answering[members[0]]["retrieval"])


def _kohaku_vote(name: str, vote: ConfigTree) -> bool:
    """``vote.kohaku_compat``: false is the default (dropped, so the variant's hashed params are
    those of a vote without the key); true compares exact strings, as KohakuRAG does. Whether dropping it
    left the vote block empty."""
    if vote.get("kohaku_compat") is False:
        del vote["kohaku_compat"]
        return not vote
    if vote.get("kohaku_compat") and vote.get("normalise"):
        raise ConfigError.at(
            f"answering.{name}.vote.normalise", "KohakuRAG's vote (kohaku_compat) compares exact strings"
        )
    return False


@dataclass
class Member:
    """One run: its answers by question id (file order kept) and the ref urls its rows carry."""

    name: str
    answers: dict[str, Answer]
    rows: dict[str, dict] = field(default_factory=dict)  # the raw row/record per id
    urls: dict[str, str] = field(default_factory=dict)
    kaggle: dict[str, dict] = field(default_factory=dict)  # the run's Kaggle row per id (what KohakuRAG votes)


def vote_config(settings: VoteSettings, normalise_default: bool = False) -> VoteConfig:
    """A ``vote:`` block as a VoteConfig (a KohakuVoteConfig with ``kohaku_compat: true``);
    cross-run ensembles compare exact strings unless told."""
    s = settings
    if s.kohaku_compat:
        return KohakuVoteConfig(s.mode, s.ignore_blank, s.tiebreak, normalise=bool(s.normalise))
    normalise = normalise_default if s.normalise is None else s.normalise
    return VoteConfig(s.mode, s.ignore_blank, s.tiebreak, normalise=normalise)


# --- members from answer records (the DAG) and from submission CSVs (the CLI) ---


def answer_of_record(rec: dict) -> Answer:
    return Answer(
        rec["answer"],
        rec["answer_value"],
        list(rec["ref_id"]),
        rec.get("explanation", ""),
        rec.get("supporting_materials", BLANK),
        bool(rec["is_blank"]),
    )


def member_from_records(name: str, records: list[dict], urls: dict[str, str] | None = None) -> Member:
    """A run's answer records; its Kaggle rows are its submission CSV's (ref urls from ``urls``)."""
    from pipeline.answer.submission import submission_row

    ids = [r["id"] for r in records]
    _no_duplicates(name, ids)
    kaggle = {
        r["id"]: dict(
            zip(COLUMNS, submission_row(r["id"], r.get("question", ""), r.get("answer_unit", ""), r, urls or {}))
        )
        for r in records
    }
    return Member(name, {r["id"]: answer_of_record(r) for r in records}, {r["id"]: r for r in records}, kaggle=kaggle)


def sample_members(name: str, records: list[dict]) -> list[Member]:
    """A sampled LLM variant's samples as members ``<name>#<i>`` (sample order): each question's
    ``call.sample_answers`` (pipeline/answer/llm_answer.py) read as that sample's answer, so
    subsets of the samples vote as the variant votes all of them (the ensemble-size curve)."""
    per_sample: list[dict[str, Answer]] = []
    for r in records:
        answers = (r.get("call") or {}).get("sample_answers")
        if not answers:
            raise ValueError(f"{name}: question {r['id']} has no per-sample answers (a variant of one sample?)")
        if per_sample and len(answers) != len(per_sample):
            raise ValueError(f"{name}: question {r['id']} has {len(answers)} samples, others {len(per_sample)}")
        per_sample = per_sample or [{} for _ in answers]
        for i, a in enumerate(answers):
            per_sample[i][r["id"]] = answer_of_record(a)
    rows = {r["id"]: r for r in records}
    return [Member(f"{name}#{i}", answers, rows) for i, answers in enumerate(per_sample)]


def answer_of_row(row: dict) -> Answer:
    """A submission row as an Answer: blank when answer_value is ``is_blank`` or empty (the aggregator's rule)."""
    from pipeline.datasets.wattbot import parse_ref_ids

    value = str(row["answer_value"]).strip()
    blank = value.lower() in (BLANK, "")
    return Answer(
        row.get("answer") or value,
        value,
        parse_ref_ids(row["ref_id"]),
        row.get("explanation") or "",
        row.get("supporting_materials") or BLANK,
        blank,
    )


def read_submission(path: str | Path) -> Member:
    """A Kaggle-format CSV (cells read as exact strings) as a member named after its file."""
    import pandas as pd

    from pipeline.datasets.wattbot import parse_ref_ids

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    missing = [c for c in NEEDED if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (a submission needs {', '.join(NEEDED)})")
    rows = df.to_dict("records")
    _no_duplicates(str(path), [r["id"] for r in rows])
    urls: dict[str, str] = {}
    for r in rows:  # ref id -> url, from rows whose ref_id and ref_url lists line up
        refs, links = parse_ref_ids(r["ref_id"]), parse_ref_ids(r.get("ref_url", ""))
        if len(refs) == len(links):
            for ref, url in zip(refs, links):
                urls.setdefault(ref, url)
    by_id = {r["id"]: r for r in rows}
    return Member(str(path), {r["id"]: answer_of_row(r) for r in rows}, by_id, urls, by_id)


def _no_duplicates(name: str, ids: list[str]) -> None:
    seen, dup = set(), []
    for i in ids:
        if i in seen:
            dup.append(i)
        seen.add(i)
    if dup:
        raise ValueError(f"{name}: duplicate question id(s) {', '.join(sorted(set(dup))[:10])}")


def common_ids(members: list[Member]) -> list[str]:
    """The question ids, in the first member's order; members that answer other ids are an error naming them."""
    if not members:
        raise ValueError("an ensemble needs at least one member")
    first = list(members[0].answers)
    for m in members[1:]:
        missing = [i for i in first if i not in m.answers]
        extra = [i for i in m.answers if i not in members[0].answers]
        if missing or extra:
            parts = ([f"lacks {_ids(missing)}"] if missing else []) + ([f"has extra {_ids(extra)}"] if extra else [])
            raise ValueError(f"{m.name}: question ids differ from {members[0].name}: {'; '.join(parts)}")
    return first


def _ids(ids: list[str], most: int = 10) -> str:
    return ", ".join(ids[:most]) + (f" (+{len(ids) - most} more)" if len(ids) > most else "")


# --- the vote ---


@dataclass
class Voted:
    id: str
    answer: Answer
    voters: list[str]  # names of the members whose answer won (empty when blanked by the tiebreak)
    row: dict | None = None  # KohakuRAG's output row (kohaku_compat only), the 9 Kaggle cells


def vote_members(members: list[Member], cfg: VoteConfig) -> list[Voted]:
    """One voted answer per question, members in the order given (ties go to the earlier member)."""
    if isinstance(cfg, KohakuVoteConfig):
        return kohaku_members(members, cfg)
    names = [m.name for m in members]
    out = []
    for qid in common_ids(members):
        ans, positions = tally([m.answers[qid] for m in members], cfg)
        voters = [names[i] for i in positions]
        note = f" [members: {', '.join(names)}; voted by: {', '.join(voters) or 'none'}]"
        out.append(
            Voted(
                qid,
                Answer(
                    ans.answer,
                    ans.answer_value,
                    ans.ref_id,
                    ans.explanation + note,
                    ans.supporting_materials,
                    ans.is_blank,
                ),
                voters,
            )
        )
    return out


def kohaku_members(members: list[Member], cfg: KohakuVoteConfig) -> list[Voted]:
    """KohakuRAG's vote of the members' Kaggle rows. The answer (for records) reads the row: its ref
    ids as the script parses them, blank when the value is ``is_blank``, the members named in the
    explanation; the row itself is kept unchanged for the submission."""
    names = [m.name for m in members]
    out = []
    for qid in common_ids(members):
        row, positions = kohaku_vote.aggregate(
            [m.kaggle[qid] for m in members], cfg.mode, cfg.ignore_blank, cfg.tiebreak
        )
        row = {c: str(row.get(c, "")) for c in COLUMNS}
        voters = [names[i] for i in positions]
        note = f" [ensemble {cfg.mode}, KohakuRAG's vote; members: {', '.join(names)}; voted by: {', '.join(voters) or 'none'}]"
        value = row["answer_value"]
        answer = Answer(
            row["answer"],
            value,
            sorted(kohaku_vote.parse_ref_ids(row["ref_id"])),
            row["explanation"] + note,
            row["supporting_materials"],
            value == kohaku_vote.BLANK,
        )
        out.append(Voted(qid, answer, voters, row))
    return out


def ensemble_records(members: list[Member], voted: list[Voted]) -> list[dict]:
    """Answer records of an ``ensemble`` variant (``voted`` = vote_members(members, ...)): the voted
    answer, every member's vote, and the members' LLM calls summed (what the ensemble costs when
    run on its own)."""
    out = []
    for v in voted:
        rows = [m.rows[v.id] for m in members]
        rec = {
            "id": v.id,
            "question": rows[0].get("question", ""),
            "answer_unit": rows[0].get("answer_unit", ""),
            **asdict(v.answer),
            "voters": v.voters,
            "members": [
                {"variant": m.name, "answer_value": r["answer_value"], "ref_id": r["ref_id"], "is_blank": r["is_blank"]}
                for m, r in zip(members, rows)
            ],
        }
        calls = [r["call"] for r in rows if r.get("call")]
        if calls:
            rec["call"] = {
                k: sum(int(c.get(k) or 0) for c in calls)
                for k in ("n_calls", "failed_calls", "prompt_tokens", "completion_tokens")
            }
            rec["call"]["cost_usd"] = round(sum(c.get("cost_usd") or 0 for c in calls), 8)
        failures = [f"{m.name}: {r['failure']}" for m, r in zip(members, rows) if r.get("failure")]
        rec["failure"] = " | ".join(failures) if len(failures) == len(members) else ""
        out.append(rec)
    return out


def ensemble_submission(
    questions: pd.DataFrame, records: list[dict], voted: list[Voted], urls: dict[str, str]
) -> pd.DataFrame:
    """The ``ensemble`` variant's submission, in question order: KohakuRAG's rows under
    kohaku_compat, else the records written the wattbench way."""
    import pandas as pd

    from pipeline.answer.submission import submission_frame

    if not voted or voted[0].row is None:
        return submission_frame(questions, records, urls)
    rows = {v.id: v.row for v in voted}
    missing = [q for q in questions["id"] if q not in rows]
    if missing:
        raise ValueError(f"no answer for question id(s) {_ids(missing, 5)}")
    return pd.DataFrame([rows[q] for q in questions["id"]], columns=list(COLUMNS))


def voted_submission(members: list[Member], cfg: VoteConfig) -> pd.DataFrame:
    """The vote over submission CSVs as a 9-column Kaggle submission (question and unit from the
    first member; ref urls from the members' own rows). KohakuRAG's vote writes the script's rows,
    ids sorted as it writes them."""
    import pandas as pd

    from pipeline.answer.submission import submission_frame

    voted = vote_members(members, cfg)
    if isinstance(cfg, KohakuVoteConfig):
        return pd.DataFrame([v.row for v in sorted(voted, key=lambda v: v.id)], columns=list(COLUMNS))
    first = members[0].rows
    questions = pd.DataFrame(
        [
            {"id": v.id, "question": first[v.id].get("question", ""), "answer_unit": first[v.id].get("answer_unit", "")}
            for v in voted
        ]
    )
    urls: dict[str, str] = {}
    for m in members:
        for ref, url in m.urls.items():
            urls.setdefault(ref, url)
    df = submission_frame(questions, [{"id": v.id, **asdict(v.answer)} for v in voted], urls)
    no_url = df["ref_url"].str.contains("''", regex=False)
    df.loc[no_url, "ref_url"] = BLANK  # a ref no member gave a url for
    return df[list(COLUMNS)]


ENSEMBLE = register(AnswerBackend("ensemble", None, EnsembleSpec, votes_members=True))

"""One rule for contradictory replies (#48 item 5), on real replies: Qwen2.5-Coder-0.5B's to the first 10
WattBot train questions (tests/fixtures/llm_replies/qwen2.5-coder-0.5b.json, recorded through the project's
own prompt; how: the file's ``made_by``). The model sets ``"is_blank": true`` on 9 of them while giving a
value and citing a shown document on 7: read by the flag, all 10 were abstentions but one. The rule: the value
and the citations decide, the flag does not (pipeline/answer/llm_answer.py ``parse_answer``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.answer.llm_answer import parse_answer
from pipeline.llm.replies import repair_json

FIXTURE = Path(__file__).parents[1] / "fixtures" / "llm_replies" / "qwen2.5-coder-0.5b.json"
REPLIES = json.loads(FIXTURE.read_text())["replies"]["k2-c400-r0"]

# What each reply is read as: its value and citations, or a blank (hand-checked against the raw replies).
READ = {
    "q003": None,  # value "is_blank" (with a citation): an abstention
    "q009": ("[96,96]", ["patterson2021"]),
    "q054": ("GB", ["chen2024"]),  # a unit where the number belongs: read as given, scored wrong
    "q062": ("MWh", ["amazon2023"]),
    "q075": ("1", ["luccioni2025a", "wu2021b"]),  # the one reply whose flag agrees with its content
    "q078": ("[500,500]", ["li2025b"]),
    "q091": ("25.4", ["schwartz2019"]),
    "q102": None,  # value "is_blank", no citation
    "q105": ("80", ["xia2024"]),
    "q106": ("multiplier", ["samsi2024"]),
}


def _read(reply: dict, raw: str):
    return parse_answer(raw, reply["question"], set(reply["shown_docs"]), reply["answer_unit"])


def test_the_fixture_holds_the_contradiction():
    flags = [repair_json(r["raw"]).get("is_blank") for r in REPLIES]
    assert len(REPLIES) == 10 and flags.count(True) == 9  # real replies: the flag says blank almost always
    answered_anyway = [r["id"] for r, flag in zip(REPLIES, flags) if flag and READ[r["id"]] is not None]
    assert len(answered_anyway) == 7


@pytest.mark.parametrize("reply", REPLIES, ids=[r["id"] for r in REPLIES])
def test_value_and_citations_decide(reply):
    ans = _read(reply, reply["raw"])
    expected = READ[reply["id"]]
    if expected is None:
        assert ans.is_blank and ans.answer_value == "is_blank" and ans.ref_id == []
    else:
        assert not ans.is_blank and (ans.answer_value, ans.ref_id) == expected


@pytest.mark.parametrize("reply", REPLIES, ids=[r["id"] for r in REPLIES])
@pytest.mark.parametrize("flag", [True, False])
def test_the_flag_decides_nothing_either_way(reply, flag):
    """The same reply with its flag set either way is read the same: a contradiction in either direction."""
    data = repair_json(reply["raw"])
    data["is_blank"] = flag
    assert _read(reply, json.dumps(data)) == _read(reply, reply["raw"])

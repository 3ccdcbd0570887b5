"""Prompts, parsing/repair, normalisation, voting and the blank-retry loop of the LLM answerer
(litellm's mock_response and a scripted litellm.completion stand in for a model)."""
from answering import answer_with_llm, llm_spec
import json

import litellm
import pytest

from pipeline.llm.gateway import LLMGateway
from pipeline.answer.llm_answer import (answer_schema, build_messages,
                                        parse_answer, response_format)
from pipeline.answer.normalise import normalise_value
from pipeline.llm.replies import repair_json
from pipeline.answer.record import Answer, blank_answer
from pipeline.answer.vote import VoteConfig, value_key, vote


def hit(doc, i, text=None):
    text = text or f"Snippet {i} of {doc} says the value is {i}."
    return {"node_id": f"{doc}:s1:p{i}:t1", "doc_id": doc, "context_id": f"{doc}:s1:p{i}", "text": text,
            "context": text}


HITS = [hit("a", i) for i in range(1, 10)]


@pytest.mark.parametrize("value,question,unit,expected", [
    ("True", "True or false: x?", "is_blank", "1"),
    ("false.", "True or False: y", "is_blank", "0"),
    ("13,900", "Q", "tCO2e", "13900"),
    ("about 80", "Q", "percent", "80"),
    ("~4.3 tCO2e", "Q", "tCO2e", "4.3"),
    ("43%", "Q", "percent", "43"),
    ("80-90", "Q", "percent", "[80.0,90.0]"),
    ("80 to 90 %", "Q", "percent", "[80.0,90.0]"),
    ("[80, 90]", "Q", "percent", "[80,90]"),
    ("GPT-3", "Q", "is_blank", "GPT-3"),
    ("Power usage effectiveness (PUE)", "Q", "is_blank", "Power usage effectiveness"),
    ("", "Q", "MWh", "is_blank"),
    (4.3, "Q", "MWh", "4.3"),
    (True, "True or false: z", "is_blank", "1"),
])
def test_normalise_value(value, question, unit, expected):
    assert normalise_value(value, question, unit) == expected


@pytest.mark.parametrize("text", [
    '```json\n{"answer_value": "4", "ref_id": ["a"]}\n```',
    'Here: {"answer_value": "4", "ref_id": ["a"],} thanks',
    "{'answer_value': '4', 'ref_id': ['a']}",
    '{"explanation": "cut off", "answer_value": "4", "ref_id": ["a"',
])
def test_repair_json(text):
    assert repair_json(text)["answer_value"] == "4"


def test_parse_answer_blank_rules():
    ok = parse_answer('{"answer_value": "True", "ref_id": "ref_id=a", "explanation": "e"}', "True or false: x?", {"a"})
    assert (ok.answer_value, ok.ref_id, ok.is_blank) == ("1", ["a"], False)
    assert parse_answer('{"answer_value": "5", "ref_id": ["unknown"]}', "Q", {"a"}).is_blank   # cites nothing known
    assert parse_answer('{"answer_value": "is_blank", "ref_id": ["a"]}', "Q", {"a"}).is_blank
    # the flag decides nothing (#48): a value with a known citation answers, neither makes a blank
    flagged = parse_answer('{"answer_value": "5", "ref_id": ["a"], "is_blank": true}', "Q", {"a"})
    assert (flagged.answer_value, flagged.ref_id, flagged.is_blank) == ("5", ["a"], False)
    assert parse_answer('{"answer_value": "is_blank", "ref_id": ["a"], "is_blank": false}', "Q", {"a"}).is_blank
    assert parse_answer('{"answer_value": "5", "ref_id": [], "is_blank": false}', "Q", {"a"}).is_blank
    with pytest.raises(ValueError):
        parse_answer("I think it is 4.3", "Q", {"a"})


def test_prompt_orders_tag_snippets_and_state_the_rules():
    cf = build_messages("context_first", "QUESTION?", "MWh", HITS[:2])[0]["content"]
    qf = build_messages("question_first", "QUESTION?", "MWh", HITS[:2])[0]["content"]
    assert cf.index("[ref_id=a] Snippet 1") < cf.index("QUESTION?")
    assert qf.index("QUESTION?") < qf.index("[ref_id=a] Snippet 1")
    for text in (cf, qf):
        assert "\n---\n" in text and '"answer_unit": "MWh"' in text and "no commas" in text and "is_blank" in text
    tf = build_messages("context_first", "True or false: x", "is_blank", HITS[:1])[0]["content"]
    assert '"1" if the statement is true' in tf
    long = {**hit("b", 1, "THE FACT is 42."), "context": "word " * 400 + "THE FACT is 42. " + "word " * 400}
    short = build_messages("context_first", "Q", "MWh", [long], snippet_chars=200)[0]["content"]
    assert "THE FACT is 42" in short and len(short) < 1500


def test_schema_restricts_refs_to_shown_documents_and_format_by_provider():
    schema = answer_schema(["b", "a"])
    assert list(schema["properties"])[0] == "explanation"
    assert schema["properties"]["ref_id"]["items"]["enum"] == ["a", "b", "is_blank"]
    assert response_format("local/gemma", schema)["type"] == "json_object"
    assert response_format("openai/gpt-4o-mini", schema)["json_schema"]["schema"] == schema


def A(value, refs, blank=False):
    return blank_answer("x") if blank else Answer(value, value, refs, f"e{value}{refs}", "is_blank", False)


def test_vote_modes():
    rows = [A("5", ["a"]), A("5.0", ["b"]), A("7", ["b"]), A("5", ["a", "c"])]
    assert value_key("13900") == value_key("13900.0")
    got = {m: vote(rows, VoteConfig(m)) for m in ("independent", "ref_priority", "answer_priority", "union",
                                                  "intersection")}
    assert got["answer_priority"].answer_value == "5" and got["answer_priority"].ref_id == ["a"]
    assert got["independent"].answer_value == "5" and got["independent"].ref_id == ["b"]  # refs voted over all rows
    assert got["ref_priority"].ref_id == ["b"] and got["ref_priority"].answer_value == "5.0"
    assert got["union"].ref_id == ["a", "b", "c"]
    assert got["intersection"].is_blank                    # {a} & {b} & {a,c} is empty


def test_vote_ignore_blank_and_tiebreak():
    rows = [A("", [], blank=True), A("", [], blank=True), A("3", ["a"])]
    assert vote(rows, VoteConfig("answer_priority", ignore_blank=True)).answer_value == "3"
    assert vote(rows, VoteConfig("answer_priority", ignore_blank=False)).is_blank
    distinct = [A("1", ["a"]), A("2", ["a"]), A("3", ["a"])]
    assert vote(distinct, VoteConfig(tiebreak="first")).answer_value == "1"
    assert vote(distinct, VoteConfig(tiebreak="blank")).is_blank
    with pytest.raises(ValueError, match="vote.mode"):
        VoteConfig("plurality")


def scripted(monkeypatch, replies):
    """litellm.completion replaced by a script; returns the list of requests it saw."""
    seen = []

    def fake(**kwargs):
        seen.append(kwargs)
        return litellm.completion(model=kwargs["model"], messages=kwargs["messages"], mock_response=replies.pop(0))

    monkeypatch.setattr("pipeline.llm.retries.litellm_completion", fake)
    return seen


def reply(value, refs):
    return json.dumps({"explanation": "e", "answer": value, "answer_value": value, "ref_id": refs, "is_blank": False})


def test_blank_retry_deepens_the_context(tmp_path, monkeypatch):
    seen = scripted(monkeypatch, [reply("is_blank", []), reply("is_blank", []), reply("6", ["a"])])
    s = llm_spec("openai/mock", context_k=2, max_retries=2)
    ans, call = answer_with_llm(LLMGateway(tmp_path / "c.sqlite"), s, "Q?", "MWh", HITS, {"a"})
    shown = [m["messages"][0]["content"].count("[ref_id=a]") for m in seen]
    assert shown == [2, 4, 6] and ans.answer_value == "6" and call["n_calls"] == 3 and not call["error"]
    assert seen[0]["response_format"]["json_schema"]["schema"]["properties"]["ref_id"]["items"]["enum"] == ["a", "is_blank"]


def test_no_retry_when_max_retries_is_zero(tmp_path, monkeypatch):
    seen = scripted(monkeypatch, [reply("is_blank", [])])
    ans, call = answer_with_llm(LLMGateway(tmp_path / "c.sqlite"), llm_spec("openai/mock", context_k=2),
                                "Q?", "MWh", HITS, {"a"})
    assert ans.is_blank and len(seen) == 1 and not call["error"]  # an abstention, not a failure


def test_ensemble_samples_use_seeds_and_every_vote_mode_shares_the_cache(tmp_path, monkeypatch):
    seen = scripted(monkeypatch, [reply("5", ["a"]), reply("5.0", ["a"]), reply("9", ["a"])])
    gw = LLMGateway(tmp_path / "c.sqlite")
    s = llm_spec("openai/mock", params={"temperature": 0.7}, samples=3)
    ans, call = answer_with_llm(gw, s, "Q?", "MWh", HITS[:3], {"a"})
    assert [k["seed"] for k in seen] == [0, 1, 2] and ans.answer_value == "5" and call["samples_used"] == 3
    s2 = llm_spec("openai/mock", params={"temperature": 0.7}, samples=3, vote={"mode": "union"})
    again, call2 = answer_with_llm(gw, s2, "Q?", "MWh", HITS[:3], {"a"})
    assert len(seen) == 3 and call2["n_calls"] == 3  # zero new calls: same requests, another vote


def test_sampled_vote_records_its_seeds_and_its_one_sample_control_is_sample_zero(tmp_path, monkeypatch):
    """KohakuRAG's ensemble claim (issue #33 item 4): N sampled answers voted with a blank filter against
    one sample. Each seed's samples are their own requests; the control is sample 0 itself (a cache hit)."""
    seen = scripted(monkeypatch, [reply("5", ["a"]), reply("is_blank", []), reply("5", ["a"]),    # seed 0
                                  reply("7", ["a"]), reply("8", ["a"]), reply("7", ["a"])])       # seed 100
    gw = LLMGateway(tmp_path / "c.sqlite")

    def spec(seed, samples=3):
        return llm_spec("openai/mock", params={"temperature": 0.7, "seed": seed}, samples=samples,
                        vote={"mode": "answer_priority", "ignore_blank": True})

    votes = {seed: answer_with_llm(gw, spec(seed), "Q?", "MWh", HITS[:3], {"a"}) for seed in (0, 100)}
    assert [k["seed"] for k in seen] == [0, 1, 2, 100, 101, 102]
    ans, call = votes[0]
    assert ans.answer_value == "5" and [c["seed"] for c in call["calls"]] == [0, 1, 2]
    assert [(a["sample"], a["seed"], a["answer_value"]) for a in call["sample_answers"]] == [
        (0, 0, "5"), (1, 1, "is_blank"), (2, 2, "5")]
    assert [a["answer_value"] for a in votes[100][1]["sample_answers"]] == ["7", "8", "7"]  # another seed, other samples
    one, one_call = answer_with_llm(gw, spec(100, samples=1), "Q?", "MWh", HITS[:3], {"a"})
    assert len(seen) == 6 and one_call["telemetry"][0]["cached"]  # the control made no call: it is sample 0
    assert one.answer_value == "7" and one_call["calls"][0]["seed"] == 100 and "sample_answers" not in one_call


def test_a_seedless_variant_records_no_seed(tmp_path, monkeypatch):
    scripted(monkeypatch, [reply("6", ["a"])])  # temperature 0, no seed: its records stay as they were
    _, call = answer_with_llm(LLMGateway(tmp_path / "c.sqlite"), llm_spec("openai/mock"), "Q?", "MWh", HITS[:3], {"a"})
    assert "seed" not in call["calls"][0] and "sample_answers" not in call

"""The one LLM gateway: cached by the full request, replayable, failures recorded (never silent)."""
from answering import answer_with_llm, llm_spec
import json

import litellm
import pytest

from pipeline.llm_models import LLMSpec
from pipeline.llm.gateway import CacheMiss, LLMGateway, LLMRequest
from pipeline.answer.llm_answer import build_messages, parse_answer
from pipeline.answer.normalise import normalise_value

ANSWER = json.dumps({"explanation": "Stated in the paper.", "answer": "4.3 tCO2e", "answer_value": "4.3",
                     "ref_id": ["patterson2021"]})


def request(content="hello", sample=0, **params):
    return LLMRequest(model="openai/mock", messages=[{"role": "user", "content": content}],
                      params={"mock_response": ANSWER, **params}, sample=sample)


def test_rerun_makes_zero_calls(tmp_path):
    gw = LLMGateway(tmp_path / "llm.sqlite")
    first = gw.complete(request())
    assert first.ok and not first.cached and gw.calls == 1
    again = LLMGateway(tmp_path / "llm.sqlite").complete(request())
    assert again.cached and again.text == first.text
    gw.complete(request(sample=1))  # another sample index is another request
    assert gw.calls == 2


def test_replay_fails_fast_on_a_miss(tmp_path):
    LLMGateway(tmp_path / "llm.sqlite").complete(request("seen"))
    replay = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"mode": "replay"}))
    assert replay.complete(request("seen")).cached
    with pytest.raises(CacheMiss):
        replay.complete(request("never seen"))


def test_retries_then_records_the_failure(tmp_path, monkeypatch):
    attempts = []

    def flaky(**kwargs):
        attempts.append(1)
        raise litellm.RateLimitError("slow down", llm_provider="openai", model="mock")

    monkeypatch.setattr(litellm, "completion", flaky)
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"max_retries": 2, "backoff_s": 0}))
    result = gw.complete(request())
    assert not result.ok and "RateLimitError" in result.error and len(attempts) == 3
    assert gw.cache.get(request().key()) is None  # failures are not cached: a rerun retries


def test_bad_request_is_not_retried(tmp_path, monkeypatch):
    attempts = []

    def bad(**kwargs):
        attempts.append(1)
        raise litellm.BadRequestError("bad", model="mock", llm_provider="openai")

    monkeypatch.setattr(litellm, "completion", bad)
    result = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"backoff_s": 0})).complete(request())
    assert not result.ok and len(attempts) == 1


def test_answer_with_llm_end_to_end(tmp_path):
    hits = [{"node_id": "patterson2021:s2:p1:t1", "doc_id": "patterson2021", "context_id": "patterson2021:s2:p1",
             "text": "Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e.",
             "context": "Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e."}]
    gw = LLMGateway(tmp_path / "llm.sqlite")
    ans, call = answer_with_llm(gw, llm_spec("openai/mock", params={"mock_response": ANSWER}),
                                "What were the net CO2e emissions from training GShard-600B?", "tCO2e", hits,
                                {"patterson2021"})
    assert (ans.answer_value, ans.ref_id, ans.is_blank) == ("4.3", ["patterson2021"], False)
    assert call["ok"] and call["raw"] == ANSWER
    gw.backoff_s = 0
    ans, call = answer_with_llm(gw, llm_spec("openai/mock", params={"mock_response": "I think it is 4.3"}),
                                "Q?", "tCO2e", hits, {"patterson2021"})
    assert ans.is_blank and not call["ok"] and "no JSON object" in call["error"]


def test_prompt_orders():
    hits = [{"node_id": "a:s1:p1:t1", "doc_id": "a", "text": "x", "context": "CTX", "context_id": "a:s1:p1"}]
    cf = build_messages("context_first", "QUESTION?", "MWh", hits)[0]["content"]
    qf = build_messages("question_first", "QUESTION?", "MWh", hits)[0]["content"]
    assert cf.index("[ref_id=a] CTX") < cf.index("QUESTION?")
    assert qf.index("QUESTION?") < qf.index("[ref_id=a] CTX")


def test_parse_and_normalise():
    ans = parse_answer('noise {"answer_value": "True", "ref_id": "ref_id=a", "explanation": "e"} tail',
                       "True or false: x?", {"a"})
    assert (ans.answer_value, ans.ref_id) == ("1", ["a"])
    assert parse_answer('{"answer_value": "5", "ref_id": ["unknown"]}', "Q", {"a"}).is_blank  # no valid ref
    assert normalise_value("80-90", "Q") == "[80.0,90.0]"
    assert normalise_value("13,900", "Q") == "13900"
    assert normalise_value("GPT-3", "Q") == "GPT-3"

"""The LLM cache key must not move: it is the hash of the full request, and a new key re-buys
every stored call. The expected values were computed with the gateway on main before it moved
to pipeline/llm/ (``LLMRequest(...).key()`` of the gateway then in pipeline/answer/, at commit 259b74d)."""
from pipeline.llm.gateway import LLMRequest


def test_key_of_a_fixed_request_is_the_one_main_computed():
    request = LLMRequest("openai/gpt-4o-mini",
                         [{"role": "system", "content": "Answer in JSON."},
                          {"role": "user", "content": "What is 2+2? é"}],
                         {"temperature": 0, "max_tokens": 64, "response_format": {"type": "json_object"}},
                         seed=7, sample=2)
    assert request.key() == "4c7b4f938eb51b6d"
    assert LLMRequest("local/gemma3-270m", [{"role": "user", "content": "hi"}]).key() == "09ded2b24598002b"


def test_every_request_field_is_in_the_key():
    base = LLMRequest("m", [{"role": "user", "content": "q"}], {"temperature": 0}, seed=1, sample=0)
    variants = [LLMRequest("m2", base.messages, base.params, 1, 0),
                LLMRequest("m", [{"role": "user", "content": "q2"}], base.params, 1, 0),
                LLMRequest("m", base.messages, {"temperature": 1}, 1, 0),
                LLMRequest("m", base.messages, base.params, 2, 0),
                LLMRequest("m", base.messages, base.params, 1, 1)]
    assert len({base.key(), *(v.key() for v in variants)}) == 6


def test_key_names_the_endpoint_when_one_is_set():
    """A request at a server of its own (``api_base``: the model string does not pin the weights) is
    keyed with that server; without one the key is the one above (no stored reply is bought again).
    Values computed when the field was added (issue 24)."""
    messages = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "What is 2+2? é"}]
    params = {"temperature": 0, "max_tokens": 64, "response_format": {"type": "json_object"}}
    assert LLMRequest("openai/gpt-4o-mini", messages, params, 7, 2, endpoint=None).key() == "4c7b4f938eb51b6d"
    assert LLMRequest("openai/gpt-4o-mini", messages, params, 7, 2,
                      endpoint="http://127.0.0.1:8000/v1").key() == "8abaac5541870aa0"
    assert LLMRequest("openai/gemma-3-270m", [{"role": "user", "content": "hi"}],
                      endpoint="http://gpu-box:8080/v1").key() == "7ae6cd0a438a8602"

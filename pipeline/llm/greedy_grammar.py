"""Greedy decoding under a JSON grammar without checking the grammar against the whole vocabulary.

Why: llama-cpp-python's sampler chain applies the grammar to every candidate token before the greedy
pick — Gemma 3 has a 262k-token vocabulary, so each generated token costs a grammar pass over 262k
strings; measured on the default grid's cached requests that made a constrained call ~2.6x slower per
generated token than an unconstrained one. llama.cpp's own sampler (``common_sampler``) avoids it by
picking first and checking only the picked token; this module does the same for llama-cpp-python.

At temperature 0 the result is the same token: the greedy pick over the grammar-masked logits is the
first maximum among the allowed tokens; if the first maximum over all tokens is allowed, it is that
token, and only when it is rejected is the grammar applied to the whole vocabulary. Repetition
penalties are applied first, exactly as in the chain (penalties -> grammar -> greedy). Sampling
(temperature > 0), logits processors and mirostat keep llama-cpp-python's own chain.

``python -m pipeline.llm.greedy_grammar <llama_cpp.server args>`` runs the server with this sampler
(pipeline/llm/local_server.py starts it that way); ``tests/llm/test_greedy_grammar.py`` checks the
tokens are those of the stock chain on real prompts.
"""

from __future__ import annotations

import ctypes
import math
import sys

import numpy as np


class GreedyGrammarSampler:
    """Penalties, then the greedy token, checked against the grammar alone; the same interface as
    llama-cpp-python's ``LlamaSampler`` where ``Llama.sample`` uses it (``sample(ctx, idx)``)."""

    fallbacks = 0  # tokens whose unconstrained pick the grammar rejected (class-wide: the test reads it)

    def __init__(self, llama, grammar, penalty_last_n: int, repeat: float, freq: float, present: float):
        import llama_cpp
        from llama_cpp import _internals

        self._lib = llama_cpp
        self.n_vocab = int(llama.n_vocab())
        self.penalties = _internals.LlamaSampler()
        self.penalties.add_penalties(
            n_vocab=self.n_vocab,
            penalty_last_n=penalty_last_n,
            penalty_repeat=repeat,
            penalty_freq=freq,
            penalty_present=present,
        )
        self.grammar = _internals.LlamaSampler()
        self.grammar.add_grammar(llama._model, grammar)
        self._all = (llama_cpp.llama_token_data * self.n_vocab)()
        self._view = np.ctypeslib.as_array(self._all)
        self._view["id"] = np.arange(self.n_vocab, dtype=np.int32)
        self._one = (llama_cpp.llama_token_data * 1)()

    def _array(self, data, size: int):
        return self._lib.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)

    def sample(self, ctx, idx: int = -1) -> int:
        lib = self._lib
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        self._view["logit"] = logits
        self._view["p"] = 0.0
        everything = self._array(self._all, self.n_vocab)
        lib.llama_sampler_apply(self.penalties.sampler, ctypes.byref(everything))
        token = int(np.argmax(self._view["logit"]))  # first maximum, as llama.cpp's greedy sampler
        pick = self._one[0]
        pick.id, pick.logit, pick.p = token, float(self._view["logit"][token]), 0.0  # type: ignore[assignment]
        one = self._array(self._one, 1)
        lib.llama_sampler_apply(self.grammar.sampler, ctypes.byref(one))
        if math.isinf(pick.logit) and pick.logit < 0:  # rejected: mask the whole vocabulary
            type(self).fallbacks += 1
            lib.llama_sampler_apply(self.grammar.sampler, ctypes.byref(everything))
            token = int(np.argmax(self._view["logit"]))
        lib.llama_sampler_accept(self.penalties.sampler, token)
        lib.llama_sampler_accept(self.grammar.sampler, token)
        return token

    def close(self) -> None:
        self.penalties.close()
        self.grammar.close()


def install() -> None:
    """Make ``Llama`` use :class:`GreedyGrammarSampler` for greedy, grammar-constrained generation."""
    from llama_cpp import Llama

    if getattr(Llama._init_sampler, "_greedy_grammar", False):
        return
    stock = Llama._init_sampler

    def _init_sampler(self, *args, **kw):
        plain = not args and kw.get("logits_processor") is None and not kw.get("mirostat_mode")
        if plain and kw.get("grammar") is not None and kw.get("temp") == 0.0:
            return GreedyGrammarSampler(
                self,
                kw["grammar"],
                self.last_n_tokens_size,
                kw.get("repeat_penalty", 1.0),
                kw.get("frequency_penalty", 0.0),
                kw.get("presence_penalty", 0.0),
            )
        return stock(self, *args, **kw)

    _init_sampler._greedy_grammar = True  # type: ignore[attr-defined]
    Llama._init_sampler = _init_sampler  # type: ignore[method-assign]


def main() -> None:
    """llama-cpp-python's server with the greedy grammar sampler installed (same arguments)."""
    install()
    from llama_cpp.server.__main__ import main as serve

    sys.argv[0] = "llama_cpp.server"
    serve()


if __name__ == "__main__":
    main()

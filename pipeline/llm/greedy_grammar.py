"""Greedy decoding under a JSON grammar without checking the grammar against the whole vocabulary.

Why: llama-cpp-python's sampler chain applies the grammar to every candidate token before the
greedy pick, a pass over Gemma 3's 262k-token vocabulary per generated token. Like llama.cpp's own
``common_sampler``, this picks first and checks only the picked token, then (see
``_best_allowed``) the highest logits, and the whole vocabulary only when those cannot decide: at
temperature 0 the same token as the stock chain. Sampling (temperature > 0), logits processors and
mirostat keep llama-cpp-python's chain. Installed by the local server
(``python -m pipeline.llm.llama_server``); the argument and its test: docs/llm.md.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np


class GreedyGrammarSampler:
    """Penalties, then the greedy token, checked against the grammar alone; the same interface as
    llama-cpp-python's ``LlamaSampler`` where ``Llama.sample`` uses it (``sample(ctx, idx)``)."""

    fallbacks = 0  # tokens whose unconstrained pick the grammar rejected (class-wide: the test reads it)
    full_passes = 0  # fallbacks the top candidates could not decide: the grammar over the whole vocabulary
    TOP = 64  # candidates checked first on a fallback

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
        # every token accepted so far (a superset of the penalties sampler's last-n window: a token
        # outside its window is left as it is, so passing it too changes nothing)
        self._seen: dict[int, None] = {}

    def _array(self, data, size: int):
        return self._lib.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)

    def _apply(self, sampler, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """``sampler`` applied to the candidates ``ids`` only: their (id, logit) rows after it."""
        few = (self._lib.llama_token_data * len(ids))()
        view = np.ctypeslib.as_array(few)
        view["id"], view["logit"], view["p"] = ids, logits[ids], 0.0
        self._lib.llama_sampler_apply(sampler, ctypes.byref(self._array(few, len(ids))))
        return view

    def _penalised(self, logits: np.ndarray) -> np.ndarray:
        """The logits after the penalties sampler: llama.cpp's own arithmetic on the generated tokens."""
        out = logits.copy()
        if self._seen:
            ids = np.fromiter(self._seen, dtype=np.int32, count=len(self._seen))
            view = self._apply(self.penalties.sampler, ids, out)
            out[view["id"]] = view["logit"]  # the sampler may reorder what it is given
        return out

    def _best_allowed(self, logits: np.ndarray) -> int:
        """The first maximum among the tokens the grammar allows: looked for among the ``TOP`` highest
        logits first, the whole vocabulary only when that cannot decide. Every token outside the top has
        a logit at most the top's lowest, so an allowed top token above that is the answer (ties
        included: all tokens tied with it are in the top, ordered by id as argmax orders them)."""
        lib = self._lib
        top = np.argpartition(logits, -self.TOP)[-self.TOP :]
        floor = logits[top].min()
        top = top[np.lexsort((top, -logits[top]))]  # highest logit first, then lowest id
        view = self._apply(self.grammar.sampler, top, logits)
        allowed = np.flatnonzero(view["logit"] != -np.inf)
        if len(allowed) and view["logit"][allowed[0]] > floor:
            return int(view["id"][allowed[0]])
        type(self).full_passes += 1
        self._view["logit"], self._view["p"] = logits, 0.0
        lib.llama_sampler_apply(self.grammar.sampler, ctypes.byref(self._array(self._all, self.n_vocab)))
        return int(np.argmax(self._view["logit"]))

    def sample(self, ctx, idx: int = -1) -> int:
        lib = self._lib
        logits = self._penalised(np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,)))
        token = int(np.argmax(logits))  # first maximum, as llama.cpp's greedy sampler
        pick = self._one[0]
        pick.id, pick.logit, pick.p = token, float(logits[token]), 0.0
        lib.llama_sampler_apply(self.grammar.sampler, ctypes.byref(self._array(self._one, 1)))
        if math.isinf(pick.logit) and pick.logit < 0:  # rejected: the best token the grammar allows
            type(self).fallbacks += 1
            token = self._best_allowed(logits)
        lib.llama_sampler_accept(self.penalties.sampler, token)
        lib.llama_sampler_accept(self.grammar.sampler, token)
        self._seen[token] = None
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
    Llama._init_sampler = _init_sampler

"""What a model's tokens cost: ``llm.prices`` first, then litellm's local price map.

``llm.prices.<model>: {input: X, output: Y}`` is USD per million input (prompt) and output
(completion) tokens. It prices what litellm's map cannot (every self-hosted model, a provider
newer than the installed litellm) and, when a model is in both, it wins: the config says what
this account pays. Models served on this machine (``local/<name>``) cost 0 unless priced. A model
without a price is *unpriced*, never free: the estimate says so, and with ``llm.max_cost_usd``
set preflight refuses to start (a cap cannot count what it cannot price).
"""

from __future__ import annotations

import os

from pipeline.llm_models import ModelSpec

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else `import litellm` fetches a price list


def litellm_price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's local price map, None when it lacks the model."""
    import litellm

    info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
    if not info or info.get("input_cost_per_token") is None:
        return None
    return float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0.0)


def price_per_token(model: ModelSpec) -> tuple[float, float] | None:
    """(input, output) USD per token: ``llm.prices``, else 0 for a model served on this machine, else
    litellm's map."""
    if model.price is not None:
        return model.price
    if model.kind.free:
        return 0.0, 0.0
    return litellm_price(model.name)


def price_source(model: ModelSpec) -> str:
    """Where :func:`price_per_token` finds the price (the plan's column)."""
    if model.price is not None:
        return "llm.prices"
    if model.kind.free:
        return f"{model.kind.name} (free)"
    return "litellm map" if litellm_price(model.name) is not None else "UNPRICED"


def reply_cost(model: ModelSpec, response, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD of one reply as the gateway records it: ``llm.prices`` x the reply's token counts, else
    litellm's own reckoning of the response (it knows provider details such as cached-prompt
    rates), else None (unpriced; a local model's record stays None, its spend counts 0)."""
    if model.price is not None:
        return prompt_tokens * model.price[0] + completion_tokens * model.price[1]
    if model.kind.free:
        return None
    try:
        import litellm

        return litellm.completion_cost(completion_response=response)
    except Exception:  # litellm has no price for this model (self-hosted, mocked)
        return None


def unpriced(models: list[ModelSpec]) -> list[str]:
    """The models of ``models`` nothing prices."""
    return sorted({m.name for m in models if price_per_token(m) is None})

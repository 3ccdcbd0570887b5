"""What a model's tokens cost: ``llm.prices`` first, then litellm's local price map.

``llm.prices.<model>: {input: X, output: Y}`` is USD per million input (prompt) and output
(completion) tokens. It prices what litellm's map cannot (every self-hosted model, a provider
newer than the installed litellm) and, when a model is in both, it wins: the config says what
this account pays. ``local/<name>`` models run on this machine and cost 0 unless priced. A model
without a price is *unpriced*, never free: the estimate says so, and with ``llm.max_cost_usd``
set preflight refuses to start (a cap cannot count what it cannot price).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else `import litellm` fetches a price list

LOCAL_PREFIX = "local/"
PER = 1e6  # llm.prices are per million tokens


def configured(llm_cfg: dict, model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from ``llm.prices``, None when the model is not listed."""
    entry = (llm_cfg.get("prices") or {}).get(model)
    return None if entry is None else (float(entry["input"]) / PER, float(entry["output"]) / PER)


def litellm_price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's local price map, None when it lacks the model."""
    import litellm

    info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
    if not info or info.get("input_cost_per_token") is None:
        return None
    return float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0.0)


def price_per_token(llm_cfg: dict, model: str) -> tuple[float, float] | None:
    """(input, output) USD per token: ``llm.prices``, else 0 for a local model, else litellm's map."""
    own = configured(llm_cfg, model)
    if own is not None:
        return own
    if model.startswith(LOCAL_PREFIX):
        return 0.0, 0.0
    return litellm_price(model)


def reply_cost(llm_cfg: dict, model: str, response, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD of one reply as the gateway records it: ``llm.prices`` x the reply's token counts, else
    litellm's own reckoning of the response (it knows provider details such as cached-prompt
    rates), else None (unpriced; a local model's record stays None, its spend counts 0)."""
    own = configured(llm_cfg, model)
    if own is not None:
        return prompt_tokens * own[0] + completion_tokens * own[1]
    if model.startswith(LOCAL_PREFIX):
        return None
    try:
        import litellm

        return litellm.completion_cost(completion_response=response)
    except Exception:  # litellm has no price for this model (self-hosted, mocked)
        return None


def unpriced(llm_cfg: dict, models: list[str]) -> list[str]:
    """The models of ``models`` nothing prices."""
    return sorted({m for m in models if price_per_token(llm_cfg, m) is None})

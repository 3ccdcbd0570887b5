"""Retry classification by exception class decides as the class-name strings did: fatal errors
(and their subclasses) are not retried, the listed transport errors are, an error merely
derived from a retryable class is not (every litellm error derives from APIError)."""
import json

import litellm
import pytest

from pipeline.llm.retries import rate_limited, retryable


class Plain(Exception):
    pass


@pytest.mark.parametrize("exc, expected", [
    (litellm.RateLimitError("slow down", llm_provider="openai", model="m"), True),
    (litellm.Timeout("slow", model="m", llm_provider="openai"), True),
    (litellm.APIConnectionError("down", llm_provider="openai", model="m"), True),
    (litellm.BadRequestError("bad", model="m", llm_provider="openai"), False),
    (litellm.ContextWindowExceededError("too long", model="m", llm_provider="openai"), False),
    (litellm.AuthenticationError("no key", llm_provider="openai", model="m"), False),
    (TimeoutError("t"), True),
    (ConnectionError("c"), True),
    (ConnectionResetError("reset"), False),          # a subclass: its name was never in the list
    (json.JSONDecodeError("x", "doc", 0), True),
    (Plain("boom"), False),
    (Plain("Invalid API key provided"), False),     # fatal by its words, whatever the class
])
def test_retryable(exc, expected):
    assert retryable(exc) is expected


def test_status_codes_decide_when_present():
    exc = Plain("server")
    exc.status_code = 503
    assert retryable(exc)
    exc.status_code = 400
    assert not retryable(exc)
    exc.status_code = 429
    assert rate_limited(exc)
    assert rate_limited(litellm.RateLimitError("slow down", llm_provider="openai", model="m"))
    assert not rate_limited(Plain("x"))

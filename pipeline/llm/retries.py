"""The client side of one LLM call: the litellm call itself, which failures another attempt can
fix, and how long to wait before it.

Classification is by exception class (litellm maps every provider's errors onto its own
classes, which extend openai's): a bad request, missing credentials or an unknown model is
fatal (the job fails), rate limits, timeouts, connection problems and 5xx are retried. Why the
retryable classes match exactly (``type(exc) in ...``) and not by ``isinstance``: every litellm
and openai error extends ``APIError``, so ``isinstance`` would retry errors that were never
meant to be (a mock's exception, a schema-validation error); exact classes keep the set the
gateway has always retried.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Iterable
from functools import cache

from pipeline.credentials import redact

# A missing key is fatal whatever type litellm wraps it in.
FATAL_WORDS = (
    "api key",
    "api_key",
    "credentials",
    "llm provider not provided",
    "model not found",
    "does not exist",
    "unknown model",
)


@cache
def fatal_errors() -> tuple[type, ...]:
    """Errors another attempt cannot fix (and their subclasses: a ContextWindowExceededError is
    a BadRequestError)."""
    import litellm
    import openai

    return (
        litellm.AuthenticationError,
        openai.AuthenticationError,
        litellm.PermissionDeniedError,
        openai.PermissionDeniedError,
        litellm.NotFoundError,
        openai.NotFoundError,
        litellm.BadRequestError,
        openai.BadRequestError,
        litellm.UnprocessableEntityError,
        openai.UnprocessableEntityError,
        litellm.ContextWindowExceededError,
        litellm.ContentPolicyViolationError,
        litellm.UnsupportedParamsError,
        litellm.InvalidRequestError,
    )


@cache
def retryable_errors() -> frozenset[type]:
    """Errors without an HTTP status that another attempt may fix (matched exactly, see above)."""
    import json

    import litellm
    import openai

    return frozenset(
        {
            litellm.Timeout,
            openai.APITimeoutError,
            litellm.APIConnectionError,
            openai.APIConnectionError,
            litellm.RateLimitError,
            openai.RateLimitError,
            litellm.ServiceUnavailableError,
            litellm.InternalServerError,
            openai.InternalServerError,
            litellm.APIError,
            openai.APIError,
            litellm.BadGatewayError,
            TimeoutError,
            ConnectionError,
            json.JSONDecodeError,
        }
    )


@cache
def rate_limit_errors() -> frozenset[type]:
    import litellm
    import openai

    return frozenset({litellm.RateLimitError, openai.RateLimitError})


def litellm_completion(**kwargs):
    """The one place a request leaves the process (tests replace it with a script)."""
    import litellm

    litellm.suppress_debug_info = True  # else every unpriced model prints litellm's provider list to stdout
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)  # two INFO lines per call would flood the job logs
    return litellm.completion(**kwargs)


def not_empty(text: str) -> str | None:
    """The default reply check: anything but whitespace."""
    return None if text.strip() else "empty response"


def error_line(exc: Exception, secrets: Iterable[str] = ()) -> str:
    """What a failed attempt records: the class and the first line of the message, ``secrets`` (what the
    call carried from the environment: :func:`pipeline.credentials.carried`) masked before it is cut."""
    text = redact(str(exc), secrets)
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def status(exc: Exception) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def retryable(exc: Exception) -> bool:
    """Rate limits, timeouts, connection problems and 5xx are retried; authentication, permission,
    unknown-model and bad-request errors are not."""
    if isinstance(exc, fatal_errors()) or any(w in str(exc).lower() for w in FATAL_WORDS):
        return False
    code = status(exc)
    if code is not None:
        return code == 429 or code >= 500 or code == 408
    return type(exc) in retryable_errors()


def rate_limited(exc: Exception) -> bool:
    return status(exc) == 429 or type(exc) in rate_limit_errors()


def retry_after(exc: Exception) -> float | None:
    """Seconds a 429 asks to wait: its ``Retry-After`` header, in seconds or as an HTTP date."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    value = None
    if headers is not None:
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            value = None
    return parse_retry_after(value)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    if not value:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_s(attempt: int, base_s: float, max_s: float, after: float | None) -> float:
    """The pause before attempt ``attempt + 1``: the provider's ``Retry-After`` (capped, a little
    jitter) when it gave one, else exponential backoff with full jitter (threads that failed
    together spread out)."""
    if after is not None:
        return min(max_s, after * random.uniform(1.0, 1.1) + random.uniform(0, 0.05))
    return random.uniform(0.5, 1.0) * min(max_s, base_s * 2 ** (attempt - 1))

"""Single flight: identical requests in flight are made once.

Inside a process the first caller leads and the others wait for its reply; across processes a
lease row in the cache (:meth:`LLMCache.claim`) marks a request in flight and other processes
wait for it (a lease whose process died is taken over).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from pipeline.llm.cache import LLMCache, LLMResult


class _Flight:
    """One request in flight inside this process: followers wait for the leader's result."""

    def __init__(self):
        self.done = threading.Event()
        self.result: LLMResult | None = None


_FLIGHTS: dict[tuple[str, str], _Flight] = {}
_FLIGHTS_LOCK = threading.Lock()


def single_flight(
    flight_key: tuple[str, str],
    lead: Callable[[], LLMResult],
    on_follow: Callable[[], None],
    followed: Callable[[LLMResult | None], LLMResult],
) -> LLMResult:
    """``lead()`` unless the same request is in flight in this process; then ``on_follow()``, wait
    for the leader and return ``followed(leader's result)``."""
    with _FLIGHTS_LOCK:
        flight = _FLIGHTS.get(flight_key)
        leader = flight is None
        if leader:
            flight = _FLIGHTS[flight_key] = _Flight()
    assert flight is not None  # found or just made under the lock
    if not leader:
        on_follow()
        flight.done.wait()
        return followed(flight.result)
    try:
        flight.result = lead()
    finally:
        with _FLIGHTS_LOCK:
            _FLIGHTS.pop(flight_key, None)
        flight.done.set()
    return flight.result


def claim_lease(cache: LLMCache, key: str, owner: str, ttl_s: float, on_wait: Callable[[], None]) -> bool:
    """Wait until this process holds the request's lease (True: make the call) or another
    process has stored its reply (False: read the cache). ``on_wait`` runs once if we wait."""
    waited = False
    while True:
        state = cache.claim(key, owner, ttl_s)
        if state == "hit":
            return False
        if state == "mine":
            return True
        if not waited:
            on_wait()
            waited = True
        time.sleep(0.1)

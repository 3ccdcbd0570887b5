"""Many calls of one model at once: a thread pool as wide as the model's concurrency, results in
the order of the inputs.

Why one place: the answer stage (every question and sample) and the LLM query planner (every
question) both fan calls out the same way. The gateway bounds the calls in flight per model (its
slots) and paces them by the shared rate limits (:mod:`pipeline.llm.limits`); this pool keeps that
many tasks busy, hands the results back in input order (so an output file is the same at any
concurrency, whatever order the replies arrive in) and, once a task reports an error no retry can
fix, starts no further task (those in flight finish, their replies are stored).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from tqdm import tqdm

from pipeline.llm_models import ModelSpec

T = TypeVar("T")
R = TypeVar("R")


class FatalLLMError(ValueError):
    """A call failed in a way no retry can fix; the job fails (every reply received is cached)."""


def map_calls(
    model: ModelSpec,
    fn: Callable[[T], R],
    items: Sequence[T],
    fatal: Callable[[R], bool] = lambda _: False,
    bar: str | None = "llm",
) -> list[R | None]:
    """``fn`` over ``items`` in ``model.concurrency`` threads (the gateway has as many slots for it); results in item
    order. An item not started because an earlier result was ``fatal`` gives None. ``bar``: the
    progress bar's description (None: no bar)."""
    stop = threading.Event()
    progress = tqdm(total=len(items), desc=bar, disable=bar is None)

    def one(item: T) -> R | None:
        if stop.is_set():
            return None
        out = fn(item)
        if fatal(out):
            stop.set()
        progress.update(1)
        return out

    workers = max(1, model.concurrency)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
        done = list(pool.map(one, items))  # results in item order, whatever order they finished in
    progress.close()
    return done

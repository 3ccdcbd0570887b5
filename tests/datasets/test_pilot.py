"""A pilot (``pilot: M`` in a suite subset) never shares a query with a final selection of the same seed and
at most its declared size, on each loader's real data; the shipped pilot overlay stays clear of the
default grid's and the claims config's suite subsets (#33 item 5)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.datasets.suite import load_suite_tables, pilot_draw

pytestmark = pytest.mark.data  # the benchmarks as shipped in ../shared/data/retrieval

REPO = Path(__file__).resolve().parents[2]
SMALL_MSMARCO = {"judged_per_query": 2, "n_distractors": 0}  # passages do not decide which queries are drawn

# dataset, the size key, the pilot's size, finals to check (k <= the cap, the last one), extra keys
CASES = [
    ("hotpotqa", "n_questions", 12, [3, 10, 30], {}),
    ("msmarco", "n_queries", 10, [5, 20, 40], SMALL_MSMARCO),  # random.sample switches method past 21 of 97
    ("legalbench_rag", "n_docs", 3, [2, 8, 12], {}),
    ("dragonball", "docs_per_domain", 3, [4, 12, 16], {}),
]


def ids(name: str, subset: dict) -> set[str]:
    return set(load_suite_tables(name, subset=subset).queries["id"])


@pytest.mark.parametrize(("name", "key", "size", "finals", "extra"), CASES, ids=[c[0] for c in CASES])
def test_pilot_is_disjoint_from_every_final_up_to_its_size(name, key, size, finals, extra):
    pilot = ids(name, {key: finals[-1], "pilot": size, **extra})
    assert pilot
    for k in finals:
        final = ids(name, {key: k, **extra})
        assert final and not pilot & final, (name, k)
    other = ids(name, {key: finals[-1], "pilot": size, "pilot_seed": 2, **extra})
    assert other != pilot and not other & ids(name, {key: finals[-1], **extra})  # the seed draws another pilot


def test_pilot_draw_avoids_every_smaller_draw():
    """A draw of k is not always a prefix of a draw of k+1 (random.sample switches method with k), so the
    pilot avoids the union of all of them; and it asks for no more than is left."""
    import random

    pool = [f"u{i:03d}" for i in range(97)]
    final = lambda k: random.Random(0).sample(pool, k)  # noqa: E731
    pilot = pilot_draw(pool, final, 40, 30, seed=1)
    assert len(pilot) == 30 and not set(pilot) & set().union(*(final(k) for k in range(1, 41)))
    assert not set(final(20)) <= set(final(40))  # the case the union is for: 20 and 40 are drawn differently
    assert len(pilot_draw(pool, final, 90, 30, seed=1)) == 97 - len(set().union(*(final(k) for k in range(1, 91))))


def test_pilot_params_are_recorded_and_an_empty_pilot_is_an_error():
    bench = load_suite_tables("legalbench_rag", subset={"n_docs": 12, "pilot": 2})
    assert bench.params == {"benchmark": "cuad", "mini": True, "n_docs": 12, "seed": 0, "pilot": 2}
    with pytest.raises(ValueError, match="the pilot .* has no query"):
        load_suite_tables("legalbench_rag", subset={"n_docs": 40, "pilot": 2})


def shipped_subsets(config: str) -> dict[str, dict]:
    return yaml.safe_load((REPO / config).read_text())["suite"]["datasets"]


@pytest.mark.parametrize("final_config", ["config.yaml", "config.claims.yaml"])
def test_shipped_pilot_is_disjoint_from_the_shipped_finals(final_config):
    pilots, finals = shipped_subsets("config.pilot.yaml"), shipped_subsets(final_config)
    for name, subset in pilots.items():
        extra = SMALL_MSMARCO if name == "msmarco" else {}
        assert not ids(name, {**subset, **extra}) & ids(name, {**(finals.get(name) or {}), **extra}), name

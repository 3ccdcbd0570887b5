"""The floors of ``pipeline/``: which package may import which (tests/test_layers.py checks it).

A module may import from its own floor and the floors below, never from a floor above: the
shared services (data model, I/O, config, the LLM gateway, encoders, ranking) know no stage,
each stage knows only the stages before it, and the drivers (CLI, workflow, benchmarks) sit
on top. Within a floor, packages may import each other as long as no circle forms.

To place a new package, add its name to a floor; a name here whose package does not exist
(yet) is ignored, so the map can name a floor before the code lands.
"""

from __future__ import annotations

FLOORS: tuple[tuple[str, ...], ...] = (
    # shared services: no stage, no driver
    (
        "io",
        "provenance",
        "layout",
        "tree",
        "config",
        "config_schema",
        "specs",
        "schemas",
        "layers",
        "cores",
        "llm",
        "embed",
        "ranking",
        "index_kinds",
        "retrieval_modes",
        "registry",
        "answer_backends",
        "suite_datasets",
        "markdown",
        "cache_journal",
        "runs",
    ),
    ("datasets",),
    ("parse",),
    ("index", "sprout", "indexes"),  # indexes: the kind modules (registered in index_kinds; drivers import them)
    ("retrieve",),
    ("answer",),
    ("score",),
    ("report",),
    # drivers
    (
        "cli",
        "verbs",
        "__main__",
        "workflow",
        "bench",
        "bench_llm",
        "bench_encoder",
        "estimate",
        "plan",
        "rules",
        "registries",
    ),
)


def floor_of(unit: str) -> int | None:
    """The floor of a top-level package or module of ``pipeline`` (None: not in the map)."""
    for level, names in enumerate(FLOORS):
        if unit in names:
            return level
    return None

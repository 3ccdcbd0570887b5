"""The built-in retrieval-suite datasets: importing this module imports each loader, which registers itself
(pipeline/registry/suite_datasets.py) with its ``Subset`` keys. A driver imports it (pipeline/register_builtins.py)."""

from __future__ import annotations

import pipeline.datasets.dragonball
import pipeline.datasets.hotpotqa
import pipeline.datasets.legalbench
import pipeline.datasets.msmarco

LOADED = (
    pipeline.datasets.dragonball,
    pipeline.datasets.hotpotqa,
    pipeline.datasets.legalbench,
    pipeline.datasets.msmarco,
)

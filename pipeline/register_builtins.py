"""The modules that register the built-in entries of the registries whose code lives elsewhere: index
kinds (:mod:`pipeline.indexes`), planner kinds (:mod:`pipeline.retrieve.planner`), fusion modes
(:mod:`pipeline.ranking.fusion`), answering backends (:mod:`pipeline.answer.backends`), kinds of LLM
serving (:mod:`pipeline.llm.serving`), retrieval-suite datasets (:mod:`pipeline.datasets.suite_loaders`) and
measures (:mod:`pipeline.score`).

A driver (the CLI, the Snakefile's workflow, the benches) imports this module before it validates a
config or looks an entry up. The registries themselves sit on the shared floor and never import a
stage (pipeline.registry.base.Registry's ``builtins``: a lookup before this import is a one-line error), so
the import graph shows who loads what.
"""

from __future__ import annotations

import pipeline.answer.backends
import pipeline.datasets.suite_loaders
import pipeline.indexes
import pipeline.llm.serving
import pipeline.ranking.fusion
import pipeline.retrieve.planner
import pipeline.score

LOADED = (
    pipeline.answer.backends,
    pipeline.datasets.suite_loaders,
    pipeline.indexes,
    pipeline.llm.serving,
    pipeline.ranking.fusion,
    pipeline.retrieve.planner,
    pipeline.score,
)

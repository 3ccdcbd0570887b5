"""The packages that register the built-in entries of the registries that live in stage code: index
kinds (:mod:`pipeline.indexes`) and planner kinds (:mod:`pipeline.retrieve.planner`).

A driver (the CLI, the Snakefile's workflow, the benches) imports this module before it validates a
config or looks an entry up. The registries themselves sit on the shared floor and never import a
stage (pipeline.registry.Registry's ``builtins``: a lookup before this import is a one-line error), so
the import graph shows who loads what.
"""

from __future__ import annotations

import pipeline.indexes
import pipeline.retrieve.planner

LOADED = (pipeline.indexes, pipeline.retrieve.planner)

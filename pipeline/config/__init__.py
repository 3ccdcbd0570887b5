"""Load, validate and slice the run configuration: one module per concern.

A run's config is assembled in one place, :func:`~pipeline.config.load.resolve_config` (the command-line
files with the files their ``extends:`` names, ``--config`` on top), and validated once at start-up (the
Snakefile calls :func:`~pipeline.config.load.snakemake_config`), so a typo fails before any work with a
message that names the bad key or file, not deep inside a rule.

- :mod:`~pipeline.config.load`: the files of a run and their ``extends:`` chains;
- :mod:`~pipeline.config.overrides`: ``--set``/``--config`` pairs, typed, dotted keys merged;
- :mod:`~pipeline.config.drops`: entries set to null, dropped, and what named them;
- :mod:`~pipeline.config.aliases`: the old names of renamed keys, with a one-line notice;
- :mod:`~pipeline.config.schema`: the schema, generated from the keys declared beside their dataclasses;
- :mod:`~pipeline.config.validate`: the schema's check and the cross-references;
- :mod:`~pipeline.config.resolve`: defaults that depend on other entries, and lookups over a resolved config;
- :mod:`~pipeline.config.folders`: the shared data folders a run reads;
- :mod:`~pipeline.config.slices`: the hashed parts of the config that shape each output.

This module names the package's API (``from pipeline.config import load_config``).
"""

from __future__ import annotations

from pipeline.config.drops import DROPPED, LEFT_OUT, drop_notices
from pipeline.config.folders import (
    check_paths,
    data_folders,
    missing_data,
    retrieval_root,
    suite_present,
    wattbot_present,
)
from pipeline.config.load import (
    DEFAULT_CONFIG,
    EXTENDS,
    OVERLAY_CONFIGS,
    config_chain,
    deep_merge,
    load_config,
    resolve_config,
    snakemake_config,
)
from pipeline.config.resolve import (
    answer_splits,
    corpus_answer_variants,
    corpus_specs,
    model_encoders,
    resolve_answering,
)
from pipeline.config.schema import full_schema
from pipeline.config.slices import (
    EXECUTION_ONLY,
    EXECUTION_ONLY_THREADS,
    PARAMS_VERSION,
    answering_slice,
    config_hash,
    hashed_embedding,
    index_embedding,
    index_slice,
    llm_execution,
    model_endpoint_slice,
    retrieval_indexes,
    retrieval_slice,
    sprout_attention_slice,
    versioned,
)
from pipeline.config.validate import check_report, validate
from pipeline.config_schema import ConfigError

__all__ = [
    "DEFAULT_CONFIG",
    "DROPPED",
    "EXECUTION_ONLY",
    "EXECUTION_ONLY_THREADS",
    "EXTENDS",
    "LEFT_OUT",
    "OVERLAY_CONFIGS",
    "PARAMS_VERSION",
    "ConfigError",
    "answer_splits",
    "answering_slice",
    "check_paths",
    "check_report",
    "config_chain",
    "config_hash",
    "corpus_answer_variants",
    "corpus_specs",
    "data_folders",
    "deep_merge",
    "drop_notices",
    "full_schema",
    "hashed_embedding",
    "index_embedding",
    "index_slice",
    "llm_execution",
    "load_config",
    "missing_data",
    "model_encoders",
    "model_endpoint_slice",
    "resolve_answering",
    "resolve_config",
    "retrieval_indexes",
    "retrieval_root",
    "retrieval_slice",
    "snakemake_config",
    "sprout_attention_slice",
    "suite_present",
    "validate",
    "versioned",
    "wattbot_present",
]

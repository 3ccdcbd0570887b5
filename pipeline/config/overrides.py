"""Command-line overrides: the verbs' ``--set KEY=VALUE`` and Snakemake's ``--config KEY=VALUE``, one parser.

A value means what it means written in a config file (``KEY: VALUE``, YAML): ``8`` is an integer, ``0.5`` a
number, ``true`` a boolean, ``null`` None (which drops a named entry: pipeline/config/drops.py), and a flow
mapping ``{concurrency: 8}`` holds typed values too. Snakemake's own parser reads a nested value with YAML's
base loader, all strings ("'8' is not of type 'integer'"), so the Snakefile re-reads Snakemake's raw
``--config`` arguments here (:func:`pipeline.config.load.snakemake_config`).

A dotted key reaches a nested one: ``llm.concurrency=8`` and ``answering.llm-cf.samples=3`` merge into
those tables like ``llm={concurrency: 8}`` does. A key that itself holds a dot (a model name such as
``gpt-4.1`` under ``llm.per_model``) is written as a flow mapping one level up. Snakemake's command line
refuses a dotted key before the workflow is read, so there only the flow-mapping form works.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from pipeline.config_schema import ConfigError, ConfigTree


def parse_overrides(pairs: Sequence[str]) -> dict:
    """``KEY=VALUE`` pairs, in order, as one nested mapping to merge over the config (a later pair wins;
    mappings merge). A pair without ``=``, an empty part of a dotted key or a value that is not YAML is a
    one-line :class:`ConfigError` naming the key."""
    out: ConfigTree = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(
                f"config override {pair!r}: write KEY=VALUE (a dotted KEY sets a nested key, e.g. llm.concurrency=8)"
            )
        parts = key.split(".")
        if not all(parts):
            raise ConfigError.at(key, "a dotted key has an empty part")
        _put(out, parts, typed_value(key, text), key)
    return out


def typed_value(key: str, text: str) -> object:
    """``text`` read as a YAML value (what ``KEY: text`` means in a config file); empty is None."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError.at(key, f"{text!r} is not a YAML value ({problem})") from None


def _put(tree: ConfigTree, parts: list[str], value: object, key: str) -> None:
    """``value`` at ``parts`` of ``tree``, creating the tables on the way; a mapping merges into one there."""
    here = tree
    for i, part in enumerate(parts[:-1]):
        nxt = here.setdefault(part, {})
        if not isinstance(nxt, dict):
            above = ".".join(parts[: i + 1])
            raise ConfigError.at(key, f"'{above}' is set to {nxt!r} by an earlier override, not a table of keys")
        here = nxt
    last = parts[-1]
    if isinstance(value, dict) and isinstance(here.get(last), dict):
        deep_merge(here[last], value)
    else:
        here[last] = value


def deep_merge(base: ConfigTree, over: ConfigTree) -> dict:
    """``over`` into ``base`` in place: nested mappings merge, anything else replaces (a config file over
    the files before it, the overrides over them all)."""
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = v
    return base

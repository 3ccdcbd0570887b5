"""Assemble a run's raw config from its files: ``extends:`` chains, the command-line files merged in order,
``--config`` on top (:func:`resolve_config`), then validated (:func:`load_config`, :func:`snakemake_config`)."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from pipeline.config.aliases import rename_keys
from pipeline.config.drops import drop_notices
from pipeline.config.overrides import deep_merge, parse_overrides
from pipeline.config.schema import required_sections
from pipeline.config.validate import validate
from pipeline.config_schema import ConfigError, ConfigTable, ConfigTree

# The repo's larger grids (`extends:`): the strong-encoder overlay (config.yaml + the mpnet encoder), the
# retrieval suite at full size (config.yaml + every suite query, no LLM), and the full grid (the full suite +
# the whole LLM grid: `--configfile config.full.yaml`).
OVERLAY_CONFIGS = ("config.mpnet.yaml", "config.suite-full.yaml", "config.full.yaml")


# The grid of a run given no config file (Snakemake without --configfile, the CLI verbs' default).
DEFAULT_CONFIG = "config.yaml"
# Top-level key of a config file naming the file its grid extends (a path relative to the file).
EXTENDS = "extends"


def resolve_config(
    configfiles: Sequence[str | Path] = (), overrides: ConfigTable | None = None, notices: list[str] | None = None
) -> dict:
    """The raw (unvalidated) config of a run: the files in ``configfiles`` (``config.yaml`` when none)
    merged key by key in order, each over the chain of files its ``extends:`` names, then ``overrides``
    (Snakemake's ``--config k=v``) on top. A key under its old name is renamed in each file before the
    merge (pipeline/config/aliases.py), its one-line notice appended to ``notices``.

    The one place a run's config is assembled: the Snakefile (and so every cluster job, which Snakemake
    starts with the same ``--configfile``/``--config`` arguments), ``estimate``, ``bench`` and the make
    targets all come through here, so a file means one grid everywhere. ``extends`` is removed; a cycle
    or a missing file is a one-line :class:`ConfigError` naming the file."""
    said = notices if notices is not None else []
    cfg: ConfigTree = {}
    for path in configfiles or (DEFAULT_CONFIG,):
        deep_merge(cfg, _read_extended(Path(path), (), said))
    over = copy.deepcopy(dict(overrides or {}))
    said += rename_keys(over, "--config")
    return deep_merge(cfg, over)


def config_chain(path: str | Path, seen: tuple[Path, ...] = ()) -> list[Path]:
    """The files ``path`` is made of, the base of its ``extends`` chain first, ``path`` last. ``extends`` names
    one file, or a list of them: their chains in that order, a file already in the chain skipped (a shared
    base such as config.yaml is merged once, where it first comes), so a grid can build on two others
    (config.full.yaml: the full suite and the mpnet overlay) without copying either."""
    path = Path(os.path.abspath(path))
    if path in seen:
        loop = " -> ".join(p.name for p in (*seen[seen.index(path) :], path))
        raise ConfigError(f"config file {seen[-1]}: 'extends' makes a cycle ({loop})")
    raw = _read_file(path, seen[-1] if seen else None)
    parent = raw.get(EXTENDS)
    if parent is None:
        return [path]
    parents = parent if isinstance(parent, list) else [parent]
    if not parents or not all(isinstance(p, str) and p for p in parents):
        raise ConfigError(
            f"config file {path}: 'extends' must be a file path or a list of them (relative to {path.parent})"
        )
    chain: list[Path] = []
    for p in parents:
        chain += [f for f in config_chain(path.parent / p, (*seen, path)) if f not in chain]
    return [*chain, path]


def _read_extended(path: Path, seen: tuple[Path, ...], notices: list[str]) -> dict:
    """One command-line file with the files it extends under it, ``extends`` removed, old key names renamed."""
    cfg: ConfigTree = {}
    for p in config_chain(path, seen):
        raw = _read_file(p, None)
        raw.pop(EXTENDS, None)
        notices += rename_keys(raw, p.name)
        deep_merge(cfg, raw)
    return cfg


def _read_file(path: Path, extended_by: Path | None) -> dict:
    """A config file's mapping (``{}`` for an empty file)."""
    if not path.is_file():
        if extended_by is not None:
            raise ConfigError(f"config file {extended_by}: 'extends' names {path}, which does not exist")
        raise ConfigError(f"config file {path} does not exist")
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {path}: must be a mapping of keys, not {type(raw).__name__}")
    return raw


def load_config(configfiles: str | Path | Sequence[str | Path] = (), overrides: ConfigTable | None = None) -> dict:
    """:func:`resolve_config` then :func:`validate`: the config a run of these files uses."""
    files = [configfiles] if isinstance(configfiles, str | Path) else list(configfiles)
    notices: list[str] = []
    raw = resolve_config(files, overrides, notices)
    require_extends(raw, [Path(f) for f in files])
    cfg = validate(raw)
    for line in dict.fromkeys(notices):
        print(line, file=sys.stderr)
    return cfg


def require_extends(raw: ConfigTree, files: Sequence[Path]) -> None:
    """An overlay written as Snakemake users write one (a few keys, no ``extends:``) misses the grid's
    required keys: say what to write, not only which key the schema misses (issue #35)."""
    missing = [k for k in required_sections() if k not in raw]
    overlays = [f for f in files if len(config_chain(f)) == 1 and f.name != DEFAULT_CONFIG]
    if missing and overlays:
        names = ", ".join(str(f) for f in overlays)
        raise ConfigError(
            f"config file {names}: misses the required key{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
            f"an overlay of the default grid names it on its first line: `extends: {DEFAULT_CONFIG}` "
            "(a path relative to the file)"
        )


def snakemake_config(workflow, config: ConfigTree) -> dict:
    """Inside the Snakefile: the run's validated config from Snakemake's command line (``--configfile``
    files, else config.yaml; ``--config`` on top, typed as ``--set`` is: pipeline/config/overrides.py)
    through :func:`resolve_config`.

    Snakemake has already merged the command-line files as written (``extends`` unresolved) into
    ``config``; it is replaced by the resolved dict. The files read are registered as the workflow's
    config files (Snakemake's metadata, and the source archive of non-shared-filesystem executors)."""
    settings = workflow.config_settings
    files = [Path(f) for f in settings.configfiles] or [Path(DEFAULT_CONFIG)]
    # Snakemake's raw `--config` arguments, typed as --set types them (its own parse left nested values strings)
    args = getattr(settings, "config_args", None)
    notices: list[str] = []
    raw = resolve_config(files, parse_overrides(args) if args else dict(settings.config), notices)
    require_extends(raw, files)
    config.clear()
    config.update(copy.deepcopy(raw))
    known = {os.path.abspath(f) for f in workflow.configfiles}
    for path in (p for f in files for p in config_chain(f)):
        if str(path) not in known:
            known.add(str(path))
            workflow.configfiles.append(path)
    cfg = validate(raw)
    if getattr(workflow, "is_main_process", True):  # not again in each cluster job
        for line in [*dict.fromkeys(notices), *drop_notices(cfg)]:
            print(line, file=sys.stderr)
    return cfg

"""The config schema (pipeline/schemas/config.schema.yaml), loaded once: the one source of the
config's defaults and enumerations.

Two kinds of default live in the schema:

- ``default:`` is written into the resolved config by :func:`fill_and_check` (a default-filling
  JSON-schema validator, what ``snakemake.utils.validate(..., set_default=True)`` does), so it is part of
  the slices that are hashed into params, manifests and cache keys, exactly as the hand-written
  ``setdefault`` calls wrote it before.
- ``x-default:`` is a stage's default for a variant key that the slices never carried (filling it in
  would change every params string and so rerun every job); the typed specs (pipeline/specs.py) read it
  through :func:`spec_defaults` instead of the stage code keeping its own copy.

Enumerations are read from the schema too (:func:`enum`), so the code's constants and the schema's
``enum:`` lists cannot drift apart. :func:`parse_spec` makes a typed spec (a frozen dataclass) of a
config table: its keys, the schema's defaults for the missing ones, an unknown key an error naming it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import fields
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

if TYPE_CHECKING:
    import jsonschema


@cache
def schema() -> dict:
    """Parsed with libyaml's safe loader where PyYAML has it (the same data; read at import by the specs,
    so by every job: ~10x faster than the pure-Python loader)."""
    text = resources.files("pipeline").joinpath("schemas/config.schema.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def node(*path: str) -> dict:
    """The subschema at ``path``: property names, ``*`` for a table's entries (``additionalProperties``),
    ``[]`` for a list's items, or a ``definitions`` name after ``definitions``; ``$ref``s are followed."""
    here = schema()
    for i, key in enumerate(path):
        here = _deref(here)
        if key == "*":
            here = here["additionalProperties"]
        elif key == "[]":
            here = here["items"]
        elif i and path[i - 1] == "definitions":
            here = here[key]
        elif key == "definitions":
            here = schema()["definitions"]
        else:
            here = here["properties"][key]
    return _deref(here)


def _deref(sub: dict) -> dict:
    while "$ref" in sub:
        sub = schema()["definitions"][sub["$ref"].rsplit("/", 1)[1]]
    return sub


def enum(*path: str) -> tuple:
    """The allowed values at ``path``, in the schema's order."""
    return tuple(node(*path)["enum"])


def spec_defaults(*path: str) -> dict:
    """``{key: default}`` of the object at ``path``: ``default:`` and ``x-default:`` values alike."""
    out = {}
    for key, sub in node(*path).get("properties", {}).items():
        for kw in ("default", "x-default"):
            if kw in sub:
                out[key] = copy.deepcopy(sub[kw])
    return out


class ConfigProblem(ValueError):
    """A config value a spec cannot take: ``key`` is the config key (dotted) the message is about."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


S = TypeVar("S")


def parse_spec(cls: type[S], values: Mapping, where: str, defaults: Mapping, **given: Any) -> S:
    """The dataclass ``cls`` of the config table ``values`` (at the dotted key ``where``).

    Each field takes its key's value, else ``defaults`` (the schema's, :func:`spec_defaults`), else None
    where the field's type allows it; ``given`` fills fields that are not config keys (a variant's name).
    A key that is not a field, or a required one that is missing, is a :class:`ConfigProblem`."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ConfigProblem(f"{where}.{unknown[0]}", f"not a key of {where} (takes {sorted(set(names) - set(given))})")
    out = dict(given)
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in given:
            continue
        if f.name in values:
            out[f.name] = values[f.name]
        elif f.name in defaults:
            out[f.name] = copy.deepcopy(defaults[f.name])
        elif "None" in str(f.type):
            out[f.name] = None
        else:
            raise ConfigProblem(f"{where}.{f.name}", "required")
    return cls(**out)


@cache
def filling_validator():
    """Draft 2020-12 that also writes each missing property's ``default:`` into the instance (before
    descending, so a defaulted object gets its own defaults too). Made on first use: jsonschema is imported
    only by what validates (the Snakefile, config tests), not by every job that reads an enumeration."""
    import jsonschema

    validator_class = jsonschema.Draft202012Validator
    check_properties = validator_class.VALIDATORS["properties"]

    def properties(validator, props, instance, sub):
        if validator.is_type(instance, "object"):
            for key, prop in props.items():
                if "default" in prop and key not in instance:
                    instance[key] = copy.deepcopy(prop["default"])
        yield from check_properties(validator, props, instance, sub)

    return jsonschema.validators.extend(validator_class, {"properties": properties})


def fill_and_check(cfg: dict, full_schema: dict | None = None) -> list[jsonschema.ValidationError]:
    """Write the schema's defaults into ``cfg`` (in place) and return its errors, by key path.
    ``full_schema``: the schema completed by the caller (pipeline.config adds the registered index kinds)."""
    errors = filling_validator()(full_schema or schema()).iter_errors(cfg)
    return sorted(errors, key=lambda e: list(e.absolute_path))

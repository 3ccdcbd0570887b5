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
``enum:`` lists cannot drift apart.

The keys of each registered entry's table (an index kind, its searcher, a planner, a fusion's hybrid, an
encoder, an answering backend) are declared beside its dataclass instead, one :func:`key` per field:
type, default, choices and a one-line description, the way ir_measures declares a measure's parameters.
Their part of the schema is generated from the declarations (:func:`declared_schema`, at load time: see
pipeline/config/validate.py), and so are the docs tables of those keys (:func:`keys_table`, docs/config_keys.py).

:func:`parse_spec` is the one way a config table becomes a typed spec (a frozen dataclass): its keys, the
declared (or the schema's) defaults for the missing ones; an unknown key, a missing required one, a value
of the wrong type or not among its choices is a :class:`ConfigError` naming the dotted key.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
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


class ConfigError(ValueError):
    """A bad config value, key or file: the one error of config validation and spec parsing. ``key`` is
    the dotted config key it is about (None for a whole file or several keys), named in the message."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key

    @classmethod
    def at(cls, key: str, message: str) -> ConfigError:
        """``config key '<key>': <message>``."""
        return cls(f"config key '{key}': {message}", key)


# A raw (not yet typed) config table as YAML gives it: what the config layer resolves and what
# parse_spec reads; every stage reads typed specs instead.
ConfigTable = Mapping[str, Any]
# The same, where the config layer writes resolved values back into it (validation's defaults).
ConfigTree = dict[str, Any]

NO_DEFAULT: Any = object()  # a key without a default: required, unless its field's type allows None
KEY = "wattbench.key"  # where a dataclass field keeps its Key (field metadata)
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list, tuple),
    "null": (type(None),),
}


@dataclass(frozen=True)
class Key:
    """One config key of a spec, declared beside its field. ``filled``: validation writes the default into
    the (hashed) config (schema ``default:``); else the spec alone reads it (``x-default:``, see above)."""

    doc: str
    type: str | tuple[str, ...] | None = None  # JSON-schema type(s); None: ``choices`` or ``schema`` say
    default: Any = NO_DEFAULT
    choices: tuple | None = None
    filled: bool = False
    schema: Mapping[str, Any] = field(default_factory=dict)  # further JSON-schema words (minimum, items, $ref)

    def json_schema(self) -> dict:
        out: dict = {"description": self.doc}
        if self.type is not None:
            out["type"] = self.type if isinstance(self.type, str) else list(self.type)
        if self.choices is not None:
            out["enum"] = list(self.choices)
        out.update(copy.deepcopy(dict(self.schema)))
        if self.default is not NO_DEFAULT:
            out["default" if self.filled else "x-default"] = copy.deepcopy(self.default)
        return out

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not this key's (None: it is): the declared type and choices only (the
        validated config's JSON schema checks the ranges)."""
        if self.choices is not None and value not in self.choices:
            return f"{value!r} is not one of {list(self.choices)}"
        types = (self.type,) if isinstance(self.type, str) else self.type or ()
        ok = [t for t in types if isinstance(value, _PY_TYPES[t]) and not (t != "boolean" and isinstance(value, bool))]
        if types and not ok:
            return f"{value!r} is not of type {' or '.join(types)}"
        return None


def key(doc: str, *, field_default: Any = MISSING, field_factory: Any = MISSING, **declared: Any) -> Any:
    """A dataclass field that is a declared config key (``Key``'s arguments): ``x: int = key("...", type=...)``.
    ``field_default``/``field_factory``: the dataclass's own default, for code that builds the spec directly."""
    return key_field(Key(doc, **declared), field_default, field_factory)


def key_field(declared: Key, field_default: Any = MISSING, field_factory: Any = MISSING) -> Any:
    """A field declaring ``declared`` (one Key several specs share, e.g. an answering variant's ``vote``)."""
    return field(default=field_default, default_factory=field_factory, metadata={KEY: declared})


def declared(cls: type) -> dict[str, Key]:
    """``{name: Key}`` of the fields of ``cls`` that declare a config key, in field order."""
    return {f.name: f.metadata[KEY] for f in _fields(cls) if KEY in f.metadata}


def declared_defaults(cls: type) -> dict:
    return {n: copy.deepcopy(k.default) for n, k in declared(cls).items() if k.default is not NO_DEFAULT}


def declared_schema(*classes: type) -> dict[str, dict]:
    """The schema's ``properties`` of the keys ``classes`` declare (one key declared twice the same way)."""
    out: dict[str, dict] = {}
    for cls in classes:
        for name, k in declared(cls).items():
            sub = k.json_schema()
            if out.setdefault(name, sub) != sub:
                raise ValueError(f"config key '{name}' is declared twice, differently ({cls.__name__})")
    return out


def keys_table(cls: type, where: str, skip: type | None = None) -> str:
    """The Markdown table of the keys ``cls`` declares (those of ``skip``, a base class, left out): the docs'
    tables are these (docs/config_keys.py renders them into docs/config-keys.md)."""
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    inherited = declared(skip) if skip else {}
    optional = {f.name for f in _fields(cls) if "None" in str(f.type)}
    for name, k in declared(cls).items():
        if name in inherited:
            continue
        if k.choices:
            typ = "one of " + ", ".join(f"`{c}`" for c in k.choices)
        elif k.type:
            typ = k.type if isinstance(k.type, str) else " or ".join(k.type)
        else:
            typ = "`" + str(k.schema.get("$ref", "")).rsplit("/", 1)[-1] + "`"
        default = f"`{json.dumps(k.default)}`" if k.default is not NO_DEFAULT else "none"
        default = "required" if default == "none" and name not in optional else default
        rows.append(f"| `{where}.{name}` | {typ} | {default} | {k.doc} |")
    return "\n".join(rows)


def _fields(cls: type) -> tuple[Field, ...]:
    return fields(cls)


S = TypeVar("S")


def parse_spec(cls: type[S], values: ConfigTable, where: str, defaults: ConfigTable | None = None, **given: Any) -> S:
    """The dataclass ``cls`` of the config table ``values`` (at the dotted key ``where``): the one parser of specs.

    Each field takes its key's value, else ``defaults`` (None: the keys ``cls`` declares, :func:`key`), else
    None where the field's type allows it; ``given`` fills fields that are not config keys (a variant's name).
    A key that is not a field, a required one that is missing, or a value its declaration does not allow
    is a :class:`ConfigError` naming the dotted key."""
    if not isinstance(values, Mapping):
        raise ConfigError.at(where, f"must be a table of keys, not {type(values).__name__}")
    names = [f.name for f in _fields(cls)]
    unknown = sorted(set(values) - set(names))
    if unknown:
        takes = sorted(set(names) - set(given))
        raise ConfigError.at(f"{where}.{unknown[0]}", f"not a key of {where} (takes {takes})")
    defaults = declared_defaults(cls) if defaults is None else defaults
    keys = declared(cls)
    out = dict(given)
    for f in _fields(cls):
        if f.name in given:
            continue
        if f.name in values:
            why = keys[f.name].problem(values[f.name]) if f.name in keys else None
            if why:
                raise ConfigError.at(f"{where}.{f.name}", why)
            out[f.name] = values[f.name]
        elif f.name in defaults:
            out[f.name] = copy.deepcopy(defaults[f.name])
        elif f.default is not MISSING or f.default_factory is not MISSING:
            continue  # the dataclass's own default (not a config key's)
        elif "None" in str(f.type):
            out[f.name] = None
        else:
            raise ConfigError.at(f"{where}.{f.name}", "required")
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

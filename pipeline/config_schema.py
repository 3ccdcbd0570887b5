"""Declared config keys: the one way the config's keys, their types and their defaults are written down.

Every key of the config is declared beside the dataclass field that reads it, one :func:`key` per field
(type, default, choices, a one-line description), the way ir_measures declares a measure's parameters:
a section's spec (``llm``: pipeline/llm_models.py ``LLMSpec``; ``sprout``, ``suite``, ``retrieval.<v>``:
pipeline/specs.py; ``report``, ``energy``, ``tracking``: pipeline/report_specs.py), each registered entry's
(an index kind, its searcher, a planner, an answering backend, a suite dataset's subset). The config's
JSON schema is generated from these declarations (pipeline/config/schema.py), and so are the docs' tables
of keys (:func:`keys_table`, docs/config_keys.py).

One kind of default: a declared ``default`` is written into the resolved config by validation (the
schema's default-filling validator, :func:`fill_and_check`, for the fixed sections; the entry's kind for a
registered entry's own keys), so the hashed slices carry every value that shaped an output and a changed
default reruns what it shapes. A key whose absence means something other than a value (``llm.model``:
each variant's own; ``retrieval.<v>.levels``: its index kind's) declares no default; its field allows None.

:func:`parse_spec` is the one way a config table becomes a typed spec (a frozen dataclass): its keys, the
declared defaults for the missing ones; an unknown key, a missing required one, a value of the wrong type
or not among its choices is a :class:`ConfigError` naming the dotted key.
"""

from __future__ import annotations

import builtins
import copy
import json
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import jsonschema

# --- the definitions the config's keys share ---
TREE_LEVELS = ("document", "section", "paragraph", "sentence")  # a DocTree's levels, root first (pipeline.tree)
NAME = {"$ref": "#/definitions/name"}  # a name that becomes a path (and a wildcard value): pipeline/names.py's rule
SPLIT = {"$ref": "#/definitions/split"}  # a split's name: a name without '.' (pipeline/names.py SPLIT_PATTERN)
DEFINITIONS: dict[str, dict] = {
    "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$"},
    "split": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]*$"},  # a name without '.': pipeline/names.py
    "tree_level": {"enum": list(TREE_LEVELS)},
    "embed_backend": {"type": "string"},  # a registered encoder backend: pipeline/config/schema.py fills the enum
}
TREE_LEVEL = {"$ref": "#/definitions/tree_level"}


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
    """One config key, declared beside its field.

    ``spec``: the key is a table of the keys that dataclass declares (``llm.local.<name>``'s entry, ``report``);
    ``table``: a table of named entries, each one such table (``report.ablations``). ``required``: None infers
    it (no default, and the field does not allow None). ``name``: the config's spelling where the field's
    name cannot be it (``lambda``, a Python keyword)."""

    doc: str
    type: str | tuple[str, ...] | None = None  # JSON-schema type(s); None: ``choices``, ``spec`` or ``schema`` say
    default: Any = NO_DEFAULT
    choices: tuple | None = None
    schema: Mapping[str, Any] = field(default_factory=dict)  # further JSON-schema words (minimum, items, $ref)
    spec: builtins.type | None = None
    table: builtins.type | None = None
    required: bool | None = None
    name: str | None = None

    @property
    def types(self) -> tuple[str, ...]:
        if self.spec is not None or self.table is not None:
            return ("object",)
        return (self.type,) if isinstance(self.type, str) else tuple(self.type or ())

    def json_schema(self, defaults: bool = True) -> dict:
        """Its JSON schema; ``defaults=False`` leaves its (and its tables') defaults out: a registered entry's
        keys, which validation writes per entry (the schema holds every kind's keys at once)."""
        out: dict = {"description": self.doc}
        if self.spec is not None:
            out.update(object_schema(self.spec, defaults))
        elif self.table is not None:
            out.update(type="object", additionalProperties=object_schema(self.table, defaults))
        elif self.type is not None:
            out["type"] = self.type if isinstance(self.type, str) else list(self.type)
        if self.choices is not None:
            out["enum"] = list(self.choices)
        out.update(copy.deepcopy(dict(self.schema)))
        if defaults and self.default is not NO_DEFAULT:
            out["default"] = copy.deepcopy(self.default)
        return out

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not this key's (None: it is): the declared type and choices only (the
        validated config's JSON schema checks the ranges)."""
        if self.choices is not None and value not in self.choices:
            return f"{value!r} is not one of {list(self.choices)}"
        types = self.types
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


def _fields(cls: type) -> tuple[Field, ...]:
    return fields(cls)


def _optional(f: Field) -> bool:
    return "None" in str(f.type)


def _key_fields(cls: type) -> dict[str, tuple[Field, Key]]:
    """``{config key: (field, Key)}`` of the fields of ``cls`` that declare one, in field order."""
    out = {}
    for f in _fields(cls):
        if KEY in f.metadata:
            k: Key = f.metadata[KEY]
            out[k.name or f.name] = (f, k)
    return out


def declared(cls: type) -> dict[str, Key]:
    """``{config key: Key}`` of the fields of ``cls`` that declare one, in field order."""
    return {name: k for name, (_, k) in _key_fields(cls).items()}


def declared_defaults(cls: type) -> dict:
    """``{config key: default}`` of the keys ``cls`` declares with a default."""
    return {n: copy.deepcopy(k.default) for n, k in declared(cls).items() if k.default is not NO_DEFAULT}


def required_keys(cls: type) -> list[str]:
    """The keys a table of ``cls`` must hold: ``Key.required``, else those without a default whose field
    does not allow None."""
    out = []
    for name, (f, k) in _key_fields(cls).items():
        needed = k.required if k.required is not None else k.default is NO_DEFAULT and not _optional(f)
        if needed:
            out.append(name)
    return out


def declared_schema(*classes: type, defaults: bool = True) -> dict[str, dict]:
    """The schema's ``properties`` of the keys ``classes`` declare (one key declared twice the same way)."""
    out: dict[str, dict] = {}
    for cls in classes:
        for name, k in declared(cls).items():
            sub = k.json_schema(defaults)
            if out.setdefault(name, sub) != sub:
                raise ValueError(f"config key '{name}' is declared twice, differently ({cls.__name__})")
    return out


def object_schema(cls: type, defaults: bool = True) -> dict:
    """The JSON schema of a table of the keys ``cls`` declares: no other key, the required ones required."""
    out = {"type": "object", "additionalProperties": False, "properties": declared_schema(cls, defaults=defaults)}
    required = required_keys(cls)
    return out | ({"required": required} if required else {})


def fill_defaults(cls: type, table: ConfigTree) -> ConfigTree:
    """Write the declared defaults of ``cls`` that ``table`` lacks into it (in place), and those of the tables
    its keys hold: what the schema's filler does for a fixed section, for a registered entry's own keys."""
    for name, k in declared(cls).items():
        if name not in table and k.default is not NO_DEFAULT:
            table[name] = copy.deepcopy(k.default)
        value = table.get(name)
        if k.spec is not None and isinstance(value, dict):
            fill_defaults(k.spec, value)
        elif k.table is not None and isinstance(value, dict):
            for entry in value.values():
                if isinstance(entry, dict):
                    fill_defaults(k.table, entry)
    return table


def type_label(k: Key) -> str:
    """A key's type as the docs' tables show it."""
    if k.choices:
        return "one of " + ", ".join(f"`{'null' if c is None else c}`" for c in k.choices)
    if k.spec is not None:
        return f"table (`{k.spec.__name__}`)"
    if k.table is not None:
        return f"name -> table (`{k.table.__name__}`)"
    types = k.type or k.schema.get("type")
    if types:
        return types if isinstance(types, str) else " or ".join(types)
    return "`" + str(k.schema.get("$ref", "")).rsplit("/", 1)[-1] + "`"


def keys_table(cls: type, where: str, skip: type | None = None) -> str:
    """The Markdown table of the keys ``cls`` declares (those of ``skip``, a base class, left out): the docs'
    tables are these (docs/config_keys.py renders them into docs/config-keys.md); ``where`` "": the top level."""
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    inherited = declared(skip) if skip else {}
    required = set(required_keys(cls))
    for name, k in declared(cls).items():
        if name in inherited:
            continue
        default = f"`{json.dumps(k.default)}`" if k.default is not NO_DEFAULT else "none"
        default = "required" if name in required else default
        rows.append(f"| `{f'{where}.{name}' if where else name}` | {type_label(k)} | {default} | {k.doc} |")
    return "\n".join(rows)


S = TypeVar("S")


def parse_spec(cls: type[S], values: ConfigTable, where: str, defaults: ConfigTable | None = None, **given: Any) -> S:
    """The dataclass ``cls`` of the config table ``values`` (at the dotted key ``where``): the one parser of specs.

    Each field takes its key's value, else ``defaults`` (None: the keys ``cls`` declares, :func:`key`), else
    None where the field's type allows it; ``given`` fills fields that are not config keys (a variant's name).
    A key that is not a field, a required one that is missing, or a value its declaration does not allow
    is a :class:`ConfigError` naming the dotted key."""
    if not isinstance(values, Mapping):
        raise ConfigError.at(where, f"must be a table of keys, not {type(values).__name__}")
    keyed = _key_fields(cls)
    by_field = {f.name: name for name, (f, _) in keyed.items()}
    names = [by_field.get(f.name, f.name) for f in _fields(cls)]
    unknown = sorted(set(values) - set(names))
    if unknown:
        takes = sorted(set(names) - set(given))
        raise ConfigError.at(f"{where}.{unknown[0]}", f"not a key of {where} (takes {takes})")
    defaults = declared_defaults(cls) if defaults is None else defaults
    out = dict(given)
    for f in _fields(cls):
        name = by_field.get(f.name, f.name)
        if f.name in given:
            continue
        if name in values:
            why = keyed[name][1].problem(values[name]) if name in keyed else None
            if why:
                raise ConfigError.at(f"{where}.{name}", why)
            out[f.name] = values[name]
        elif name in defaults:
            out[f.name] = copy.deepcopy(defaults[name])
        elif f.default is not MISSING or f.default_factory is not MISSING:
            continue  # the dataclass's own default (not a config key's)
        elif _optional(f):
            out[f.name] = None
        else:
            raise ConfigError.at(f"{where}.{name}", "required")
    return cls(**out)


@cache
def filling_validator():
    """Draft 2020-12 that also writes each missing property's ``default:`` into the instance (before
    descending, so a defaulted object gets its own defaults too). Made on first use: jsonschema is imported
    only by what validates (the Snakefile, config tests), not by every job that reads a spec."""
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


def fill_and_check(cfg: dict, full_schema: dict) -> list[jsonschema.ValidationError]:
    """Write the schema's defaults into ``cfg`` (in place) and return its errors, by key path.
    ``full_schema``: the config's schema (pipeline/config/schema.py generates it from the declarations)."""
    errors = filling_validator()(full_schema).iter_errors(cfg)
    return sorted(errors, key=lambda e: list(e.absolute_path))

"""`python docs/config_keys.py`: the tables of docs/config-keys.md, generated, never hand-typed.

Every key of the config is declared beside the field of the dataclass that reads it (pipeline/config_schema.py
``key``): each section's spec under the top level (pipeline/config/schema.py ``ConfigKeys``) and each
registered entry's (index kind, searcher, planner, answering backend, suite dataset's subset). This renders
them, section by section in the config's order, into the page's generated block; the config's schema is
generated from the same declarations. tests/test_config_keys_doc.py fails when the block is not the current
rendering or a key of the schema has no row.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pipeline.register_builtins  # noqa: F401 - the built-in entries whose keys the tables show
from pipeline.config.schema import ConfigKeys
from pipeline.config_schema import declared, keys_table
from pipeline.registry import answer_backends, suite_datasets
from pipeline.registry.index_kinds import IndexSpec, get_kind, kind_names
from pipeline.registry.retrieval_modes import PLANNERS
from pipeline.specs import PlannerSpec, RetrievalSpec

PAGE = Path(__file__).resolve().parent / "config-keys.md"
BLOCK = re.compile(r"(<!-- BEGIN config-keys: python docs/config_keys.py -->\n).*?(<!-- END config-keys -->)", re.S)
# the placeholder of a table's entry names in a key's dotted path
ENTRY = {
    "indexes": "<name>",
    "retrieval": "<v>",
    "answering": "<name>",
    "prices": "<model>",
    "per_model": "<model>",
}


def nested(cls: type, where: str) -> list[tuple[str, str]]:
    """(heading, table) of ``cls``'s keys at ``where``, then of each table its keys hold, depth first."""
    out = [(f"`{where}`", keys_table(cls, where))]
    for name, k in declared(cls).items():
        if k.spec is not None:
            out += nested(k.spec, f"{where}.{name}")
        elif k.table is not None:
            out += nested(k.table, f"{where}.{name}.{ENTRY.get(name, '<name>')}")
    return out


def indexes() -> list[tuple[str, str]]:
    out = [("Every index (`indexes.<name>`)", keys_table(IndexSpec, "indexes.<name>"))]
    for n in kind_names():
        kind = get_kind(n)
        if set(declared(kind.spec)) - set(declared(IndexSpec)):
            out.append((f"A `{n}` index", keys_table(kind.spec, "indexes.<name>", skip=IndexSpec)))
    return out


def retrieval() -> list[tuple[str, str]]:
    common = nested(RetrievalSpec, "retrieval.<v>")
    out = [("Every retrieval variant (`retrieval.<v>`)", common[0][1])]
    for n in kind_names():
        spec = get_kind(n).search_spec
        if spec and declared(spec):
            out.append((f"A variant searching a `{n}` index", keys_table(spec, "retrieval.<v>")))
    for heading, table in common[1:]:
        out.append((heading, table))
        if heading == "`retrieval.<v>.planner`":
            out += [
                (f"A `{k.name}` planner", keys_table(k.spec, "retrieval.<v>.planner", skip=PlannerSpec))
                for k in PLANNERS.entries()
                if k.spec and set(declared(k.spec)) - set(declared(PlannerSpec))
            ]
    return out


def answering() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for b in answer_backends.BACKENDS.entries():
        if declared(b.spec):
            own = nested(b.spec, "answering.<name>")
            out.append((f"A `{b.name}` answering variant", own[0][1]))
            out += [s for s in own[1:] if s not in out]
    return out


def subsets() -> list[tuple[str, str]]:
    """Each registered dataset's subset keys (``suite.datasets.<dataset>``, and ``sprout.train.datasets``)."""
    out = []
    for name in suite_datasets.names():
        d = suite_datasets.get(name)
        default = getattr(d.module(), "DEFAULT_SUBSET", {})
        table = keys_table(d.subset, f"suite.datasets.{name}")
        out.append((f"A `{name}` subset (`suite.datasets.{name}`)", f"Its default subset: `{json.dumps(default)}`\n\n{table}"))
    return out


def sections() -> list[tuple[str, str]]:
    """(heading, table) per declaring spec, in the config's order; an entry that declares no key of its own
    has no table."""
    out = [("The top level", keys_table(ConfigKeys, ""))]
    for name, k in declared(ConfigKeys).items():
        if name == "indexes":
            out += indexes()
        elif name == "retrieval":
            out += retrieval()
        elif name == "answering":
            out += answering()
        elif k.spec is not None:
            out += nested(k.spec, name)
            if name == "suite":
                out += subsets()
        elif k.table is not None:
            out += nested(k.table, f"{name}.<name>")
    return out


def render() -> str:
    return "".join(f"### {heading}\n\n{table}\n\n" for heading, table in sections())


def rewrite(page: Path = PAGE) -> bool:
    """Write the current tables into ``page``'s block; whether it changed."""
    text = page.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + render() + m.group(2), text)
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    print("rewrote" if rewrite() else "current", PAGE)

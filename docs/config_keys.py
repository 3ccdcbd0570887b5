"""`python docs/config_keys.py`: the tables of docs/config-keys.md, generated, never hand-typed.

Each registered entry (index kind, searcher, planner, hybrid, encoder, answering backend) declares its keys
beside its spec's fields (pipeline/config_schema.py ``key``); this renders them into the page's generated
block. tests/test_config_keys_doc.py fails when the block is not the current rendering.
"""

from __future__ import annotations

import re
from pathlib import Path

import pipeline.register_builtins  # noqa: F401 - the built-in entries whose keys the tables show
from pipeline.registry import answer_backends
from pipeline.config_schema import declared, keys_table
from pipeline.registry.index_kinds import IndexSpec, get_kind, kind_names
from pipeline.registry.retrieval_modes import PLANNERS
from pipeline.specs import ContextSpec, EncoderSpec, HybridSpec, PlannerSpec

PAGE = Path(__file__).resolve().parent / "config-keys.md"
BLOCK = re.compile(r"(<!-- BEGIN config-keys: python docs/config_keys.py -->\n).*?(<!-- END config-keys -->)", re.S)


def sections() -> list[tuple[str, str]]:
    """(heading, table) per declaring spec, in the config's order; an entry that declares no key of its own
    has no table."""
    out = [("Every index (`indexes.<name>`)", keys_table(IndexSpec, "indexes.<name>"))]
    for n in kind_names():
        kind = get_kind(n)
        if set(declared(kind.spec)) - set(declared(IndexSpec)):
            out.append((f"A `{n}` index", keys_table(kind.spec, "indexes.<name>", skip=IndexSpec)))
    searchers = {n: get_kind(n).search_spec for n in kind_names()}
    for n, spec in searchers.items():
        if spec and declared(spec):
            out.append((f"A variant searching a `{n}` index", keys_table(spec, "retrieval.<v>")))
    out.append(("A variant's planner", keys_table(PlannerSpec, "retrieval.<v>.planner")))
    out += [
        (f"A `{k.name}` planner", keys_table(k.spec, "retrieval.<v>.planner", skip=PlannerSpec))
        for k in PLANNERS.entries()
        if k.spec and set(declared(k.spec)) - set(declared(PlannerSpec))
    ]
    out.append(("A variant's hybrid (a registered fusion mode)", keys_table(HybridSpec, "retrieval.<v>.hybrid")))
    out.append(("A variant's context", keys_table(ContextSpec, "retrieval.<v>.context")))
    out.append(("The encoder (`embedding`)", keys_table(EncoderSpec, "embedding")))
    for b in answer_backends.BACKENDS.entries():
        if declared(b.spec):
            out.append((f"A `{b.name}` answering variant", keys_table(b.spec, "answering.<name>")))
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

"""docs/config-keys.md's tables are the keys the config declares (docs/config_keys.py renders them): a changed
declaration without `python docs/config_keys.py` fails here, and so does a key of the generated schema that
the page has no row for (every section is on the page)."""
from __future__ import annotations

import importlib.util
import re

from pipeline.config import full_schema
from pipeline.config_schema import declared
from pipeline.datasets.paths import REPO
from pipeline.specs import BeamSpec

_spec = importlib.util.spec_from_file_location("config_keys", REPO / "docs" / "config_keys.py")
_doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_doc)
BLOCK, PAGE, render, sections = _doc.BLOCK, _doc.PAGE, _doc.render, _doc.sections


def test_the_docs_tables_are_the_declarations():
    block = BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert block, f"{PAGE.name} has no config-keys block"
    assert block.group(0) == block.group(1) + render() + block.group(2), "stale: run python docs/config_keys.py"


def test_every_declared_key_has_a_row_with_its_description():
    text = render()
    for name, key in declared(BeamSpec).items():
        assert f"| `retrieval.<v>.{name}` |" in text and key.doc in text
    headings = [h for h, _ in sections()]
    assert "A `sprout` index" in headings and "`embedding`" in headings and "`llm.local.<name>`" in headings
    assert "A `hotpotqa` subset (`suite.datasets.hotpotqa`)" in headings


def schema_keys(node: dict, path: str = ""):
    """Every dotted key of the schema, a table's entry name as ``*``."""
    for name, sub in (node.get("properties") or {}).items():
        yield f"{path}{name}"
        yield from schema_keys(sub, f"{path}{name}.")
    if isinstance(node.get("additionalProperties"), dict):
        yield from schema_keys(node["additionalProperties"], f"{path}*.")


def test_every_key_of_the_schema_has_a_row():
    rows = {re.sub(r"<[^>]+>", "*", m) for m in re.findall(r"^\| `([^`]+)` \|", render(), re.M)}
    # sprout.train.datasets.<dataset> takes that dataset's subset keys, listed once under suite.datasets
    keys = {re.sub(r"^sprout\.train\.datasets\.", "suite.datasets.", k) for k in schema_keys(full_schema())}
    missing = sorted(keys - rows - {f"suite.datasets.{d}" for d in full_schema()["properties"]["suite"]["properties"]
                                        ["datasets"]["properties"]})
    assert missing == []

"""docs/config-keys.md's tables are the keys the registered entries declare (docs/config_keys.py renders
them): a changed declaration without `python docs/config_keys.py` fails here."""
from __future__ import annotations

import importlib.util

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
    assert "A `sprout` index" in headings and "The encoder (`embedding`)" in headings

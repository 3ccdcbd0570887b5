"""docs/config-keys.md's tables are the keys the registered entries declare (pipeline/config/keys_doc.py):
a changed declaration without `python -m pipeline.config.keys_doc` fails here."""
from __future__ import annotations

from pipeline.config.keys_doc import BLOCK, PAGE, render, sections
from pipeline.config_schema import declared
from pipeline.specs import BeamSpec


def test_the_docs_tables_are_the_declarations():
    block = BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert block, f"{PAGE.name} has no config-keys block"
    assert block.group(0) == block.group(1) + render() + block.group(2), "stale: run python -m pipeline.config.keys_doc"


def test_every_declared_key_has_a_row_with_its_description():
    text = render()
    for name, key in declared(BeamSpec).items():
        assert f"| `retrieval.<v>.{name}` |" in text and key.doc in text
    headings = [h for h, _ in sections()]
    assert "A `sprout` index" in headings and "The encoder (`embedding`)" in headings

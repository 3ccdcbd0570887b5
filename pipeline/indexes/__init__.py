"""Index kinds: one module per kind (``tree``, ``chunks``, ``bm25``, ``sprout``), each registering
its builder, searcher, typed spec and config rules with :mod:`pipeline.registry.index_kinds`. Importing this
package registers them all (a driver does: pipeline/register_builtins.py). The building blocks they wire
together stay below: ``pipeline.index_structures`` (the store, dense and lexical index structures) and ``pipeline.sprout``
(SproutRAG's attention trees). See docs/architecture.md, "Adding an index kind"."""

from pipeline.indexes import bm25, chunks, sprout, tree

__all__ = ["bm25", "chunks", "sprout", "tree"]

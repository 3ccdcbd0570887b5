"""Index kinds: one module per kind (``tree``, ``chunks``, ``bm25``, ``sprout``), each registering
its builder, searcher and config rules with :mod:`pipeline.index_kinds`. The building blocks
they wire together stay below: ``pipeline.index`` (store, dense and lexical indexes) and
``pipeline.sprout`` (SproutRAG's attention trees). See docs/architecture.md, "Adding an index kind"."""

"""SproutRAG (docs: ../shared/docs/sproutrag.md): attention-guided binary trees over two-sentence
leaf chunks, progressive embeddings, hierarchical beam search and trained head weights.

One module per job: ``chunks`` (leaves from the shared DocTrees), ``attention`` (windowed encoder
passes -> per-head chunk-pair attention + contextual leaf vectors), ``heads`` (head weights),
``build`` (Kruskal tree), ``search`` (beam search), ``store`` (the sqlite index), ``train``.
"""

"""Ranking utilities shared by index kinds and the retrieval stage: rank fusion (``fusion``) and
cross-query reranking (``rerank``). A floor below ``index`` and ``retrieve``: it imports neither."""

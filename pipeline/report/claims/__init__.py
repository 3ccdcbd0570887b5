"""Published claims measured: ``claims.yaml`` (each claim as data) and ``measure`` (each claim's paired
comparison on this run's per-question scores and its verdict); the page that shows them is
pipeline/report/pages/claims_table.py."""

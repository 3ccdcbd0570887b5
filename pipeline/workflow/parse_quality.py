"""Which parse-quality report the DAG builds and the report page draws: the sample's, or the full
set's once `make parse-quality` made it."""

from __future__ import annotations

from pathlib import Path

from pipeline import paths

PARSE_SCOPES = {"sample": "sample/", "all": ""}  # the {scope} wildcard of rule parse_quality


def parse_quality_pdfs(cfg: dict, scope: str = "all") -> list[str]:
    """The parse-quality PDFs of ``scope`` (``sample``: the default DAG's few; ``all``: `make parse-quality`) on disk."""
    from pipeline.parse.quality_pdfs import MANIFEST, load_manifest, select

    folder = Path(cfg["parsing"]["quality_dir"])
    if not MANIFEST.exists():
        return []
    return [
        str(folder / f"{e.doc}.pdf")
        for e in select(load_manifest(MANIFEST), scope)
        if (folder / f"{e.doc}.pdf").exists()
    ]


def parse_quality_report(cfg: dict) -> list[str]:
    """The source table the report page draws: all the PDFs' once `make parse-quality` made it, else the sample."""
    full = paths.reports.parse_quality_sources(PARSE_SCOPES["all"])
    if Path(full).exists():
        return [full]
    return [paths.reports.parse_quality_sources(PARSE_SCOPES["sample"])] if parse_quality_pdfs(cfg, "sample") else []


def parse_targets(cfg: dict) -> list[str]:
    """WattBot's parse failure check (when its data is there; a corpus's is an input of its report); the
    sample quality report when its PDFs are there (`make quality-pdfs`)."""
    from pipeline.config import wattbot_present

    sample = [paths.reports.parse_quality(PARSE_SCOPES["sample"])] if parse_quality_pdfs(cfg, "sample") else []
    return ([paths.PARSE_CHECK] if wattbot_present(cfg) else []) + sample

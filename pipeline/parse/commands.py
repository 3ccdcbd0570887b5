"""The parse stage's CLI verbs (registered by ``pipeline.cli``): inspect, errors, check, the parse-quality PDFs.

- ``parse PDF -o OUT.json``: one file into a flat, readable node list (for people);
- ``parse-errors``: the failed documents of a run into ``results/<dataset>/parse/errors.csv``;
- ``quality-pdfs``: download the parse-quality PDFs (Debian documentation packages); the
  ``parse-quality`` report over them is a report verb (pipeline/verbs/report.py).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from pipeline.llm_models import LLM_MODES
from pipeline.parse.limits import PdfLimits
from pipeline.parse.quality_pdfs import SCOPES
from pipeline.paths import QUALITY_PDFS_MANIFEST
from pipeline.specs import HEADINGS, PDF_CAPS, VisionSpec
from pipeline.tree import DocTree, section_depth

INSPECT_FIELDS = ("id", "parent", "level", "kind", "title", "text", "page", "pages", "bbox", "start", "end")


def inspect_json(tree: DocTree) -> dict:
    """Every node with its text spelled out (the tree JSON stores offsets only)."""
    nodes = []
    for n in tree.nodes.values():
        row = {
            "id": n.id,
            "parent": n.parent,
            "level": n.level,
            "kind": n.kind,
            "title": n.title,
            "text": n.text,
            "page": n.page,
            "pages": n.pages,
            "bbox": n.bbox,
            "start": n.start,
            "end": n.end,
        }
        if n.level == "section":
            row["depth"] = section_depth(n.id)
        nodes.append(row)
    return {"doc_id": tree.doc_id, "title": tree.title, "metadata": tree.metadata, "nodes": nodes}


def describer_from(a):
    if not getattr(a, "vision_model", None):
        return None
    from pipeline.parse.vision import figure_describer

    spec = VisionSpec.from_dict({"model": a.vision_model, "params": json.loads(a.vision_params or "{}")})
    return figure_describer(spec, a.cache_dir, a.llm_mode)


def cmd_parse(a) -> None:
    from pipeline.io import atomic_write_text
    from pipeline.parse.document import parse_document

    src = Path(a.source)
    tree = parse_document(
        src, a.doc_id or src.stem, a.title, describe=describer_from(a), headings=a.headings, limits=pdf_limits(a)
    )
    tree.check()
    text = json.dumps(inspect_json(tree), ensure_ascii=False, indent=1)
    if a.out in (None, "-"):
        print(text)
    else:
        atomic_write_text(a.out, text + "\n")
        levels = {lv: sum(1 for _ in tree.at_level(lv)) for lv in ("section", "paragraph", "sentence")}
        print(json.dumps({"out": a.out, **levels}))


def cmd_parse_errors(a) -> None:
    from pipeline.io import atomic_write_text
    from pipeline.parse.errors import collect_errors, errors_csv
    from pipeline.provenance import write_manifest

    trees = a.trees.split(",") if a.trees else []
    rows = collect_errors(trees)
    atomic_write_text(a.out, errors_csv(rows))
    write_manifest(a.out, {}, trees)
    print(json.dumps({"documents": len(trees), "failed": len(rows)}))


def cmd_parse_check(a) -> None:
    """Print every failure (one line each); with ``--strict`` any failure fails the run."""
    from pipeline.io import atomic_write_text

    with open(a.errors, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        print(f"parse failed: {row['doc']} ({row['source']}): {row['reason']}", file=sys.stderr)
    if rows and a.strict:
        raise ValueError(f"{len(rows)} document(s) could not be parsed and parsing.strict is set; see {a.errors}")
    atomic_write_text(
        a.out, json.dumps({"failed": [r["doc"] for r in rows], "strict": a.strict}, sort_keys=True) + "\n"
    )
    print(f"parse check: {len(rows)} document(s) failed to parse" + (f", listed in {a.errors}" if rows else ""))


def cmd_quality_pdfs(a) -> None:
    from pipeline.parse.quality_pdfs import fetch_pdfs, load_manifest, select

    try:
        kept = fetch_pdfs(a.out_dir, select(load_manifest(a.manifest), a.scope))
    except RuntimeError as exc:
        raise ValueError(str(exc)) from exc
    print(json.dumps({"pdfs": len(kept), "dir": a.out_dir}))


def add_headings_arg(s) -> None:
    s.add_argument(
        "--headings",
        default="combined",
        choices=HEADINGS,
        help="PDF heading method (default: combined, the best on the parse-quality PDFs)",
    )


def add_pdf_limit_args(s) -> None:
    """``parsing.max_pdf_mb`` and ``max_pdf_pages`` (the workflow passes them when not these, their
    declared defaults)."""
    s.add_argument("--max-pdf-mb", type=float, default=PDF_CAPS["max_pdf_mb"], help="a bigger PDF is not parsed")
    s.add_argument("--max-pdf-pages", type=int, default=PDF_CAPS["max_pdf_pages"], help="a longer PDF is not parsed")


def pdf_limits(a) -> PdfLimits:
    return PdfLimits(a.max_pdf_mb, a.max_pdf_pages)


def add_vision_args(s) -> None:
    s.add_argument("--vision-model", default=None, help="describe figures with this vision model (litellm id)")
    s.add_argument("--vision-params", default=None, help="JSON params for the vision call")
    s.add_argument("--cache-dir", default="data/cache", help="where the LLM cache lives")
    s.add_argument(
        "--llm-mode",
        default="live",
        choices=LLM_MODES,
        help="the LLM cache mode, as config llm.mode (replay: cached replies only, a miss fails)",
    )


def add_parse_verbs(sub) -> None:
    s = sub.add_parser(
        "parse",
        help="parse one PDF (or JSON/text) into a readable node list: "
        "id, parent, level, kind, title, text, page, start, end",
    )
    s.add_argument("source", help="the document: a PDF, a pre-extracted JSON (WattBot's) or a text file")
    s.add_argument("-o", "--out", default=None, help="output JSON (default: stdout)")
    s.add_argument("--doc-id", default=None, help="the id its nodes carry (default: the file's name)")
    s.add_argument("--title", default=None, help="its title (default: the one the document carries)")
    add_vision_args(s)
    add_headings_arg(s)
    add_pdf_limit_args(s)
    s.set_defaults(fn=cmd_parse)

    s = sub.add_parser("parse-errors", help="collect the documents that failed to parse into errors.csv")
    s.add_argument("--trees", required=True, help="comma-separated tree JSONs")
    s.add_argument("--out", required=True, help="the errors.csv to write (one row per failed document)")
    s.set_defaults(fn=cmd_parse_errors)

    s = sub.add_parser("parse-check", help="report the failed documents of errors.csv; --strict fails on any")
    s.add_argument("--errors", required=True, help="the errors.csv parse-errors wrote")
    s.add_argument("--out", required=True, help="the summary JSON to write (the failed documents)")
    s.add_argument("--strict", action="store_true", help="exit non-zero when any document failed")
    s.set_defaults(fn=cmd_parse_check)

    s = sub.add_parser("quality-pdfs", help="download the parse-quality PDFs (Debian documentation packages)")
    s.add_argument("--out-dir", default="data/parse-corpus", help="where the PDFs (and their outlines) go")
    s.add_argument("--manifest", default=QUALITY_PDFS_MANIFEST, help="the PDFs' manifest: sources, packages, pages")
    s.add_argument("--scope", default="all", choices=SCOPES, help="manifest rows to fetch")
    s.set_defaults(fn=cmd_quality_pdfs)

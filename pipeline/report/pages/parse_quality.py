"""The parse-quality report: every parse-quality PDF under every heading method, averaged per source.

Report-floor code: it measures with the parse stage (``pipeline.parse.quality``) and draws with
report's figure saver; the ``parse-quality`` verb (pipeline/verbs/report.py) runs it.

Writes, next to ``quality.csv``:

- ``quality.csv``: one row per document with the kept method's measures, the heading F1 of all
  three methods (``f1_rules``, ``f1_layout``, ``f1_combined``) and, below F1 0.5, why;
- ``quality_sources.csv``: macro averages per source (each document counts once), one row for
  the macro average over the development sources, and the reserved independent check apart;
- ``quality_all.csv``: every document x method row, for whoever wants to dig;
- ``quality.telemetry.csv``: parse seconds per page, per document x method. Timing differs on every
  run, so it is run telemetry (``.telemetry.`` names), kept out of the three byte-identical tables.

The kept method is the one with the best macro-average heading F1 over the *development*
sources; the reserved check source never takes part in the choice. ``render`` turns the source
table into the generated block of docs/parsing.md.
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from pipeline import markdown
from pipeline.parse.quality_pdfs import Entry
from pipeline.paths import Reports
from pipeline.specs import HEADINGS

METHODS = HEADINGS  # every heading method the config offers
LOW_F1 = 0.5  # a document below this heading F1 is listed with the reason
MEASURES = (
    "heading_precision",
    "heading_recall",
    "heading_f1",
    "nesting_accuracy",
    "text_recovered",
    "reading_order",
)
TIMING = "seconds_per_page"  # measured time: only in the telemetry file, never in the tables above
DEV_MACRO = "all development sources (macro)"


@dataclass(frozen=True)
class SourceColumn:
    """A column of the sources table as readers see it: docs/parsing.md's block shows them all, in order;
    index.html's Parsing section those ``on_page`` (the measures of headings, nesting and reading order)."""

    name: str
    on_page: bool = True


SOURCE_COLUMNS = (
    SourceColumn("documents"),
    SourceColumn("pages", on_page=False),
    SourceColumn("outline_entries", on_page=False),
    *(SourceColumn(m) for m in ("heading_precision", "heading_recall", "heading_f1")),
    *(SourceColumn(f"f1_{m}") for m in METHODS),
    SourceColumn("nesting_accuracy"),
    SourceColumn("text_recovered", on_page=False),
    SourceColumn("reading_order"),
    *(SourceColumn(c, on_page=False) for c in ("tables", "figures", TIMING)),
)
PAGE_COLUMNS = ("source", "role", *(c.name for c in SOURCE_COLUMNS if c.on_page))  # index.html's Parsing table


def _measure_one(args: tuple[str, Entry, tuple[str, ...]]) -> tuple[list[dict], dict | None]:
    from pipeline.parse.errors import ParseError
    from pipeline.parse.quality import measure_pdf

    folder, entry, methods = args
    path = Path(folder) / f"{entry.doc}.pdf"
    try:
        rows = measure_pdf(path, entry.doc, methods)
    except ParseError as exc:
        return [], {"doc": entry.doc, "source": path.name, "reason": exc.reason}
    return [{"source": entry.source, "role": entry.role, **asdict(q)} for q in rows], None


def measure_pdfs(
    folder: str | Path, entries: list[Entry], methods: tuple[str, ...] = METHODS, jobs: int = 1
) -> tuple[list[dict], list[dict]]:
    """Every document x method row, and the documents that failed to parse (the others go on)."""
    from tqdm import tqdm

    tasks = [(str(folder), e, methods) for e in entries]
    if jobs > 1:
        from multiprocessing import get_context

        with get_context("spawn").Pool(jobs) as pool:
            results = list(tqdm(pool.imap(_measure_one, tasks), total=len(tasks), desc="parse quality", unit="pdf"))
    else:
        results = [_measure_one(t) for t in tqdm(tasks, desc="parse quality", unit="pdf")]
    rows = [r for rs, _ in results for r in rs]
    return rows, [e for _, e in results if e]


def _mean(values) -> float | None:
    values = [v for v in values if v is not None and v != ""]
    return round(statistics.mean(values), 3) if values else None


def _f1(row: dict) -> float:
    return row["heading_f1"] or 0.0


def source_macro(rows: list[dict], method: str) -> dict[str, float]:
    """Macro heading F1 per source for one method (a document without an outline counts 0)."""
    by_source: dict[str, list[float]] = {}
    for r in rows:
        if r["method"] == method:
            by_source.setdefault(r["source"], []).append(_f1(r))
    return {s: statistics.mean(v) for s, v in by_source.items()}


def best_method(rows: list[dict], methods: tuple[str, ...] = METHODS) -> str:
    """The method with the best macro-average heading F1 across development sources (ties: the earlier)."""
    dev = [r for r in rows if r["role"] == "dev"]
    score = {m: statistics.mean(source_macro(dev, m).values()) if dev else 0.0 for m in methods}
    return max(methods, key=lambda m: (score[m], -methods.index(m)))


def low_reason(row: dict) -> str:
    """Why a document's heading F1 is low, from its own numbers and examples."""
    if row["headings"] == 0:
        return f"no headings found; outline entries like: {row['missed']}"
    p, r = row["heading_precision"] or 0.0, row["heading_recall"] or 0.0
    parts = []
    if r < LOW_F1:
        parts.append(f"recall {r}: missed {row['missed']}")
    if p < LOW_F1:
        parts.append(f"precision {p}: not in the outline {row['extra']}")
    return "; ".join(parts) or f"precision {p}, recall {r}"


def document_table(rows: list[dict], method: str) -> list[dict]:
    """One row per document: the kept method's measures plus every method's heading F1."""
    f1 = {(r["doc"], r["method"]): r["heading_f1"] for r in rows}
    out = []
    for r in rows:
        if r["method"] != method:
            continue
        row = {k: v for k, v in r.items() if k not in ("missed", "extra")}
        for m in METHODS:
            row[f"f1_{m}"] = f1.get((r["doc"], m))
        row["low_f1_reason"] = low_reason(r) if _f1(r) < LOW_F1 else ""
        out.append(row)
    return out


def source_table(docs: list[dict]) -> list[dict]:
    """Macro averages per source, then the development sources' macro average; the check source last."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for d in docs:
        groups.setdefault((d["role"], d["source"]), []).append(d)

    def summary(name: str, role: str, ds: list[dict]) -> dict:
        row = {
            "source": name,
            "role": role,
            "documents": len(ds),
            "pages": sum(d["pages"] for d in ds),
            "outline_entries": sum(d["toc_entries"] for d in ds),
        }
        for m in MEASURES:
            row[m] = _mean(0.0 if m == "heading_f1" and d[m] is None else d[m] for d in ds)
        for m in METHODS:
            row[f"f1_{m}"] = _mean(d[f"f1_{m}"] or 0.0 for d in ds if d[f"f1_{m}"] is not None or d["toc_entries"])
        row["tables"] = sum(d["tables"] for d in ds)
        row["figures"] = sum(d["figures"] for d in ds)
        row["below_half"] = sum(1 for d in ds if d["low_f1_reason"])
        return row

    dev = [summary(s, role, ds) for (role, s), ds in sorted(groups.items()) if role == "dev"]
    out = list(dev)
    if dev:
        macro = {
            "source": DEV_MACRO,
            "role": "dev",
            "documents": sum(r["documents"] for r in dev),
            "pages": sum(r["pages"] for r in dev),
            "outline_entries": sum(r["outline_entries"] for r in dev),
        }
        for key in (*MEASURES, *(f"f1_{m}" for m in METHODS)):
            macro[key] = _mean(r[key] for r in dev)
        for key in ("tables", "figures", "below_half"):
            macro[key] = sum(r[key] for r in dev)
        out.append(macro)
    out += [summary(s, role, ds) for (role, s), ds in sorted(groups.items()) if role != "dev"]
    return out


def csv_text(rows: list[dict]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


def quality_figure(sources: list[dict], stem: str | Path) -> list[Path]:
    """Heading F1 per source for the three methods (macro over documents), targets marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pipeline.report.render.plots import save_png_svg

    names = [s["source"] + ("" if s.get("role", "dev") == "dev" else " (check)") for s in sources]
    fig, ax = plt.subplots(figsize=(7.5, 0.5 * len(names) + 1.2))
    height = 0.8 / len(METHODS)
    for i, m in enumerate(METHODS):  # one row of bars per source, top to bottom; horizontal: names stay legible
        ys = [len(names) - 1 - j - (i - 1) * height for j in range(len(names))]
        ax.barh(ys, [float(s[f"f1_{m}"] or 0.0) for s in sources], height, label=m)
    ax.axvline(0.85, color="k", lw=0.8, ls="--")
    ax.axvline(0.75, color="r", lw=0.8, ls=":")
    ax.set_yticks(range(len(names))[::-1], [n.replace(" (macro)", "\n(macro)") for n in names], fontsize=8)
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("heading F1 vs the PDF outline")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: inside, it covered bars
    fig.tight_layout()
    return save_png_svg(fig, stem)


def telemetry_path(quality_csv: str | Path) -> Path:
    """Where the parse times of ``quality.csv``'s run go: beside it, under a ``.telemetry.`` name."""
    return Path(quality_csv).with_name("quality.telemetry.csv")


def seconds_per_page(quality_csv: str | Path, method: str) -> dict[str, float | None]:
    """Mean parse seconds per page of ``method`` per source (and the development macro), from the
    telemetry file beside ``quality_csv``; empty when that run's telemetry is not there."""
    path = telemetry_path(quality_csv)
    if not path.exists():
        return {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"] == method]
    per_source: dict[str, list[float]] = {}
    for r in rows:
        per_source.setdefault(r["source"], []).append(float(r[TIMING]))
    out: dict[str, float | None] = {s: _mean(v) for s, v in per_source.items()}
    dev = {r["source"] for r in rows if r["role"] == "dev"}
    out[DEV_MACRO] = _mean(out[s] for s in sorted(dev))
    return out


def write_report(folder: str | Path, entries: list[Entry], out: str | Path, jobs: int = 1) -> dict:
    """Measure the PDFs, keep the best method, write the three CSVs; returns a summary."""
    from pipeline.io import atomic_write_text

    out = Path(out)
    measured, errors = measure_pdfs(folder, entries, METHODS, jobs)
    timing = [{k: r[k] for k in ("source", "role", "doc", "method", "pages", TIMING)} for r in measured]
    rows = [{k: v for k, v in r.items() if k != TIMING} for r in measured]
    method = best_method(rows)
    docs = document_table(rows, method)
    sources = source_table(docs)
    atomic_write_text(out, csv_text(docs))
    atomic_write_text(out.with_name("quality_sources.csv"), csv_text(sources))
    atomic_write_text(out.with_name("quality_all.csv"), csv_text(rows))
    atomic_write_text(telemetry_path(out), csv_text(timing))
    macro = next((s for s in sources if s["source"] == DEV_MACRO), {})
    return {
        "documents": len(docs),
        "failed": len(errors),
        "method": method,
        **{f"macro_f1_{m}": macro.get(f"f1_{m}") for m in METHODS},
        "errors": errors,
    }


def render(reports_dir: Path) -> str:
    """The generated block of docs/parsing.md: the per-source table of ``reports/parsing/quality_sources.csv``,
    with the parse time per page from the run's telemetry beside it."""
    out = Reports.at(reports_dir)
    with open(out.parse_quality_sources(""), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    with open(out.parse_quality(""), encoding="utf-8", newline="") as fh:
        docs = list(csv.DictReader(fh))
    kept = docs[0]["method"] if docs else "?"
    secs = seconds_per_page(out.parse_quality(""), kept)  # telemetry: "–" when that run's is not here
    rows = [{**r, TIMING: secs.get(r["source"])} for r in rows]
    cols = [c.name for c in SOURCE_COLUMNS]
    head = ["source", *(c.replace("_", " ") for c in cols)]

    def name(r: dict) -> str:
        bold = f"**{r['source']}**" if r["source"] == DEV_MACRO else r["source"]
        return bold + ("" if r["role"] == "dev" else " (independent check)")

    lines = markdown.table_lines(head, ([name(r), *(r[c] or "–" for c in cols)] for r in rows))
    low = [d for d in docs if d["low_f1_reason"]]
    lines.append("")
    lines.append(
        f"Kept heading method: **{kept}** (best macro-average heading F1 over the development sources); "
        "precision, recall, F1 and the other measures are the kept method's."
    )
    if low:
        lines.append("")
        lines.append(f"Documents below heading F1 {LOW_F1}:")
        lines.append("")
        lines += [f"- {d['doc']} ({d['source']}, F1 {d['heading_f1'] or 0}): {d['low_f1_reason']}" for d in low]
    return "\n".join(lines)

"""``reports/index.html``: one self-contained page (figures embedded as base64 PNG) where every
figure names the files it was drawn from and their hashes, under a header naming the run
(``run_header``: pipeline/report/header.py; the run id, its config hash, the commit, the config files).

No timestamps: the page is a result like any other and byte-identical on a rerun, but for that header.
"""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from pipeline.provenance import file_hash

STYLE = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;margin:.3em 0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.2em;font-size:1.2em}
p{margin:.4em 0}table{border-collapse:collapse;font-size:12px;margin:.4em 0}
td,th{border:1px solid #ddd;padding:1px 6px;text-align:right;vertical-align:top}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}td.t{text-align:left}figure{margin:1.5em 0}
figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:13px}
details{font-size:12px;color:#555}td details{color:#222}td details summary{cursor:pointer}
.tw{overflow-x:auto;max-width:100%}code{background:#f6f6f6;padding:0 3px}nav a{margin-right:1em}
.intro{font-size:12px;color:#555}"""


@dataclass(frozen=True)
class FigureEntry:
    stem: str
    caption: str
    inputs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Section:
    title: str
    table: str
    stems: list[str]
    text: str = ""
    anchor: str = ""  # the section's id (default s<i>), for links that must not move


LONG_CELL = 60  # characters: a longer text cell folds into <details> so a row stays one line high


def cell_html(value) -> str:
    """One cell: numbers to 4 significant digits, NaN empty, long text folded (click to read)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "<td></td>"
    if isinstance(value, float):
        return f"<td>{value:.4g}</td>"
    if not isinstance(value, str):
        return f"<td>{html.escape(str(value))}</td>"
    if len(value) <= LONG_CELL:
        return f'<td class="t">{html.escape(value)}</td>'
    return (
        f'<td class="t"><details><summary>{html.escape(value[: LONG_CELL - 20])}…</summary>'
        f"{html.escape(value)}</details></td>"
    )


@cache
def short_hash(path: str) -> str:
    return file_hash(path)[:12] if Path(path).exists() else "missing"


def table_html(df: pd.DataFrame, raw_html: tuple[str, ...] = ()) -> str:
    """An HTML table (4 significant digits, NaN empty, long text folded), scrolling sideways inside
    its box when wide, never the page. Columns in ``raw_html`` hold trusted markup (links)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join(
        "<tr>"
        + "".join(f'<td class="t">{v}</td>' if c in raw_html else cell_html(v) for c, v in zip(df.columns, row))
        + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f'<div class="tw"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def href(path: str, reports_dir: Path) -> str:
    """Link to an input: relative inside the work folder, as given when absolute (shared data), so
    the page does not depend on where the work folder sits."""
    return Path(path).as_uri() if os.path.isabs(path) else os.path.relpath(path, reports_dir)


def figure_html(entry: FigureEntry, fig_dir: Path, reports_dir: Path) -> str:
    png = fig_dir / f"{entry.stem}.png"
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    rel = os.path.relpath(fig_dir, reports_dir)
    inputs = "".join(
        f'<li><a href="{html.escape(href(p, reports_dir))}">{html.escape(p)}</a> '
        f"<code>sha256:{short_hash(p)}</code></li>"
        for p in entry.inputs
    )
    return (
        f'<figure id="{entry.stem}"><img alt="{entry.stem}" src="data:image/png;base64,{data}">'
        f"<figcaption><b>{entry.stem}</b>: {html.escape(entry.caption)} "
        f'[<a href="{rel}/{entry.stem}.png">png</a> · <a href="{rel}/{entry.stem}.svg">svg</a>]</figcaption>'
        f"<details><summary>drawn from {len(entry.inputs)} file(s)</summary><ul>{inputs}</ul></details></figure>"
    )


def render_html(
    run_header: str,
    sections: list[Section],
    entries: dict[str, FigureEntry],
    reports_dir: Path,
    fig_dir_name: str = "figures",
) -> str:
    reports_dir = Path(reports_dir)
    fig_dir = reports_dir / fig_dir_name
    ids = [s.anchor or f"s{i}" for i, s in enumerate(sections)]
    nav = "".join(f'<a href="#{a}">{html.escape(s.title)}</a>' for a, s in zip(ids, sections))
    body = []
    for a, s in zip(ids, sections):
        body.append(f'<h2 id="{a}">{html.escape(s.title)}</h2>')
        if s.text:
            body.append(f"<p>{html.escape(s.text)}</p>")
        body.append(s.table)
        body += [figure_html(entries[stem], fig_dir, reports_dir) for stem in s.stems]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>wattbench report</title>'
        f"<style>{STYLE}</style></head><body><h1>wattbench report</h1>"
        f'{run_header}<p class="intro">Every figure lists the result files (with sha256) '
        f'it was drawn from; provenance: <a href="index.html.manifest.json">index.html.manifest.json</a>; '
        f'markdown summary: <a href="index.md">index.md</a>.</p><nav>{nav}</nav>' + "\n".join(body) + "</body></html>\n"
    )

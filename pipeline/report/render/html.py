"""``reports/index.html``: one page where every figure names the files it was drawn from and their
hashes, under a header naming the run (``run_header``: pipeline/report/header.py; the run id, its
config hash, the commit, the config files). Figures are the PNG files beside it (``<img src>``), not
embedded: the page stays light and loads fast; the report folder travels as a whole.

Each section reads top to bottom as figures, then the raw table folded below them (``<details>``);
a formatted table a reader needs at once (leaderboard, claims, the headline) comes first, unfolded.
Section ids come from the section's name (``#leaderboard``, ``#corpus-mine``), so a link to one does
not move when a section is added before it.

No timestamps: the page is a result like any other and byte-identical on a rerun, but for that header.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from pipeline.provenance import file_hash

STYLE = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;margin:.3em 0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.2em;font-size:1.2em}
p{margin:.4em 0}table{border-collapse:collapse;font-size:12px;margin:.4em 0}
td,th{border:1px solid #ddd;padding:1px 4px;text-align:right;vertical-align:top}
th{background:#f4f4f4;font-weight:600;text-align:left}td:first-child{text-align:left}
td.t{text-align:left;max-width:28em;overflow-wrap:break-word}td.n,td.w{white-space:nowrap}figure{margin:1.5em 0}
.headline{font-size:14px;border-left:4px solid #4a7;padding:.3em .8em;background:#f6fbf7}p.cap{font-size:12px;color:#555}
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
class PageHead:
    """What tells one page from another: its title, its figures' folder and its markdown summary, if any."""

    title: str = "wattbench report"
    figures: str = "figures"  # beside the page
    markdown: str | None = "index.md"


@dataclass(frozen=True)
class Section:
    title: str
    table: str
    stems: list[str]
    text: str = ""
    anchor: str = ""  # the section's id (default: from its title, see :func:`anchor_of`)
    fold: bool = True  # a raw table: after the figures, folded; False: a formatted table first, open


def anchor_of(title: str) -> str:
    """A section's id from its name: lower case, words joined by hyphens ('Ensemble size' -> 'ensemble-size')."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


SHORT = 16  # characters: a text cell this short stays on one line; a longer one wraps (at its hyphens, for a name)
NUMBER_TEXT = re.compile(
    r"^[-+−]?\d[\d.,\[\] =+−-]*$"
)  # a formatted number ('0.668 [0.555, 0.781]', '1='): right-aligned


def cell_html(value) -> str:
    """One cell: numbers to 4 significant digits, NaN empty, text whole (it wraps, never cut short)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "<td></td>"
    if isinstance(value, float):
        return f'<td class="n">{value:.4g}</td>'
    if not isinstance(value, str):
        return f'<td class="n">{html.escape(str(value))}</td>'
    kind = "n" if NUMBER_TEXT.match(value) else ("t w" if len(value) <= SHORT else "t")
    return f'<td class="{kind}">{html.escape(value)}</td>'


@cache
def short_hash(path: str) -> str:
    return file_hash(path)[:12] if Path(path).exists() else "missing"


def table_html(df: pd.DataFrame, raw_html: tuple[str, ...] = (), caption: str = "") -> str:
    """An HTML table (4 significant digits, NaN empty, text wrapped), scrolling sideways inside
    its box when wide, never the page. Columns in ``raw_html`` hold trusted markup (links);
    ``caption`` (plain text) explains the columns below the table."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    cap = f'<p class="cap">{html.escape(caption)}</p>' if caption else ""
    rows = "".join(
        "<tr>"
        + "".join(f'<td class="t">{v}</td>' if c in raw_html else cell_html(v) for c, v in zip(df.columns, row))
        + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f'<div class="tw"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{cap}'


def href(path: str, reports_dir: Path) -> str:
    """Link to an input: relative inside the work folder, as given when absolute (shared data), so
    the page does not depend on where the work folder sits."""
    return Path(path).as_uri() if os.path.isabs(path) else os.path.relpath(path, reports_dir)


def figure_html(entry: FigureEntry, fig_dir: Path, reports_dir: Path) -> str:
    if not (fig_dir / f"{entry.stem}.png").exists():
        raise FileNotFoundError(f"figure {entry.stem}: {fig_dir / entry.stem}.png was not drawn")
    rel = os.path.relpath(fig_dir, reports_dir)
    inputs = "".join(
        f'<li><a href="{html.escape(href(p, reports_dir))}">{html.escape(p)}</a> '
        f"<code>sha256:{short_hash(p)}</code></li>"
        for p in entry.inputs
    )
    return (
        f'<figure id="{entry.stem}"><img alt="{entry.stem}" src="{rel}/{entry.stem}.png">'
        f"<figcaption><b>{entry.stem}</b>: {html.escape(entry.caption)} "
        f'[<a href="{rel}/{entry.stem}.png">png</a> · <a href="{rel}/{entry.stem}.svg">svg</a>]</figcaption>'
        f"<details><summary>drawn from {len(entry.inputs)} file(s)</summary><ul>{inputs}</ul></details></figure>"
    )


def section_body(s: Section, figures: list[str]) -> list[str]:
    """A section's text, then its figures with the raw table folded below them (a formatted table:
    first and open)."""
    text = [f"<p>{html.escape(s.text)}</p>"] if s.text else []
    if not s.table:
        return [*text, *figures]
    if not s.fold or not figures:
        return [*text, s.table, *figures]
    return [*text, *figures, f"<details><summary>the table behind the figures</summary>{s.table}</details>"]


def render_html(
    run_header: str,
    sections: list[Section],
    entries: dict[str, FigureEntry],
    reports_dir: Path,
    head: PageHead = PageHead(),
    note: str = "",
) -> str:
    reports_dir = Path(reports_dir)
    fig_dir = reports_dir / head.figures
    title, markdown = head.title, head.markdown
    ids = [s.anchor or anchor_of(s.title) for s in sections]
    doubled = sorted({a for a in ids if ids.count(a) > 1})
    if doubled:
        raise ValueError(f"two report sections share the id(s) {doubled}: give one an anchor of its own")
    nav = "".join(f'<a href="#{a}">{html.escape(s.title)}</a>' for a, s in zip(ids, sections))
    body = []
    for a, s in zip(ids, sections):
        body.append(f'<h2 id="{a}">{html.escape(s.title)}</h2>')
        body += section_body(s, [figure_html(entries[stem], fig_dir, reports_dir) for stem in s.stems])
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        + (f'<p class="smoke"><strong>{html.escape(note)}</strong></p>' if note else "")
        + f'{run_header}<p class="intro">Every figure lists the result files (with sha256) '
        f'it was drawn from; provenance: <a href="index.html.manifest.json">index.html.manifest.json</a>'
        + (f'; markdown summary: <a href="{markdown}">{markdown}</a>' if markdown else "")
        + f".</p><nav>{nav}</nav>"
        + "\n".join(body)
        + "</body></html>\n"
    )

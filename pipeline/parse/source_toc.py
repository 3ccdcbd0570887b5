"""Heading truth from a document's own source, for PDFs shipped without an outline.

Most R package vignettes (Sweave ``.Rnw`` articles, R Markdown ``.Rmd``) come as a PDF without
bookmarks, but Debian ships their source beside the PDF in the same package. The source's
``\\section``/``\\subsection``/``\\subsubsection`` commands (or Markdown ``#``/``##``/``###``
lines) are the headings the PDF prints, written by the author, so they are as independent a
truth as an outline. ``\\section[short]{long}`` prints ``long``; starred sections print too;
``\\bibliography`` prints a "References" heading. Code chunks, comments and YAML front matter
are skipped. Each heading is then located on its page in the PDF (in order), so the window
cut and the outline sidecar work as for a real outline.
"""

from __future__ import annotations

import re
import unicodedata

LATEX_LEVELS = {"section": 1, "subsection": 2, "subsubsection": 3}
_COMMAND = re.compile(r"\\(section|subsection|subsubsection)\*?\s*(?:\[[^\]]*\])?\s*\{")
_WRAPPER = re.compile(r"\\[a-zA-Z]+\*?\s*\{([^{}]*)\}")  # \pkg{zoo}, \code{x}, \emph{...} keep their text
_MATH = re.compile(r"\$([^$]*)\$")
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")
_MD_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*(?:\{[^}]*\})?\s*$")
_WORD = re.compile(r"[a-z0-9]+")


def _braced(text: str, start: int) -> str:
    """The text of the brace group opening just before ``start`` (nested braces kept)."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start : i - 1]


def plain(title: str) -> str:
    """LaTeX markup out of a title: labels dropped, wrappers and math unwrapped, ``~`` and ``\\\\`` as spaces."""
    title = _LABEL.sub("", title)
    for _ in range(3):  # nested wrappers: \textbf{\pkg{x}}
        title = _WRAPPER.sub(r"\1", title)
    title = _MATH.sub(r"\1", title).replace("\\\\", " ").replace("~", " ")
    title = re.sub(r"\\[a-zA-Z]+\*?", "", title).replace("{", "").replace("}", "")
    return " ".join(title.split())


def _latex_body(text: str) -> str:
    """The source without comments and Sweave code chunks (``<<...>>=`` up to ``@``)."""
    lines, in_chunk = [], False
    for line in text.splitlines():
        if re.match(r"^\s*<<.*>>=\s*$", line):
            in_chunk = True
        elif in_chunk and re.match(r"^@\s*", line):
            in_chunk = False
        elif not in_chunk:
            lines.append(re.sub(r"(?<!\\)%.*", "", line))
    return "\n".join(lines)


def latex_headings(text: str) -> list[tuple[int, str]]:
    """``(level, title)`` of every sectioning command in a LaTeX/Sweave source, plus "References"."""
    body = _latex_body(text)
    found = [(m.start(), LATEX_LEVELS[m.group(1)], plain(_braced(body, m.end()))) for m in _COMMAND.finditer(body)]
    bib = re.search(r"\\bibliography\s*\{|\\begin\{thebibliography\}|\\printbibliography", body)
    if bib:
        found.append((bib.start(), 1, "References"))
    return [(level, title) for _, level, title in sorted(found) if title]


def markdown_headings(text: str) -> list[tuple[int, str]]:
    """``(level, title)`` of the ATX headings of an R Markdown source, outside YAML front matter and code fences."""
    lines = text.splitlines()
    if lines[:1] == ["---"]:
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), 0)
        lines = lines[end + 1 :]
    out, fence = [], False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and (m := _MD_HEADING.match(line)):
            out.append((len(m.group(1)), plain(m.group(2).replace("`", ""))))
    return out


def source_headings(name: str, text: str) -> list[tuple[int, str]]:
    """The headings of a vignette source, by its file type (``.Rnw``/``.tex`` or ``.Rmd``/``.md``)."""
    suffix = name.lower().removesuffix(".gz").rsplit(".", 1)[-1]
    if suffix in ("rnw", "tex", "rtex"):
        return latex_headings(text)
    if suffix in ("rmd", "md"):
        return markdown_headings(text)
    raise ValueError(f"{name}: no heading reader for .{suffix} sources (use .Rnw, .tex, .Rmd or .md)")


def _key(text: str) -> str:
    return "".join(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


def _page_key(text: str) -> str:
    """A page as lower-case letters and digits; an unmapped ligature glyph (a control character) stays as ``~``."""
    text = re.sub(r"[\x00-\x08\x0b-\x1f]", "~", unicodedata.normalize("NFKC", text).lower())
    return "".join(re.findall(r"[a-z0-9~]+", text))


def _pattern(title: str) -> re.Pattern[str] | None:
    """A heading's first 30 letters and digits; each fi/fl/ff/ffi/ffl may be one unmapped ligature glyph."""
    key = _key(title)[:30]
    if not key:
        return None
    return re.compile(re.sub(r"ffi|ffl|ff|fi|fl", lambda m: f"(?:{m.group()}|~)", key))


def locate(headings: list[tuple[int, str]], pages: list[str]) -> list[list]:
    """Outline entries ``[level, title, page]``: each heading on the first page, at or after the last one's,
    that prints it (compared as lower-case letters and digits, on its first 30; ligatures unfolded).
    A heading no page prints is an error."""
    keys = [_page_key(p) for p in pages]
    out, page = [], 0
    for level, title in headings:
        pattern = _pattern(title)
        hit = next((i for i in range(page, len(keys)) if pattern and pattern.search(keys[i])), None)
        if hit is None:
            raise ValueError(f"source heading {title!r} is printed on no page at or after page {page + 1}")
        page = hit
        out.append([level, title, hit + 1])
    return out

"""Plain text: line cleaning shared by every parser, and the plain-text document parser.

PDF extraction gives lines, not paragraphs. The helpers here clean a line (ligatures,
odd spaces), join lines back into running text (undoing line-end hyphenation only where
the joined form is a word) and recognise heading lines, so the payload, PDF and plain-text
parsers all make the same decisions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from pipeline.parse.sentences import sentence_texts
from pipeline.tree import DocTree, ParagraphSpec, SectionSpec, build_tree

_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st", "\u00ad": None}
)
_SPACES = re.compile(r"[\s\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_BROKEN = re.compile(r"\S*-[ \t\u00a0]*\n\s*\S*")
_HYPHEN_END = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*)-$")
_LOWER_START = re.compile(r"[a-z]+")

# "1 Introduction", "2.3 Results", "1.Introduction", "IV. Results", "B. Setup" (a space is
# required after a plain number so that footnotes like "9See ..." are not headings).
_NUMBERED = re.compile(
    r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?\s+|\d{1,2}\.(?=[A-Z])|[IVX]{1,6}\.\s*|[A-H]\.\s+)(?P<title>[A-Z].*)$"
)
_NUMBER_TOKEN = re.compile(r"[\d.,%/×x±~<>=+-]+")
_FUNCTION_WORDS = frozenset(
    "a an and as at by for from in into of on or the to with that which is are was were".split()
)
NAMED_HEADINGS = frozenset(
    h.replace(" ", "")
    for h in (
        "abstract",
        "introduction",
        "related work",
        "background",
        "method",
        "methods",
        "methodology",
        "experiments",
        "experimental setup",
        "results",
        "discussion",
        "conclusion",
        "conclusions",
        "limitations",
        "future work",
        "references",
        "bibliography",
        "appendix",
        "acknowledgments",
        "acknowledgements",
        "acknowledgment",
        "acknowledgement",
    )
)
_MD_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*$")


def clean_line(line: str) -> str:
    """Expand ligatures, drop soft hyphens and collapse every run of whitespace to one space."""
    return _SPACES.sub(" ", line.translate(_LIGATURES)).strip()


def vocabulary(text: str) -> set[str]:
    """Lower-case words (and hyphenated compounds with their parts) of ``text``.

    Tokens broken by a line-end hyphen are left out, so "effi-" never counts as a word.
    """
    words: set[str] = set()
    for w in _WORD.findall(_BROKEN.sub(" ", text.translate(_LIGATURES)).lower()):
        words.add(w)
        if "-" in w:
            words.update(w.split("-"))
    return words


def _join_hyphenated(left: str, right: str, vocab: AbstractSet[str]) -> bool:
    """True when ``left-`` + ``right`` is one word split by a line break ("effi-" + "ciency")."""
    last = left.lower().rsplit("-", 1)[-1]
    right = right.lower()
    if last + right in vocab:
        return True
    if f"{last}-{right}" in vocab or "-" in left:
        return False  # a compound seen elsewhere, or part of one ("state-of-the-" + "art")
    return not (len(last) > 2 and len(right) > 2 and last in vocab and right in vocab)


def join_lines(lines: Iterable[str], vocab: AbstractSet[str] = frozenset()) -> tuple[str, list[int]]:
    """Join cleaned lines into running text; return it with the offsets of the line joins.

    The join offsets are soft breaks for :func:`split_sentences` (where an over-long
    "sentence", typically a flattened table, may be cut).
    """
    out = ""
    breaks: list[int] = []
    for line in lines:
        if not line:
            continue
        if not out:
            out = line
            continue
        left = _HYPHEN_END.search(out, out.rfind(" ") + 1)  # only the last token: keeps this linear
        if left and line[0].isalnum():  # a hyphen at the line end: glue, dropping it inside a word
            right = _LOWER_START.match(line)
            out = (out[:-1] if right and _join_hyphenated(left.group(1), right.group(0), vocab) else out) + line
        else:
            breaks.append(len(out))
            out = f"{out} {line}"
    return out, breaks


def heading_title(line: str) -> str | None:
    """The line itself when it looks like a section heading, else None."""
    if not line or len(line) > 90:
        return None
    if line.replace(" ", "").rstrip(".:").lower() in NAMED_HEADINGS:
        return line
    m = _NUMBERED.match(line)
    if not m:
        return None
    title = m.group("title")
    words = title.split()
    if len(words) > 12 or "," in title or title[-1] in ".,;:-" or words[-1].lower() in _FUNCTION_WORDS:
        return None
    if sum(bool(_NUMBER_TOKEN.fullmatch(w)) for w in words) >= 2:
        return None  # a table row such as "2 Mélange 1 3.67 N/A"
    visible = title.replace(" ", "")
    if sum(c.isalpha() for c in visible) < 0.7 * len(visible):
        return None
    return line


def paragraph_sentences(lines: list[str], vocab: AbstractSet[str] = frozenset()) -> list[str]:
    """Sentences of a paragraph given as cleaned lines; a heading first line is its own sentence."""
    lines = [x for x in lines if x]
    head: list[str] = []
    if lines and heading_title(lines[0]):
        head, lines = [lines[0]], lines[1:]
    text, breaks = join_lines(lines, vocab)
    return head + sentence_texts(text, soft_breaks=breaks)


def parse_text(text: str, doc_id: str, title: str) -> DocTree:
    """Plain text or markdown: blank lines separate paragraphs; ``#`` or numbered headings open sections."""
    vocab = vocabulary(text)
    sections: list[SectionSpec] = [SectionSpec(title, [])]
    block: list[str] = []

    def flush() -> None:
        if block:
            sections[-1].paragraphs.append(ParagraphSpec(paragraph_sentences(block, vocab)))
            block.clear()

    for raw in text.splitlines():
        line = clean_line(raw)
        md = _MD_HEADING.match(line)
        heading = md.group("title") if md else (heading_title(line) if not block else None)
        if heading:
            flush()
            sections.append(SectionSpec(heading, []))
        elif not line:
            flush()
        else:
            block.append(line)
    flush()
    return build_tree(doc_id, title, sections, metadata={"parser": "text"})

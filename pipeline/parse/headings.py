"""Section numbering: what a heading's number says about its depth, and nesting by it.

Both the PDF parser (font cues) and the WattBot payload upgrade (text only) find heading
lines; this module turns their numbers into depths (``2`` -> 1, ``2.3`` -> 2, ``IV.`` -> 1,
``A.`` under a roman section -> 2) and checks that a number follows the numbering so far.
The check matters most for text-only input, where "3 GPUs were used" or a numbered list
item looks just like a heading: a real heading continues the outline (next sibling at some
level, or the first child), a false one jumps around.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.tree import SectionSpec

_ROMAN = {"I": 1, "V": 5, "X": 10}
_NUMBER = re.compile(
    r"^(?:(?P<dec>\d{1,2}(?:\.\d{1,2}){0,3})\.?(?=\s|[A-Z])"  # 3.1.2 (then a space or capital)
    r"|(?P<roman>[IVX]{1,6})\."  # IV.
    r"|(?P<letter>[A-H])(?:\.(?P<sub>\d{1,2}(?:\.\d{1,2}){0,2}))?\.?(?=\s))"
)  # B, B.2.1
MAX_JUMP = 3  # a heading number may skip this many siblings (a missed heading), not more


def _roman(s: str) -> int:
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = _ROMAN[a]
        total += -v if b != " " and _ROMAN[b] > v else v
    return total


@dataclass(frozen=True)
class Number:
    """A parsed heading number: its scheme (``dec``, ``roman``, ``letter``) and its parts."""

    scheme: str
    parts: tuple[int, ...]


def heading_number(title: str) -> Number | None:
    """``"2.3 Results"`` -> Number("dec", (2, 3)); ``"IV. Results"`` -> ("roman", (4,)); None if unnumbered."""
    m = _NUMBER.match(title.strip())
    if not m:
        return None
    if m.group("dec"):
        return Number("dec", tuple(int(x) for x in m.group("dec").split(".")))
    if m.group("roman"):
        return Number("roman", (_roman(m.group("roman")),))
    sub = tuple(int(x) for x in m.group("sub").split(".")) if m.group("sub") else ()
    return Number("letter", (ord(m.group("letter")) - ord("A") + 1, *sub))


@dataclass
class Outline:
    """The numbering seen so far; decides whether a numbered heading fits and how deep it is."""

    path: tuple[int, ...] = ()
    top_scheme: str = ""
    sizes: dict = field(default_factory=dict)  # heading style (font size, or (size, bold)) -> depth

    def depth(self, number: Number | None, size=None, strict: bool = True) -> int | None:
        """Depth (1 = top) of a heading with ``number``, or None when ``strict`` and it breaks the outline.

        Unnumbered headings take the depth last seen for their style (font size, or any hashable
        style key such as (size, bold)), else 1.
        """
        if size is not None and isinstance(size, float):
            size = round(size, 1)
        if number is None:
            return self.sizes.get(size, 1) if size is not None else 1
        parts, scheme = number.parts, number.scheme
        if scheme == "letter" and len(parts) == 1 and self.top_scheme == "roman" and self.path:
            parts, scheme = (self.path[0], *parts), "roman"  # IEEE style: "A." is a subsection of "IV."
        if self.top_scheme and scheme != self.top_scheme and not (scheme == "letter" and len(parts) <= 2):
            if strict:
                return None  # "1 Candidates" (an algorithm line) inside a roman-numbered paper
        base = self.path if scheme == self.top_scheme else ()  # a new scheme (appendix "A") restarts
        if strict and not _follows(base, parts):
            return None
        self.path, self.top_scheme = parts, scheme
        if size is not None:
            self.sizes[size] = len(parts)
        return len(parts)


def _follows(path: tuple[int, ...], parts: tuple[int, ...]) -> bool:
    """Whether ``parts`` is the next sibling at some level of ``path`` or its first child."""
    m = len(parts)
    if m > len(path) + 1 or parts[: m - 1] != path[: m - 1]:
        return False
    prev = path[m - 1] if m <= len(path) else 0
    return prev < parts[-1] <= prev + MAX_JUMP


def nest(flat: list[tuple[int, SectionSpec]]) -> list[SectionSpec]:
    """Turn ``(depth, section)`` pairs in document order into a section tree.

    A section becomes a subsection of the nearest earlier section with a smaller depth;
    a depth jump (1 -> 3) nests one level, never inventing empty sections.
    """
    roots: list[SectionSpec] = []
    stack: list[tuple[int, SectionSpec]] = []
    for depth, sec in flat:
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].subsections if stack else roots).append(sec)
        stack.append((depth, sec))
    return roots

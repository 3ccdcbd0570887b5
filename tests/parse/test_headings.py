"""Heading numbers: depth, outline continuity, nesting."""
import pytest

from pipeline.parse.headings import Number, Outline, heading_number, nest
from pipeline.tree import SectionSpec


@pytest.mark.parametrize("title,number", [
    ("2 Methods", Number("dec", (2,))), ("2.3.1 Setup", Number("dec", (2, 3, 1))), ("1.Introduction", Number("dec", (1,))),
    ("IV. Results", Number("roman", (4,))), ("A.3 Details", Number("letter", (1, 3))), ("B. Data", Number("letter", (2,))),
    ("Introduction", None), ("GPT-3 results", None),
])
def test_heading_number(title, number):
    assert heading_number(title) == number


def test_outline_accepts_continuations_and_rejects_jumps():
    o = Outline()
    depths = [o.depth(heading_number(t)) for t in
              ["1 Introduction", "1.1 Scope", "1.2 Plan", "2 Methods", "2.1 Data", "9 GPUs were used", "1 Step one",
               "3 Results", "3.1.1 Deep", "3.1 Main", "3.1.1 Deep", "A Appendix", "A.1 More"]]
    assert depths == [1, 2, 2, 1, 2, None, None, 1, None, 2, 3, 1, 2]


def test_outline_ieee_letters_nest_under_roman_sections():
    o = Outline()
    assert [o.depth(heading_number(t)) for t in ["I. Introduction", "II. Background", "A. Models", "B. Data", "III. Results"]] == [1, 1, 2, 2, 1]
    assert o.depth(heading_number("1 Candidates")) is None  # an algorithm line, not a new numbering scheme


def test_unnumbered_headings_take_depth_by_size():
    o = Outline(sizes={14.0: 1, 12.0: 2})
    assert o.depth(None, 12.0) == 2 and o.depth(None, 20.0) == 1


def test_nest_builds_the_section_tree():
    secs = [(1, SectionSpec("1", [])), (2, SectionSpec("1.1", [])), (3, SectionSpec("1.1.1", [])), (2, SectionSpec("1.2", [])),
            (1, SectionSpec("2", [])), (3, SectionSpec("2.0.1", []))]
    roots = nest(secs)
    assert [s.title for s in roots] == ["1", "2"]
    assert [s.title for s in roots[0].subsections] == ["1.1", "1.2"]
    assert roots[0].subsections[0].subsections[0].title == "1.1.1"
    assert roots[1].subsections[0].title == "2.0.1"  # a depth jump nests one level, inventing nothing

"""The plain-text / markdown parser."""
from pipeline.parse.text import clean_line, heading_title, parse_text


def _sections(tree):
    return [(tree.nodes[s].title, [tree.nodes[p].text for p in tree.nodes[s].children]) for s in tree.root.children]


def test_markdown_headings_make_sections():
    text = "# Intro\n\nFirst paragraph, line one\nline two. Second sentence.\n\nAnother paragraph.\n\n## Method\nWe measure energy.\n"
    tree = parse_text(text, "md", "A doc")
    tree.check()
    assert _sections(tree) == [
        ("Intro", ["First paragraph, line one line two. Second sentence.", "Another paragraph."]),
        ("Method", ["We measure energy."]),
    ]
    para = tree.nodes["md:s1:p1"]
    assert [tree.nodes[c].text for c in para.children] == ["First paragraph, line one line two.", "Second sentence."]


def test_numbered_headings_make_sections_and_text_before_goes_to_title_section():
    text = "Some preface text.\n\n1 Introduction\nWe study the energy effi-\nciency of models.\n\n2.1 Results\nIt is 4.3 kWh.\n"
    tree = parse_text(text, "num", "Energy paper")
    tree.check()
    assert _sections(tree) == [
        ("Energy paper", ["Some preface text."]),
        ("1 Introduction", ["We study the energy efficiency of models."]),
        ("2.1 Results", ["It is 4.3 kWh."]),
    ]


def test_no_headings_one_section():
    tree = parse_text("Just text. More text.\n\n\nA second paragraph.", "plain", "Plain")
    assert _sections(tree) == [("Plain", ["Just text. More text.", "A second paragraph."])]
    assert tree.nodes["plain:s1:p1"].children == ["plain:s1:p1:t1", "plain:s1:p1:t2"]


def test_clean_line_and_heading_rules():
    assert clean_line("Carbon   Emissions\u00a0 and ﬁndings  ") == "Carbon Emissions and findings"
    for yes in ["1 Introduction", "2.3 Results", "1.Introduction", "IV. Results", "B. Framework Overview", "References", "R EFERENCES"]:
        assert heading_title(yes), yes
    for no in ["9See https://example.org", "2 Mélange 1 3.67 N/A", "A. Neelakantan, P. Shyam, G. Sastry",
               "1 GPU was used for the whole run.", "30 A switch is defined as a customer who purchases a", "16K"]:
        assert not heading_title(no), no

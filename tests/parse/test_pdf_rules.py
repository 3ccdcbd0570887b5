"""One PyMuPDF-built PDF per parsing rule: headings and their nesting, paragraphs, figures,
hyphenation, abbreviations, contents pages, and figure captioning through the LLM gateway."""
import pymupdf
import pytest

from pipeline.parse.pdf import parse_pdf
from pipeline.tree import section_depth

W, H = 612, 792
BODY = pymupdf.Rect(72, 0, 540, 0)


def _box(page, y0, y1, text, size=10, font="helv", rect=BODY):
    assert page.insert_textbox(pymupdf.Rect(rect.x0, y0, rect.x1, y1), text, fontsize=size, fontname=font) >= 0


def _para(topic: str, n: int = 3) -> str:
    return " ".join(f"The {topic} paragraph sentence {i} explains how data centres use energy and water." for i in range(1, n + 1))


def _save(doc, tmp_path, name="doc.pdf"):
    path = tmp_path / name
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def outline_pdf(tmp_path_factory):
    """Numbered headings three levels deep, over two pages, with an outline (get_toc) and a contents page."""
    doc = pymupdf.open()
    for _ in range(3):
        doc.new_page(width=W, height=H)
    toc_page, p1, p2 = doc
    toc_page.insert_text((72, 80), "Contents", fontsize=16, fontname="hebo")
    for i, (title, page) in enumerate([("1 Introduction", 2), ("2 Methods", 2), ("2.1 Data", 2), ("3 Results", 3)]):
        toc_page.insert_text((72, 120 + 20 * i), title, fontsize=10, fontname="hebo")
        toc_page.insert_text((500, 120 + 20 * i), str(page), fontsize=10, fontname="hebo")
    y = 80
    for page, items in ((p1, [("1 Introduction", 16), ("2 Methods", 16), ("2.1 Data", 13), ("2.1.1 Cleaning", 12)]),
                        (p2, [("2.2 Models", 13), ("3 Results", 16)])):
        y = 80
        for title, size in items:
            page.insert_text((72, y), title, fontsize=size, fontname="hebo")
            _box(page, y + 10, y + 80, _para(title.split()[1].lower()))
            y += 120
    _box(p2, y, y + 60, "3 GPUs were used for every run, which is a numbered line inside running text and no heading.")
    doc.set_toc([[1, "1 Introduction", 2], [1, "2 Methods", 2], [2, "2.1 Data", 2], [3, "2.1.1 Cleaning", 2],
                 [2, "2.2 Models", 3], [1, "3 Results", 3]])
    return _save(doc, tmp_path_factory.mktemp("outline"))


def test_numbered_headings_nest(outline_pdf):
    tree = parse_pdf(outline_pdf, "o")
    tree.check()
    sections = {s.title: s for s in tree.at_level("section")}
    assert {"1 Introduction", "2 Methods", "2.1 Data", "2.1.1 Cleaning", "2.2 Models", "3 Results"} <= set(sections)
    assert section_depth(sections["2.1.1 Cleaning"].id) == 3
    assert sections["2.1.1 Cleaning"].parent == sections["2.1 Data"].id
    assert sections["2.2 Models"].parent == sections["2 Methods"].id
    assert sections["2 Methods"].pages == [2, 3]  # spans pages through its subsections
    assert "cleaning paragraph sentence 2" in sections["2.1.1 Cleaning"].text
    assert "3 GPUs were used" not in sections  # a numbered sentence is no heading


def test_contents_page_lines_are_not_headings(outline_pdf):
    tree = parse_pdf(outline_pdf, "o")
    titles = [s.title for s in tree.at_level("section")]
    assert titles.count("1 Introduction") == 1 and titles.count("2.1 Data") == 1


def test_heading_needs_a_confirming_cue(tmp_path):
    """Large type alone is a candidate; a long running sentence in large type is no heading."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "Energy Report", fontsize=24, fontname="hebo")
    _box(page, 100, 200, "This opening statement is set in large type and runs over a whole line of the page, ending as a sentence does.", size=13)
    page.insert_text((72, 240), "Background", fontsize=14)  # short standalone line: confirmed
    _box(page, 250, 330, _para("background"))
    tree = parse_pdf(_save(doc, tmp_path), "h")
    titles = [s.title for s in tree.at_level("section")]
    assert titles == ["Energy Report", "Background"]


def test_paragraphs_split_by_vertical_gap_and_dehyphenated(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    lines = ["The first paragraph is about the energy effi-", "ciency of accelerators and it goes on for a",
             "while before it ends here with a full stop."]
    for i, line in enumerate(lines):  # line height ~12 pt: an advance of 13 pt keeps lines together
        page.insert_text((72, 100 + 13 * i), line, fontsize=10)
    page.insert_text((72, 100 + 13 * 2 + 30), "A second paragraph starts after a clear gap.", fontsize=10)
    tree = parse_pdf(_save(doc, tmp_path), "g")
    paras = [p.text for p in tree.at_level("paragraph")]
    assert paras == ["The first paragraph is about the energy efficiency of accelerators and it goes on for a while before it ends here with a full stop.",
                     "A second paragraph starts after a clear gap."]


def test_abbreviations_decimals_and_citations_stay_inside_sentences(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    text = ("As Fig. 3 shows, training used 4.3 MWh (Smith et al., 2020) and v1.2.3 of the code [12]. "
            "Tools differ, e.g. CodeCarbon vs. Carbontracker, i.e. two trackers. See Eq. 2 and No. 5 for details.")
    _box(page, 80, 300, text)
    tree = parse_pdf(_save(doc, tmp_path), "a")
    assert [s.text for s in tree.at_level("sentence")] == [
        "As Fig. 3 shows, training used 4.3 MWh (Smith et al., 2020) and v1.2.3 of the code [12].",
        "Tools differ, e.g. CodeCarbon vs. Carbontracker, i.e. two trackers.",
        "See Eq. 2 and No. 5 for details.",
    ]


def _figure_pdf(tmp_path, drawing: bool = False):
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    _box(page, 60, 120, _para("intro", 2))
    rect = pymupdf.Rect(150, 140, 450, 340)
    if drawing:  # a vector chart: bars and an axis label inside the region
        for i, hgt in enumerate((60, 120, 180)):
            page.draw_rect(pymupdf.Rect(180 + 80 * i, 330 - hgt, 230 + 80 * i, 330), color=(0, 0, 0), fill=(0.5, 0.5, 0.8))
        page.draw_line((160, 335), (440, 335))
        page.insert_text((300, 200), "kWh", fontsize=8)
    else:
        pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 40), False)
        pix.set_rect(pix.irect, (200, 50, 50))
        page.insert_image(rect, pixmap=pix)
    page.insert_text((150, 360), "Figure 2: Energy per model for three model sizes.", fontsize=9)
    _box(page, 380, 460, _para("closing", 2))
    return _save(doc, tmp_path, "fig.pdf")


@pytest.mark.parametrize("drawing", [False, True], ids=["image", "drawing"])
def test_figure_node_with_caption(tmp_path, drawing):
    tree = parse_pdf(_figure_pdf(tmp_path, drawing), "f")
    tree.check()
    figures = [p for p in tree.at_level("paragraph") if p.kind == "figure"]
    assert len(figures) == 1
    fig = figures[0]
    assert fig.text == "Figure 2: Energy per model for three model sizes."
    assert fig.pages == [1] and fig.bbox[0] <= 180 and fig.bbox[2] >= 390 and fig.bbox[1] <= 200 and fig.bbox[3] >= 360
    assert tree.text.count("Energy per model") == 1 and "kWh" not in tree.text  # labels inside the figure are not body text
    texts = [p.text for p in tree.at_level("paragraph")]
    assert texts.index(fig.text) == 1  # in reading order, between the paragraphs around it


def test_figure_captioning_through_the_llm_gateway(tmp_path):
    """Off by default; when on, litellm (here its offline mock_response) describes the rendered figure, cached."""
    from pipeline.llm_models import LLMSpec
    from pipeline.llm.gateway import LLMGateway
    from pipeline.parse.vision import figure_describer
    from pipeline.specs import VisionSpec

    pdf = _figure_pdf(tmp_path)
    assert "Figure description" not in parse_pdf(pdf, "f").text
    gateway = LLMGateway(tmp_path / "cache" / "llm.sqlite", LLMSpec.from_dict({"mode": "live", "max_retries": 0}))
    spec = VisionSpec.from_dict({"model": "openai/gpt-4o-mini", "params": {"mock_response": "A red rectangle, no axes."}})
    describe = figure_describer(spec, tmp_path / "cache", gateway=gateway)
    tree = parse_pdf(pdf, "f", describe=describe)
    fig = next(p for p in tree.at_level("paragraph") if p.kind == "figure")
    assert fig.text == "Figure 2: Energy per model for three model sizes. Figure description: A red rectangle, no axes."
    assert tree.metadata["figure_descriptions"] == 1 and gateway.calls == 1
    replay = LLMGateway(tmp_path / "cache" / "llm.sqlite", LLMSpec.from_dict({"mode": "replay"}))
    again = parse_pdf(pdf, "f", describe=figure_describer(spec, tmp_path / "cache", "replay", gateway=replay))
    assert again.text == tree.text and replay.calls == 0  # the same image and request: served from the cache


# --- headings without numbers or size, font hierarchy, front matter, references (issue 15) ---

def _breadth_pdf(tmp_path):
    """An office-export-like page: title, centred authors, abstract and keywords, then unnumbered headings
    shown only by weight (bold 13 pt over bold body size), all caps, centring, and a references list."""
    doc = pymupdf.open()
    for _ in range(2):
        doc.new_page(width=W, height=H)
    p1, p2 = doc
    p1.insert_text((150, 70), "Water Use of Data Centres", fontsize=22, fontname="hebo")
    authors = "Ada Lovelace and Charles Babbage"
    p1.insert_text((306 - pymupdf.get_text_length(authors, fontsize=12) / 2, 100), authors, fontsize=12)
    p1.insert_text((72, 140), "Abstract", fontsize=12, fontname="hebo")
    _box(p1, 148, 200, _para("abstract", 2))
    _box(p1, 205, 225, "Keywords: water, energy, cooling")
    y = 250
    for title, size in (("Cooling Towers", 13), ("Evaporation losses", 10), ("Closed loops", 10)):
        p1.insert_text((72, y), title, fontsize=size, fontname="hebo")  # bold, standalone, no number
        _box(p1, y + 8, y + 70, _para(title.split()[0].lower()))
        y += 95
    p1.insert_text((72, y), "SITE SELECTION", fontsize=10)  # all caps, regular weight, body size
    _box(p1, y + 8, y + 70, _para("site"))
    text_w = pymupdf.get_text_length("Outlook", fontname="helv", fontsize=10)
    p2.insert_text(((72 + 540) / 2 - text_w / 2, 80), "Outlook", fontsize=10)  # centred, body size
    _box(p2, 88, 150, _para("outlook"))
    p2.insert_text((72, 180), "Note", fontsize=10, fontname="hebo")  # an admonition label, no heading
    _box(p2, 188, 220, "Cooling water can be reused several times before it is released.")
    p2.insert_text((72, 250), "Figure 3: Water use by site", fontsize=10, fontname="hebo")  # a caption, no heading
    p2.insert_text((72, 290), "References", fontsize=13, fontname="hebo")
    _box(p2, 298, 360, "[1] A. Author. Water and heat. Journal of Cooling, 2020.\n[2] B. Author. Towers. 2021.")
    return _save(doc, tmp_path, "breadth.pdf")


def test_unnumbered_headings_by_weight_caps_and_centring(tmp_path):
    tree = parse_pdf(_breadth_pdf(tmp_path), "b")
    sections = {s.title: s for s in tree.at_level("section")}
    assert {"Cooling Towers", "Evaporation losses", "Closed loops", "SITE SELECTION", "Outlook", "References"} <= set(sections)
    assert "Note" not in sections and not any(t.startswith("Figure 3") for t in sections)
    # depth from the font hierarchy: bold 13 pt over bold 10 pt
    assert section_depth(sections["Evaporation losses"].id) == section_depth(sections["Cooling Towers"].id) + 1
    assert sections["Closed loops"].parent == sections["Cooling Towers"].id


def test_front_matter_is_one_section_and_references_are_marked(tmp_path):
    tree = parse_pdf(_breadth_pdf(tmp_path), "b")
    titles = [s.title for s in tree.at_level("section")]
    assert not {"Abstract", "Ada Lovelace and Charles Babbage"} & set(titles)
    front = tree.nodes[tree.metadata["front_matter"]]
    assert front.title == "Water Use of Data Centres"
    assert "abstract paragraph sentence 1" in front.text and "Keywords: water" in front.text and "Lovelace" in front.text
    (ref,) = tree.metadata["references"]
    assert tree.nodes[ref].title == "References" and "Journal of Cooling" in tree.nodes[ref].text


def test_slightly_larger_numbered_headings_nest_by_number(tmp_path):
    """groff/mom set section heads only ~15% above the body size; the number confirms them."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    y = 80
    for title in ("1. Introduction", "1.1. Scope", "2. Method"):
        page.insert_text((72, y), title, fontsize=11.5)
        _box(page, y + 8, y + 70, _para(title.split()[1].lower()))
        y += 95
    _box(page, y, y + 40, "3. This numbered line is a list item that runs on as a sentence of ordinary body text.")
    tree = parse_pdf(_save(doc, tmp_path), "g")
    sections = {s.title: s for s in tree.at_level("section")}
    assert {"1. Introduction", "1.1. Scope", "2. Method"} <= set(sections)
    assert sections["1.1. Scope"].parent == sections["1. Introduction"].id
    assert not any(t.startswith("3. This") for t in sections)


@pytest.mark.parametrize("method", ["layout", "combined"])
def test_layout_model_methods_find_headings(tmp_path, method):
    """PyMuPDF's layout model (pymupdf.layout) alone and combined with the rules, on a plain numbered page."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    y = 80
    for title in ("1 Introduction", "2 Related Work", "3 Results"):
        page.insert_text((72, y), title, fontsize=16, fontname="hebo")
        _box(page, y + 10, y + 110, _para(title.split()[1].lower(), 5))
        y += 150
    tree = parse_pdf(_save(doc, tmp_path), "l", headings=method)
    titles = {s.title for s in tree.at_level("section")}
    assert {"1 Introduction", "3 Results"} <= titles if method == "combined" else len(titles & {"1 Introduction", "2 Related Work", "3 Results"}) >= 2
    with pytest.raises(ValueError):
        parse_pdf(tmp_path / "doc.pdf", "l", headings="magic")


def test_table_cells_in_a_distinct_font_are_no_headings(tmp_path):
    """Side-by-side cells in a sans font (an XSL-FO table without rules) stay text; one such line alone is a heading."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    y = 80
    for i in range(6):
        _box(page, y, y + 60, _para(f"body{i}"), font="tiro")
        y += 70
    page.insert_text((72, y + 10), "Cooling Systems", fontsize=10, fontname="helv")  # alone on its baseline
    _box(page, y + 20, y + 80, _para("cooling"), font="tiro")
    for row, (a, b) in enumerate((("Zurich", "Lugano"), ("Geneva", "Basel"))):
        page.insert_text((72, y + 100 + 14 * row), a, fontsize=10, fontname="helv")
        page.insert_text((300, y + 100 + 14 * row), b, fontsize=10, fontname="helv")
    from pipeline.parse.pdf.cues import rule_cue
    from pipeline.parse.pdf.lines import page_lines
    from pipeline.parse.pdf.style import body_style

    with pymupdf.open(_save(doc, tmp_path)) as pdf:
        lines = page_lines(pdf[0], 1)
    style = body_style(lines)
    cues = {ln.text: rule_cue(ln, style) for ln in lines}
    assert cues["Cooling Systems"] == "font"
    assert [cues[c] for c in ("Zurich", "Lugano", "Geneva", "Basel")] == [None] * 4


def test_bold_run_in_heading_opens_a_section(tmp_path):
    """"<b>Cooling.</b> The towers ..." (LaTeX \\paragraph, office styles): the bold lead-in is a heading."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "1 Sites", fontsize=16, fontname="hebo")
    body = " ".join(f"Sentence {i} of this paragraph describes how water is drawn and cooled." for i in range(4))
    html = (f"<p><b>Cooling.</b> {body}</p><p><b>Water reuse.</b> {body}</p>"
            f"<p>A plain paragraph with <b>bold words.</b> Inside it, no heading.</p>")
    page.insert_htmlbox(pymupdf.Rect(72, 100, 540, 500), html, css="* {font-family: sans-serif; font-size: 10pt}")
    tree = parse_pdf(_save(doc, tmp_path), "r")
    sections = {s.title: s for s in tree.at_level("section")}
    assert {"Cooling", "Water reuse"} <= set(sections) and not any("bold words" in t for t in sections)
    assert sections["Cooling"].parent == sections["1 Sites"].id
    assert sections["Cooling"].text.startswith("Sentence 0 of this paragraph")


def test_small_caps_line_standing_alone_is_a_heading(tmp_path):
    """LaTeX sets some headings in small caps (cmcsc10): a standalone line in such a font is a heading.
    PyMuPDF cannot embed a font under a chosen name, so the generated line is given the TeX font's name."""
    from pipeline.parse.pdf.cues import rule_cue
    from pipeline.parse.pdf.lines import page_lines
    from pipeline.parse.pdf.style import body_style

    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    for i in range(4):
        _box(page, 80 + 70 * i, 140 + 70 * i, _para(f"body{i}"), font="tiro")
    page.insert_text((72, 400), "Energy Accounting", fontsize=10, fontname="tiro")
    _box(page, 410, 470, _para("accounting"), font="tiro")
    with pymupdf.open(_save(doc, tmp_path)) as pdf:
        lines = page_lines(pdf[0], 1)
    style = body_style(lines)
    (head,) = [ln for ln in lines if ln.text == "Energy Accounting"]
    assert rule_cue(head, style) is None  # same font and size as the body: nothing marks it
    head.font = "ABCDEF+CMCSC10"
    assert rule_cue(head, style) == "caps"


def test_text_at_a_pages_own_larger_body_size_is_no_heading(tmp_path):
    """A sample chapter in 12.5 pt bound with an article in 10 pt: on its pages, a short 12.5 pt line (a list
    item) is body text, while the 16 pt chapter title and the article's headings stay headings."""
    doc = pymupdf.open()
    for _ in range(3):
        doc.new_page(width=W, height=H)
    chapter, *article = doc
    chapter.insert_text((72, 80), "The Bonny Blue Yonder", fontsize=16, fontname="helv")
    _box(chapter, 100, 330, _para("chapter", 5), size=12.5)
    for i, item in enumerate(["Invidunt ut labore et dolore", "Magna aliquyam erat sed diam"]):
        chapter.insert_text((110, 350 + 20 * i), item, fontsize=12.5, fontname="helv")
    _box(chapter, 400, 640, _para("closing", 5), size=12.5)
    for n, page in enumerate(article, start=1):
        y = 80 + 150 * n  # not at one height on every page (that would be a running header)
        _box(page, 60, y - 20, _para(f"article {n}", 2 * n))
        page.insert_text((72, y), f"{n} Results part {n}", fontsize=13, fontname="helv")
        _box(page, y + 15, 700, _para(f"results {n}", 9))
    titles = {s.title for s in parse_pdf(_save(doc, tmp_path), "c").at_level("section")}
    assert {"The Bonny Blue Yonder", "1 Results part 1", "2 Results part 2"} <= titles
    assert not titles & {"Invidunt ut labore et dolore", "Magna aliquyam erat sed diam"}


def _span(text, font="Times-Roman", size=10.0, flags=0):
    return {"text": text, "font": font, "size": size, "flags": flags}


def test_t1_ligature_glyphs_and_urw_mono_fonts_are_read():
    """A TeX font without a ToUnicode map hands out T1 ligatures as control characters ("\\x1crst" for
    "first"); URW's Courier clone is named "NimbusMonL", a monospace font (code, never a heading)."""
    from pipeline.parse.pdf.lines import _line

    ln = _line({"spans": [_span("4 Generalized \x1ductuation tests: the \x1crst di\x1berences")], "bbox": (0, 0, 9, 9)}, 1, 0)
    assert ln.text == "4 Generalized fluctuation tests: the first differences" and not ln.mono
    code = _line({"spans": [_span("Timing:", font="NimbusMonL-Regu-Extend_8")], "bbox": (0, 0, 9, 9)}, 1, 0)
    assert code.mono


def test_heading_wrapped_with_tight_leading_stays_one_heading(tmp_path):
    """groff/mom sets a two-line heading so tightly that the lines' boxes overlap a little: one title."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "Control Equals Chaos", fontsize=20, fontname="helv")
    _box(page, 100, 250, _para("opening", 4))
    page.insert_text((72, 290), "Schoenberg -", fontsize=14, fontname="helv")
    page.insert_text((72, 307), "The Origins of Serial Pitch", fontsize=14, fontname="helv")  # boxes overlap 2 pt
    _box(page, 315, 500, _para("serial", 4))
    titles = [s.title for s in parse_pdf(_save(doc, tmp_path), "t").at_level("section")]
    assert "Schoenberg - The Origins of Serial Pitch" in titles and "The Origins of Serial Pitch" not in titles

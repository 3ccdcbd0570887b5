"""The PDF parser on small PDFs built with PyMuPDF inside the test."""
import pymupdf
import pytest

from pipeline.parse.pdf import parse_pdf

W, H = 612, 792
LEFT, RIGHT = pymupdf.Rect(72, 0, 296, 0), pymupdf.Rect(316, 0, 540, 0)
HEADER = "Journal of Testing, Vol. 7"


def _text(n: int, word: str) -> str:
    return " ".join(f"{word} sentence number {i} talks about energy efficiency." for i in range(1, n + 1))


def _box(page, rect, y0, y1, text, size=10, font="helv"):
    assert page.insert_textbox(pymupdf.Rect(rect.x0, y0, rect.x1, y1), text, fontsize=size, fontname=font) >= 0


def _table(page, x0, y0, cells, cw=110, rh=20):
    for i in range(len(cells) + 1):
        page.draw_line((x0, y0 + i * rh), (x0 + len(cells[0]) * cw, y0 + i * rh))
    for j in range(len(cells[0]) + 1):
        page.draw_line((x0 + j * cw, y0), (x0 + j * cw, y0 + len(cells) * rh))
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            page.insert_text((x0 + j * cw + 4, y0 + i * rh + 14), cell, fontsize=9)


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    doc = pymupdf.open()
    for pno in range(3):
        page = doc.new_page(width=W, height=H)
        page.insert_text((72, 40), HEADER, fontsize=8)
        page.insert_text((300, 760), str(pno + 1), fontsize=9)
    p1, p2, p3 = doc
    p1.insert_text((72, 80), "Measuring Energy in Tests", fontsize=20, fontname="hebo")
    _box(p1, pymupdf.Rect(72, 0, 540, 0), 100, 150, "We study front matter before any heading. It has two sentences.")
    _box(p1, LEFT, 165, 190, "1 Introduction", font="hebo")
    _box(p1, LEFT, 190, 700, _text(14, "Alpha"))
    _box(p1, RIGHT, 165, 190, "2 Methods", font="hebo")
    _box(p1, RIGHT, 190, 700, _text(14, "Beta"))
    _box(p2, LEFT, 80, 300, _text(6, "Gamma"))  # the Methods section goes on over the page
    _box(p2, LEFT, 315, 340, "3 Results", font="hebo")
    _box(p2, LEFT, 340, 500, _text(4, "Delta"))
    _box(p2, RIGHT, 80, 500, _text(12, "Epsilon"))
    p3.insert_text((100, 90), "Table 1: Energy of the models we trained.", fontsize=9)
    _table(p3, 100, 100, [["Model", "Energy kWh", "CO2 kg"], ["BERT", "1507", "652"], ["GPT-2", "2048", "880.5"]])
    _box(p3, pymupdf.Rect(72, 0, 540, 0), 195, 222, "4 Conclusion", size=14)
    _box(p3, pymupdf.Rect(72, 0, 540, 0), 225, 400, _text(3, "Zeta"))
    path = tmp_path_factory.mktemp("pdf") / "paper.pdf"
    doc.save(path)
    return parse_pdf(path, "paper")


def test_sections_from_headings(paper):
    paper.check()
    sections = [paper.nodes[s] for s in paper.root.children]
    assert [s.title for s in sections] == ["Measuring Energy in Tests", "1 Introduction", "2 Methods", "3 Results", "4 Conclusion"]
    assert paper.title == "Measuring Energy in Tests"
    assert sections[2].pages == [1, 2]  # a section spans pages
    assert "front matter before any heading" in sections[0].text


def test_running_header_and_page_numbers_removed(paper):
    assert "Journal of Testing" not in paper.text
    assert not any(s.text.strip().isdigit() for s in paper.at_level("sentence"))


def test_columns_read_in_order(paper):
    text = paper.text
    order = [text.index(f"{w} sentence number 1 ") for w in ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta")]
    assert order == sorted(order)
    assert text.index("Alpha sentence number 14") < text.index("Beta sentence number 1 ")
    sentences = [s.text for s in paper.at_level("sentence")]
    assert "Beta sentence number 3 talks about energy efficiency." in sentences


def test_table_node(paper):
    tables = [p for p in paper.at_level("paragraph") if p.kind == "table"]
    assert len(tables) == 1
    table = tables[0]
    assert len(table.children) == 1 and table.pages == [3]
    assert table.text.startswith("Table 1: Energy of the models we trained.")
    assert "| BERT | 1507 | 652 |" in table.text and "| GPT-2 | 2048 | 880.5 |" in table.text
    assert paper.text.count("1507") == 1  # the cell text is not repeated as running text
    assert paper.text.count("Energy of the models") == 1
    x0, y0, x1, y1 = table.bbox
    assert x0 <= 100 and x1 >= 430 and y0 <= 90 and y1 >= 160


def test_paragraph_boxes_and_pages(paper):
    for p in paper.at_level("paragraph"):
        assert p.bbox and len(p.bbox) == 4 and p.pages
    for s in paper.at_level("sentence"):
        assert s.pages


def test_corrupt_pdf_raises(tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7\nthis is not really a pdf")
    with pytest.raises(ValueError, match="cannot parse PDF"):
        parse_pdf(bad, "bad")
    with pytest.raises(FileNotFoundError):
        parse_pdf(tmp_path / "missing.pdf", "missing")


def test_encrypted_pdf_raises(tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Secret text.")
    path = tmp_path / "locked.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    with pytest.raises(ValueError, match="cannot parse PDF: encrypted"):
        parse_pdf(path, "locked")

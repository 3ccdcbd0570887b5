"""Issue 46, case 9: no size or page cap on PDFs, and figure rendering at 144 dpi unbounded. A stranger's PDF
over a cap is a parse error naming the cap (the run goes on: an empty tree and a row of parse/errors.csv), the
config can raise the caps, and a figure is rendered at 144 dpi or coarser, never over MAX_FIGURE_PIXELS."""
from __future__ import annotations

import json

import pymupdf
import pytest
import yaml

from pipeline.cli import main
from pipeline.config import validate
from pipeline.datasets.paths import REPO
from pipeline.parse.pdf import parse_pdf
from pipeline.workflow.wattbot import parse_options


def pages_pdf(path, n: int, text: bool = True):
    doc = pymupdf.open()
    for i in range(n):
        page = doc.new_page()
        if text:
            page.insert_text((72, 200 + 7 * i), f"Run {i + 1} of the study used {20 + i} MWh of energy in total.")
    doc.save(path)
    return path


def tree(source, out, *args: str) -> dict:
    assert main(["tree", "--source", str(source), "--doc-id", "d", "--out", str(out), *args]) == 0
    return json.loads(out.read_text())


def test_a_pdf_of_more_pages_than_the_cap_is_not_parsed(tmp_path, capsys):
    pdf = pages_pdf(tmp_path / "long.pdf", 2001, text=False)  # the default cap: 2000
    tree(pdf, tmp_path / "long.json", "--headings", "rules")
    assert "2001 pages, over parsing.max_pdf_pages (2000); raise it to parse it" in capsys.readouterr().err
    short = pages_pdf(tmp_path / "short.pdf", 5)
    tree(short, tmp_path / "short.json", "--max-pdf-pages", "4")
    assert "5 pages, over parsing.max_pdf_pages (4)" in capsys.readouterr().err
    assert "used 24 MWh" in tree(short, tmp_path / "ok.json", "--max-pdf-pages", "5")["text"]


def test_a_pdf_over_the_size_cap_is_not_read(tmp_path, capsys):
    big = tmp_path / "big.pdf"
    with open(big, "wb") as fh:  # sparse: 201 MB on paper, nothing on disk
        fh.write(b"%PDF-1.7\n")
        fh.truncate(201_000_000)
    tree(big, tmp_path / "big.json")
    assert "201 MB, over parsing.max_pdf_mb (200); raise it to parse it" in capsys.readouterr().err


def test_the_caps_are_config_keys_passed_only_when_set():
    cfg = validate(yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text()))
    assert parse_options(cfg, "a.pdf") == "--headings combined"  # the default grid's command, as before
    cfg["parsing"].update(max_pdf_mb=500, max_pdf_pages=4000)
    assert parse_options(cfg, "a.pdf") == "--headings combined --max-pdf-mb 500 --max-pdf-pages 4000"
    assert parse_options(cfg, "a.txt") == ""


def test_a_figure_on_a_huge_page_is_rendered_within_the_pixel_bound(tmp_path):
    from pipeline.parse.pdf.pages import MAX_FIGURE_PIXELS

    doc = pymupdf.open()
    page = doc.new_page(width=3000, height=3000)  # 41.7 inches: 144 dpi would be 36 million pixels
    page.insert_text((100, 100), "A paragraph before the figure says 24 MWh were used.", fontsize=24)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 40), False)
    pix.set_rect(pix.irect, (200, 50, 50))
    page.insert_image(pymupdf.Rect(100, 200, 2900, 2800), pixmap=pix)
    page.insert_text((100, 2850), "Figure 1: Energy per model.", fontsize=24)
    doc.save(tmp_path / "huge.pdf")
    sizes = []

    def describe(png: bytes) -> str:
        image = pymupdf.Pixmap(png)
        sizes.append(image.width * image.height)
        return "a red block"

    parsed = parse_pdf(tmp_path / "huge.pdf", "huge", describe=describe)
    assert sizes and max(sizes) <= MAX_FIGURE_PIXELS
    assert "Figure description: a red block" in parsed.text


@pytest.mark.parametrize("size", [(200, 150), (500, 400)])
def test_an_ordinary_figure_is_rendered_at_144_dpi_as_before(tmp_path, size):
    from pipeline.parse.pdf.pages import figure_png

    doc = pymupdf.open()
    page = doc.new_page()
    rect = pymupdf.Rect(50, 50, 50 + size[0], 50 + size[1]) & page.rect
    image = pymupdf.Pixmap(figure_png(page, rect))
    assert (image.width, image.height) == (page.get_pixmap(clip=rect, dpi=144).width,
                                           page.get_pixmap(clip=rect, dpi=144).height)

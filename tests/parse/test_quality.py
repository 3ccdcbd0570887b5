"""The parse-quality measures, the `parse` inspection verb, and the real-PDF corpus."""
import csv
import json

import pymupdf
import pytest

from pipeline.cli import main
from pipeline.parse.corpus import CORPUS, fetch_corpus
from pipeline.parse.quality import match_headings, measure_pdf, text_recovered
from pipeline.parse.text import parse_text


def _outlined(path, with_toc=True):
    doc = pymupdf.open()
    doc.new_page()
    page = doc[0]
    y = 80
    for title, size in (("1 Introduction", 16), ("1.1 Scope", 13), ("2 Method", 16)):
        page.insert_text((72, y), title, fontsize=size, fontname="hebo")
        page.insert_textbox(pymupdf.Rect(72, y + 10, 540, y + 70),
                            f"Text under {title} talks about energy. It has two sentences.", fontsize=10)
        y += 100
    page.insert_text((72, 740), "Page footer 1", fontsize=8)
    if with_toc:
        doc.set_toc([[1, "1 Introduction", 1], [2, "1.1 Scope", 1], [1, "2 Method", 1], [1, "3 Missing heading", 1]])
    doc.save(path)
    return path


def test_measure_against_the_outline(tmp_path):
    q = measure_pdf(_outlined(tmp_path / "o.pdf"))
    assert (q.toc_entries, q.headings) == (4, 3)
    assert q.heading_precision == 1.0 and q.heading_recall == 0.75  # one outline entry has no heading on the page
    assert q.sentences_per_paragraph == 1.75 and q.tables == 0 and q.figures == 0  # 3 x 2 sentences + the footer line
    assert 0.9 < q.text_recovered <= 1.0


def test_heading_matching_is_one_to_one_and_number_blind():
    assert match_headings(["2 Method", "Method", "Results"], ["Method", "4 Results"]) == 2
    assert match_headings(["Creating document commands and environ- ments"], ["2 Creating document commands and environments"]) == 1
    assert match_headings(["Data"], ["Database design"]) == 0


def test_text_recovered_counts_missing_words():
    tree = parse_text("Energy use of training.", "d", "T")
    assert text_recovered(tree, "Energy use of training.") == 1.0
    assert text_recovered(tree, "Energy use of training. Running header") == pytest.approx(4 / 6)


def test_parse_quality_verb_and_bad_files(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    _outlined(folder / "good.pdf")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\nshort")
    out, errors = tmp_path / "reports" / "quality.csv", tmp_path / "errors.csv"
    assert main(["parse-quality", "--pdfs", str(folder), "--out", str(out), "--errors", str(errors)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["doc"] for r in rows] == ["good"] and rows[0]["heading_recall"] == "0.75"
    assert [r["doc"] for r in csv.DictReader(errors.open())] == ["broken"]
    assert main(["parse-quality", "--pdfs", str(tmp_path / "none"), "--out", str(out), "--errors", str(errors)]) == 2


def test_parse_verb_writes_inspectable_nodes(tmp_path):
    out = tmp_path / "tree.json"
    assert main(["parse", str(_outlined(tmp_path / "o.pdf")), "-o", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    nodes = {n["id"]: n for n in data["nodes"]}
    for n in nodes.values():
        assert {"id", "parent", "level", "kind", "title", "text", "page", "start", "end", "bbox"} <= set(n)
    scope = next(n for n in nodes.values() if n["title"] == "1.1 Scope")
    assert scope["level"] == "section" and scope["depth"] == 2 and nodes[scope["parent"]]["title"] == "1 Introduction"
    sentence = next(n for n in nodes.values() if n["level"] == "sentence" and n["text"].startswith("Text under 1.1"))
    assert sentence["kind"] == "text" and sentence["page"] == 1 and sentence["parent"].startswith(scope["id"])
    doc = nodes[data["doc_id"]]
    assert doc["text"][sentence["start"] : sentence["end"]] == sentence["text"]


@pytest.mark.slow
def test_real_corpus_downloads_and_parses(tmp_path):
    """Needs Debian's package registry: the TeX Live documentation PDFs, measured against their outlines."""
    one = {"texlive-latex-base-doc": ["latex/base/cyrguide.pdf"]}
    assert "latex/base/cyrguide.pdf" in CORPUS["texlive-latex-base-doc"]
    (pdf,) = fetch_corpus(tmp_path, one)
    q = measure_pdf(pdf)
    assert q.toc_entries >= 10 and q.heading_recall >= 0.9 and q.heading_precision >= 0.9 and q.text_recovered >= 0.95

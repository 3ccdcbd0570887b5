"""The parse-quality measures, the `parse` inspection verb, and the real-PDF corpus."""
import csv
import json

import pymupdf
import pytest

from pipeline.cli import main
from pipeline.parse.quality_pdfs import MANIFEST, fetch_pdfs, load_manifest, window_toc
from pipeline.parse.quality import match_pairs, measure_pdf, nesting_accuracy, reading_order, text_recovered
from pipeline.report.pages.parse_quality import best_method, document_table, render, source_table
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
    (q,) = measure_pdf(_outlined(tmp_path / "o.pdf"))
    assert (q.toc_entries, q.headings) == (4, 3)
    assert q.heading_precision == 1.0 and q.heading_recall == 0.75  # one outline entry has no heading on the page
    assert q.heading_f1 == round(2 * 0.75 / 1.75, 3) and q.nesting_accuracy == 1.0  # 1 -> 1.1 -> 2 nests as the outline
    assert q.sentences_per_paragraph == 1.75 and q.tables == 0 and q.figures == 0  # 3 x 2 sentences + the footer line
    assert 0.9 < q.text_recovered <= 1.0


def test_heading_matching_is_one_to_one_and_number_blind():
    # the second "Method" finds its outline entry taken; "4 Results" matches without its number
    assert match_pairs(["2 Method", "Method", "Results"], ["Method", "4 Results"]) == [(0, 0), (2, 1)]
    assert match_pairs(["Creating document commands and environ- ments"], ["2 Creating document commands and environments"]) == [(0, 0)]
    assert match_pairs(["Data"], ["Database design"]) == []


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
    assert rows[0]["method"] in ("rules", "layout", "combined") and rows[0]["f1_rules"] == "0.857"
    sources = list(csv.DictReader((out.parent / "quality_sources.csv").open()))
    assert [s["source"] for s in sources] == ["local", "all development sources (macro)"]
    # parse time differs on every run: only in the telemetry file, so two runs' tables are byte-identical
    tables = ("quality.csv", "quality_sources.csv", "quality_all.csv")
    assert not any("seconds_per_page" in (out.parent / t).read_text() for t in tables)
    timing = list(csv.DictReader((out.parent / "quality.telemetry.csv").open()))
    assert {(t["doc"], t["method"]) for t in timing} == {("good", m) for m in ("rules", "layout", "combined")}
    assert all(float(t["seconds_per_page"]) >= 0 for t in timing)
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


def test_nesting_accuracy_follows_the_outline_moves():
    assert nesting_accuracy([1, 2, 2, 1], [1, 2, 2, 1]) == 1.0
    assert nesting_accuracy([2, 3, 3], [1, 2, 2]) == 1.0  # an offset does not matter, the moves do
    assert nesting_accuracy([1, 1, 1], [1, 2, 1]) == 0.0  # flat where the outline nests
    assert nesting_accuracy([1], [1]) is None


def test_reading_order_against_the_content_stream():
    stream = "alpha beta gamma delta one two three four left column text here right column text here".split()
    assert reading_order(["Alpha beta gamma delta.", "Left column text here.", "Right column text here."], stream) == 1.0
    assert reading_order(["Right column text here.", "Left column text here."], stream) == 0.0


def test_window_outline_keeps_levels_and_renumbers_pages():
    toc = [[1, "A", 3], [2, "A.1", 5], [1, "B", 9], [2, "  ", 5]]
    assert window_toc(toc, 4, 8) == [[2, "A.1", 2]]


def _rows(doc, source, role, f1s):
    base = {"doc": doc, "source": source, "role": role, "pages": 2, "toc_entries": 4, "headings": 4,
            "heading_precision": 1.0, "heading_recall": 1.0, "nesting_accuracy": 1.0, "text_recovered": 1.0,
            "reading_order": None, "tables": 0, "figures": 0, "missed": "x", "extra": "y"}
    return [{**base, "method": m, "heading_f1": f} for m, f in zip(("rules", "layout", "combined"), f1s)]


def test_method_choice_is_macro_over_dev_sources_and_ignores_the_check():
    # one big source where layout wins on many documents cannot outvote two sources where rules win
    rows = [r for i in range(5) for r in _rows(f"big{i}", "big", "dev", (0.5, 0.9, 0.6))]
    rows += _rows("a", "small-a", "dev", (1.0, 0.2, 0.9)) + _rows("b", "small-b", "dev", (1.0, 0.2, 0.9))
    rows += _rows("c", "publishers", "check", (0.0, 1.0, 0.0))  # the reserved source never votes
    assert best_method(rows) == "rules"
    docs = document_table(rows, "rules")
    assert {d["doc"]: d["low_f1_reason"] != "" for d in docs}["c"] and not docs[0]["low_f1_reason"]
    table = source_table(docs)
    assert [t["source"] for t in table] == ["big", "small-a", "small-b", "all development sources (macro)", "publishers"]
    macro = table[3]
    assert macro["heading_f1"] == round((0.5 + 1.0 + 1.0) / 3, 3) and macro["f1_layout"] == round((0.9 + 0.2 + 0.2) / 3, 3)


def test_render_lists_sources_and_low_documents(tmp_path):
    from pipeline.report.pages.parse_quality import csv_text

    rows = _rows("a", "s", "dev", (0.2, 0.1, 0.1))
    docs = document_table(rows, "rules")
    (tmp_path / "parsing").mkdir()
    (tmp_path / "parsing" / "quality.csv").write_text(csv_text(docs))
    (tmp_path / "parsing" / "quality_sources.csv").write_text(csv_text(source_table(docs)))
    text = render(tmp_path)
    assert "| s | 1 |" in text and "**all development sources (macro)**" in text and "- a (s, F1 0.2)" in text
    assert text.split("\n")[2].endswith("| – |")  # no telemetry: no parse time
    timing = [{"source": "s", "role": "dev", "doc": "a", "method": m, "pages": 2, "seconds_per_page": t}
              for m, t in (("rules", 0.25), ("layout", 9.0))]
    (tmp_path / "parsing" / "quality.telemetry.csv").write_text(csv_text(timing))
    assert render(tmp_path).split("\n")[2].endswith("| 0.25 |")  # the kept method's time, from telemetry


def test_manifest_is_broad_and_keeps_the_check_apart():
    entries = load_manifest(MANIFEST)
    dev = [e for e in entries if e.role == "dev"]
    sources = {e.source for e in dev}
    assert len(dev) >= 40 and len(sources) >= 5
    assert all(e.package != "texlive-publishers-doc" for e in dev)
    assert {e.package for e in entries if e.role == "check"} == {"texlive-publishers-doc"}
    assert len({e.doc for e in entries}) == len(entries) and all(len(e.sha256) == 64 for e in entries)
    assert {e.source for e in dev if e.sample} == sources  # the default DAG samples every source


@pytest.mark.slow
def test_real_corpus_downloads_and_parses(tmp_path):
    """Needs Debian's package registry: one small manual of the corpus, fetched, cut and measured against its outline."""
    (entry,) = [e for e in load_manifest(MANIFEST) if e.doc == "cyrguide"]
    (pdf,) = fetch_pdfs(tmp_path, [entry])
    (q,) = measure_pdf(pdf)
    assert q.toc_entries >= 10 and q.heading_recall >= 0.9 and q.heading_precision >= 0.9 and q.text_recovered >= 0.95


def test_report_page_section_draws_the_source_figure(tmp_path):
    from pipeline.report.pages.parse_quality import csv_text
    from pipeline.report.pages.figures import parse_quality_section

    docs = document_table(_rows("a", "s", "dev", (0.9, 0.5, 0.95)) + _rows("c", "publishers", "check", (0.7, 0.6, 0.6)), "combined")
    path = tmp_path / "quality_sources.csv"
    path.write_text(csv_text(source_table(docs)))
    entries = {}
    assert parse_quality_section("", tmp_path, entries) == [] and entries == {}  # not measured: no section
    (section,) = parse_quality_section(str(path), tmp_path, entries)
    assert section.stems == ["parse-quality"] and (tmp_path / "parse-quality.png").stat().st_size > 1000
    assert entries["parse-quality"].inputs == [str(path)] and "publishers" in section.table and "0.95" in section.table

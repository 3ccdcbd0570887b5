"""Bad PDFs get a one-line reason, the other documents of a run go on, strict mode fails the run."""
import csv
import json
import random

import pymupdf
import pytest

from pipeline.cli import main
from pipeline.parse.errors import ParseError
from pipeline.parse.pdf import parse_pdf
from pipeline.tree import DocTree


def _good(path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "A readable page about energy use.")
    doc.save(path)
    return path


def _encrypted(path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Secret text.")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    return path


def _corrupt(path):
    noise = random.Random(0)  # a PDF header and trailer around bytes that are no PDF objects
    path.write_bytes(b"%PDF-1.7\n" + bytes(noise.randrange(256) for _ in range(2000)) + b"\n%%EOF\n")
    return path


def _truncated(path):
    raw = _good(path).read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    return path


def _zero_pages(path):
    # PyMuPDF refuses to save a page-less document, so this one is written by hand.
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 3\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    path.write_bytes(bytes(out))
    return path


def _image_only(path):
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 100, 100), False)
    pix.set_rect(pix.irect, (240, 240, 240))
    page.insert_image(page.rect, pixmap=pix)  # a scanned page: pixels, no text layer
    doc.save(path)
    return path


def _empty(path):
    path.write_bytes(b"")  # a failed download or copy
    return path


def _not_pdf(path):
    path.write_text("just some text", encoding="utf-8")
    return path


CASES = {
    "encrypted": (_encrypted, "encrypted"),
    "corrupt": (_corrupt, "corrupt"),
    "truncated": (_truncated, "truncated"),
    "zero": (_zero_pages, "no pages"),
    "scanned": (_image_only, "no text layer (image-only"),
    "notpdf": (_not_pdf, "not a PDF"),
    "empty": (_empty, "empty file (0 bytes)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_pdf_gets_a_one_line_reason(tmp_path, name):
    make, reason = CASES[name]
    path = make(tmp_path / f"{name}.pdf")
    with pytest.raises(ParseError) as info:
        parse_pdf(path, name)
    assert info.value.reason.startswith(reason)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_missing_file_is_not_a_parse_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        parse_pdf(tmp_path / "missing.pdf", "missing")


def test_run_goes_on_and_errors_csv_lists_each_failure(tmp_path, capsys):
    sources = {"good": _good(tmp_path / "good.pdf")}
    sources.update({name: make(tmp_path / f"{name}.pdf") for name, (make, _) in CASES.items()})
    trees = []
    for doc_id, src in sorted(sources.items()):
        out = tmp_path / "trees" / f"{doc_id}.json"
        assert main(["tree", "--source", str(src), "--doc-id", doc_id, "--out", str(out)]) == 0
        trees.append(str(out))
    good = DocTree.load(tmp_path / "trees" / "good.json")
    assert "readable page about energy" in good.text
    failed = DocTree.load(tmp_path / "trees" / "scanned.json")
    assert failed.text == "" and list(failed.nodes) == ["scanned"] and failed.metadata["error"].startswith("no text layer")

    errors = tmp_path / "parse" / "errors.csv"
    assert main(["parse-errors", "--trees", ",".join(trees), "--out", str(errors)]) == 0
    rows = list(csv.DictReader(errors.open(encoding="utf-8")))
    assert [r["doc"] for r in rows] == sorted(CASES)
    assert {r["doc"]: r["reason"].split(" ")[0] for r in rows}["truncated"] == "truncated"
    assert len(errors.read_text(encoding="utf-8").splitlines()) == len(CASES) + 1  # one line per failure

    check = tmp_path / "parse" / "check.json"
    assert main(["parse-check", "--errors", str(errors), "--out", str(check)]) == 0
    assert json.loads(check.read_text())["failed"] == sorted(CASES)
    assert "parse failed: encrypted" in capsys.readouterr().err
    strict = tmp_path / "parse" / "strict.json"
    assert main(["parse-check", "--errors", str(errors), "--out", str(strict), "--strict"]) == 2
    assert not strict.exists()
    assert "parsing.strict is set" in capsys.readouterr().err


# A user's corpus may hold .txt/.md documents: an empty or non-UTF-8 one is a parse error as a bad PDF is
# (an empty tree, a row of errors.csv, strict fails), not a failed job nor an empty tree nobody hears of.
TEXT_CASES = {
    "blank.md": (b"\n  \n", "no text (only white space)"),
    "empty.txt": (b"", "empty file (0 bytes)"),
    "latin1.txt": (b"Caf\xe9 energy use.\n", "not UTF-8 text (byte 0xe9 at offset 3)"),
}


def test_bad_text_documents_are_parse_errors_and_the_run_goes_on(tmp_path, capsys):
    trees = []
    for name, (data, _) in sorted(TEXT_CASES.items()):
        (tmp_path / name).write_bytes(data)
        out = tmp_path / "trees" / f"{name.split('.')[0]}.json"
        assert main(["tree", "--source", str(tmp_path / name), "--doc-id", name.split(".")[0], "--out", str(out)]) == 0
        trees.append(str(out))
    assert f"warning: {tmp_path / 'latin1.txt'}: cannot parse document: not UTF-8 text" in capsys.readouterr().err
    errors = tmp_path / "errors.csv"
    assert main(["parse-errors", "--trees", ",".join(trees), "--out", str(errors)]) == 0
    rows = list(csv.DictReader(errors.open(encoding="utf-8")))
    assert {(r["source"], r["reason"]) for r in rows} == {(n, reason) for n, (_, reason) in TEXT_CASES.items()}
    assert main(["parse-check", "--errors", str(errors), "--out", str(tmp_path / "check.json"), "--strict"]) == 2


def test_failed_tree_goes_through_indexing(tmp_path):
    """Downstream stages take the empty stand-in tree unchanged: it just contributes nothing."""
    from pipeline.index_structures.bm25 import build_bm25_index
    from pipeline.index_structures.hier import build_tree_index
    from pipeline.index_structures.store import IndexReader, IndexWriter
    from pipeline.parse.errors import failed_tree
    from pipeline.parse.text import parse_text

    trees = [failed_tree("bad", "bad.pdf", "encrypted (needs a password)"), parse_text("One sentence here.", "ok", "Ok")]
    w = IndexWriter(tmp_path / "bm25.sqlite", None, {"model_id": "bm25"})
    assert build_bm25_index(trees, ["sentence"], w) == {"sentence": 1}
    w.close()
    w = IndexWriter(tmp_path / "hier.sqlite", 2, {"model_id": "toy"})
    import numpy as np

    counts = build_tree_index(trees, lambda texts: np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2),
                              lambda texts: [len(t.split()) for t in texts], w)
    w.close()
    assert counts["sentence"] == 1 and counts["document"] == 1
    assert IndexReader(tmp_path / "hier.sqlite").node("ok:s1:p1:t1").text == "One sentence here."

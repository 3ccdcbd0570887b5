"""A quality PDF's page window is cut the same way every time: byte-identical files, so the parsing
report's input hashes do not move between two fresh downloads (PyMuPDF gives each save a new file ID unless
told to keep the source's)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pymupdf

from pipeline.parse.quality_pdfs import Entry, write_window


def _source(path: Path) -> Path:
    doc = pymupdf.open()
    for n in range(4):
        doc.new_page().insert_text((72, 72), f"Section {n + 1}\nBody text of page {n + 1}.")
    doc.set_toc([[1, f"Section {n + 1}", n + 1] for n in range(4)])
    doc.save(path)
    return path


def test_a_window_cut_twice_is_byte_identical(tmp_path):
    src = _source(tmp_path / "full.pdf")
    entry = Entry(
        doc="win",
        source="test",
        role="dev",
        package="p",
        version="1",
        file="full.pdf",
        sha256="",
        first_page=2,
        last_page=3,
        sample=True,
    )
    digests = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        target = write_window(src, entry, out)
        digests.append(hashlib.sha256(target.read_bytes()).hexdigest())
        with pymupdf.open(target) as doc:
            assert doc.page_count == 2 and "page 2" in doc[0].get_text()
        assert (out / "win.toc.json").read_text() == '[[1, "Section 2", 1], [1, "Section 3", 2]]\n'
    assert digests[0] == digests[1]

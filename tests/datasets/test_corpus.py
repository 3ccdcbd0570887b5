"""A user's own corpus: documents found by file name, the checks, and the clean WattBot-shaped copies."""
import pandas as pd
import pymupdf
import pytest

from pipeline.datasets.corpus import CorpusSource, check_corpus, discover_documents, ingest_corpus
from pipeline.parse.titles import document_title
from pipeline.datasets.wattbot import InputError


def make_corpus(root):
    """Three documents (a titled PDF, a Markdown file with a heading, a text file), two questions, labels."""
    docs = root / "docs"
    docs.mkdir()
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "Training used 120 MWh of electricity.")
    pdf.set_metadata({"title": "Energy  of\nTraining"})
    pdf.save(docs / "energy2024.pdf")
    (docs / "notes.md").write_text("Some preamble\n\n# Cooling Notes\n\nWater use was 3 liters.\n", encoding="utf-8")
    (docs / "plain_doc.txt").write_text("Plain text about carbon.\n", encoding="utf-8")
    (root / "questions.csv").write_text("id,question\nq1,How much energy?\nq2,How much water?\n", encoding="utf-8")
    (root / "solutions.csv").write_text(
        "id,answer_value,answer_unit,ref_id\nq1,120,MWh,['energy2024']\nq2,3,liters,notes\n", encoding="utf-8"
    )
    return CorpusSource("mine", docs, root / "questions.csv", solutions=root / "solutions.csv")


def test_documents_are_found_by_file_name(tmp_path):
    src = make_corpus(tmp_path)
    assert list(discover_documents(src.pdf_dir)) == ["energy2024", "notes", "plain_doc"]


def test_check_counts_what_it_read(tmp_path):
    src = make_corpus(tmp_path)
    (src.pdf_dir / "refs.bib").write_text("@article{x}\n", encoding="utf-8")
    counts = check_corpus(src)
    assert counts == {"documents": 3, "documents_pdf": 1, "documents_txt": 1, "documents_md": 1,
                      "ignored_files": 1, "questions": 2, "solutions": 2, "metadata_rows": 0}


def test_ingest_writes_wattbot_shaped_copies(tmp_path):
    src = make_corpus(tmp_path)
    counts = ingest_corpus(src, tmp_path / "out", title_of=document_title)
    assert counts["documents"] == 3 and counts["solutions"] == 2
    meta = pd.read_csv(tmp_path / "out" / "metadata.csv", dtype=str, keep_default_na=False)
    assert list(meta.columns) == ["id", "type", "title", "year", "citation", "url"]
    assert dict(zip(meta["id"], meta["title"])) == {"energy2024": "Energy of Training", "notes": "Cooling Notes",
                                                    "plain_doc": "plain_doc"}
    assert set(meta["url"]) == {""}
    questions = pd.read_csv(tmp_path / "out" / "questions.csv", dtype=str, keep_default_na=False)
    assert list(questions.columns) == ["id", "question", "answer_unit"] and set(questions["answer_unit"]) == {""}
    assert (tmp_path / "out" / "solutions.csv").read_text(encoding="utf-8") == src.solutions.read_text(encoding="utf-8")
    assert (tmp_path / "out" / "metadata.csv.manifest.json").exists()


def test_given_metadata_wins_over_the_file_title(tmp_path):
    src = make_corpus(tmp_path)
    (tmp_path / "meta.csv").write_text(
        "\ufeffid,type,title,year,citation,url,note\nnotes,report,Given Title,2024,Me 2024,http://x,kept\n",
        encoding="utf-8",
    )
    src = CorpusSource("mine", src.pdf_dir, src.questions, metadata=tmp_path / "meta.csv")
    ingest_corpus(src, tmp_path / "out", title_of=document_title)
    meta = pd.read_csv(tmp_path / "out" / "metadata.csv", dtype=str, keep_default_na=False).set_index("id")
    assert meta.loc["notes", "title"] == "Given Title" and meta.loc["notes", "note"] == "kept"
    assert meta.loc["energy2024", "title"] == "Energy of Training" and meta.loc["energy2024", "note"] == ""
    assert not (tmp_path / "out" / "solutions.csv").exists()


def test_a_broken_pdf_is_ingested_with_its_file_name_as_title(tmp_path):
    """Parse failures are the tree verb's to report; ingest must not stop on them."""
    src = make_corpus(tmp_path)
    (src.pdf_dir / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really\n")
    ingest_corpus(src, tmp_path / "out", title_of=document_title)
    meta = pd.read_csv(tmp_path / "out" / "metadata.csv", dtype=str, keep_default_na=False).set_index("id")
    assert meta.loc["broken", "title"] == "broken"


def test_check_stops_at_the_first_problem(tmp_path):
    src = make_corpus(tmp_path)
    (src.pdf_dir / "notes.txt").write_text("A second notes document.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"notes\.txt: maps to the same doc id as notes\.md"):
        check_corpus(src)

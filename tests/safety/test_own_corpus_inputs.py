"""Issue 46, case 5: a stranger's folder of documents. A symbolic link (``notes.txt -> ../../outside/creds``)
was ingested, so its text would be indexed and sent in hosted prompts; NUL bytes were checked in the first
4 KiB of CSVs only, and .txt/.md documents not at all. Played through `python -m pipeline corpus-ingest` and
the `tree` verb, as the DAG runs them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "rvignettes"


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURE / "pdfs", docs)
    shutil.copy(FIXTURE / "questions.csv", tmp_path / "questions.csv")
    return tmp_path


def ingest(corpus: Path, questions: str = "questions.csv") -> int:
    return main(["corpus-ingest", "--name", "mine", "--pdf-dir", str(corpus / "docs"), "--questions",
                 str(corpus / questions), "--out-dir", str(corpus / "out")])


@pytest.mark.parametrize("target", ["outside/creds", "outside"])
def test_a_symbolic_link_in_the_folder_is_refused(corpus, capsys, target):
    (corpus / "outside").mkdir()
    (corpus / "outside" / "creds").write_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n")
    (corpus / "docs" / "notes.txt").symlink_to(corpus / target)
    assert ingest(corpus) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "notes.txt: a symbolic link" in err and err.count("\n") == 0
    assert not (corpus / "out" / "metadata.csv").exists()


def test_a_text_document_with_nul_bytes_is_not_parsed(corpus, tmp_path, capsys):
    doc = corpus / "docs" / "binary.txt"
    doc.write_bytes(b"Looks like text at first.\n" + b"\x00\x01\x02ELF" * 50)
    out = tmp_path / "binary.json"
    assert main(["tree", "--source", str(doc), "--doc-id", "binary", "--out", str(out)]) == 0  # the run goes on
    assert "not text (a NUL byte at offset 26)" in capsys.readouterr().err
    tree = json.loads(out.read_text())
    assert "ELF" not in json.dumps(tree)  # nothing of it is indexed or sent


def test_a_csv_with_a_nul_byte_past_the_first_4_kib_is_refused(corpus, capsys):
    text = (corpus / "questions.csv").read_text()
    padded = text + "".join(f"q{100 + i},Filler question number {i} about nothing in particular?\n" for i in range(80))
    assert len(padded.encode()) > 4096
    (corpus / "nul.csv").write_bytes(padded.encode() + b"q999,A question\x00 with a NUL?\n")
    assert ingest(corpus, "nul.csv") != 0
    err = capsys.readouterr().err.strip()
    assert "nul.csv: row " in err and "a NUL byte" in err and err.count("\n") == 0

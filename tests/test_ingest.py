"""WattBot inputs: the latin-1 metadata, questions, and one-line errors for bad files."""
import pytest

from pipeline.datasets.ingest import ingest
from pipeline.datasets.wattbot import InputError, format_ref_ids, load_metadata, load_questions, parse_ref_ids


def test_metadata_is_cp1252(wattbot_dir):
    meta = load_metadata(wattbot_dir / "metadata.csv")
    assert len(meta) == 32
    assert any(t.startswith("Mélange") for t in meta["title"])


def test_questions_and_labels(wattbot_dir):
    docs = set(load_metadata(wattbot_dir / "metadata.csv")["id"])
    train = load_questions(wattbot_dir / "train_QA.csv", known_docs=docs)
    test = load_questions(wattbot_dir / "test_Q.csv")
    assert (len(train), len(test)) == (41, 282)
    assert train["id"].iloc[0] == "q003"


def test_ingest_writes_clean_utf8(wattbot_dir, tmp_path):
    counts = ingest(wattbot_dir / "metadata.csv", {"train": wattbot_dir / "train_QA.csv"},
                    tmp_path / "metadata.csv", {"train": tmp_path / "train.csv"})
    assert counts == {"documents": 32, "train": 41}
    assert "Mélange" in (tmp_path / "metadata.csv").read_text(encoding="utf-8")
    assert (tmp_path / "train.csv.manifest.json").exists()


@pytest.mark.parametrize("content, message", [
    ("id,question\nq1,What?\n", "missing column(s) answer_unit"),
    ("id,question,answer_unit\nq1,What?,MWh\nq1,Again?,MWh\n", "row 3, field id: duplicate id 'q1'"),
    ("id,question,answer_unit\n,What?,MWh\n", "row 2, field id: empty id"),
    ("id,question,answer_unit,ref_id\nq1,What?,MWh,['nobody2020']\n", "row 2, field ref_id: unknown document id 'nobody2020'"),
    ('id,question,answer_unit\nq1,"What?,MWh\n', "not a readable CSV"),
])
def test_bad_question_files(tmp_path, content, message):
    path = tmp_path / "q.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_questions(path, known_docs={"patterson2021"})
    assert message in str(err.value) and str(path) in str(err.value)


def test_ref_id_formats():
    assert parse_ref_ids("['wu2021b','patterson2021']") == ["wu2021b", "patterson2021"]
    assert parse_ref_ids("luccioni2025b") == ["luccioni2025b"]
    assert parse_ref_ids("is_blank") == []
    assert format_ref_ids(["a", "b"]) == "['a','b']" and format_ref_ids([]) == "is_blank"

"""A user's own documents, end to end (issue 25 item 3), on a small real corpus.

tests/fixtures/corpus/rvignettes/ holds three real journal-style PDFs (R package vignettes shipped by
Debian) and 14 hand-written labelled questions (SOURCE.md says where each file comes from). The fast
tests check the fixture itself: its files are the recorded ones and every label is read in its
document. The slow test runs the documented user path (docs/own-corpus.md): a copy of the folder, a
my.yaml that extends config.yaml with a ``corpora:`` entry, Snakemake asked for only that corpus's
report files, with no WattBot data on the machine.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.datasets.paths import REPO
from pipeline.score.wattbot import SUBMISSION_COLS, is_blank, parse_refs, score_files, score_frames

FIXTURE = REPO / "tests" / "fixtures" / "corpus" / "rvignettes"
NAME = "rvignettes"  # the corpus's name in my.yaml: reports/<NAME>/, results/<NAME>/
VARIANTS = ["convex-extractive", "bm25-extractive"]  # hybrid tree retrieval and BM25 alone, no LLM
KAGGLE_COLUMNS = ["id", "question", "answer", "answer_value", "answer_unit", "ref_id", "ref_url",
                  "supporting_materials", "explanation"]
# Terms an unanswerable question asks about that no document mentions.
ABSENT = {"q13": ["kWh", "energy consumption"], "q14": ["Google Scholar", "citations"]}


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(FIXTURE / name, dtype=str, keep_default_na=False)


def document_text(doc_id: str) -> str:
    """The document's PyMuPDF text as the labels were read: NFKC (ligatures), line-end hyphens joined,
    whitespace collapsed."""
    import pymupdf

    with pymupdf.open(FIXTURE / "pdfs" / f"{doc_id}.pdf") as doc:
        text = unicodedata.normalize("NFKC", "".join(page.get_text() for page in doc))
    return " ".join(re.sub(r"(?<=[a-z])-\n(?=[a-z])", "", text).split())


def squeeze(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


# ---------------------------------------------------------------- the fixture itself (fast)


def test_the_pdfs_are_the_recorded_files():
    """Each PDF's sha256 and size are the ones SOURCE.md records, and no other document is in the folder."""
    rows = re.findall(r"^\| `([\w.-]+)` \| `pdfs/([\w.-]+)` \| (\d+) \|.*`([0-9a-f]{64})` \|$",
                      (FIXTURE / "SOURCE.md").read_text(), re.M)
    assert len(rows) == 3
    assert {f for _, f, _, _ in rows} == {p.name for p in (FIXTURE / "pdfs").iterdir()}
    for doc_id, file, size, sha in rows:
        data = (FIXTURE / "pdfs" / file).read_bytes()
        assert Path(file).stem == doc_id and len(data) == int(size)
        assert hashlib.sha256(data).hexdigest() == sha, file
    assert sum(p.stat().st_size for p in (FIXTURE / "pdfs").iterdir()) < 1_500_000


def test_questions_and_labels_agree():
    questions, solutions = read("questions.csv"), read("solutions.csv")
    assert list(questions.columns) == ["id", "question", "answer_unit"]
    assert list(solutions.columns) == KAGGLE_COLUMNS
    assert list(solutions["id"]) == list(questions["id"])
    assert list(solutions["question"]) == list(questions["question"])
    assert list(solutions["answer_unit"]) == list(questions["answer_unit"])
    blank = solutions[solutions["answer_value"].map(is_blank)]
    assert list(blank["id"]) == list(ABSENT) and (blank["ref_id"] == "is_blank").all()
    cited = {d for r in solutions["ref_id"] if not is_blank(r) for d in parse_refs(r)}
    assert cited == {p.stem for p in (FIXTURE / "pdfs").iterdir()}  # every document has questions
    gold = pd.read_csv(FIXTURE / "solutions.csv")
    assert score_frames(gold, gold, strict=True)["all"]["score"] == pytest.approx(1.0)


def test_every_answer_is_read_in_its_document():
    """The supporting quote occurs in the cited document's text and states the answer value; the
    unanswerable questions' terms occur in no document."""
    texts = {p.stem: document_text(p.stem) for p in (FIXTURE / "pdfs").iterdir()}
    for row in read("solutions.csv").itertuples():
        if is_blank(row.answer_value):
            for term in ABSENT[row.id]:
                assert not any(term.lower() in t.lower() for t in texts.values()), (row.id, term)
            continue
        (doc,) = parse_refs(row.ref_id)
        quote = squeeze(row.supporting_materials)
        assert quote in texts[doc], row.id
        assert row.answer_value in quote, row.id


# ---------------------------------------------------------------- the user's path, end to end (slow)


def blank_submission(questions: pd.DataFrame) -> pd.DataFrame:
    """Abstain on every question, as WattBot marks an abstention."""
    return pd.DataFrame({"id": questions["id"], "answer_value": "is_blank", "answer_unit": questions["answer_unit"],
                         "ref_id": "is_blank", "ref_url": "is_blank", "supporting_materials": "is_blank",
                         "explanation": "is_blank"})


def my_yaml(root: Path, corpus: Path) -> Path:
    """docs/own-corpus.md's my.yaml: config.yaml plus one corpus. The packaged int8 encoder file (as
    tests/tiny.yaml) instead of building the int8-quantised one: the same MiniLM, less time."""
    cfg = {
        "extends": str(REPO / "config.yaml"),
        "embedding": {"backend": "onnx-int8"},
        "corpora": {NAME: {"pdf_dir": str(corpus / "pdfs"), "questions": str(corpus / "questions.csv"),
                           "solutions": str(corpus / "solutions.csv"), "variants": VARIANTS}},
    }
    path = root / "my.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    """The fixture corpus copied to a scratch folder and run as a user would, asking for its two report
    files only, with data_root pointing at an empty folder (no WattBot data, no retrieval suite)."""
    from dag_runner import environment

    root = tmp_path_factory.mktemp("own-corpus")
    corpus = root / NAME
    shutil.copytree(FIXTURE, corpus)
    (root / "no-data").mkdir()
    work = root / "work"
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(work),
           "--configfile", str(my_yaml(root, corpus)), "--config", f"data_root={root / 'no-data'}", "--cores", "2",
           f"reports/{NAME}/submission.csv", f"reports/{NAME}/leaderboard.csv"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=environment(), timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    # The user is told what is left out, and why.
    assert f"note: config key 'wattbot.dir': folder {root / 'no-data'}/wattbot not found" in done.stdout + done.stderr
    return work, corpus, cmd


@pytest.mark.slow
def test_own_corpus_runs_to_a_submission_and_a_leaderboard(corpus_run):
    work, corpus, _ = corpus_run
    questions = read("questions.csv")
    sub = pd.read_csv(work / f"reports/{NAME}/submission.csv", dtype=str, keep_default_na=False)
    assert list(sub.columns) == KAGGLE_COLUMNS and set(SUBMISSION_COLS) <= set(sub.columns)
    assert list(sub["id"]) == list(questions["id"])

    board = pd.read_csv(work / f"reports/{NAME}/leaderboard.csv").set_index("variant")
    assert sorted(board.index) == sorted(VARIANTS)
    assert board["score"].notna().all() and (board["n"] == len(questions)).all()
    assert (board["score_lo"] <= board["score"]).all() and (board["score"] <= board["score_hi"]).all()

    solutions = corpus / "solutions.csv"
    blank = score_frames(pd.read_csv(solutions), blank_submission(questions), strict=True)["all"]["score"]
    good = score_files(solutions, work / f"reports/{NAME}/submission.csv", strict=True)["all"]["score"]
    assert good == pytest.approx(board.loc["convex-extractive", "score"], abs=1e-4)  # the default variant's
    assert good > blank + 0.2, (good, blank)
    assert pd.read_csv(work / f"results/{NAME}/parse/errors.csv").empty  # three real PDFs, all parsed


@pytest.mark.slow
def test_only_the_corpus_ran(corpus_run):
    """No WattBot, retrieval-suite or SproutRAG-training job: results/ and reports/ hold the corpus only."""
    work, _, cmd = corpus_run
    ran = {p.name for sub in ("results", "reports") for p in (work / sub).iterdir() if p.is_dir()}
    assert ran == {NAME}, ran  # no results/wattbot, results/sprout, suite datasets, reports/retrieval
    # Without the WattBot data, the whole grid (rule all) is the corpus: nothing is left to do.
    from dag_runner import environment

    targets = [a for a in cmd if a.startswith("reports/")]
    again = subprocess.run([a for a in cmd if a not in targets] + ["-n"], capture_output=True, text=True,
                           env=environment(), timeout=600)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.data
def test_with_the_wattbot_data_there_the_two_files_still_plan_only_the_corpus(tmp_path):
    """The documented command on a machine that has the shared data: asking for the corpus's two files
    plans the corpus's jobs only (and the default encoder's build), no WattBot, suite or SproutRAG job."""
    from dag_runner import planned_jobs, snakemake

    corpus = tmp_path / NAME
    shutil.copytree(FIXTURE, corpus)
    cfg = yaml.safe_load(my_yaml(tmp_path, corpus).read_text())
    del cfg["embedding"]  # config.yaml's own encoder, as the user's my.yaml has it
    config = tmp_path / "my.yaml"
    config.write_text(yaml.safe_dump(cfg))
    plan = snakemake(tmp_path / "work", "-n", f"reports/{NAME}/submission.csv", f"reports/{NAME}/leaderboard.csv",
                     configfile=config)
    assert plan.returncode == 0, plan.stderr[-3000:]
    jobs = planned_jobs(plan.stdout + plan.stderr)
    assert jobs == {"corpus_ingest_labelled": 1, "encoder_qint8": 1, "tree": 3, "doc_sizes": 1, "index": 2, "parse_errors": 1,
                    "parse_check": 1, "retrieve": 2, "answer": 2, "evaluate": 2, "corpus_report": 1}, jobs
    assert "results/wattbot" not in plan.stdout and "results/sprout" not in plan.stdout

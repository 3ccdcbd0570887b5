"""Every bad input we tried, through the command a user runs: one clear line naming the file (and row
and field where there is one), a non-zero exit, no traceback. docs/guarantees.md ("Bad input") lists each case by
its id; a case missing there fails the last test."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dag_runner import command, environment
from pipeline.datasets.paths import REPO, data_root

# A hand-written WattBot in miniature (metadata + three train questions): the bad-file cases need a good
# partner file, not the shared data.
W = Path(__file__).parent / "fixtures" / "data" / "wattbot"
LABELS = Path(__file__).parent / "fixtures" / "data" / "labels"  # real test_solutions_public.csv rows, one thing broken


def write(name: str, data: bytes | str):
    def make(tmp: Path) -> Path:
        path = tmp / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        return path
    return make


def submission_without(column: str):
    def make(tmp: Path) -> Path:
        path = tmp / "submission.csv"
        pd.read_csv(W / "train_QA.csv").drop(columns=[column]).to_csv(path, index=False)
        return path
    return make


def ingest(path: Path, tmp: Path) -> list[str]:
    return ["ingest", "--metadata", str(W / "metadata.csv"), "--metadata-out", str(tmp / "m.csv"),
            "--split", f"train={path}", "--out-split", f"train={tmp / 'out.csv'}"]


def ingest_metadata(path: Path, tmp: Path) -> list[str]:
    return ["ingest", "--metadata", str(path), "--metadata-out", str(tmp / "m.csv")]


def score(path: Path, tmp: Path) -> list[str]:
    return ["score", "--solution", str(W / "train_QA.csv"), "--submission", str(path)]


def parse(path: Path, tmp: Path) -> list[str]:
    """One PDF on its own is an error; inside the DAG a bad PDF becomes an empty tree and a row of
    results/<dataset>/parse/errors.csv instead (tests/parse cover that path)."""
    return ["parse", str(path), "-o", str(tmp / "x.json")]


# A user's own corpus in miniature (two documents, two labelled questions); each corpus case changes one
# file of it ({relative path: new content, None: removed}) and names the file the one line must name.
GOOD_CORPUS = {
    "docs/energy2024.txt": "Training the model used 120 MWh of electricity.\n",
    "docs/water2023.md": "# Water use\n\nCooling took 3 liters per query.\n",
    "questions.csv": "id,question\nq1,How much energy did training use?\nq2,How much water per query?\n",
    "solutions.csv": "id,answer_value,answer_unit,ref_id\nq1,120,MWh,['energy2024']\nq2,3,liters,['water2023']\n",
}


def corpus_with(named: str, changes: dict[str, str | bytes | None]):
    def make(tmp: Path) -> Path:
        (tmp / "docs").mkdir()
        for rel, data in {**GOOD_CORPUS, **changes}.items():
            path = tmp / rel
            if data is None:
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        return tmp / named
    return make


def corpus(path: Path, tmp: Path) -> list[str]:
    optional = [a for name in ("solutions", "metadata") if (tmp / f"{name}.csv").exists()
                for a in (f"--{name}", str(tmp / f"{name}.csv"))]
    return ["corpus-ingest", "--name", "mine", "--pdf-dir", str(tmp / "docs"), "--questions",
            str(tmp / "questions.csv"), "--out-dir", str(tmp / "out"), *optional]


def corpus_link(named: str, target: str):
    """The good corpus with ``named`` a symbolic link to ``target`` (relative to tmp), which holds a secret."""
    def make(tmp: Path) -> Path:
        corpus_with("docs", {})(tmp)
        (tmp / target).parent.mkdir(parents=True, exist_ok=True)
        (tmp / target).write_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n")
        (tmp / named).symlink_to(tmp / target)
        return tmp / named
    return make


def kept_run(record: dict):
    """runs/r1 (a kept run) and runs/r2, whose run.json is ``record`` (as a colleague may send it)."""
    def make(tmp: Path) -> Path:
        for name, rec in (("r1", {"id": "r1", "scored": []}), ("r2", record)):
            (tmp / "runs" / name).mkdir(parents=True)
            (tmp / "runs" / name / "run.json").write_text(json.dumps(rec))
        return tmp / "runs" / "r2" / "run.json"
    return make


def compare(path: Path, tmp: Path) -> list[str]:
    return ["compare", "r1", "r2", "--runs", str(tmp / "runs")]


META = "id,type,title,year,citation,url\n"
LONG_QUESTIONS = "id,question\n" + "".join(f"q{i},How much energy did training run {i} use?\n" for i in range(1, 120))
CORPUS_CASES = [
    ("corpus-folder-missing", corpus_with("docs", {"docs": None}), corpus, r"document folder not found"),
    ("corpus-folder-empty", corpus_with("docs", {"docs/energy2024.txt": None, "docs/water2023.md": None}), corpus,
     r"no documents \(expected <doc_id>\.pdf, \.txt or \.md files\)"),
    ("corpus-doc-id-characters", corpus_with("docs/my paper.pdf", {"docs/my paper.pdf": "%PDF-1.7"}), corpus,
     r"doc id 'my paper' has characters other than A-Z a-z 0-9 _ \. -; rename the file, e\.g\. to my_paper\.pdf"),
    ("corpus-two-files-one-doc-id", corpus_with("docs/energy2024.txt", {"docs/energy2024.pdf": "%PDF-1.7"}), corpus,
     r"maps to the same doc id as energy2024\.pdf \('energy2024'\); keep one of them"),
    ("corpus-doc-ids-differ-in-case", corpus_with("docs/water2023.md", {"docs/Water2023.txt": "Other text.\n"}),
     corpus, r"doc id 'water2023' differs from Water2023\.txt's only in case \(ref ids are compared ignoring case\)"),
    ("corpus-questions-missing-file", corpus_with("questions.csv", {"questions.csv": None}), corpus,
     r"questions\.csv: file not found"),
    ("corpus-csv-empty-file", corpus_with("questions.csv", {"questions.csv": ""}), corpus,
     r"empty file \(expected a header row\)"),
    ("corpus-csv-not-utf8", corpus_with("questions.csv", {"questions.csv": b"id,question\nq1,How much?\nq2,Caf\xe9?\n"}),
     corpus, r"row 3: not UTF-8 \(byte 0xe9 at offset 31\); save it as UTF-8"),
    ("corpus-csv-utf16", corpus_with("questions.csv", {"questions.csv": GOOD_CORPUS["questions.csv"].encode("utf-16")}),
     corpus, r"looks UTF-16 encoded \(NUL bytes\); save it as UTF-8$"),
    ("corpus-no-questions", corpus_with("questions.csv", {"questions.csv": "id,question\n"}), corpus,
     r"no questions \(a header row only\)"),
    ("corpus-no-labels", corpus_with("solutions.csv", {"solutions.csv": "id,answer_value,answer_unit,ref_id\n"}),
     corpus, r"no labels \(a header row only\); leave solutions out for a corpus without labels"),
    ("corpus-questions-missing-column", corpus_with("questions.csv", {"questions.csv": "id,text\nq1,How much?\n"}),
     corpus, r"missing column\(s\) question \(has id, text\)"),
    ("corpus-solutions-missing-column",
     corpus_with("solutions.csv", {"solutions.csv": "id,answer_value,answer_unit\nq1,120,MWh\n"}), corpus,
     r"missing column\(s\) ref_id \(has id, answer_value, answer_unit\)"),
    ("corpus-metadata-missing-column",
     corpus_with("metadata.csv", {"metadata.csv": "id,type,title,year,citation\nenergy2024,paper,E,2024,E 2024\n"}),
     corpus, r"missing column\(s\) url"),
    ("corpus-duplicate-question-id", corpus_with("questions.csv", {"questions.csv": "id,question\nq1,A?\nq1,B?\n"}),
     corpus, r"row 3, field id: duplicate id 'q1'"),
    ("corpus-empty-question-id", corpus_with("questions.csv", {"questions.csv": "id,question\nq1,A?\n ,B?\n"}),
     corpus, r"row 3, field id: empty id"),
    ("corpus-empty-question", corpus_with("questions.csv", {"questions.csv": "id,question\nq1,A?\nq2,  \n"}),
     corpus, r"row 3, field question: empty question"),
    ("corpus-solution-without-question",
     corpus_with("solutions.csv", {"solutions.csv": GOOD_CORPUS["solutions.csv"] + "q9,1,kg,is_blank\n"}), corpus,
     r"row 4, field id: no question 'q9' in \S*questions\.csv"),
    ("corpus-cited-doc-missing",
     corpus_with("solutions.csv", {"solutions.csv": GOOD_CORPUS["solutions.csv"].replace("water2023", "nobody2020")}),
     corpus, r"row 3, field ref_id: no document 'nobody2020' in \S*docs \(expected nobody2020\.pdf, \.txt or \.md\)"),
    ("corpus-metadata-unknown-document",
     corpus_with("metadata.csv", {"metadata.csv": META + "energy2024,paper,E,2024,E 2024,\nnobody2020,paper,N,2020,N,\n"}),
     corpus, r"row 3, field id: no document 'nobody2020' in \S*docs"),
    # issue 46: a stranger's folder
    ("corpus-symlinked-document", corpus_link("docs/notes.txt", "outside/creds"), corpus,
     r"notes\.txt: a symbolic link \(to \S*outside/creds\); put the document itself in \S*docs, not a link"),
    ("corpus-doc-id-leading-dash", corpus_with("docs/-draft.txt", {"docs/-draft.txt": "Text.\n"}), corpus,
     r"doc id '-draft' does not start with a letter or digit; rename the file, e\.g\. to draft\.txt"),
    ("corpus-csv-nul-byte", corpus_with("questions.csv", {"questions.csv": LONG_QUESTIONS.encode() + b"q200,Wh\x00at?\n"}),
     corpus, r"row 121: a NUL byte \(offset \d+\); a CSV is text, save it as UTF-8"),
]

# id, bad file, CLI verb, what the one line must say (after the file name)
CLI_CASES = CORPUS_CASES + [
    ("csv-unbalanced-quote", write("q.csv", 'id,question,answer_unit\nq1,"What?,MWh\n'), ingest, r"not a readable CSV"),
    ("csv-utf16", write("q.csv", "id,question,answer_unit\nq1,What?,MWh\n".encode("utf-16")), ingest,
     r"looks UTF-16 encoded"),
    ("csv-undecodable-bytes", write("q.csv", b"id,question,answer_unit\nq1,\x81\x8d\x8f,MWh\n"), ingest,
     r"cannot decode with utf-8-sig, cp1252"),
    ("csv-missing-column", write("q.csv", "id,question\nq1,What?\n"), ingest, r"missing column\(s\) answer_unit"),
    ("csv-duplicate-id", write("q.csv", "id,question,answer_unit\nq1,What?,MWh\nq1,Again?,MWh\n"), ingest,
     r"row 3, field id: duplicate id 'q1'"),
    ("csv-empty-id", write("q.csv", "id,question,answer_unit\n,What?,MWh\n"), ingest, r"row 2, field id: empty id"),
    ("labels-unknown-document", write("q.csv", "id,question,answer_unit,ref_id\nq1,What?,MWh,['nobody2020']\n"),
     ingest, r"row 2, field ref_id: unknown document id 'nobody2020'"),
    ("metadata-missing-file", lambda tmp: tmp / "nowhere.csv", ingest_metadata, r"file not found"),
    ("pdf-corrupt", write("bad.pdf", b"%PDF-1.7\nnot really a pdf\n"), parse, r"cannot parse PDF: truncated"),
    ("submission-wrong-columns", submission_without("explanation"), score, r"explanation"),
    # issue 46: names that become paths, in files from elsewhere
    ("metadata-unsafe-id", write("metadata.csv", META + "../../x,paper,T,2024,C,http://127.0.0.1:9/x.pdf\n"),
     ingest_metadata, r"row 2, field id: document id '\.\./\.\./x' has characters other than"),
    ("kept-run-id-climbs-out", kept_run({"id": "../../escaped", "scored": []}), compare,
     r"run\.json: field id: '\.\./\.\./escaped' has characters other than A-Z a-z 0-9 _ \. -"),
    ("kept-run-scores-outside", kept_run({"id": "r2", "scored": [{"scores": {"x": "/etc/passwd"}}]}), compare,
     r"run\.json: field scored\.scores\.x: '/etc/passwd' is not a path relative to the kept run's folder"),
]


@pytest.mark.parametrize("case, make, verb, says", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_file_gets_one_clear_line(tmp_path, case, make, verb, says):
    path = make(tmp_path)
    out = subprocess.run([sys.executable, "-m", "pipeline", *verb(path, tmp_path)], capture_output=True,
                         text=True, cwd=REPO, env=environment())
    lines = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert len(lines) == 1 and str(path.name) in lines[0] and re.search(says, lines[0]), out.stderr[-2000:]


# id, config file text or --config overrides, what Snakemake prints (one line, naming the key)
DAG_CASES = [
    ("config-not-yaml", "indexes: [\n", None, r"Config file is not valid JSON or YAML"),
    ("config-bad-value", None, ["embedding={backend: word2vec}"],
     r"config key 'embedding.backend': 'word2vec' is not one of"),
    ("config-secret-in-file", None, ["llm={api_key: sk-x}"], r"config key 'llm.api_key': credentials must not"),
    # issue 46: credentials not named like keys, refused without repeating them
    ("config-secret-in-header", None, ["answering={mock-llm: {params: {extra_headers: {x-api-key: k-Zq8vR2mK7p}}}}"],
     r"config key 'answering.mock-llm.params.extra_headers.x-api-key': credentials must not be written in the config"
     r" \(a key named like a credential\); put the value in an environment variable and name it in "
     r"llm.per_model.<model>.headers_env(?!.*Zq8vR2mK7p)"),
    ("config-password-in-api-base", None, ["llm={api_base: 'https://alice:pw-Hj5Kd8Sx@llm.example.org/v1'}"],
     r"config key 'llm.api_base': credentials must not be written in the config \(a URL with user:password@ in it\)"
     r"(?!.*pw-Hj5Kd8Sx)"),
    ("config-split-name-not-a-name", None, ["wattbot={splits: {../x: train_QA.csv}}"],
     r"config key 'wattbot.splits': '\.\./x' does not match"),
    ("data-root-wrong", None, ["data_root=/nonexistent"], r"config key 'wattbot.dir': folder /nonexistent/wattbot"),
    # a PDF folder without the documents' PDFs (here: the docs folder) and no stated fallback
    ("wattbot-pdf-dir-half-filled", None, [f"data_root={data_root()}", f"wattbot={{pdf_dir: {REPO / 'docs'}}}"],
     r"config key 'wattbot.pdf_dir': 3 of 3 documents have no PDF in \S*docs \(\w+, \w+, \w+\); add them, or set "
     r"wattbot.pdf_fallback: extracted-text to parse those from the extracted text"),
    # a test labels file (wattbot.solutions; real Public rows, one thing broken) stops the DAG before any job
    *[(f"labels-{name.replace('_', '-')}", None, [f"data_root={data_root()}", f"wattbot={{solutions: {{test: {LABELS / (name + '.csv')}}}}}"],
       f"{LABELS / (name + '.csv')}: {says}")
      for name, says in (("unknown_id", r"row 4, field id: no question 'q99999' in \S*test_Q.csv"),
                         ("duplicate_id", r"row 6, field id: duplicate id 'q005'"),
                         ("missing_column", r"missing column\(s\) answer_unit \(has "))],
]


@pytest.mark.slow
@pytest.mark.parametrize("case, text, overrides, says", DAG_CASES, ids=[c[0] for c in DAG_CASES])
def test_bad_config_stops_the_dag_with_one_line(tmp_path, case, text, overrides, says):
    config = REPO / "tests" / "tiny.yaml"
    if text is not None:
        config = tmp_path / "bad.yaml"
        config.write_text(text)
    cmd = command(tmp_path, "-n", configfile=config)
    if overrides:
        cmd += ["--config", *overrides]
    out = subprocess.run(cmd, capture_output=True, text=True, env=environment(), timeout=600)
    assert out.returncode != 0
    assert re.search(says, out.stdout + out.stderr), (out.stdout + out.stderr)[-2000:]


def test_other_files_in_the_document_folder_are_named_not_dropped(tmp_path):
    """`corpus-other-files`: a warning line naming every file that is no document, the count in the output,
    and the run goes on (a folder of papers often holds a README, a .bib or supplements)."""
    corpus_with("docs", {"docs/refs.bib": "@article{x}\n", "docs/README": "notes\n", "docs/extra/a.pdf": "%PDF"})(
        tmp_path)
    out = subprocess.run([sys.executable, "-m", "pipeline", *corpus(tmp_path / "docs", tmp_path)], capture_output=True,
                         text=True, cwd=REPO, env=environment())
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line for line in out.stderr.splitlines() if "no document" in line]
    assert lines == [f"WARNING wattbench: corpus mine: 3 file(s) in {tmp_path / 'docs'} are no document (.pdf, .txt, "
                     ".md) and are not used: README, extra, refs.bib"], out.stderr
    assert json.loads(out.stdout)["ignored_files"] == 3 and json.loads(out.stdout)["documents"] == 2


WARNING_CASES = ["corpus-other-files"]


def test_docs_list_every_case():
    page = (REPO / "docs" / "guarantees.md").read_text()
    table = page[page.index("## Bad input"):]
    missing = [c for c in [c[0] for c in CLI_CASES + DAG_CASES] + WARNING_CASES if f"`{c}`" not in table]
    assert missing == []

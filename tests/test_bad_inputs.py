"""Every bad input we tried, through the command a user runs: one clear line naming the file (and row
and field where there is one), a non-zero exit, no traceback. docs/guarantees.md ("Bad input") lists each case by
its id; a case missing there fails the last test."""
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dag_runner import command, environment
from pipeline.datasets.paths import REPO

# A hand-written WattBot in miniature (metadata + three train questions): the bad-file cases need a good
# partner file, not the shared data.
W = Path(__file__).parent / "fixtures" / "data" / "wattbot"


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


# id, bad file, CLI verb, what the one line must say (after the file name)
CLI_CASES = [
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
    ("data-root-wrong", None, ["data_root=/nonexistent"], r"config key 'wattbot.dir': folder /nonexistent/wattbot"),
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


def test_docs_list_every_case():
    page = (REPO / "docs" / "guarantees.md").read_text()
    table = page[page.index("## Bad input"):]
    missing = [c[0] for c in CLI_CASES + DAG_CASES if f"`{c[0]}`" not in table]
    assert missing == []

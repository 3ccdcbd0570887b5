"""What the Snakefile expands: documents, sources (PDF over JSON), params that track variants."""
import json
import os
import re
import subprocess
import sys

import fitz
import pytest

from pipeline.config import load_config
from pipeline.datasets.paths import REPO
from pipeline.tree import DocTree
from pipeline.workflow import answering_params, doc_ids, retrieval_indexes, tree_source

MINI_DATA = REPO / "tests" / "fixtures" / "data"


@pytest.fixture()
def cfg():
    """The tests' own grid over the hand-written mini WattBot (tests/fixtures/data: doe2024, roe2023)."""
    return load_config(REPO / "tests" / "grid.yaml", {"data_root": str(MINI_DATA)})


def test_documents_and_subsets(cfg):
    assert doc_ids(cfg) == ["doe2024", "roe2023"]  # every document of the metadata
    cfg["wattbot"]["docs"] = ["roe2023"]
    assert doc_ids(cfg) == ["roe2023"]
    cfg["wattbot"]["docs"] = ["nobody"]
    with pytest.raises(ValueError, match="wattbot.docs"):
        doc_ids(cfg)


def test_each_dataset_entry_says_which_trees_and_questions_its_rules_read(cfg):
    """The index and retrieval rules ask the dataset's entry (pipeline/workflow/datasets.py), never its name:
    WattBot reads one tree per configured document and the ingested splits, a suite dataset (one registered
    outside the package too) its export; an unknown name is an error naming the known ones."""
    from pipeline.registry import suite_datasets
    from pipeline.workflow import questions_path, tree_files, tree_files_arg

    cfg["wattbot"]["docs"] = ["roe2023"]
    assert tree_files(cfg, "wattbot") == ["results/wattbot/trees/roe2023.json"]
    assert questions_path("wattbot", "train") == "results/wattbot/ingest/train.csv"
    assert tree_files_arg(cfg, "hotpotqa") == "results/hotpotqa/export/trees"
    assert questions_path("hotpotqa", "queries") == "results/hotpotqa/export/queries.csv"
    toy = suite_datasets.SuiteDataset("toy_plugin", "tests.datasets.toy_suite", "toy_plugin")
    suite_datasets.register(toy)
    try:
        assert questions_path("toy_plugin", "queries") == "results/toy_plugin/export/queries.csv"
    finally:
        suite_datasets.unregister("toy_plugin")
    with pytest.raises(KeyError, match="unknown dataset 'nobody'.*wattbot"):
        questions_path("nobody", "train")


def test_pdf_folder_takes_precedence(cfg, tmp_path):
    assert tree_source(cfg, "doe2024").endswith("corpus/doe2024.json")
    doc = fitz.open()
    page = doc.new_page()
    page.insert_text((72, 100), "1 Introduction", fontsize=16)
    page.insert_text((72, 140), "Training BERT on GPUs emitted 1438 lbs of CO2.", fontsize=10)
    doc.save(tmp_path / "doe2024.pdf")
    cfg["wattbot"]["pdf_dir"] = str(tmp_path)
    cfg["wattbot"]["pdf_fallback"] = "extracted-text"  # stated: a missing PDF's tree comes from the corpus JSON
    source = tree_source(cfg, "doe2024")
    assert source == str(tmp_path / "doe2024.pdf")
    assert tree_source(cfg, "roe2023").endswith("corpus/roe2023.json")
    out = tmp_path / "tree.json"
    done = subprocess.run([sys.executable, "-m", "pipeline", "tree", "--source", source, "--doc-id", "doe2024",
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    tree = DocTree.load(out)
    assert "1438 lbs" in tree.text and json.loads(out.with_name("tree.json.manifest.json").read_text())["config"] == {"parser": "pdf", "headings": "combined"}


def test_a_half_filled_pdf_folder_is_an_error_unless_the_fallback_is_stated(cfg, tmp_path, capsys):
    """No silent mix of PDFs and extracted text: one line naming the missing PDFs, or the stated fallback
    said once in the run output and listed by pdf_fallback_docs (the report names them)."""
    from pipeline.datasets.wattbot import InputError
    from pipeline.report.pages.leaderboard import fallback_lines
    from pipeline.workflow import report_params
    from pipeline.workflow.wattbot import pdf_fallback_docs

    assert pdf_fallback_docs(cfg) == []  # no PDF folder: the extracted text is the source, nothing falls back
    (tmp_path / "doe2024.pdf").write_bytes(b"%PDF-1.7")
    cfg["wattbot"]["pdf_dir"] = str(tmp_path)
    for doc in ("doe2024", "roe2023"):  # every document's tree rule stops, naming all missing PDFs
        with pytest.raises(InputError) as info:
            tree_source(cfg, doc)
        assert str(info.value) == (
            f"config key 'wattbot.pdf_dir': 1 of 2 documents have no PDF in {tmp_path} (roe2023); add them, "
            "or set wattbot.pdf_fallback: extracted-text to parse those from the extracted text")
    cfg["wattbot"]["pdf_fallback"] = "extracted-text"
    assert pdf_fallback_docs(cfg) == ["roe2023"] and tree_source(cfg, "roe2023").endswith("corpus/roe2023.json")
    tree_source(cfg, "doe2024")
    said = [line for line in capsys.readouterr().err.splitlines() if "pdf_fallback" in line]
    assert said == [f"warning: wattbot.pdf_fallback: extracted-text: 1 of 2 documents have no PDF in {tmp_path} "
                    "and are parsed from the extracted text (roe2023)"]
    params = json.loads(report_params(cfg))
    assert params["pdf_fallback"] == {"extracted-text": ["roe2023"]}
    assert fallback_lines(params["pdf_fallback"]) == [
        "- `wattbot.pdf_fallback: extracted-text`: 1 document(s) have no PDF in `wattbot.pdf_dir` and were parsed "
        "from the extracted text: roe2023"]  # a line of reports/wattbot/index.md
    (tmp_path / "roe2023.pdf").write_bytes(b"%PDF-1.7")
    assert "pdf_fallback" not in json.loads(report_params(cfg))  # nothing fell back: the report says nothing


def test_params_change_only_with_their_branch(cfg):
    before = {v: answering_params(cfg, v) for v in cfg["answering"]}
    cfg["answering"]["bm25-extractive"]["extractive"] = {"min_support": 0.3}
    after = {v: answering_params(cfg, v) for v in cfg["answering"]}
    assert [v for v in before if before[v] != after[v]] == ["bm25-extractive"]
    cfg["indexes"]["bm25"]["levels"] = ["sentence"]
    cfg["retrieval"]["bm25"]["levels"] = ["sentence"]
    changed = sorted(v for v in after if answering_params(cfg, v) != after[v])
    uses_bm25 = sorted(v for v, a in cfg["answering"].items() if "bm25" in retrieval_indexes(cfg, a["retrieval"]))
    assert changed == uses_bm25 and "hier-extractive" not in changed


def test_every_rule_declares_threads_memory_and_runtime():
    """Cluster profiles turn these into sbatch flags / pod requests; a rule without them would get
    the profile's defaults silently."""
    import re

    from pipeline.datasets.paths import REPO

    rules = {}
    for smk in sorted((REPO / "pipeline" / "rules").glob("*.smk")):
        for block in re.split(r"(?m)^(?=\s*(?:rule|checkpoint) )", smk.read_text()):
            if m := re.match(r"\s*(?:rule|checkpoint) (\w+):", block):
                rules[m.group(1)] = block
    assert len(rules) >= 8
    lacking = [name for name, block in rules.items()
               if not re.search(r"^\s+threads:", block, re.M)
               or not re.search(r"resources:.*mem_mb=.*runtime=", block)]
    assert lacking == []

def test_parse_targets_and_parse_options(cfg, tmp_path):
    from pipeline.workflow import parse_targets, parse_options

    cfg["parsing"]["quality_dir"] = str(tmp_path)
    assert parse_targets(cfg) == ["results/wattbot/parse/check.json"]  # no corpus downloaded: no quality report
    doc = fitz.open()
    doc.new_page().insert_text((72, 72), "x")
    doc.save(tmp_path / "a.pdf")  # not in the corpus manifest: no report either
    assert parse_targets(cfg) == ["results/wattbot/parse/check.json"]
    doc.save(tmp_path / "ltnews31.pdf")  # a sample document of the manifest: the default DAG measures the sample
    assert parse_targets(cfg) == ["results/wattbot/parse/check.json", "reports/parsing/sample/quality.csv"]
    assert parse_options(cfg) == "" and parse_options(cfg, "d/x.pdf") == "--headings combined"  # JSON trees ignore it
    cfg["parsing"]["vision"] = {"model": "openai/gpt-4o-mini", "params": {"temperature": 0}}
    args = parse_options(cfg)
    assert "--vision-model openai/gpt-4o-mini" in args and '{"temperature":0}' in args and "--cache-dir data/cache" in args


def test_end_of_run_report_of_parse_failures(tmp_path, capsys):
    from pipeline.parse.errors import errors_csv
    from pipeline.workflow import report_parse_failures

    assert report_parse_failures(str(tmp_path / "missing.csv")) == []
    path = tmp_path / "errors.csv"
    path.write_text(errors_csv([{"doc": "b", "source": "b.pdf", "reason": "encrypted (needs a password)"}]))
    assert report_parse_failures(str(path)) == ["parse failed: b (b.pdf): encrypted (needs a password)"]
    assert "1 document(s) could not be parsed" in capsys.readouterr().err


@pytest.mark.data  # snakemake -n over tiny.yaml needs its WattBot inputs
def test_a_quote_in_a_variant_value_reaches_the_job_intact(tmp_path):
    """Params cross the rule -> CLI boundary as one shell word (``{params.cfg:q}``, ``wf.shell_arg``), never in
    hand-written quotes: a ' (or ", $, `) in a variant value reaches the job exactly as configured."""
    import shlex

    import yaml
    from dag_runner import snakemake

    from pipeline.datasets.paths import data_root
    from pipeline.workflow import answering_params

    tricky = "it's \"quoted\" $HOME `date` \\ done"
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["answering"]["mock-llm"]["params"]["stop"] = [tricky]
    raw["parsing"] = {"vision": {"model": "openai/mock", "params": {"note": tricky}}}
    path = tmp_path / "quote.yaml"
    path.write_text(yaml.safe_dump(raw))
    done = snakemake(tmp_path / "work", "-n", "-p", configfile=path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    commands = [shlex.split(line.split("Shell command: ", 1)[1]) for line in done.stdout.splitlines()
                if re.match(r"Shell command: \S*python\S* -m pipeline ", line)]  # the venv's python (#35)

    def arg(words, flag):
        return words[words.index(flag) + 1]

    answer = [w for w in commands if w[3] == "answer" and "results/wattbot/answers/mock-llm/train.jsonl" in w]
    tree = [w for w in commands if w[3] == "tree"]
    assert answer and tree
    cfg = load_config(path, {"data_root": str(data_root())})
    assert json.loads(arg(answer[0], "--params")) == json.loads(answering_params(cfg, "mock-llm"))
    assert json.loads(arg(answer[0], "--params"))["answering"]["params"]["stop"] == [tricky]
    assert all(json.loads(arg(w, "--vision-params")) == {"note": tricky} for w in tree)


def test_a_retry_asks_more_memory_and_time_up_to_the_cap():
    """A cluster job that ended in OUT_OF_MEMORY or TIMEOUT is retried with twice, then four times, what
    its rule declares, never more; the first attempt (every local run) asks exactly that."""
    from pipeline.workflow import per_attempt
    from pipeline.workflow.threads import RETRY_GROWTH_CAP

    grown = per_attempt(4000)
    assert [grown(None, attempt=a) for a in (1, 2, 3, 4)] == [4000, 8000, 16000, 4000 * RETRY_GROWTH_CAP]


@pytest.mark.slow
@pytest.mark.data
def test_the_rules_run_with_the_python_that_runs_snakemake(tmp_path):
    """`.venv/bin/snakemake ...` without an activated venv: no `python` of the venv on PATH, and the jobs
    still run this checkout's code (#35); a cluster job runs Snakemake again with the same Python."""
    from dag_runner import PLANTED_KEY, command

    cmd = command(tmp_path / "work", "results/wattbot/ingest/train.csv", configfile=REPO / "tests" / "tiny.yaml")
    env = {**os.environ, "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": PLANTED_KEY}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "work" / "results" / "wattbot" / "ingest" / "train.csv").stat().st_size > 0

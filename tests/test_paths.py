"""The workflow owns paths: one layout (pipeline/paths.py) for the rules and the report verbs, report
verbs told their files, and a DAG planned without plotting code."""
import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from pipeline import paths
from pipeline import workflow as wf
from pipeline.config import load_config
from pipeline.datasets.paths import REPO

PLOTTING = ("matplotlib", "sklearn")
RULES = REPO / "pipeline" / "rules"

# What the Snakefile and the rule files call while Snakemake parses them (config.yaml, the production grid).
PLAN = """
import sys
from pipeline.config import check_paths, load_config, validate
from pipeline.llm.preflight import preflight
from pipeline.estimate import print_estimate
from pipeline import paths
import pipeline.workflow as wf
cfg = validate(load_config("config.yaml"))
for fn in (wf.figure_stems, wf.figures_params, wf.figures_inputs, wf.report_inputs, wf.report_params,
           wf.suite_report_inputs, wf.sprout_report_inputs, wf.sprout_report_index, wf.parse_targets,
           wf.suite_targets, wf.sprout_targets, wf.default_llm_api):
    fn(cfg)
wf.claims_file()
print(sorted({m.split(".")[0] for m in sys.modules} & set(%r)))
"""


def test_planning_imports_no_plotting_code():
    done = subprocess.run([sys.executable, "-c", PLAN % (PLOTTING,)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_snakemake_dry_run_imports_no_plotting_code(tmp_path):
    """The real planner: `snakemake -n` on the tiny grid, every import it makes listed by -X importtime."""
    from dag_runner import command, environment

    cmd = command(tmp_path, "-n", "--quiet", "rules", configfile=REPO / "tests" / "tiny.yaml")
    done = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True,
                          env=environment(), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "import time:" in done.stderr
    imported = re.findall(r"^import time:.*\|\s+(\w+)", done.stderr, re.M)
    assert sorted(set(imported) & set(PLOTTING)) == []


def test_wildcard_defaults_are_the_rule_patterns():
    assert paths.answers() == "results/wattbot/answers/{av}/{split}.jsonl"
    assert paths.answers("bm25-x", "train") == "results/wattbot/answers/bm25-x/train.jsonl"
    assert paths.retrieval(paths.WATTBOT, "bm25", "train") == "results/wattbot/retrieval/bm25/train.jsonl"
    assert paths.reports.parse_quality("sample/") == "reports/parsing/sample/quality.csv"
    assert paths.Reports("x").leaderboard == "x/wattbot/leaderboard.csv" and paths.reports.figure("a", "svg") == "reports/figures/a.svg"
    assert paths.answer_benchmark("v", "train") == "benchmarks/wattbot/answer/v/train.tsv"


def test_shell_texts_written_out_agree_with_the_layout():
    """Three rules keep a path in their shell text (the text is Snakemake's rerun trigger, so changing it
    would rerun every retrieval); the text must still say what the layout says."""
    assert f"--index-dir {paths.index_dir('{wildcards.dataset}')} " in (RULES / "retrieval.smk").read_text()
    assert f"--out-dir {paths.export_dir('{wildcards.dataset}')} " in (RULES / "suite.smk").read_text()
    assert "--work-dir {wf.SPROUT_DIR}/train_data " in (RULES / "sprout.smk").read_text()
    assert f"{wf.SPROUT_DIR}/train_data" == paths.SPROUT_TRAIN_DATA


def test_no_path_pattern_outside_the_layout():
    """Rule files name no results/, reports/, logs/ or benchmarks/ path except the three shell texts above."""
    found = []
    for path in sorted(RULES.glob("*.smk")) + [REPO / "Snakefile"]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if re.search(r"[\"'](results|reports|logs|benchmarks)/", code) and "shell:" not in code:
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert found == []


def test_include_files_share_nothing_by_include_order():
    """A rule file reads only common.smk's globals, its own, CFG, wf and Snakemake's: none another rule file defines."""
    defined = {}
    for path in sorted(RULES.glob("*.smk")):
        if path.name != "common.smk":
            for name in re.findall(r"^([A-Z][A-Z_0-9]+)\s*=", path.read_text(), re.M):
                defined[name] = path.name
    for path in sorted(RULES.glob("*.smk")):
        used = set(re.findall(r"\b([A-Z][A-Z_0-9]{2,})\b", path.read_text()))
        foreign = {n for n in used if defined.get(n, path.name) != path.name}
        assert foreign == set(), f"{path.name} uses {sorted(foreign)} defined in another rule file"


def test_report_verbs_are_told_every_file_by_name():
    cfg = load_config(REPO / "config.yaml")
    files = wf.figures_inputs(cfg)
    assert set(files["per_question"]) == set(cfg["answering"]) == set(files["scores"])
    assert files["answers"]["bm25-extractive"] == paths.answers("bm25-extractive", cfg["wattbot"]["score_split"])
    args = wf.named_args({"scores": {"a b": "x/a b.json"}, "per_question": {"c": "y.csv"}})
    assert args == "--scores 'a b=x/a b.json' --per-question c=y.csv"
    from pipeline.cli import build_parser

    parsed = build_parser().parse_args(["suite-report", "--params", "{}", "--reports", "r",
                                        "--scores", "hotpotqa:bm25=s.json", "--scores", "hotpotqa:x=t.json"])
    from pipeline.cli import _named

    assert _named(parsed.scores) == {"hotpotqa:bm25": "s.json", "hotpotqa:x": "t.json"}


def test_leaderboard_telemetry_after_the_run(tmp_path):
    """Written by the onsuccess hook from the cost table, the answers' telemetry and the benchmark TSVs."""
    from pipeline.report.telemetry.cost import leaderboard_telemetry

    cost = tmp_path / "cost.csv"
    pd.DataFrame([{"variant": "a", "questions": 2, "score": 0.5}, {"variant": "b", "questions": 2, "score": 0.4}]
                 ).to_csv(cost, index=False)
    answers = tmp_path / "a.jsonl"
    with open(paths.answers_telemetry(str(answers)), "w") as fh:
        fh.write("\n".join(json.dumps({"latency_s": 0.5, "cached": c}) for c in (True, False)) + "\n")
    bench = tmp_path / "a.tsv"
    bench.write_text("s\th:m:s\n3.0\t0:00:03\n")
    out = tmp_path / "t.csv"
    leaderboard_telemetry(str(cost), {"a": str(answers), "b": str(tmp_path / "b.jsonl")},
                          {"a": str(bench), "b": str(tmp_path / "none.tsv")}, str(out))
    t = pd.read_csv(out).set_index("variant")
    assert t.loc["a", "telemetry_calls"] == 2 and t.loc["a", "cache_hits"] == 1 and t.loc["a", "wall_s_per_question"] == 1.5
    assert t.loc["b", "telemetry_calls"] == 0 and pd.isna(t.loc["b", "wall_s_per_question"])


# What each of a run's ~230 jobs pays before its command runs: `python -m pipeline <verb>` builds every verb's
# parser. A parser that imported PyMuPDF and its layout model (onnxruntime) for the PDF caps' defaults cost each
# job ~0.5 s of CPU, the default `make run` ~70 s over its parent (issue #48's side-by-side runs).
HEAVY = ["pymupdf", "pymupdf4llm", "onnxruntime", "psutil", "torch", "pandas", "litellm", "sklearn", "matplotlib"]
PARSER = """
import sys
from pipeline.cli import build_parser
build_parser()
print(sorted({m.split(".")[0] for m in sys.modules} & set(%r)))
"""


def test_the_cli_parser_imports_no_stage_library():
    done = subprocess.run([sys.executable, "-c", PARSER % (HEAVY,)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


TREE_JOB = """
import sys
from pipeline.cli import main
assert main(["tree", "--source", %r, "--doc-id", "patterson2021", "--out", %r]) == 0
print(sorted({m.split(".")[0] for m in sys.modules} & {"pymupdf", "pymupdf4llm", "onnxruntime"}))
"""


def test_a_tree_job_of_extracted_text_imports_no_pdf_parser(wattbot_dir, tmp_path):
    """The default grid's 32 tree jobs read WattBot's extracted text: their PDF caps are built (PdfLimits, from
    pipeline/parse/limits.py) without importing PyMuPDF or its layout model, and a PDF still gets them."""
    source, out = str(wattbot_dir / "corpus" / "patterson2021.json"), str(tmp_path / "tree.json")
    done = subprocess.run([sys.executable, "-c", TREE_JOB % (source, out)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads((tmp_path / "tree.json").read_text())

"""The time table: wall and CPU seconds per rule from Snakemake's benchmark TSVs (their real
format), its figure and page, the README block rendered from it, and the rules' benchmark paths
matching the patterns it recognises."""
import re
import subprocess
import sys

import pandas as pd
import pytest

from pipeline import paths
from pipeline.datasets.paths import REPO
from pipeline.publish.readme import BEGIN, END, fill
from pipeline.io import atomic_write_jsonl
from pipeline.report.telemetry.time_table import (BENCHMARK_PATTERNS, FIGURE, LLM_TABLE, MAKE_RUN_TIMES, PAGE, RUN_SUMMARY,
                                        TABLE, read_benchmarks, render, rule_of, write_time_table)

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
# Real lines of the last full run (benchmarks/wattbot/answer/llm-cf/train.tsv and others).
JOBS = {
    "wattbot/answer/llm-cf/train.tsv": "1233.73\t0:20:33\t2863.00\t5886.58\t2769.78\t2797.55\t239.39\t2.14\t52.29\t645.28\n",
    "wattbot/answer/llm-cf-r1/train.tsv": "415.62\t0:06:55\t2908.18\t5682.33\t2815.30\t2852.36\t31.21\t1.25\t99.67\t414.81\n",
    "wattbot/answer/convex-extractive/train.tsv": "3.50\t0:00:03\t300.00\t900.00\t290.00\t295.00\t1.00\t0.10\t90.00\t3.10\n",
    "wattbot/index/flat.tsv": "287.00\t0:04:47\t1500.00\t3000.00\t1400.00\t1450.00\t10.00\t5.00\t180.00\t516.60\n",
    "hotpotqa/index/hier.tsv": "100.00\t0:01:40\t1200.00\t2500.00\t1100.00\t1150.00\t5.00\t3.00\t150.00\t150.00\n",
    "wattbot/sprout_attention.tsv": "445.00\t0:07:25\t2000.00\t4000.00\t1900.00\t1950.00\t3.00\t20.00\t190.00\t845.50\n",
    "sprout/train_pairs.tsv": "60.00\t0:01:00\t900.00\t1800.00\t850.00\t870.00\t1.00\t1.00\t100.00\t60.00\n",
    "wattbot/retrieve/hier-convex/train.tsv": "12.00\t0:00:12\t700.00\t1400.00\t650.00\t660.00\t1.00\t0.50\t95.00\t11.40\n",
    "parsing/sample/quality.tsv": "30.00\t0:00:30\t400.00\t800.00\t380.00\t390.00\t2.00\t1.00\t150.00\t45.00\n",
}


@pytest.fixture
def run(tmp_path):
    for rel, line in JOBS.items():
        p = tmp_path / "benchmarks" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(HEADER + line)
    (tmp_path / "benchmarks" / "empty.tsv").write_text("")  # a job killed before Snakemake wrote a line
    atomic_write_jsonl(tmp_path / "results/wattbot/answers/llm-cf/train.jsonl.telemetry.jsonl", [
        {"id": "q1", "cached": False, "latency_s": 10.0, "tries": 1, "prompt_tokens": 400, "completion_tokens": 90,
         "tok_s": 9.0},
        {"id": "q2", "cached": False, "latency_s": 5.0, "tries": 4, "prompt_tokens": 300, "completion_tokens": 60,
         "tok_s": 12.0},
        {"id": "q3", "cached": True, "latency_s": 7.0, "tries": 1, "prompt_tokens": 300, "completion_tokens": 60,
         "tok_s": None}])
    return tmp_path


def test_rules_are_recognised_by_their_benchmark_paths():
    assert rule_of("benchmarks/wattbot/answer/llm-cf/train.tsv") == "answer"
    assert rule_of("benchmarks/msmarco/index/sprout-uniform.tsv") == "index"
    assert rule_of("benchmarks/msmarco/retrieve/sprout-b3/queries.tsv") == "retrieve"
    assert rule_of("benchmarks/dragonball/sprout_attention.tsv") == "sprout_attention"
    assert rule_of("benchmarks/sprout/train_pairs.tsv") == "sprout_train_pairs"
    assert rule_of("benchmarks/parsing/sample/quality.tsv") == "parse_quality"
    # WattBot's evaluate and the suite's are told apart ({dataset} would match "wattbot" too)
    assert rule_of("benchmarks/wattbot/evaluate/convex-extractive.tsv") == "evaluate"
    assert rule_of("benchmarks/hotpotqa/suite_evaluate/sprout-b3.tsv") == "suite_evaluate"
    assert rule_of("benchmarks/wattbot/tree/patterson2021.tsv") == "tree"
    assert rule_of("benchmarks/sprout/train.tsv") == "sprout_train"
    assert rule_of("benchmarks/local_model/data/models/g.gguf.tsv") == "local_model"
    assert rule_of("benchmarks/somewhere/new.tsv") == "other"


def test_patterns_match_the_rules_benchmark_lines():
    """One place for the benchmark paths: every rule's `benchmark:` line is a pattern here, and every
    rule of the DAG has one (`fetch`, outside it, needs none): the run's span counts every job."""
    declared = {}
    for smk in sorted((REPO / "pipeline" / "rules").glob("*.smk")):
        for block in re.split(r"(?m)^(?=\s*(?:rule|checkpoint) )", smk.read_text()):
            rule = re.match(r"\s*(?:rule|checkpoint) (\w+):", block)
            bench = re.search(r'^\s+benchmark: paths\.(rule|dataset)_benchmark\("(\w+)"\)', block, re.M)
            if rule:
                assert "benchmark:" not in block or bench, f"rule {rule.group(1)}: benchmark: paths.rule_benchmark(...)"
            if rule and bench:  # keyed by the job kind it times (retrieve_llm times retrieve jobs too)
                kind = bench.group(2)
                declared[kind] = paths.rule_benchmark(kind)
                if bench.group(1) == "dataset":  # a rule WattBot shares with the corpora: both patterns
                    declared[f"corpus_{kind}"] = paths.rule_benchmark(f"corpus_{kind}")
                    assert paths.dataset_benchmark(kind).replace("{dataset}", paths.WATTBOT) == paths.rule_benchmark(kind)
            if rule and rule.group(1) not in ("all", "fetch"):
                assert bench, f"rule {rule.group(1)} writes no benchmark"
    assert declared == BENCHMARK_PATTERNS


def test_run_span_and_make_run_steps(run):
    """The span runs from the earliest job start (TSV mtime - s) to the latest end; after `make run` only
    the jobs that ended after its set-up count, and its steps' wall times are reported."""
    import json
    import os

    t0 = 1_800_000_000
    ends = {"wattbot/answer/llm-cf/train.tsv": t0 + 1300, "wattbot/index/flat.tsv": t0 + 300}
    for rel in JOBS:
        os.utime(run / "benchmarks" / rel, (t0 + 100, ends.get(rel, t0 + 100)))
    old = run / "benchmarks" / "wattbot/tree/x.tsv"  # a job of an earlier run, not rerun
    old.parent.mkdir(parents=True)
    old.write_text(HEADER + "2.0\t0:00:02\t1\t1\t1\t1\t0\t0\t50\t1.0\n")
    os.utime(old, (t0 - 5000, t0 - 5000))
    write_time_table(run, run / "reports")
    summary = json.loads((run / "reports" / RUN_SUMMARY).read_text())
    assert summary["jobs"] == len(JOBS) + 1 and "make_run_total_s" not in summary
    assert summary["span_s"] == pytest.approx(1300 + 5002, abs=0.5)  # no stamps: every job counts
    (run / MAKE_RUN_TIMES).parent.mkdir(parents=True, exist_ok=True)
    (run / MAKE_RUN_TIMES).write_text(f"start {t0 - 300}\nsetup {t0 - 100}\ndag {t0 + 1310}\n")
    write_time_table(run, run / "reports")
    summary = json.loads((run / "reports" / RUN_SUMMARY).read_text())
    # earliest start: sprout_attention ended at t0+100 after 445 s; latest end: llm-cf at t0+1300
    assert summary["jobs"] == len(JOBS) and summary["span_s"] == pytest.approx(1300 + 345, abs=0.5)
    assert summary["make_run_setup_s"] == 200 and summary["make_run_snakemake_s"] == 1410
    assert summary["make_run_total_s"] == 1610
    # stamps of a make run before #34 (no CPU lines): the benchmarks' sum, said to be sampled, over the span
    assert summary["cpu_s_source"] == "benchmarks (sampled)" and "make_run_snakemake_cpu_s" not in summary
    assert summary["cpu_s"] == summary["benchmarks_cpu_s"] == pytest.approx(2691.69, abs=0.1)
    assert summary["cores_busy"] == pytest.approx(summary["cpu_s"] / summary["span_s"], abs=0.01)
    body = render(run / "reports")
    assert "27 min 25 s from the first job's start to the last job's end" in body
    assert "of CPU as Snakemake's benchmarks sample it (an undercount" in body and "rusage) of each" not in body
    assert "`make run`: set-up 3 min 20 s" in body and "together 26 min 50 s" in body
    out = fill(f"{BEGIN.format('run-time')}\n{END.format('run-time')}", run / "reports")  # the README's line
    assert "27 min 25 s from the first job's start" in out and "from `reports/time.telemetry.csv`" in out
    (run / MAKE_RUN_TIMES).write_text(f"start {t0}\nsetup {t0 - 100}\n")  # a run that did not finish: no steps
    write_time_table(run, run / "reports")
    assert "make_run_total_s" not in json.loads((run / "reports" / RUN_SUMMARY).read_text())


def test_table_sums_wall_and_cpu_per_rule(run):
    jobs = read_benchmarks(run)
    assert len(jobs) == len(JOBS)
    table = write_time_table(run, run / "reports")
    t = pd.read_csv(run / "reports" / TABLE).set_index("rule")
    assert list(t.index) == ["answer", "sprout_attention", "index", "sprout_train_pairs", "parse_quality", "retrieve", "all"]
    assert t.loc["answer", "jobs"] == 3
    assert t.loc["answer", "wall_s"] == pytest.approx(1233.73 + 415.62 + 3.5, abs=0.05)
    assert t.loc["answer", "cpu_s"] == pytest.approx(645.28 + 414.81 + 3.1, abs=0.05)
    assert t.loc["answer", "slowest_job"] == "wattbot/answer/llm-cf/train"
    assert t.loc["index", "wall_s"] == 387.0 and t.loc["index", "cpu_per_wall"] == pytest.approx(666.6 / 387, abs=0.01)
    assert t.loc["all", "jobs"] == len(JOBS)
    assert t.loc["all", "wall_s"] == pytest.approx(sum(float(v.split("\t")[0]) for v in JOBS.values()), abs=0.05)
    assert t.loc["all", "max_rss_mb"] == 2908
    assert len(table) == 7
    assert (run / "reports" / FIGURE).read_bytes()[:4] == b"\x89PNG"
    page = (run / "reports" / PAGE).read_text()
    assert "data:image/png;base64," in page and "sprout_attention" in page
    assert (run / "reports" / f"{TABLE}.manifest.json").exists()


def test_readme_block_rendered_from_the_table(run):
    write_time_table(run, run / "reports")
    body = render(run / "reports")
    assert "| `answer` | 3 | 27 min 33 s | 17 min 43 s | 0.64 | `wattbot/answer/llm-cf/train` (20 min 34 s) |" in body
    assert "| **all** | 9 |" in body
    text = f"{BEGIN.format('time')}\nold\n{END.format('time')}"
    out = fill(text, run / "reports")
    assert "from `reports/time.telemetry.csv` (commit `" in out and "| `retrieve` | 1 | 12 s |" in out
    assert fill(out, run / "reports") == out


def test_llm_jobs_tokens_and_speed(run):
    """Where an LLM job's time goes: live calls, tries (retries included), tokens, tokens/s."""
    write_time_table(run, run / "reports")
    llm = pd.read_csv(run / "reports" / LLM_TABLE).iloc[0].to_dict()
    assert llm == {"variant": "llm-cf", "split": "train", "calls": 3, "cached": 1, "tries": 5, "prompt_tokens": 700,
                   "completion_tokens": 150, "call_s": 15.0, "tok_s": 10.0}
    assert "| `llm-cf/train` | 3 | 1 | 5 | 700 | 150 | 15.0 | 10.0 |" in render(run / "reports")
    assert "LLM answering jobs" in (run / "reports" / PAGE).read_text()


def test_no_benchmarks_writes_an_empty_table(tmp_path):
    table = write_time_table(tmp_path, tmp_path / "reports")
    assert table.empty and (tmp_path / "reports" / TABLE).exists()
    assert "No benchmark files" in render(tmp_path / "reports")


def test_timings_stay_out_of_the_byte_identical_set(run):
    """Run telemetry: tests/dag_runner.py's result_files (the byte check) skips the table, figure and page."""
    from tests.dag_runner import result_files

    write_time_table(run, run / "reports")
    assert not [k for k in result_files(run) if "time" in k or "telemetry" in k]


def test_cli_prints_and_writes(run):
    out = subprocess.run([sys.executable, "-m", "pipeline", "time-table", "--root", str(run), "--reports",
                          str(run / "reports")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "sprout_attention" in out.stdout and (run / "reports" / TABLE).exists()
    # the energy estimate beside it (config.yaml's constants), run telemetry like the table
    assert "Energy (estimate): " in out.stdout and (run / "reports/energy.telemetry.json").exists()


def test_stamp_names_the_runs_commit_and_old_telemetry_has_no_tokens(run):
    """The table's manifest carries the commit of the run whose benchmarks it sums; telemetry written
    before tokens were recorded shows them unknown, not 0 tokens/s."""
    import json

    from pipeline.io import atomic_write_json

    atomic_write_json(run / "results/wattbot/answers/llm-cf/train.jsonl.manifest.json", {"git_commit": "abc1234def"})
    atomic_write_jsonl(run / "results/wattbot/answers/old/train.jsonl.telemetry.jsonl",
                       [{"id": "q1", "cached": False, "latency_s": 3.0, "tries": 2}])
    write_time_table(run, run / "reports")
    assert json.loads((run / "reports" / f"{TABLE}.manifest.json").read_text())["git_commit"] == "abc1234def"
    assert "| `old/train` | 1 | 0 | 2 |  |  | 3.0 |  |" in render(run / "reports")

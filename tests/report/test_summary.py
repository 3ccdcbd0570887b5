"""The end of a run speaks (pipeline/report/summary.py): the summary printed last and reports/summary.json
after a successful run, and after a failed one the failed job, its log's last lines and how to resume."""
import json

import pandas as pd
import pytest
import yaml

from pipeline.report.summary import failed_jobs, failure_message, summary_lines, write_summary


def _run_folder(root):
    """A finished run's folder as the report and figures rules and the benchmarks leave it."""
    (root / "reports/wattbot").mkdir(parents=True)
    pd.DataFrame({"variant": ["conv", "bm25", "llm"], "score": [0.6681, 0.5, 0.41], "score_lo": [0.556, 0.4, 0.3],
                  "score_hi": [0.781, 0.6, 0.52], "abstained": [0, 3, 5], "failures": [0, 0, 2], "n": [41, 41, 41]}
                 ).to_csv(root / "reports/wattbot/leaderboard.csv", index=False)
    pd.DataFrame({"id": ["q1", "q2", "q3"], "answer": ["a", "b", "c"]}).to_csv(root / "reports/wattbot/submission.csv",
                                                                             index=False)
    pd.DataFrame({"claim": ["x", "y", "z"], "verdict": ["reproduced", "not run", "reproduced"]}
                 ).to_csv(root / "reports/claims.csv", index=False)
    (root / "reports/index.html").write_text("<html></html>")
    (root / "benchmarks/wattbot/index").mkdir(parents=True)
    (root / "benchmarks/wattbot/index/hier.tsv").write_text(
        "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
        "12.0\t0:00:12\t100\t0\t0\t0\t0\t0\t0\t20.0\n")


def test_the_summary_names_what_a_run_made_and_writes_it_for_scripts(tmp_path, capsys):
    _run_folder(tmp_path)
    s = write_summary(tmp_path, tmp_path / "reports")
    assert json.loads((tmp_path / "reports/summary.json").read_text()) == json.loads(json.dumps(s))
    assert [r["variant"] for r in s["leaderboard"]["top"]] == ["conv", "bm25", "llm"]
    assert s["submission"]["rows"] == 3 and s["claims"]["verdicts"] == {"reproduced": 2, "not run": 1}
    assert [r["variant"] for r in s["needs_a_look"]] == ["llm", "bm25"]  # failures first, then abstentions
    assert s["time"]["jobs"] == 1 and s["time"]["cpu_s"] == 20.0
    out = capsys.readouterr().out
    assert "1. conv  0.668 [0.556, 0.781]" in out and "(3 rows)" in out and "2 reproduced, 1 not run" in out
    assert "Needs a look: llm: 2 failed, 5 abstained of 41" in out and "Report: " in out
    assert out.rstrip().splitlines()[-1].startswith("Time: 1 jobs in 12 s, 20 s of CPU")


def test_the_summary_leads_with_the_labelled_test_split(tmp_path, capsys):
    """With a test block in the leaderboard (wattbot.solutions), the summary's top is test's, the score split's
    best beneath it labelled in-sample (issue #44 item 13); needs a look still reads the score split's block."""
    _run_folder(tmp_path)
    board = pd.read_csv(tmp_path / "reports/wattbot/leaderboard.csv").assign(split="train")
    test = board.assign(split="test", score=[0.55, 0.596, 0.3], score_lo=[0.5, 0.54, 0.25], score_hi=[0.6, 0.65, 0.35])
    test = test.sort_values("score", ascending=False)
    pd.concat([board, test])[["split", *board.columns[:-1]]].to_csv(tmp_path / "reports/wattbot/leaderboard.csv", index=False)
    s = write_summary(tmp_path, tmp_path / "reports")
    assert s["leaderboard"]["split"] == "test" and [r["variant"] for r in s["leaderboard"]["top"]] == ["bm25", "conv", "llm"]
    assert s["score_split"]["split"] == "train" and s["score_split"]["top"][0]["variant"] == "conv"
    out = capsys.readouterr().out
    assert "test split, score [95% interval]:" in out and "1. bm25  0.596 [0.540, 0.650]" in out
    assert "score split train (in-sample): conv  0.668 [0.556, 0.781]" in out


def test_a_run_that_made_no_reports_says_little_and_does_not_fail(tmp_path):
    lines = summary_lines(write_summary(tmp_path, tmp_path / "reports"))
    assert lines[-1] == "== wattbench: the run is done ==" and not (tmp_path / "reports").exists()


SNAKEMAKE_LOG = """\
[Wed Dec  2 17:30:01 2026]
localrule answer:
    jobid: 7
[Wed Dec  2 17:30:09 2026]
Error in rule answer:
    message: None
    jobid: 7
    input: results/wattbot/retrieval/bm25/train.jsonl
    output: results/wattbot/answers/llm/train.jsonl
    log: logs/wattbot/answer/llm/train.log (check log file(s) for error details)
    shell:
        python -m pipeline answer --variant llm
        (command exited with non-zero exit code)
    wildcards: variant=llm, split=train

Shutting down, this might take some time.
Exiting because a job execution failed. Look below for error messages
"""


def test_onerror_names_the_failed_job_its_log_and_how_to_resume(tmp_path):
    log = tmp_path / "logs/wattbot/answer/llm/train.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"line {i}\n" for i in range(40)) + "ValueError: answers/llm: 3 calls failed\n")
    (tmp_path / "snakemake.log").write_text(SNAKEMAKE_LOG)
    assert failed_jobs(SNAKEMAKE_LOG) == [{"rule": "answer", "jobid": 7, "wildcards": "variant=llm, split=train",
                                           "logs": ["logs/wattbot/answer/llm/train.log"]}]
    msg = failure_message([str(tmp_path / "snakemake.log")], tmp_path)  # onerror's log: Snakemake 9 passes a list
    assert "Failed: rule answer (variant=llm, split=train), job 7" in msg
    assert "log: logs/wattbot/answer/llm/train.log, its last 15 lines:" in msg
    assert "    ValueError: answers/llm: 3 calls failed" in msg and "line 26" in msg and "line 25\n" not in msg
    assert msg.rstrip().splitlines()[-1].startswith("Fix the cause, then resume (finished jobs are kept): make resume")


def test_onerror_without_a_failed_job_still_says_how_to_resume(tmp_path):
    msg = failure_message(None, tmp_path)
    assert "No failed job in Snakemake's log" in msg and "make resume" in msg


@pytest.mark.slow
def test_a_failed_run_ends_with_the_failed_job_its_log_and_the_resume_command(tmp_path):
    """The Snakefile's onerror on a real failure: a labelled split with a duplicate question id stops ingest."""
    from dag_runner import snakemake

    from pipeline.datasets.paths import REPO

    bad = tmp_path / "train_bad.csv"
    bad.write_text("id,question,answer_unit\nq1,What?,MWh\nq1,Again?,MWh\n")
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["wattbot"]["splits"]["train"] = str(bad)  # an absolute path wins over wattbot.dir
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(cfg))
    done = snakemake(tmp_path / "work", "results/wattbot/ingest/train.csv", configfile=config, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "== wattbench: the run stopped ==" in out, out[-3000:]
    assert "Failed: rule ingest, job" in out and "log: logs/wattbot/ingest.log, its last" in out
    assert "duplicate id 'q1'" in out.split("== wattbench: the run stopped ==")[1]
    hint = out.split("resume (finished jobs are kept): ")[1].splitlines()[0]  # the command as typed (#35)
    assert hint.startswith("snakemake --snakefile ") and hint.endswith("results/wattbot/ingest/train.csv --rerun-incomplete")
    assert f"--configfile {config}" in hint


def test_a_long_list_of_variants_that_need_a_look_is_cut_after_five():
    s = {"leaderboard": {"top": []}, "submission": None, "claims": {"verdicts": {}}, "parse_failures": 0,
         "report": None, "time": {},
         "needs_a_look": [{"variant": f"v{i}", "failures": 0, "abstained": 9 - i, "n": 41} for i in range(7)]}
    lines = summary_lines(s)
    assert sum(line.startswith("Needs a look") for line in lines) == 5 and "and 2 more variant(s)" in lines[-1]


def test_under_make_onsuccess_writes_the_summary_and_leaves_printing_to_the_makefile(tmp_path, capsys, monkeypatch):
    from pipeline import workflow as wf

    _run_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WATTBENCH_SUMMARY_LATER", "1")  # the Makefile's run and resume set it on their snakemake line
    wf.after_run({"wattbot": {"score_split": "train"}, "answering": {}})
    assert capsys.readouterr().out == "" and (tmp_path / "reports/summary.json").exists()
    monkeypatch.delenv("WATTBENCH_SUMMARY_LATER")
    wf.after_run({"wattbot": {"score_split": "train"}, "answering": {}})
    assert "== wattbench: the run is done ==" in capsys.readouterr().out


def test_the_resume_hint_is_the_command_as_typed(tmp_path, monkeypatch):
    """The exact invocation that resumes (#35): after a plain snakemake run its command as typed (config files,
    profile) with --rerun-incomplete, and after a kill the same with --unlock first (with a cluster profile,
    its cancel-stale before); under make, make resume with the run's CONFIG (make resume alone runs config.yaml)."""
    from pipeline.report.summary import RESUME, resume_command

    (tmp_path / "profiles" / "slurm").mkdir(parents=True)
    (tmp_path / "profiles" / "slurm" / "cancel-stale").write_text("")
    monkeypatch.setenv("PWD", str(tmp_path))
    argv = ["/venv/bin/snakemake", "--configfile", "my kr.yaml", "extra.yaml", "--profile", "profiles/local",
            "--cores", "2"]
    again, kill = resume_command(argv, under_make=False).splitlines()
    assert again == "snakemake --configfile 'my kr.yaml' extra.yaml --profile profiles/local --cores 2 --rerun-incomplete"
    assert kill == ("  after a kill (Snakemake says the directory is locked): snakemake --configfile 'my kr.yaml' "
                    "extra.yaml --profile profiles/local --cores 2 --unlock && " + again)
    make = ["/venv/bin/snakemake", "--configfile", "my-kr.yaml", "--cores", "2", "--rerun-incomplete"]
    assert resume_command(make, under_make=True) == "make resume CONFIG=my-kr.yaml"
    assert resume_command(["s", "--configfile=a.yaml", "--cores", "2"], under_make=True) == "make resume CONFIG=a.yaml"
    assert resume_command([], under_make=True) == RESUME
    hint = resume_command(["x", "--workflow-profile", "profiles/slurm", "-d", "w", "--rerun-incomplete"], False)
    first, kill = hint.splitlines()
    assert first == "snakemake --workflow-profile profiles/slurm -d w --rerun-incomplete"
    assert kill.endswith("profiles/slurm/cancel-stale w && snakemake --workflow-profile profiles/slurm -d w --unlock && "
                         + first)


def test_the_makefile_resumes_the_config_it_was_given():
    """make resume CONFIG=<file> (the hint under make) runs Snakemake with that file, --unlock first."""
    from pipeline.datasets.paths import REPO

    text = (REPO / "Makefile").read_text()
    resume = text.split("\nresume:")[1].split("\n\n")[0]
    assert "SNAKEMAKE := $(BIN)/snakemake --configfile $(CONFIG)" in text
    assert "$(SNAKEMAKE) --unlock" in resume and "$(SNAKEMAKE) --cores $(CORES) --rerun-incomplete" in resume


BENCH_HEAD = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, wall, cpu, mtime):
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BENCH_HEAD + f"{wall}\t0:00:00\t100\t0\t0\t0\t0\t0\t0\t{cpu}\n")
    os.utime(path, (mtime, mtime))


def test_the_summary_times_this_invocation_alone(tmp_path):
    """After a 240-job make run, an 11-job plain snakemake run says 11 jobs: only the benchmark files written
    since this invocation began count (logs/run.json's invoked, stamped at onstart), and make run's stamps and
    time-run.telemetry.json only when that make run ran this invocation (#35)."""
    import os
    import time

    from pipeline import run_ids
    from pipeline.io import atomic_write_json
    from pipeline.report.summary import run_time
    from pipeline.report.telemetry.time_table import RUN_SUMMARY

    now = time.time()
    for i in range(5):  # the earlier make run's jobs
        _bench(tmp_path / f"benchmarks/wattbot/index/old{i}.tsv", 100.0, 150.0, now - 3600)
    _bench(tmp_path / "benchmarks/wattbot/index/new.tsv", 12.0, 20.0, now - 10)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/make-run.times").write_text(f"start {now - 4000:.0f}\nsetup {now - 3900:.0f}\ndag {now - 3500:.0f}\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / RUN_SUMMARY).write_text(json.dumps({"jobs": 5, "span_s": 500.0, "cpu_s": 750.0}))
    os.utime(reports / RUN_SUMMARY, (now - 3400, now - 3400))  # written by that make run's time-table step
    atomic_write_json(tmp_path / run_ids.STATE, {"id": "r1", "invoked": now - 60})
    t = run_time(tmp_path, reports)
    assert (t["jobs"], t["span_s"], t["cpu_s"]) == (1, 12.0, 20.0) and "make_run_total_s" not in t
    assert summary_lines({**json.loads(json.dumps(_empty())), "time": t})[-1] == (
        "Time: 1 jobs in 12 s, 20 s of CPU as Snakemake sampled it (an undercount) (1.67 cores busy)")
    exact = {**t, "cpu_s": 25.0, "cores_busy": 1.9, "cpu_s_source": "rusage"}  # make run's kernel count (#34)
    assert summary_lines({**json.loads(json.dumps(_empty())), "time": exact})[-1] == (
        "Time: 1 jobs in 12 s, 25 s of CPU (1.9 cores busy)")
    # a make run whose Snakemake step is this invocation: its set-up counts, and its time table once written
    (tmp_path / "logs/make-run.times").write_text(f"start {now - 200:.0f}\nsetup {now - 100:.0f}\ndag {now:.0f}\n")
    assert run_time(tmp_path, reports)["make_run_setup_s"] == 100
    (reports / RUN_SUMMARY).write_text(json.dumps({"jobs": 1, "span_s": 12.0, "cpu_s": 20.0, "make_run_total_s": 1.0}))
    assert run_time(tmp_path, reports)["make_run_total_s"] == 1.0
    atomic_write_json(tmp_path / run_ids.STATE, {"id": "r1", "invoked": now + 60})  # make resume after it, nothing redone
    assert run_time(tmp_path, reports) == {}


def _empty() -> dict:
    return {"leaderboard": {"top": []}, "submission": None, "claims": {"verdicts": {}}, "parse_failures": 0,
            "report": None, "needs_a_look": [], "time": {}}


def test_a_make_run_with_nothing_to_do_says_so_and_keeps_the_last_runs_figures(tmp_path):
    """#47 item 8: a second make run finds every output up to date (Snakemake calls no onstart, so logs/run.json
    still names the first run). Its time-table step leaves the first run's figures as they were (the kernel's
    count, not the benchmarks' sampled sum over another span), and the summary says nothing was done."""
    import os
    import time

    from pipeline import run_ids
    from pipeline.io import atomic_write_json
    from pipeline.report.telemetry.time_table import RUN_SUMMARY, write_time_table

    _run_folder(tmp_path)
    now, reports = time.time(), tmp_path / "reports"
    times = tmp_path / "logs/make-run.times"
    (tmp_path / "logs").mkdir()
    _bench(tmp_path / "benchmarks/wattbot/index/hier.tsv", 200.0, 150.0, now - 710)  # the first run's one job
    atomic_write_json(tmp_path / run_ids.STATE, {"id": "r1", "invoked": now - 980})  # its onstart
    times.write_text(f"start {now - 1000}\nsetup {now - 990}\nsetup_cpu_s 8\ndag {now - 700}\ndag_cpu_s 516\n")
    write_time_table(tmp_path, reports)
    first = write_summary(tmp_path, reports, show=False)
    assert first["time"]["cores_busy"] == 1.78 and first["time"]["cpu_s_source"] == "rusage"
    assert "nothing_to_do" not in first
    written = (reports / RUN_SUMMARY).read_bytes()
    os.utime(reports / RUN_SUMMARY, (now - 690, now - 690))  # written by the first run's time-table step

    # the second make run: set-up and a Snakemake step that started no job (no onstart: run.json unchanged)
    times.write_text(f"start {now - 20}\nsetup {now - 15}\nsetup_cpu_s 3\ndag {now - 5}\ndag_cpu_s 4\n")
    write_time_table(tmp_path, reports)
    assert (reports / RUN_SUMMARY).read_bytes() == written
    second = write_summary(tmp_path, reports, show=False)
    assert second["time"] == first["time"] and second["nothing_to_do"] == {"make_run_s": 15.0}
    lines = summary_lines(second)
    assert lines[1] == "== wattbench: nothing to do, every output was up to date =="
    assert "This make run: 15 s, no job started." in lines
    assert lines[-1].startswith("The last run's time: 1 jobs in 3 min 20 s, 8 min 36 s of CPU (1.78 cores busy)")
    assert not any("sampled" in line for line in lines)
    assert json.loads((reports / "summary.json").read_text())["time"] == first["time"]

    # a third make run that does work (its onstart stamps logs/run.json inside its Snakemake step): counted again
    atomic_write_json(tmp_path / run_ids.STATE, {"id": "r2", "invoked": now - 12})
    _bench(tmp_path / "benchmarks/wattbot/index/flat.tsv", 5.0, 4.0, now - 6)
    write_time_table(tmp_path, reports)
    third = write_summary(tmp_path, reports, show=False)
    assert "nothing_to_do" not in third and third["time"]["jobs"] == 1 and third["time"]["cpu_s"] == 4.0


@pytest.mark.slow
@pytest.mark.data
def test_a_second_make_run_of_the_tiny_grid_has_nothing_to_do_and_says_so(tmp_path):
    """make run's steps on the tiny grid, twice, as the Makefile runs them (its timed set-up and Snakemake steps,
    the time table, the summary that keeps the run): the second finds every output up to date. Snakemake starts
    no onstart then (what nothing_to_do rests on); the summary says so, its time is the first run's as that run
    wrote it, and no second copy of the run is kept."""
    import subprocess
    import sys
    import time

    from dag_runner import command, environment
    from pipeline.datasets.paths import REPO, data_root

    work, config = tmp_path / "work", REPO / "tests" / "tiny.yaml"
    (work / "logs").mkdir(parents=True)
    times, env = work / "logs/make-run.times", environment({"WATTBENCH_SUMMARY_LATER": "1"})
    cfg = ["--config", str(config), "--set", f"data_root={data_root()}"]

    def run(*args: str) -> str:
        done = subprocess.run([*args], cwd=work, env=env, capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout + done.stderr

    def make_run() -> tuple[str, str]:
        times.write_text(f"start {time.time():.1f}\n")
        timed = [sys.executable, "-m", "pipeline.make_steps", "--times", str(times)]
        run(*timed, "setup", "--", sys.executable, "-c", "pass")
        dag = run(*timed, "dag", "--", *command(work, configfile=config))
        run(sys.executable, "-m", "pipeline", "time-table", "--root", ".", "--reports", "reports", *cfg)
        return dag, run(sys.executable, "-m", "pipeline", "summary", "--reports", "reports", "--keep", *cfg)

    _, said = make_run()
    first = json.loads((work / "reports/summary.json").read_text())
    assert "the run is done" in said and first["time"]["cpu_s_source"] == "rusage" and "Kept: runs/" in said
    dag, said = make_run()
    second = json.loads((work / "reports/summary.json").read_text())
    assert "Nothing to be done" in dag
    assert "nothing to do, every output was up to date" in said and "Kept: nothing new" in said
    assert second["time"] == first["time"] and set(second["nothing_to_do"]) == {"make_run_s"}
    assert f"({first['time']['cores_busy']} cores busy)" in said and "sampled" not in said
    assert len([p for p in (work / "runs").iterdir() if p.name.startswith("r")]) == 1

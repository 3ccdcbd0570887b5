"""Preflight, estimate and plan cover the jobs a run will start: the targets asked for, less what is
done (#35), not the whole grid; the whole grid's jobs give the whole grid's estimate back."""
import subprocess

import pytest
import yaml

from dag_runner import command, environment, planned_jobs
from pipeline.config import load_config, resolve_config, validate
from pipeline.datasets.paths import REPO, data_root
from pipeline.estimate import estimate, format_estimate, print_estimate
from pipeline.llm.preflight import preflight, required_envvars
from pipeline.workflow import llm_work, needed_llm_work
from test_corpora import make_corpus

TINY = REPO / "tests" / "tiny.yaml"
# a hosted variant on WattBot alone: its key is unset in these tests
HOSTED = {"hosted": {"retrieval": "bm25", "backend": "llm", "model": "openai/gpt-4o-mini", "splits": ["train"]}}


def grid(tmp_path) -> dict:
    """tiny.yaml, a hosted WattBot variant, and a corpus answered by dense-x, bm25-x and ens (whose
    members include the mocked mock-llm)."""
    entry = make_corpus(tmp_path / "corpus")
    return {"answering": HOSTED, "corpora": {"mine": {**entry, "variants": ["dense-x", "bm25-x", "ens"]}}}


def answer(dataset: str, av: str, split: str) -> tuple[str, dict]:
    return "answer", {"dataset": dataset, "av": av, "split": split}


def keyless_snakemake(work, *args, configfile) -> subprocess.CompletedProcess:
    """Snakemake on ``configfile`` with no OPENAI_API_KEY in the environment."""
    env = {k: v for k, v in environment().items() if k != "OPENAI_API_KEY"}
    return subprocess.run(command(work, *args, configfile=configfile), capture_output=True, text=True, env=env,
                          timeout=600)


def test_the_work_is_cut_to_the_llm_jobs_that_will_run(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    work = llm_work(validate(resolve_config([TINY], grid(tmp_path))))
    assert ("hosted", "train") in work.answers and ("mock-llm", "mine/questions") in work.answers
    corpus = needed_llm_work(work, [answer("mine", "bm25-x", "questions"), answer("mine", "mock-llm", "questions"),
                                    ("retrieve", {"dataset": "mine", "rv": "bm25", "split": "questions"})])
    assert corpus.answers == (("mock-llm", "mine/questions"),) and corpus.plans == ()
    assert [x.what for x in estimate(corpus).lines] == ["answer mock-llm"]
    assert corpus.users() == {}  # mocked: no key, no endpoint
    preflight(corpus)  # the hosted variant's missing key is not this run's
    assert required_envvars(corpus) == ["OPENAI_API_KEY"]  # llm.envvars: the run calls an LLM (a mocked one)
    with pytest.raises(Exception, match="OPENAI_API_KEY is not set; needed by hosted"):
        preflight(needed_llm_work(work, [answer("wattbot", "hosted", "train")]))
    none = needed_llm_work(work, [answer("wattbot", "bm25-x", "train")])
    assert none.answers == () and required_envvars(none) == [] and print_estimate(none) is None
    splits = [(v, *split.rpartition("/")) for v, split in work.answers]  # "mine/questions", or WattBot's "train"
    whole = needed_llm_work(work, [answer(dataset or "wattbot", v, name) for v, dataset, _, name in splits])
    assert whole.answers == work.answers and whole.users() == work.users()


@pytest.mark.slow
@pytest.mark.data  # plans the tiny DAG over ../shared
def test_a_dry_run_estimates_and_checks_only_the_targets_asked_for(tmp_path):
    """Asking for one corpus's two files: the estimate lists that corpus's LLM jobs alone, and the
    hosted WattBot variant's unset key is no warning; no target: the whole grid's estimate, as
    `python -m pipeline estimate` prints it, and the warning."""
    cfgfile = tmp_path / "my.yaml"
    cfgfile.write_text(yaml.safe_dump({"extends": str(TINY), **grid(tmp_path)}))
    work = tmp_path / "work"
    targets = ["reports/mine/leaderboard.csv", "reports/mine/submission.csv"]
    dry = keyless_snakemake(work, "-n", *targets, configfile=cfgfile)
    assert dry.returncode == 0, dry.stderr[-3000:]
    table = [line for line in dry.stderr.splitlines() if line.startswith(("answer ", "planner "))]
    assert len(table) == 1 and table[0].split()[:4] == ["answer", "mock-llm", "openai/mock", "mine/questions"], table
    assert "total: 3 calls" in dry.stderr and "needed by hosted" not in dry.stderr
    assert planned_jobs(dry.stdout)["answer"] == 3  # dense-x, bm25-x and mock-llm on the corpus's questions
    whole = keyless_snakemake(work, "-n", configfile=cfgfile)
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert format_estimate(estimate(llm_work(load_config(cfgfile, {"data_root": str(data_root())})))) in whole.stderr
    assert "warning: preflight: environment variable OPENAI_API_KEY is not set; needed by hosted" in whole.stderr


@pytest.mark.slow
@pytest.mark.data  # runs one tree job over ../shared
def test_a_real_run_of_targets_without_llm_needs_no_key(tmp_path):
    """The hosted variant's key is unset, yet a run asking for one parsed document starts and ends:
    no key check, no endpoint probe, no LLM plan (the whole grid stops on the key: tests/answer/test_preflight.py)."""
    cfgfile = tmp_path / "my.yaml"
    cfgfile.write_text(yaml.safe_dump({"extends": str(TINY), "answering": HOSTED}))
    done = keyless_snakemake(tmp_path / "work", "results/wattbot/trees/khan2025.json", configfile=cfgfile)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LLM plan of this run" not in done.stderr and "preflight" not in done.stderr
    assert (tmp_path / "work/results/wattbot/trees/khan2025.json").exists()

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


def llm_lines(text: str) -> list[list[str]]:
    """The LLM work column of the estimate's and the plan's rows (their model has a /, Snakemake's job table none)."""
    return [line.split()[:2] for line in text.splitlines() if line.startswith(("answer ", "planner ")) and "/" in line]


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
    assert llm_lines(dry.stderr) == [["answer", "mock-llm"]] and "mine/questions" in dry.stderr
    assert "total: 3 calls" in dry.stderr and "needed by hosted" not in dry.stderr
    assert planned_jobs(dry.stdout)["answer"] == 3  # dense-x, bm25-x and mock-llm on the corpus's questions
    whole = keyless_snakemake(work, "-n", configfile=cfgfile)
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert format_estimate(estimate(llm_work(load_config(cfgfile, {"data_root": str(data_root())})))) in whole.stderr
    assert "warning: preflight: environment variable OPENAI_API_KEY is not set; needed by hosted" in whole.stderr


@pytest.mark.slow
@pytest.mark.data  # runs the tiny DAG's mock-llm branch over ../shared
def test_a_real_run_checks_its_own_jobs_and_a_resumed_plan_prices_what_remains(tmp_path):
    """The hosted variant's key is unset, yet a run asking for mock-llm's train answers starts and ends:
    its plan lists mock-llm alone, no key is asked for (the whole grid stops on it:
    tests/answer/test_preflight.py). Then a dry run asking for those answers and mock-llm-n3's prices
    mock-llm-n3 alone: what is done is not estimated again."""
    cfgfile = tmp_path / "my.yaml"
    cfgfile.write_text(yaml.safe_dump({"extends": str(TINY), "answering": HOSTED, "llm": {"envvars": []}}))
    work, done_target = tmp_path / "work", "results/wattbot/answers/mock-llm/train.jsonl"
    done = keyless_snakemake(work, done_target, configfile=cfgfile)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LLM plan of this run" in done.stderr and "preflight" not in done.stderr
    assert llm_lines(done.stderr) == [["answer", "mock-llm"], ["answer", "mock-llm"]]  # the estimate, the plan
    dry = keyless_snakemake(work, "-n", done_target, "results/wattbot/answers/mock-llm-n3/train.jsonl",
                            configfile=cfgfile)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert llm_lines(dry.stderr) == [["answer", "mock-llm-n3"]]

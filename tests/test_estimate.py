"""The cost and time estimate printed before a run, and the KohakuRAG preset's dry run."""
import subprocess

import pandas as pd
import pytest
import yaml

from dag_runner import command, environment, planned_jobs, snakemake
from pipeline.workflow import llm_work
from pipeline.registry.answer_backends import variant_spec
from pipeline.cli import main
from pipeline.config import load_config, validate
from pipeline.datasets.paths import REPO, data_root
from pipeline.llm.serving import ASSUMED_LATENCY_S
from pipeline.llm_models import LLMSpec
from pipeline.estimate import (answer_prompt_tokens, estimate, format_estimate,
                               price_per_token, print_estimate)

pytestmark = pytest.mark.data  # counts the real WattBot questions


@pytest.fixture(scope="module")
def kr():
    return load_config(REPO / "config.kohakurag.yaml", {"data_root": str(data_root())})


def n_questions(cfg, split):
    return len(pd.read_csv(f"{cfg['wattbot']['dir']}/{cfg['wattbot']['splits'][split]}"))


def test_calls_follow_questions_samples_and_retries(kr):
    est = estimate(llm_work(kr))
    n = n_questions(kr, "train") + n_questions(kr, "test")
    runs = [m for m in kr["answering"]["kr-ensemble"]["members"]]
    assert est.total("calls", 0) == 6 * n + n           # one attempt per run and question, + the planner
    assert est.total("calls", 1) == 6 * 4 * n + n       # every retry (3) taken
    by = {(x.what, x.split): x for x in est.lines}
    assert {w for w, _ in by} == {f"answer {r}" for r in runs} | {"planner kr-planner"}
    line = by[("answer run-a1", "train")]
    assert line.questions == 41 and line.calls == (41, 164)
    assert 0 < line.prompt_tokens[0] < line.prompt_tokens[1] / 4   # later attempts show more context
    assert line.usd is not None and 0 < line.usd[0] < line.usd[1]
    inp, out = price_per_token(LLMSpec.from_dict({}).resolve("openai/gpt-4o-mini"))
    assert line.usd[0] == pytest.approx(line.prompt_tokens[0] * inp + line.completion_tokens[0] * out)
    concurrency = kr["llm"].get("concurrency") or 1   # one hosted model: its calls at its concurrency
    assert est.hours(0) == pytest.approx(est.total("calls", 0) * ASSUMED_LATENCY_S / concurrency / 3600)


def test_prompt_tokens_grow_with_context_and_use_the_real_template(kr):
    raw = kr["answering"]["run-a1"]
    v = variant_spec("run-a1", raw)
    t = [answer_prompt_tokens(v, raw["model"], "What is the energy of X?", "kWh", a) for a in range(4)]
    assert t == sorted(t) and len(set(t)) == 4
    assert t[0] > 6 * 600 // 4          # six 600-character snippets plus the template and the schema
    q_first = answer_prompt_tokens(variant_spec("q", {**raw, "prompt": "question_first"}), raw["model"], "What is the energy of X?", "kWh", 0)
    assert q_first != t[0]


def test_printout_names_unpriced_models_and_local_models_are_free(kr, capsys):
    cfg = load_config(REPO / "config.kohakurag.yaml", {"data_root": str(data_root())})
    cfg["answering"]["run-b1"]["model"] = "someprovider/unknown-model-xyz"
    text = format_estimate(estimate(llm_work(cfg)))
    total = next(line for line in text.splitlines() if line.startswith("total:"))
    assert "unpriced" in total and "someprovider/unknown-model-xyz" in total
    assert price_per_token(LLMSpec.from_dict({}).resolve("local/gemma3-270m")) == (0.0, 0.0)
    default = load_config(REPO / "config.yaml", {"data_root": str(data_root())})
    est = print_estimate(llm_work(default))
    assert est is not None and est.total("usd", 1) == 0 and "llm-cf-r1" in capsys.readouterr().err
    default["llm"]["mode"] = "replay"
    print_estimate(llm_work(default))
    assert "replay: every reply comes from the cache" in capsys.readouterr().err


def test_estimate_verb_and_a_grid_without_llm(tmp_path, capsys):
    assert main(["estimate", "--config", str(REPO / "config.kohakurag.yaml"), "--set", f"data_root={data_root()}"]) == 0
    out = capsys.readouterr().out
    assert "planner kr-planner" in out and "total:" in out and "USD" in out
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["answering"] = {k: v for k, v in raw["answering"].items() if v["backend"] == "extractive"}
    raw["data_root"] = str(data_root())
    assert print_estimate(llm_work(validate(raw))) is None


@pytest.mark.slow
def test_kohakurag_preset_dry_runs_against_a_local_endpoint(tmp_path):
    """`snakemake -n` on the preset with a fake key and the API pointed at 127.0.0.1: the DAG has
    every run, the three ensembles (wattbench's two votes, KohakuRAG's) on both splits and the planner's
    retrieval, and the estimate comes first."""
    cfg = yaml.safe_load((REPO / "config.kohakurag.yaml").read_text())
    cfg["llm"]["api_base"] = "http://127.0.0.1:9/v1"
    path = tmp_path / "kr.yaml"
    path.write_text(yaml.safe_dump(cfg))
    # one stream (the estimate goes to stderr, Snakemake's plan to stdout), so the order shows
    done = subprocess.run(command(tmp_path / "work", "-n", configfile=path), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300,
                          env=environment({"OPENAI_API_KEY": "sk-fake-for-dry-run"}))
    out = done.stdout
    assert done.returncode == 0, out[-3000:]
    jobs = planned_jobs(out)
    assert jobs["answer"] == 12 and jobs["ensemble"] == 6 and jobs["retrieve_llm"] == 2, jobs  # the planner's rule
    assert "planner kr-planner" in out and "total:" in out and "Job stats:" in out, out[-3000:]
    assert out.index("total:") < out.index("Job stats:")  # printed once the DAG is built, before Snakemake's job table


def test_hours_follow_each_models_concurrency_rate_limits_and_local_speed(kr):
    import copy

    cfg = copy.deepcopy(kr)
    cfg["llm"]["per_model"] = {"openai/gpt-4o-mini": {"concurrency": 8},
                               "openai/gpt-4.1-mini": {"concurrency": 8, "requests_per_minute": 6}}
    est = estimate(llm_work(cfg))
    calls = {m: sum(x.calls[0] for x in est.lines if x.model == m) for m in est.times}
    assert est.model_hours("openai/gpt-4o-mini", 0) == pytest.approx(calls["openai/gpt-4o-mini"] * ASSUMED_LATENCY_S / 8 / 3600)
    assert est.model_hours("openai/gpt-4.1-mini", 0) == pytest.approx(calls["openai/gpt-4.1-mini"] / 6 / 60)  # the limit binds
    assert est.hours(0) == pytest.approx(sum(est.model_hours(m, 0) for m in est.times))
    assert "req/min" in format_estimate(est)
    default = load_config(REPO / "config.yaml", {"data_root": str(data_root())})
    local = estimate(llm_work(default)).times["local/gemma3-270m"]
    assert local.basis.startswith("~") and "local" in local.basis and local.concurrency == 1 and local.per_call_s > 1


def test_a_smoke_run_estimates_the_first_n_questions_of_each_split(kr, capsys):
    """`--config limit=5` (#35): the estimate, the plan and the preflight count the 5 questions each job
    asks, not the split's all, and the tokens are those of the first 5 prompts."""
    full = {(x.what, x.split): x for x in estimate(llm_work(kr)).lines}
    limited = load_config(REPO / "config.kohakurag.yaml", {"data_root": str(data_root()), "limit": 5})
    work = llm_work(limited)
    assert work.limit == 5 and llm_work(kr).limit is None
    est = estimate(work)
    by = {(x.what, x.split): x for x in est.lines}
    assert by.keys() == full.keys()
    for key, line in by.items():
        assert line.questions == 5 and line.calls[0] * full[key].questions == full[key].calls[0] * 5
        assert 0 < line.prompt_tokens[0] < full[key].prompt_tokens[0]
    first = pd.read_csv(f"{kr['wattbot']['dir']}/{kr['wattbot']['splits']['train']}", dtype=str, keep_default_na=False)
    raw = kr["answering"]["run-a1"]
    v = variant_spec("run-a1", raw)
    want = sum(answer_prompt_tokens(v, raw["model"], q.question, q.answer_unit, 0) for q in first.head(5).itertuples())
    assert by[("answer run-a1", "train")].prompt_tokens[0] == want
    assert "limit 5: the first 5 questions of each split" in format_estimate(est)
    assert "limit" not in format_estimate(estimate(llm_work(kr)))


def test_a_request_two_variants_send_is_counted_once():
    """The claims grid's controls are requests of their treatments (#48): llm-1x-seed0 is sample 0 of
    llm-3x-seed0's vote, llm-cf-r1's first attempt is llm-cf's request; the cache answers the second,
    so the estimate counts the first only, and says how many it left out. Requests that differ in any
    key that reaches the call (the prompt order, the seed) stay two."""
    cfg = load_config(REPO / "config.claims.yaml", {"data_root": str(data_root())})
    est = estimate(llm_work(cfg))
    by = {(x.what, x.split): x for x in est.lines}
    one, three = by[("answer llm-1x-seed0", "test")], by[("answer llm-3x-seed0", "test")]
    assert one.calls == (one.questions, one.questions) and one.shared == 0
    assert three.calls == (2 * three.questions,) * 2 and three.shared == three.questions
    cf, r1, qf = (by[(f"answer {v}", "train")] for v in ("llm-cf", "llm-cf-r1", "llm-qf"))
    assert r1.calls == (0, 41) and r1.shared == 41 and 0 < r1.prompt_tokens[1]
    assert cf.shared == qf.shared == 0 and qf.calls == cf.calls == (41, 41)
    assert est.total("calls", 0) + sum(x.shared for x in est.lines) == sum(
        x.questions * variant_spec(x.what.split()[1], cfg["answering"][x.what.split()[1]]).samples for x in est.lines)
    assert f"{sum(x.shared for x in est.lines):,} more are requests another line sends too" in format_estimate(est)
    other_seed = load_config(REPO / "config.claims.yaml", {"data_root": str(data_root()),
                                                           "answering": {"llm-1x-seed0": {"params": {"seed": 7}}}})
    by7 = {(x.what, x.split): x for x in estimate(llm_work(other_seed)).lines}
    assert by7[("answer llm-3x-seed0", "test")].shared == 0

"""Spend you can see and cap: run ids, the usage records, `cost`, llm.prices, the spend gate, replay packs."""
import json
import subprocess

import pytest
import yaml

from dag_runner import command, environment
from pipeline.workflow import llm_work
from pipeline import run_ids
from pipeline.cli import main
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO, data_root
from pipeline.estimate import estimate
from pipeline.llm_models import LLMSpec
from pipeline.llm.gateway import LLMGateway, LLMRequest, SpendCapReached
from pipeline.llm.preflight import preflight
from pipeline.llm.usage import cost_rows
from pipeline.plan import CONFIRM_ENV, spend_gate

MOCK = '{"explanation": "mock", "answer": "4.3", "answer_value": "4.3", "ref_id": ["patterson2021"]}'
# USD per million tokens: a mocked reply (litellm counts 10 prompt + 20 completion tokens) costs 0.03
PRICES = {"openai/mock": {"input": 1000, "output": 1000}}
CALL_USD = 0.03


def tiny(**llm) -> dict:
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["data_root"] = str(data_root())
    raw["llm"].update(llm)
    return raw


def mock_request(text: str) -> LLMRequest:
    return LLMRequest("openai/mock", [{"role": "user", "content": text}], {"mock_response": MOCK, "max_tokens": 20})


def test_a_run_cannot_pass_its_own_cap_and_earlier_runs_do_not_count(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = tmp_path / "llm.sqlite"
    with LLMGateway(path, LLMSpec.from_dict({**{"prices": PRICES}}), run_id="r-old", variant="a") as old:  # no cap: counted anyway
        assert all(old.complete(mock_request(f"q{i}")).ok for i in range(5))
    with LLMGateway(path, LLMSpec.from_dict({"max_cost_usd": 0.05, **{"prices": PRICES}}), run_id="r-new", variant="b") as new:
        assert new.complete(mock_request("n0")).ok  # r-old's 0.15 USD is not this run's
        with pytest.raises(SpendCapReached, match="run r-new has spent 0.0300 USD"):
            new.complete(mock_request("n1"))  # 0.03 spent + up to 0.0207 for the next call > 0.05
        hit = new.complete(mock_request("q0"))  # a cached reply costs nothing: served at the cap
        assert hit.cached and hit.ok
    rows = {(r.run, r.variant): r for r in cost_rows(path)}
    assert rows[("r-old", "a")].calls == 5 and rows[("r-old", "a")].usd == pytest.approx(5 * CALL_USD)
    n = rows[("r-new", "b")]
    assert (n.calls, n.cached, n.prompt_tokens, n.completion_tokens) == (2, 1, 10, 20)
    assert n.usd == pytest.approx(CALL_USD) and n.usd <= 0.05
    assert [r.run for r in cost_rows(path, "r-new")] == ["r-new"]


def test_prices_entries_need_both_numbers(monkeypatch):
    with pytest.raises(ConfigError, match=r"^config key 'llm\.prices\.openai/mock\.output': required$"):
        validate(tiny(prices={"openai/mock": {"input": 1}}))
    with pytest.raises(ConfigError, match=r"'llm\.prices\.openai/mock\.input': 'cheap' is not of type 'number'"):
        validate(tiny(prices={"openai/mock": {"input": "cheap", "output": 1}}))
    assert validate(tiny(prices=PRICES))["llm"]["prices"] == PRICES


def test_a_cap_needs_every_called_model_priced(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    raw = tiny(max_cost_usd=5)
    raw["answering"]["mock-llm"] = {"retrieval": "bm25", "backend": "llm", "model": "openai/my-vllm"}  # not mocked
    with pytest.raises(ConfigError, match=r"max_cost_usd is set but openai/my-vllm \(mock-llm\) has no price"):
        preflight(llm_work(validate(raw)))
    raw["llm"]["prices"] = {"openai/my-vllm": {"input": 0.1, "output": 0.2}}
    preflight(llm_work(validate(raw)))
    del raw["llm"]["max_cost_usd"]
    del raw["llm"]["prices"]
    preflight(llm_work(validate(raw)))  # no cap: an unpriced model is only reported (the plan says UNPRICED)


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_the_gate_refuses_a_priced_run_without_a_cap_or_a_confirmation():
    cfg = validate(tiny(prices=PRICES))
    est = estimate(llm_work(cfg))
    with pytest.raises(ConfigError, match=r"spend gate: this run may spend up to USD [\d.,]+ .*llm\.max_cost_usd"):
        spend_gate(LLMSpec.from_dict(cfg["llm"]), est, {})
    assert "confirmed by WATTBENCH_CONFIRM_SPEND=1" in spend_gate(LLMSpec.from_dict(cfg["llm"]), est, {CONFIRM_ENV: "1"})
    confirmed = validate(tiny(prices=PRICES, confirm_spend=True))
    assert "confirmed by llm.confirm_spend" in spend_gate(LLMSpec.from_dict(confirmed["llm"]), est, {})
    capped = validate(tiny(prices=PRICES, max_cost_usd=3))
    assert "stops at llm.max_cost_usd = 3" in spend_gate(LLMSpec.from_dict(capped["llm"]), est, {})
    assert "replay" in spend_gate(LLMSpec.from_dict(validate(tiny(prices=PRICES, mode="replay"))["llm"]), est, {})
    unpriced = validate(tiny())  # openai/mock is in no price list: nothing priced to confirm
    assert spend_gate(LLMSpec.from_dict(unpriced["llm"]), estimate(llm_work(unpriced)), {}).startswith("spend: priced estimate USD 0.00")


def test_run_ids_continue_an_unfinished_run_and_renew_after_a_finished_one(tmp_path, monkeypatch):
    monkeypatch.delenv(run_ids.ENV, raising=False)
    state = tmp_path / "run.json"
    first = run_ids.begin_run(state)
    assert first.id.startswith("r") and run_ids.current_run_id(state) == first.id
    monkeypatch.delenv(run_ids.ENV)
    again = run_ids.begin_run(state)  # the first did not finish (killed, failed, stopped at its cap): continued
    assert (again.id, again.resumed) == (first.id, 1)
    run_ids.end_run(state)
    monkeypatch.delenv(run_ids.ENV)
    assert run_ids.current_run_id(state).startswith("adhoc-")  # outside a run: a run of its own
    assert run_ids.begin_run(state).id != first.id
    assert run_ids.resolve_run("last", state) == run_ids.read_state(state).id


def test_a_run_id_belongs_to_one_resolved_config(tmp_path, monkeypatch):
    """An unfinished run is continued only by a run of the same config hash; another config starts a new
    run and onstart says why (#35). WATTBENCH_RUN_ID set by hand still names the run, whatever the config."""
    import io

    from pipeline.estimate import Estimate
    from pipeline.plan import start_run

    monkeypatch.delenv(run_ids.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    state = run_ids.STATE
    first = run_ids.begin_run(state, ["a.yaml"], config_hash="aaaa")
    assert run_ids.read_state(state).config_hash == "aaaa" and first.invoked > 0
    monkeypatch.delenv(run_ids.ENV)
    out = io.StringIO()
    same = start_run(None, ["a.yaml"], out, est=Estimate(), config_hash="aaaa")  # e.g. make resume after a failure
    assert same == first.id and run_ids.read_state(state).resumed == 1 and "new run" not in out.getvalue()
    monkeypatch.delenv(run_ids.ENV)
    out = io.StringIO()
    other = start_run(None, ["b.yaml"], out, est=Estimate(), config_hash="bbbb")  # --configfile b.yaml after it
    assert other != first.id
    assert out.getvalue().splitlines()[0] == (f"new run {other}: the config differs from unfinished run {first.id} "
                                              "(config hash aaaa ≠ bbbb)")
    now = run_ids.read_state(state)
    assert (now.config_files, now.config_hash, now.resumed) == (["b.yaml"], "bbbb", 0)
    monkeypatch.delenv(run_ids.ENV)
    back = run_ids.begin_run(state, ["a.yaml"], config_hash="aaaa")  # back to a: b's unfinished run is not a's
    assert back.id not in (first.id, other)
    monkeypatch.setenv(run_ids.ENV, back.id)  # named by hand: continued, whatever the config
    forced = run_ids.begin_run(state, ["b.yaml"], config_hash="bbbb")
    assert (forced.id, forced.resumed, forced.config_hash) == (back.id, 1, "bbbb") and forced.invoked >= back.invoked
    old = run_ids.RunState("r-old")  # logs/run.json of before: no config hash recorded, never continued by a hashed run
    assert not run_ids.continues(old, "aaaa") and "(config hash not recorded ≠ aaaa)" in run_ids.superseded(old, first)


TARGETS = [f"results/wattbot/answers/mock-llm/{s}.{ext}" for s in ("train", "test") for ext in ("jsonl", "csv")]


def _run(work, config, *args, env=None, key=True):
    env = environment(env)
    if not key:
        env.pop("OPENAI_API_KEY")
    return subprocess.run(command(work, *TARGETS, *args, configfile=config), capture_output=True, text=True,
                          env=env, timeout=1200)


@pytest.mark.slow
def test_gate_cost_and_replay_pack_on_the_tiny_dag(tmp_path, capsys):
    """A priced run stops at the gate before any job; confirmed, it runs under a run id; `cost` shows
    what it bought; its replay pack holds its replies only and, in a fresh folder with no key,
    reproduces its answer files byte for byte."""
    raw = tiny(prices=PRICES)
    raw["answering"] = {k: raw["answering"][k] for k in ("bm25-x", "mock-llm")}
    raw["default_variant"] = "bm25-x"
    del raw["suite"]
    config = tmp_path / "tiny-priced.yaml"
    config.write_text(yaml.safe_dump(raw))
    work = tmp_path / "work"

    refused = _run(work, config)
    assert refused.returncode != 0 and "spend gate: this run may spend up to USD" in refused.stderr
    assert not (work / "results").exists() and not (work / "logs/run.json").exists()

    done = _run(work, config, env={CONFIRM_ENV: "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "confirmed by WATTBENCH_CONFIRM_SPEND=1" in done.stderr and "nothing (mocked)" in done.stderr
    state = json.loads((work / "logs/run.json").read_text())
    assert state["status"] == "done" and f"run id: {state['id']} (new" in done.stderr
    cache = work / "data" / "cache"
    with LLMGateway(cache / "llm.sqlite", LLMSpec.from_dict({**{"prices": PRICES}}), run_id="r-other") as other:
        assert other.complete(mock_request("not this run's")).ok  # another run in the same cache

    assert main(["cost", "--cache-dir", str(cache), "--run", state["id"]]) == 0
    out = capsys.readouterr().out
    assert state["id"] in out and "mock-llm" in out and "r-other" not in out
    (row,) = cost_rows(cache / "llm.sqlite", state["id"])
    n = sum(1 for s in ("train", "test") for _ in (work / f"results/wattbot/answers/mock-llm/{s}.jsonl").open())
    assert (row.variant, row.model, row.calls) == ("mock-llm", "openai/mock", n)
    assert row.cached < 3 and row.usd == pytest.approx((n - row.cached) * CALL_USD)  # a repeated prompt: a hit

    pack = tmp_path / "pack"
    assert main(["export-replay", state["id"], str(pack), "--cache-dir", str(cache)]) == 0
    manifest = json.loads((pack / "manifest.json").read_text())
    assert manifest["run"] == state["id"] and manifest["replies"] == n - row.cached
    assert manifest["requests_without_reply"] == []
    assert {r.run for r in cost_rows(pack / "llm.sqlite")} == {state["id"]}

    fresh = tmp_path / "elsewhere"
    replay = _run(fresh, config, "--config", f"cache_dir={pack}", "llm={mode: replay}", key=False)
    assert replay.returncode == 0, replay.stderr[-3000:]
    for target in TARGETS:
        assert (fresh / target).read_bytes() == (work / target).read_bytes(), target


def test_the_plan_prints_the_endpoint_checks_preflight_made_without_probing_again(monkeypatch):
    """Endpoints are probed once per real run: onstart's preflight probes and hands its lines to the plan."""
    import io

    import pipeline.llm.endpoints as endpoints
    from pipeline.plan import print_plan

    probes = []
    monkeypatch.setattr(endpoints, "probe", lambda cfg, *a, **k: probes.append(1) or [])
    cfg = validate(tiny(prices=PRICES, confirm_spend=True))
    out = io.StringIO()
    print_plan(llm_work(cfg), estimate(llm_work(cfg)), out, with_estimate=False, endpoint_lines=["endpoint http://x/v1: serves mock"])
    assert probes == [] and "endpoint http://x/v1: serves mock" in out.getvalue()
    print_plan(llm_work(cfg), estimate(llm_work(cfg)), io.StringIO(), with_estimate=False)  # nothing probed before: the plan probes
    assert probes == [1]

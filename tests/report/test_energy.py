"""The energy and CO2 estimate (pipeline/report/telemetry/energy.py): CPU seconds attributed to variants by their
benchmark paths, hosted LLM tokens from the answer jobs' telemetry, the stated formula, the outputs
named as run telemetry, and the run summary's one line."""
import json
import os
import time

import pytest

from pipeline.config import ConfigError, validate
from pipeline.io import atomic_write_jsonl
from pipeline.report.telemetry.energy import (SUMMARY, TABLE, attribute, energy_line, energy_table,
                                    hosted_tokens, rapl_note, write_energy)
from pipeline.report.summary import summary_lines, write_summary
from pipeline.workflow.report_settings import energy_inputs, power_model
from pipeline.report.telemetry.time_table import JobTime, read_benchmarks, rule_of
from tests.dag_runner import result_files

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
# benchmark path -> (wall s, CPU s)
JOBS = {
    "wattbot/answer/llm-cf/train": (1000.0, 3600.0),
    "wattbot/answer/gpt/train": (50.0, 36.0),
    "wattbot/evaluate/llm-cf": (2.0, 1.8),
    "wattbot/ensemble/ens5/train": (3.0, 1.2),
    "wattbot/retrieve/hier-convex/train": (12.0, 360.0),
    "hotpotqa/retrieve/hier-convex/queries": (10.0, 180.0),
    "hotpotqa/suite_evaluate/hier-convex": (5.0, 90.0),
    "wattbot/index/hier": (100.0, 720.0),
    "wattbot/sprout_attention": (400.0, 720.0),
    "parsing/sample/quality": (30.0, 36.0),
}
CFG = {
    "llm": {"model": "local/gemma3-270m"},
    "answering": {"llm-cf": {"backend": "llm"}, "gpt": {"backend": "llm", "model": "openai/gpt-4o-mini"},
                  "mock": {"backend": "llm", "model": "openai/mock", "params": {"mock_response": "{}"}}},
    "energy": {"cpu_watts_per_core": 10.0, "pue": 1.0, "llm_wh_per_1k_tokens": 0.5, "grid_gco2_per_kwh": 400.0},
}
INPUTS = energy_inputs(CFG)  # what the time-table verb parses once


def _job(path: str, cpu_s: float = 1.0) -> JobTime:
    return JobTime(rule_of(f"benchmarks/{path}.tsv"), path, 1.0, cpu_s, 0.0)


@pytest.fixture
def run(tmp_path):
    for rel, (wall, cpu) in JOBS.items():
        p = tmp_path / "benchmarks" / f"{rel}.tsv"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(HEADER + f"{wall}\t0:00:00\t100\t0\t0\t0\t0\t0\t0\t{cpu}\n")
    calls = [
        {"id": "q1", "cached": False, "latency_s": 2.0, "tries": 1, "prompt_tokens": 1500, "completion_tokens": 500},
        {"id": "q2", "cached": False, "latency_s": 1.0, "tries": 1, "prompt_tokens": 700, "completion_tokens": 300},
        {"id": "q3", "cached": True, "latency_s": 0.0, "tries": 1, "prompt_tokens": 9000, "completion_tokens": 900},
    ]
    for av in ("gpt", "llm-cf", "mock", "gone"):  # gone: a variant no longer in the config
        atomic_write_jsonl(tmp_path / f"results/wattbot/answers/{av}/train.jsonl.telemetry.jsonl", calls)
    return tmp_path


def test_jobs_are_attributed_to_the_variant_their_benchmark_path_names():
    assert attribute(_job("wattbot/answer/llm-cf/train")) == ("answering", "llm-cf")
    assert attribute(_job("wattbot/ensemble/ens5/dev")) == ("answering", "ens5")
    assert attribute(_job("wattbot/evaluate/convex-extractive")) == ("answering", "convex-extractive")
    assert attribute(_job("msmarco/retrieve/sprout-b3/queries")) == ("retrieval", "sprout-b3")
    assert attribute(_job("hotpotqa/suite_evaluate/bm25")) == ("retrieval", "bm25")
    assert attribute(_job("wattbot/index/hier")) == ("index", "hier")
    assert attribute(_job("wattbot/sprout_attention")) == ("shared", "sprout_attention")
    assert attribute(_job("parsing/sample/quality")) == ("shared", "parse_quality")
    assert attribute(_job("somewhere/else")) == ("shared", "other")


def test_only_live_calls_to_models_served_elsewhere_get_the_token_constant(run):
    # q1 + q2 live (3000 tokens); q3 came from the cache; llm-cf's local model is in its job's CPU seconds;
    # mock's stand-in draws nothing
    assert hosted_tokens(run, INPUTS) == {"gpt": 3000, "gone": 3000}


def test_the_formula_per_variant_and_in_total(run):
    power = INPUTS.power
    table = energy_table(read_benchmarks(run), hosted_tokens(run, INPUTS), power).set_index(["kind", "variant"])
    # 3600 CPU s x 10 W = 36 kJ = 0.01 kWh; x 400 g/kWh = 4 g
    llm = table.loc[("answering", "llm-cf")]
    assert (llm["jobs"], llm["cpu_s"], llm["cpu_kwh"], llm["llm_kwh"]) == (2, 3601.8, 0.010005, 0.0)
    assert llm["gco2e"] == pytest.approx(4.002)
    # 36 CPU s = 0.0001 kWh; 3000 hosted tokens x 0.5 Wh/1k = 1.5 Wh = 0.0015 kWh
    gpt = table.loc[("answering", "gpt")]
    assert (gpt["cpu_kwh"], gpt["hosted_llm_tokens"], gpt["llm_kwh"], gpt["kwh"]) == (0.0001, 3000, 0.0015, 0.0016)
    assert table.loc[("answering", "gone")]["jobs"] == 0 and table.loc[("answering", "gone")]["llm_kwh"] == 0.0015
    # a retrieval variant sums its jobs over every dataset (retrieve and suite_evaluate)
    assert table.loc[("retrieval", "hier-convex")]["cpu_s"] == 630.0
    total = table.loc[("all", "all")]
    assert total["cpu_s"] == sum(cpu for _, cpu in JOBS.values()) and total["hosted_llm_tokens"] == 6000
    assert total["kwh"] == pytest.approx(total["cpu_s"] * 10 / 3.6e6 + 0.003, abs=1e-9)
    assert total["gco2e"] == pytest.approx(total["kwh"] * 400, abs=1e-6)
    assert list(table.index)[-1] == ("all", "all") and list(table.index)[0] == ("answering", "llm-cf")


def test_the_constants_come_from_the_config_with_the_schema_s_defaults():
    defaults = power_model({})
    assert defaults.country == "world" and defaults.cpu_watts_per_core > 0 and defaults.pue == 1.0
    assert power_model({"energy": {"cpu_watts_per_core": 20}}).cpu_kwh(3600) == 0.02
    assert power_model({"energy": {"pue": 1.5}}).cpu_kwh(3600) == pytest.approx(defaults.cpu_kwh(3600) * 1.5)


def test_an_unknown_energy_key_is_refused(tmp_path):
    from pipeline.config import load_config

    cfg = load_config("tests/tiny.yaml")
    validate({**cfg, "energy": {"grid_gco2_per_kwh": 300, "country": "FR"}})
    with pytest.raises(ConfigError, match="energy"):
        validate({**cfg, "energy": {"watts": 5}})


def test_the_outputs_are_run_telemetry_and_the_summary_says_estimate(run, capsys):
    s = write_energy(run, run / "reports", INPUTS)
    assert TABLE.count(".telemetry.") == 1 and SUMMARY.count(".telemetry.") == 1
    assert (run / "reports" / TABLE).exists() and (run / "reports" / SUMMARY).exists()
    assert not any("energy" in p for p in result_files(run))  # never among the byte-identical results
    written = json.loads((run / "reports" / SUMMARY).read_text())
    assert written == s and s["estimate"] is True and s["power_model"]["grid_gco2_per_kwh"] == 400.0
    assert "RAPL" in s["rapl"] and "kWh" in s["formula"]
    line = energy_line(s)
    assert line.startswith(f"Energy (estimate): {s['kwh']:.3g} kWh, {s['gco2e']:.3g} gCO2e (10 W per busy core, ")
    assert "0.00035 kWh" in energy_line({**s, "kwh": 0.00035025})  # a tiny run is not rounded to nothing
    summary = write_summary(run, run / "reports", show=False)
    assert summary["energy"] == s and summary_lines(summary)[-1] == line


def test_a_stale_estimate_is_left_out_of_the_summary(run):
    write_energy(run, run / "reports", INPUTS)
    later = time.time() + 60  # a job of a later run ended after the estimate was written
    os.utime(run / "benchmarks/wattbot/index/hier.tsv", (later, later))
    assert write_summary(run, run / "reports", show=False)["energy"] is None


def test_rapl_is_noted_only_when_readable(tmp_path):
    assert rapl_note(str(tmp_path / "intel-rapl*/energy_uj")).startswith("No readable RAPL")
    counter = tmp_path / "intel-rapl:0/energy_uj"
    counter.parent.mkdir()
    counter.write_text("123\n")
    assert "readable here (1) but not used" in rapl_note(str(tmp_path / "intel-rapl*/energy_uj"))


def test_a_folder_without_benchmarks_costs_nothing(tmp_path):
    s = write_energy(tmp_path, tmp_path / "reports", energy_inputs({}))
    assert (s["kwh"], s["gco2e"], s["cpu_s"], s["hosted_llm_tokens"]) == (0.0, 0.0, 0.0, 0)
    assert s["power_model"]["country"] == "world"

"""Job priorities follow the longest remaining chain (pipeline/workflow/critical_path.py)."""

import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from pipeline.workflow.critical_path import (
    JobLengths,
    chain_lengths,
    critical_path,
    job_key,
    load_lengths,
    prioritise,
    priority,
)
from pipeline.workflow.list_schedule import SimJob, greedy, ilp, makespan, schedule

# A toy DAG: a long chain a1 → a2 → a3 → end (30 s each) beside a wide fan of ten 5 s jobs f0..f9 → end.
LONG = ["a1", "a2", "a3"]
FAN = [f"f{i}" for i in range(10)]
EDGES = {**{"a1": ["a2"], "a2": ["a3"], "a3": ["end"]}, **{f: ["end"] for f in FAN}, "end": []}
LENGTH = {**{a: 30.0 for a in LONG}, **{f: 5.0 for f in FAN}, "end": 1.0}


def test_a_long_chain_outranks_a_wide_fan_of_short_jobs():
    chain = chain_lengths(EDGES, EDGES.__getitem__, LENGTH.__getitem__)
    assert chain["a1"] == 91.0 and chain["a3"] == 31.0 and chain["f0"] == 6.0 and chain["end"] == 1.0
    ranked = sorted(chain, key=lambda n: -priority(chain[n]))
    assert ranked[:3] == LONG  # the chain's head first, although the fan has more jobs and more total work
    assert all(priority(chain["a3"]) > priority(chain[f]) for f in FAN)
    assert critical_path(chain, EDGES.__getitem__) == [*LONG, "end"]


# The default grid's LLM end, in small: a build, then two local-LLM answers holding both cores, each
# with its scores; a fan of short 1-core jobs beside them.
GRID_END = {
    "llm_runtime": SimJob(60, 1, ("llm-cf", "llm-cf-r1")),
    "llm-cf": SimJob(60, 2, ("evaluate", "ensemble")),
    "evaluate": SimJob(80, 1, ("report",)),
    "ensemble": SimJob(30, 1, ("report",)),
    "llm-cf-r1": SimJob(60, 2, ("evaluate-r1",)),
    "evaluate-r1": SimJob(150, 1, ("report",)),
    **{f"suite{i}": SimJob(7, 1, ("report",)) for i in range(10)},
    "report": SimJob(1, 1),
}


def test_a_job_on_two_cores_ranks_per_core_so_the_ilp_does_not_idle_a_core_for_it():
    """When llm-cf-r1 ends both cores are free, and the schedulers start what ranks highest: by chain
    alone, r1's scores (151, one core) outranked llm-cf (141, two cores), and one core then idled 150 s
    until the scores ended and llm-cf got both. Per core (2 x 141) llm-cf starts at once and the scores
    of both run side by side: 80 s shorter under Snakemake's ILP (largest sum of priorities that fits)
    and its greedy fallback (highest priority first) alike."""
    chain = chain_lengths(GRID_END, lambda n: GRID_END[n].dependents, lambda n: GRID_END[n].seconds)
    old = {n: priority(chain[n]) for n in GRID_END}
    new = {n: priority(chain[n], GRID_END[n].cores) for n in GRID_END}
    assert (new["llm-cf"], new["llm-cf-r1"], new["evaluate-r1"]) == (282, 422, 151)
    assert {n: p for n, p in new.items() if GRID_END[n].cores == 1} == {n: p for n, p in old.items() if GRID_END[n].cores == 1}
    for select in (ilp, greedy):
        assert makespan(schedule(GRID_END, old, 2, select)) == 418.0
        assert makespan(schedule(GRID_END, new, 2, select)) == 338.0  # the work alone needs 315.5 on 2 cores
    # --cores 1 scales every job to one core; the order then cannot matter: the sum of the lengths
    assert makespan(schedule(GRID_END, old, 1)) == makespan(schedule(GRID_END, new, 1)) == 511.0


def test_the_simulated_ilp_maximises_the_sum_of_priorities_on_the_free_cores():
    cores = {"two": (2, 0), "a": (1, 0), "b": (1, 0)}
    assert ilp(["two", "a", "b"], (2, 0), {"two": 100, "a": 60, "b": 50}, cores) == ["a", "b"]  # 110 > 100
    assert greedy(["two", "a", "b"], (2, 0), {"two": 100, "a": 60, "b": 50}, cores) == ["two"]
    assert ilp(["two", "a", "b"], (1, 0), {"two": 500, "a": 1, "b": 2}, cores) == ["b"]  # no core left idle for "two"


def test_the_simulated_scheduler_holds_llm_jobs_to_the_llm_api_total():
    """At concurrency 1 the two local-LLM answers hold 1 core and 1 llm_api unit each, and the default
    total is the largest share (1): they never overlap, and the other core takes the rest meanwhile."""
    jobs = {"llm-cf": SimJob(200, 1, (), 1), "llm-cf-r1": SimJob(200, 1, (), 1),
            **{f"suite{i}": SimJob(50, 1) for i in range(8)}}
    prio = {j: 1 for j in jobs}
    one = schedule(jobs, prio, 2, ilp, llm_api=1)
    a, b = sorted((one["llm-cf"], one["llm-cf-r1"]))
    assert a[1] <= b[0] and max(e for _, e in one.values()) == 400.0
    two = schedule(jobs, prio, 2, ilp, llm_api=2)
    assert two["llm-cf"][0] == two["llm-cf-r1"][0] == 0.0 and max(e for _, e in two.values()) == 400.0
    assert makespan(schedule(jobs, prio, 2, greedy, llm_api=1)) == 400.0


@dataclass(frozen=True)
class StandInJob:
    benchmark: str
    threads: int


def test_prioritise_sets_each_jobs_chain_per_core_it_holds(tmp_path):
    """The onstart hook on a stand-in DAG: the answer job holds 2 cores (its threads), the index 1."""
    index = StandInJob("benchmarks/wattbot/index/hier.tsv", 1)
    answer = StandInJob("benchmarks/wattbot/answer/llm-cf/train.tsv", 2)
    bench = tmp_path / "benchmarks" / "wattbot"
    for rel, s in (("index/hier.tsv", 180.0), ("answer/llm-cf/train.tsv", 168.0)):
        (bench / rel).parent.mkdir(parents=True, exist_ok=True)
        (bench / rel).write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{s}\t0:03:00\t100\t{s}\n")
    dag = SimpleNamespace(needrun_jobs=lambda: [index, answer], depending={index: [answer], answer: []}, _priority={})
    path = prioritise(SimpleNamespace(dag=dag), tmp_path)
    assert dag._priority == {index: 348, answer: 336}
    assert path == ["wattbot/index/hier", "wattbot/answer/llm-cf/train"]


def test_chain_lengths_take_the_longest_branch_and_survive_a_deep_dag():
    edges = {"s": ["x", "y"], "x": ["t"], "y": ["t"], "t": []}
    chain = chain_lengths(edges, edges.__getitem__, {"s": 1, "x": 10, "y": 2, "t": 1}.__getitem__)
    assert chain["s"] == 12
    deep = {i: [i + 1] for i in range(5000)} | {5000: []}
    assert chain_lengths(deep, deep.__getitem__, lambda n: 1.0)[0] == 5001.0  # no recursion limit


def test_lengths_fall_back_from_job_to_rule_and_dataset_to_rule():
    lengths = JobLengths.of_jobs({"wattbot/index/hier": 180.0, "wattbot/index/flat": 200.0, "hotpotqa/index/hier": 20.0})
    assert lengths.seconds("wattbot/index/hier") == 180.0
    assert lengths.seconds("wattbot/index/mine") == 190.0  # a new WattBot index: WattBot's index mean
    assert lengths.seconds("msmarco/index/hier") == pytest.approx(400 / 3)  # a dataset never timed: the rule's mean
    assert job_key("benchmarks/wattbot/index/hier.tsv") == "wattbot/index/hier"


def test_the_last_runs_benchmarks_override_the_shipped_table(tmp_path):
    shipped = tmp_path / "job_lengths.json"
    shipped.write_text(json.dumps({"jobs": {"wattbot/index/hier": 180.0, "wattbot/index/flat": 200.0}}))
    bench = tmp_path / "benchmarks" / "wattbot" / "index"
    bench.mkdir(parents=True)
    (bench / "hier.tsv").write_text("s\th:m:s\tmax_rss\tcpu_time\n42.5\t0:00:42\t100\t40\n")
    lengths = load_lengths(tmp_path, shipped)
    assert lengths.seconds("wattbot/index/hier") == 42.5 and lengths.seconds("wattbot/index/flat") == 200.0


def test_refreshing_the_table_keeps_only_the_lengths_asked_for(tmp_path):
    """``job-lengths --keep llm_runtime``: a job the run found done (the llama build, cached) keeps the old
    table's length; every other job takes the run's, and a job the old table lacks is an error."""
    from pipeline.workflow.critical_path import write_shipped

    out = tmp_path / "job_lengths.json"
    out.write_text(json.dumps({"jobs": {"llm_runtime": 372.0, "wattbot/index/hier": 180.0}}))
    for rel, s in (("llm_runtime.tsv", 2.8), ("wattbot/index/hier.tsv", 50.0)):
        (tmp_path / "benchmarks" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "benchmarks" / rel).write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{s}\t0:00:50\t100\t{s}\n")
    assert write_shipped(tmp_path, out, "a run", ["llm_runtime"]) == 2
    assert json.loads(out.read_text()) == {"source": "a run", "jobs": {"llm_runtime": 372.0, "wattbot/index/hier": 50.0}}
    write_shipped(tmp_path, out, "a run")
    assert json.loads(out.read_text())["jobs"]["llm_runtime"] == 2.8
    with pytest.raises(SystemExit, match="--keep figures: not in"):
        write_shipped(tmp_path, out, "a run", ["figures"])


def test_the_shipped_table_covers_the_default_grids_longest_jobs():
    """The table ships with the repo: WattBot's indexes, SproutRAG attention and the LLM answers are in it."""
    from pipeline.workflow.critical_path import SHIPPED

    jobs = json.loads(SHIPPED.read_text())["jobs"]
    assert {"wattbot/index/hier", "wattbot/index/flat", "wattbot/sprout_attention", "llm_runtime"} <= set(jobs)


def test_the_timeline_puts_overlapping_jobs_in_separate_lanes_and_marks_the_path():
    from pipeline.report.telemetry.time_table import JobTime
    from pipeline.report.telemetry.timeline import lanes, timeline_png

    jobs = [JobTime("index", "wattbot/index/hier", 100, 90, 1, end=1100), JobTime("retrieve", "wattbot/retrieve/x/train", 50, 40, 1, end=1150),
            JobTime("sprout_attention", "hotpotqa/sprout_attention", 120, 100, 1, end=1120)]
    bars = {b.job: b for b in lanes(jobs, {"wattbot/index/hier", "wattbot/retrieve/x/train"})}
    assert bars["wattbot/index/hier"].start == 0 and bars["hotpotqa/sprout_attention"].start == 0
    assert bars["wattbot/index/hier"].lane != bars["hotpotqa/sprout_attention"].lane
    assert bars["wattbot/retrieve/x/train"].lane == bars["wattbot/index/hier"].lane  # it starts when the index ends
    assert bars["wattbot/index/hier"].critical and not bars["hotpotqa/sprout_attention"].critical
    assert timeline_png(list(bars.values()))[:4] == b"\x89PNG"

"""The scheduler simulation on N nodes of C cores with a per-job submission latency
(pipeline/workflow/list_schedule.py), on DAGs small enough to check by hand."""

import pytest

from pipeline.workflow.list_schedule import Nodes, SimJob, greedy, ilp, makespan, schedule


def chain(n: int, seconds: float = 10.0) -> dict[str, SimJob]:
    """j0 → j1 → … → j(n-1), each ``seconds`` long on one core."""
    return {f"j{i}": SimJob(seconds, 1, (f"j{i + 1}",) if i + 1 < n else ()) for i in range(n)}


def fan(n: int, seconds: float = 10.0) -> dict[str, SimJob]:
    """``n`` independent 1-core jobs, then one 1 s job waiting on them all."""
    return {**{f"f{i}": SimJob(seconds, 1, ("end",)) for i in range(n)}, "end": SimJob(1.0)}


def flat(jobs: dict[str, SimJob]) -> dict[str, int]:
    return {j: 1 for j in jobs}


@pytest.mark.parametrize("nodes", [1, 4, 64])
def test_a_chain_takes_its_length_on_any_number_of_nodes(nodes):
    jobs = chain(5)
    assert makespan(schedule(jobs, flat(jobs), 2, greedy, nodes=Nodes(nodes))) == 50.0


@pytest.mark.parametrize(("nodes", "latency", "expected"), [(1, 3.0, 65.0), (16, 3.0, 65.0), (1, 0.5, 52.5)])
def test_the_latency_is_paid_once_per_job_along_a_chain(nodes, latency, expected):
    """Five jobs in a row: each waits ``latency`` after the one before it ends, the first after the start."""
    jobs = chain(5)
    assert makespan(schedule(jobs, flat(jobs), 2, greedy, nodes=Nodes(nodes, latency))) == expected
    times = schedule(jobs, flat(jobs), 2, greedy, nodes=Nodes(nodes, latency))
    assert [t[0] for t in times.values()] == [latency + i * (10 + latency) for i in range(5)]


@pytest.mark.parametrize(("nodes", "expected"), [(1, 81.0), (2, 41.0), (4, 21.0), (8, 11.0), (64, 11.0)])
def test_a_fan_of_sixteen_divides_over_the_cores_of_all_nodes(nodes, expected):
    """16 jobs of 10 s on 2 cores per node: ceil(16 / (2 × nodes)) rounds of 10 s, then the 1 s end."""
    jobs = fan(16)
    assert makespan(schedule(jobs, flat(jobs), 2, greedy, nodes=Nodes(nodes))) == expected
    assert makespan(schedule(jobs, flat(jobs), 2, ilp, nodes=Nodes(nodes))) == expected


def test_a_fan_pays_the_latency_once_per_level_not_once_per_job():
    """Submissions overlap: 16 jobs on 8 nodes all wait the same 2 s, the end 2 s more."""
    jobs = fan(16)
    assert makespan(schedule(jobs, flat(jobs), 2, greedy, nodes=Nodes(8, 2.0))) == 2 + 10 + 2 + 1


def test_a_job_wider_than_a_node_holds_one_whole_node_and_never_spans_two():
    """Two 4-thread jobs on nodes of 2 cores: each is scaled to a node (as --cores scales it locally) and
    holds all of it; on 2 nodes they run side by side, and a 1-core job waits for a node with a core free."""
    jobs = {"wide1": SimJob(10, 4), "wide2": SimJob(10, 4), "small": SimJob(5, 1)}
    prio = {"wide1": 3, "wide2": 2, "small": 1}
    two = schedule(jobs, prio, 2, greedy, nodes=Nodes(2))
    assert two["wide1"] == (0.0, 10.0) and two["wide2"] == (0.0, 10.0) and two["small"] == (10.0, 15.0)
    assert makespan(schedule(jobs, prio, 2, greedy, nodes=Nodes(1))) == 25.0  # one node: one wide job at a time
    assert makespan(schedule(jobs, prio, 2, greedy, nodes=Nodes(3))) == 10.0


def test_a_two_core_job_needs_both_cores_on_one_node_not_one_on_each():
    """Two nodes each running a 1-core job have 2 free cores in all but none with 2: the 2-core job waits."""
    jobs = {"a": SimJob(10, 1), "b": SimJob(10, 1), "pair": SimJob(4, 2)}
    prio = {"a": 3, "b": 3, "pair": 1}

    def one_per_node(ready, free, priority, need):  # SLURM spreading jobs: at most one start per node and pick
        return greedy(ready, free, priority, need)[:1]

    times = schedule(jobs, prio, 2, one_per_node, nodes=Nodes(2))
    assert times["a"][0] == times["b"][0] == 0.0 and times["pair"] == (10.0, 14.0)


def test_one_node_without_latency_is_the_local_schedule():
    """The defaults are a local run: what tests/test_critical_path.py's figures rely on."""
    jobs = {**chain(3, 30.0), **fan(10, 5.0)}
    prio = {**{f"j{i}": 100 - i for i in range(3)}, **flat(fan(10))}
    assert schedule(jobs, prio, 2) == schedule(jobs, prio, 2, ilp, None, Nodes(1, 0.0))
    assert makespan(schedule(jobs, prio, 2)) == 90.0  # the chain on one core, the fan beside it on the other


def test_llm_api_is_one_total_across_nodes():
    """Two LLM jobs holding the run's one llm_api unit never overlap, whatever the nodes."""
    jobs = {"llm1": SimJob(10, 1, (), 1), "llm2": SimJob(10, 1, (), 1)}
    assert makespan(schedule(jobs, flat(jobs), 2, greedy, llm_api=1, nodes=Nodes(4))) == 20.0
    assert makespan(schedule(jobs, flat(jobs), 2, greedy, llm_api=2, nodes=Nodes(4))) == 10.0

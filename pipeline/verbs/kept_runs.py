"""compare and runs: kept runs (runs/<id>/, pipeline/kept_runs/store.py) side by side, listed and pruned."""

from __future__ import annotations

from pathlib import Path

from pipeline.verbs.base import verb


def cmd_compare(a) -> None:
    from pipeline.io import atomic_write_text
    from pipeline.kept_runs.compare import KeptRun, compare_lines, compare_runs, default_out
    from pipeline.report.params import Resampling

    control, treatment = KeptRun.named(a.a, a.runs), KeptRun.named(a.b, a.runs)
    table = compare_runs(control, treatment, Resampling(a.seed, a.bootstrap, a.permutations))
    out = Path(a.out) if a.out else default_out(control, treatment, a.runs)
    atomic_write_text(out, table.to_csv(index=False, lineterminator="\n"))
    print("\n".join([*compare_lines(control, treatment, table), f"wrote {out}"]))


def cmd_runs(a) -> None:
    from pipeline.kept_runs.store import Prune, kept_runs, latest_id, prune_runs, run_line

    if a.action == "list":
        runs, latest = kept_runs(a.runs), latest_id(a.runs)
        print("\n".join(run_line(r, latest) for r in reversed(runs)) or f"{a.runs}/: no kept run")
        return
    gone = prune_runs(Prune(a.keep, a.older_than), a.runs, dry_run=a.dry_run)
    verb_ = "would remove" if a.dry_run else "removed"
    print(f"{verb_} {len(gone)} kept run(s)" + (": " + ", ".join(gone) if gone else ""))


def cmd_makespan(a) -> None:
    from pipeline.kept_runs.store import resolve_kept
    from pipeline.workflow.makespan import write_prediction

    out, p = write_prediction(resolve_kept(a.run, a.runs), a.cluster, a.reports, tuple(a.nodes), a.cores)
    nodes = ", ".join(f"{n} nodes {s} s" for n, s in p["nodes"].items())
    print(
        f"run {p['run']['id']}: measured span {p['run']['measured_span_s']} s on 1 node; simulated locally "
        f"{p['local_1_node_s']} s; with {p['latency']['seconds']} s per submission: {nodes}"
    )
    print(f"latency: {p['latency']['source']}\nwrote {out}")


def add_verbs(sub) -> None:
    """compare, runs and makespan: kept runs side by side, listed and pruned, and replayed on a cluster."""
    from pipeline.paths import RUNS  # a leaf: building the parser imports no pandas
    from pipeline.report.params import DEFAULT_RESAMPLING as D  # nor does this (dataclasses alone)

    s = verb(
        sub,
        "compare",
        cmd_compare,
        "two kept runs question by question: per shared dataset, variant and metric the paired difference "
        "B − A with its 95% interval and p-value, and the variants only one has; refuses when the gold file, "
        "metric profile or question set differ",
    )
    s.add_argument("a", help="the control run: a run id under --runs, 'latest', or a kept run's folder")
    s.add_argument("b", help="the treatment run, named the same ways")
    s.add_argument("--out", help="the CSV to write (default: <runs>/compare-<A>-<B>.csv)")
    s.add_argument("--runs", default=RUNS, help="the kept runs' folder")
    s.add_argument("--seed", type=int, default=D.seed, help="seed of the bootstrap and the randomisation test")
    s.add_argument("--bootstrap", type=int, default=D.bootstrap, help="bootstrap resamples of the questions")
    s.add_argument("--permutations", type=int, default=D.permutations, help="sign patterns of the randomisation test")

    s = verb(
        sub,
        "runs",
        cmd_runs,
        "the kept runs under runs/: list them (newest first), or prune them by count or age (never runs/latest)",
    )
    s.add_argument("action", choices=("list", "prune"), help="list: one line per kept run; prune: remove some")
    s.add_argument("--keep", type=int, help="prune: keep the N newest, remove the others")
    s.add_argument("--older-than", type=float, metavar="DAYS", help="prune: remove the runs kept over DAYS days ago")
    s.add_argument("--dry-run", action="store_true", help="prune: say what would go, remove nothing")
    s.add_argument("--runs", default=RUNS, help="the kept runs' folder")
    _add_makespan(sub, RUNS)


def _add_makespan(sub, runs: str) -> None:
    """makespan: a kept run's DAG replayed on clusters of several sizes (pipeline/workflow/makespan.py)."""
    from pipeline.paths import reports

    s = verb(
        sub,
        "makespan",
        cmd_makespan,
        "predict a kept run's makespan on 1, 4, 16 and 64 nodes of 2 cores from its DAG and measured job "
        "lengths, with the per-job submission latency the real-cluster test measured: reports/bench/makespan.json "
        "(docs/cluster.md's makespan block: make readme BENCH=reports)",
    )
    s.add_argument("run", nargs="?", default="latest", help="a run id under --runs, 'latest', or a kept run's folder")
    s.add_argument("--runs", default=runs, help="the kept runs' folder")
    s.add_argument("--cluster", default=reports.bench("cluster"), help="the real-cluster test's figures (its latency)")
    s.add_argument("--reports", default=reports.root, help="where bench/makespan.json goes")
    s.add_argument("--nodes", type=int, nargs="+", default=[1, 4, 16, 64], help="the node counts to predict")
    s.add_argument("--cores", type=int, default=2, help="cores per node")

"""docs/cluster.md's ``cluster`` block: the figures tests/cluster/ writes (reports/bench/cluster.json) rendered,
stamped, with the overhead per submission derived from them, and nothing of the page's other text touched."""
from pipeline.publish.bench_doc import duration, save_bench
from pipeline.publish.readme import BEGIN, END, fill

FIGURES = {"packages_preinstalled": False, "cluster_start_s": 35.2, "local_grid_s": 53.0, "cluster_grid_s": 144.0, "submissions": 26, "jobs": 25,
           "cancel_seen_s": 4.1, "cancel_limit_s": 60, "resumed_jobs": 4, "target_jobs": 8, "tests_cluster_s": 326.4,
           "cpu_model": "AMD EPYC 7B13", "cores": 2, "os": "Debian GNU/Linux 12 (bookworm)", "date": "2026-12-03",
           "slurm_version": "22.05.8", "plugin_version": "2.8.0", "snakemake_version": "9.27.1"}


def test_the_cluster_block_renders_the_measured_figures(tmp_path):
    reports = tmp_path / "reports"
    save_bench(FIGURES, reports, "cluster", {"grid": "tests/tiny.yaml"})
    text = f"before 1\n{BEGIN.format('cluster')}\nold\n{END.format('cluster')}\nafter 2\n"
    out = fill(text, reports)
    assert out.startswith("before 1\n") and out.endswith("\nafter 2\n") and "\nold\n" not in out
    assert "from `reports/bench/cluster.json` (commit `" in out
    assert "2 cores (AMD EPYC 7B13), Debian GNU/Linux 12 (bookworm); SLURM 22.05.8" in out
    assert "snakemake-executor-plugin-slurm 2.8.0, Snakemake 9.27.1" in out
    assert "`slurm_up.sh`: install the packages, configure, start, wait for `sinfo` and `sacct` | 35.2 s |" in out
    assert "| 53.0 s |" in out
    assert "| 144 s (2 min 24 s): 26 submissions (25 jobs, 1 retried) |" in out
    assert "| 3.5 s |" in out  # (144 - 53) / 26
    assert "| 4.1 s (the test allows 60 s) |" in out and "| 4 of the target's 8 |" in out
    assert "| 326 s (5 min 26 s) |" in out
    assert fill(out, reports) == out
    save_bench({**FIGURES, "packages_preinstalled": True}, reports, "cluster", {"grid": "tests/tiny.yaml"})
    assert "`slurm_up.sh`: packages already installed, configure, start" in fill(text, reports)

    assert "shards" not in out  # a run from before the sharded test: no row for it


def test_the_cluster_block_shows_the_sharded_run_where_it_was_measured(tmp_path):
    reports = tmp_path / "reports"
    sharded = {"sharded_grid_s": 212.4, "sharded_submissions": 15, "shard_jobs": 9}
    save_bench({**FIGURES, **sharded}, reports, "cluster", {"grid": "tests/tiny.yaml"})
    out = fill(f"{BEGIN.format('cluster')}\n{END.format('cluster')}\n", reports)
    assert "| 212 s (3 min 32 s): 15 jobs, 9 of them shards or batches |" in out

def test_durations_past_a_minute_are_also_in_minutes():
    assert [duration(s) for s in (4.14, 59.9, 60.0, 125.4)] == ["4.1 s", "59.9 s", "60 s (1 min 0 s)",
                                                               "125 s (2 min 5 s)"]

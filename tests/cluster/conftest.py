"""What tests/cluster/ measures, kept for docs/cluster.md: where WATTBENCH_CLUSTER_REPORT names a file (the
Makefile's test target: reports/bench/cluster.json), a run in which every cluster test passed writes its
figures there, with a manifest (the docs block's stamp), and `make readme BENCH=reports` renders them (the ``cluster``
block, pipeline/publish/bench_doc.py). A failed or skipped run writes nothing: no half-measured page."""
import importlib.metadata
import os
import subprocess
import time
from pathlib import Path

import pytest

from pipeline.datasets.paths import REPO
from pipeline.io import atomic_write_json
from pipeline.provenance import write_manifest

REPORT_ENV = "WATTBENCH_CLUSTER_REPORT"
GRID, PROFILE_CONFIG = REPO / "tests" / "tiny.yaml", REPO / "profiles" / "slurm" / "config.yaml"
# What the tests put in ``measured`` (seconds end in _s); the file is written only with all of them.
FIGURES = ("packages_preinstalled", "cluster_start_s", "local_grid_s", "cluster_grid_s", "submissions", "jobs", "cancel_seen_s",
           "cancel_limit_s", "resumed_jobs", "target_jobs", "submit_to_start_s", "submit_to_start_max_s",
           "submit_to_start_jobs", "sharded_grid_s", "sharded_submissions", "shard_jobs")


def machine() -> dict[str, object]:
    """The machine (tests/tier_report.py) and versions the figures were measured with."""
    from tier_report import machine as this_machine

    slurm = subprocess.run(["slurmctld", "-V"], capture_output=True, text=True).stdout.split()
    return {
        **this_machine(),
        "slurm_version": slurm[-1] if slurm else "",
        "plugin_version": importlib.metadata.version("snakemake-executor-plugin-slurm"),
        "snakemake_version": importlib.metadata.version("snakemake"),
    }


def save(path: Path, figures: dict) -> None:
    """The figures atomically, and a manifest naming the grid and the profile they were measured with."""
    profile = PROFILE_CONFIG.read_text()
    atomic_write_json(path, figures)
    write_manifest(path, {"grid": GRID.relative_to(REPO).as_posix(), "profile": profile}, (GRID, PROFILE_CONFIG))


@pytest.fixture(scope="session", autouse=True)
def measured(request):
    """A dict the cluster tests put their figures in; written at the session's end (after the cluster is
    down, so the whole run's time counts its start and stop) when REPORT_ENV is set and nothing failed."""
    figures: dict[str, object] = {}
    began = time.monotonic()
    yield figures
    target = os.environ.get(REPORT_ENV)
    if target and set(FIGURES) <= figures.keys() and request.session.testsfailed == 0:
        figures["tests_cluster_s"] = round(time.monotonic() - began, 1)
        save(Path(target), {**figures, **machine()})

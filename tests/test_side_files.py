"""What a job writes and what Snakemake knows it writes agree (#45 item 6): in a real run's results/, every file
is an output some job declares, lies under a declared directory, or is a side file of a declared output
(pipeline/paths.py SIDE_SUFFIXES: its manifest, an LLM answer job's telemetry), which only that job writes. A
resume reruns a job and rewrites exactly these (tests/cluster/'s resume test allows no other)."""
from pathlib import Path, PurePosixPath

import pytest
from dag_runner import snakemake

from pipeline.paths import RESULTS, SIDE_SUFFIXES, side_files

pytestmark = pytest.mark.slow

# Written by a job without being declared, each with why it is not declared yet (follow-ups, not side files):
# declaring an output a finished run already holds turns that job's rerun triggers off in that run (Snakemake
# keeps no metadata for it: pipeline/paths.py), and the suite's exports are what a changed dataset size reruns.
UNDECLARED = {"results/*/export/docs.csv": "suite_export's document table, read by sprout_train_pairs and suite_power"}
# Declared by a checkpoint that --summary leaves out: it lists the jobs of the DAG as it ends, and where a dataset
# fits one shard no job there needs the doc_sizes checkpoint's file (the index is built whole), yet it ran.
CHECKPOINTS = ("results/*/shards/sizes.csv",)


def declared_outputs(work: Path, config: Path) -> set[str]:
    """Every output of every job of the run's DAG, as Snakemake's --summary lists them."""
    done = snakemake(work, "--summary", configfile=config, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split("\t") for line in done.stdout.splitlines()[1:] if line.strip()]
    return {row[0] for row in rows}


def owner(path: str, declared: set[str]) -> str | None:
    """The declared output ``path`` belongs to: itself, a declared folder above it, or the output it is a side
    file of; None for a file no job declares."""
    if path in declared:
        return path
    if any(str(parent) in declared for parent in PurePosixPath(path).parents):
        return path
    for suffix in SIDE_SUFFIXES:
        if path.endswith(suffix) and path[: -len(suffix)] in declared:
            return path[: -len(suffix)]
    return None


def test_every_result_file_is_declared_or_a_side_file_of_a_declared_output(tiny_run):
    work, config = tiny_run
    declared = declared_outputs(work, config)
    declared |= {p.relative_to(work).as_posix() for pattern in CHECKPOINTS for p in work.glob(pattern)}
    written = sorted(p.relative_to(work).as_posix() for p in (work / RESULTS).rglob("*") if p.is_file())
    known = [w for w in written if any(PurePosixPath(w).match(pattern) for pattern in UNDECLARED)]
    strays = [w for w in written if owner(w, declared) is None and w not in known]
    assert strays == [], "files a job wrote that Snakemake does not know of"
    sides = [w for w in written if owner(w, declared) not in (None, w)]
    assert any(w.endswith(".manifest.json") for w in sides) and any(w.endswith(".telemetry.jsonl") for w in sides)
    assert set(side_files("results/wattbot/trees/khan2025.json")) & set(sides)  # the files of #45's flaky resume

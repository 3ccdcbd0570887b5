"""Run this repository's Snakefile in a scratch folder, as the end-to-end and cluster tests do."""
import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.datasets.paths import REPO, data_root


def command(workdir: Path, *args: str, configfile: Path, python: str = sys.executable) -> list[str]:
    return [python, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--configfile", str(configfile), "--config", f"data_root={data_root()}", "--cores", "2", *args]


# A fake credential every test run carries (tests/tiny.yaml declares it in llm.envvars, litellm reads it
# for the openai/ mock model); tests/test_secrets.py checks it appears in no file a run writes.
PLANTED_KEY = "sk-wattbench-PLANTED-4f1c9e2ab7d35c08"
# The tiny_run fixture's wall time in seconds (tests/conftest.py), in the pytest session's stash.
TINY_WALL = pytest.StashKey[float]()


def environment(extra: dict | None = None, python: str = sys.executable) -> dict:
    inherited = {k: v for k, v in os.environ.items() if k != "WATTBENCH_RUN_ID"}  # a run names itself, unless asked
    env = {**inherited, "OPENAI_API_KEY": PLANTED_KEY, **(extra or {})}
    env["PATH"] = f"{Path(python).parent}:{env['PATH']}"
    return env


def snakemake(workdir: Path, *args: str, configfile: Path, env: dict | None = None,
              timeout: int = 1200, python: str = sys.executable) -> subprocess.CompletedProcess:
    """Snakemake run by ``python`` (the shared venv's, or a scratch venv's: tests/plugin_dist.py), in a
    process group of its own: past ``timeout`` the whole group is stopped, the jobs Snakemake started with it
    (killing Snakemake alone left its running jobs working on for half an hour after a timed-out test)."""
    return run_group(command(workdir, *args, configfile=configfile, python=python), env=environment(env, python),
                     timeout=timeout)


def run_group(argv: list[str], env: dict, timeout: float, grace: float = 10) -> subprocess.CompletedProcess:
    """``subprocess.run(argv, capture_output=True, text=True)`` whose timeout stops every process of the
    child's session (SIGTERM, then SIGKILL after ``grace`` seconds), then raises TimeoutExpired."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            out = err = None  # what a process outside the group still holding the pipes keeps back is lost
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
                try:
                    out, err = proc.communicate(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            raise subprocess.TimeoutExpired(argv, timeout, output=out, stderr=err) from None
        except BaseException:  # Ctrl-C or pytest's own timeout: the group is not the terminal's, stop it here
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def planned_jobs(out: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run: rule -> count."""
    table = out.split("Job stats:")[1] if "Job stats:" in out else ""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M) if m.group(1) != "total"}


def tiny_whole_and_cut(tmp_path: Path, targets: list[str], shards: str) -> dict[str, Path]:
    """tests/tiny.yaml's ``targets`` built through Snakemake as configured (``"one"``: the default bounds, each
    output whole) and with ``shards: {<shards>}`` over it (``"three"``: cut into parts): each run's folder, for a
    test to compare their bytes (#45 item 3)."""
    tiny = REPO / "tests" / "tiny.yaml"
    cut = tmp_path / "cut.yaml"
    cut.write_text(tiny.read_text() + f"shards: {{{shards}}}\n")
    works = {}
    for name, config in (("one", tiny), ("three", cut)):
        works[name] = tmp_path / name
        done = snakemake(works[name], *targets, configfile=config)
        assert done.returncode == 0, done.stderr[-3000:]
    return works


# The run's summary (reports/summary.json, pipeline/report/summary.py) and make run's reports/README.md
# carry the run's time: telemetry in content, kept under the names scripts and readers look for.
RUN_SUMMARIES = ("reports/summary.json", "reports/README.md")


def result_files(root: Path) -> dict[str, bytes]:
    """Every result and report file by relative path (provenance, run telemetry, the run's summaries and
    the browser screenshot of the report excluded: fonts and Chromium versions differ between machines);
    a page's run header (its run id, commit and config files: pipeline/report/header.py) blanked."""
    from pipeline.report.header import PAGES, blank

    out = {}
    for sub in ("results", "reports"):
        for p in sorted((root / sub).rglob("*")):
            telemetry = ".telemetry." in p.name  # run telemetry: *.telemetry.{jsonl,csv,json,png,html}
            telemetry |= p.relative_to(root).as_posix() in RUN_SUMMARIES
            if p.is_file() and not telemetry and not p.name.endswith((".manifest.json", ".screenshot.png")):
                data = p.read_bytes()
                out[str(p.relative_to(root))] = blank(data.decode()).encode() if p.name in PAGES else data
    return out


def snakemake_with_plugin(tmp_path: Path, cfg: dict, target: str, site: Path) -> Path:
    """Run ``target`` from the config ``cfg`` with a toy plugin (an index kind, dataset or answering backend)
    installed in ``site`` (tests/plugin_dist.py) on the run's PYTHONPATH, where every job's Python finds its
    entry points; the target's path."""
    import yaml

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))
    work = tmp_path / "work"
    done = snakemake(work, target, configfile=config, env={"PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr[-3000:]
    return work / target

"""What a run of the fast tier measured, kept for README.md: where WATTBENCH_TIER_REPORT names a file (the
Makefile's test-fast target: reports/bench/test_fast.json), a run of the whole tier (no file, ``-k`` or ``-m``
narrowing it) in which nothing failed writes how many tests passed, in how long, on which machine, as whom and
with or without a network and the shared data, with a manifest (the block's stamp); `make readme BENCH=reports` renders it (the
``test-fast`` block, pipeline/publish/bench_doc.py). Also the machine's description the cluster's figures use.
"""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path

import pytest

from pipeline.datasets.paths import REPO, data_root
from pipeline.embed.kernels import cpu_model
from pipeline.io import atomic_write_json
from pipeline.provenance import write_manifest

REPORT_ENV = "WATTBENCH_TIER_REPORT"


def machine() -> dict[str, object]:
    """The machine the figures were measured on: CPU, cores, operating system, the day."""
    os_release = Path("/etc/os-release").read_text() if Path("/etc/os-release").exists() else ""
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]+)"?$', os_release, re.M)
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "os": pretty.group(1) if pretty else platform.platform(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def tier_markers(root: Path = REPO) -> list[str]:
    """pyproject's markers, each saying what its tests need: what keeps a test out of the fast tier (pytest's
    own list of markers also has those plugins register: skipif, parametrize, xdist_group, ...)."""
    import tomllib

    ini = tomllib.loads((Path(root) / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return [line.split(":", 1)[0].strip() for line in ini["markers"]]


def network_up(net: Path = Path("/proc/net")) -> bool:
    """Whether this process's network namespace routes anywhere but loopback: an IPv4 route (``route``) or an IPv6
    one (``ipv6_route``, its device last) through another interface. /proc/net is the reading process's own (a run
    inside ``unshare -n`` has loopback alone); /sys/class/net would show the host's."""

    def rows(name: str) -> list[list[str]]:
        path = net / name
        return [line.split() for line in path.read_text().splitlines() if line.strip()] if path.exists() else []

    v4 = [r[0] for r in rows("route")[1:]]  # after the header; the interface first
    v6 = [r[-1] for r in rows("ipv6_route")]
    return any(dev != "lo" for dev in v4 + v6)


def whole_tier(config: pytest.Config) -> bool:
    """Whether the session ran the tier as `make test-fast` does: the configured test paths, unnarrowed."""
    return (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not config.option.keyword
        and not config.option.markexpr
    )


def tier_figures(stats: dict[str, list], wall_s: float, workers: int, load_avg: float, excluded: list[str]) -> dict:
    """The record: the tests' outcomes (the terminal reporter's counts), the wall time, who ran it and where."""
    return {
        "passed": len(stats.get("passed", [])),
        "skipped": len(stats.get("skipped", [])),
        "deselected": len(stats.get("deselected", [])),
        "wall_s": round(wall_s, 1),
        "workers": workers,
        "load_avg_1min": round(load_avg, 2),
        "root": os.geteuid() == 0,
        "network": network_up(),
        "shared_data": data_root().exists(),  # ../shared/data (or WATTBENCH_DATA) there to read
        "python": platform.python_version(),
        "excluded_markers": excluded,
        **machine(),
    }


def save_tier(target: Path, figures: dict) -> None:
    """The figures and their manifest: what the tier is (its excluded markers) and the file that declares them."""
    atomic_write_json(target, figures)
    write_manifest(target, {"tier": "fast", "excluded_markers": figures["excluded_markers"]}, (REPO / "pyproject.toml",))

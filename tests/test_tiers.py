"""The fast tier has one definition (tests/conftest.py's ``--fast``: the tests with none of pyproject's markers),
which `make test-fast` passes as it is; a passing run of the whole tier records what it measured, and README's
``test-fast`` block renders it (#47 item 7)."""
import json
import re
import subprocess
import sys

from tier_report import REPORT_ENV, save_tier, tier_figures, whole_tier

from pipeline.datasets.paths import REPO


def _pytest(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", *args], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


def test_the_fast_tier_is_every_test_without_a_marker():
    """--fast keeps the unmarked tests and drops each marked one: by a marker on the test (browser, slow), on
    its module (cluster) or given by conftest for a data fixture (data)."""
    files = ["tests/test_io.py", "tests/report/test_browser.py", "tests/cluster/test_slurm_cluster.py",
             "tests/index/test_dense_indexes.py"]
    every = _pytest("--collect-only", "-q", *files).stdout
    fast = _pytest("--collect-only", "-q", "--fast", *files).stdout
    ids = lambda out: {line for line in out.splitlines() if "::" in line}  # noqa: E731
    assert ids(fast) and ids(fast) < ids(every)
    assert all(i.startswith(("tests/test_io.py", "tests/index/")) for i in ids(fast))
    assert any(i.startswith("tests/report/test_browser.py") for i in ids(every))
    assert "tests/index/test_dense_indexes.py::test_tree_index_stores_every_node" in ids(every) - ids(fast)  # data
    assert "tests/index/test_dense_indexes.py::test_chunks_cover_everything_with_overlap" in ids(fast)
    assert any(i.startswith("tests/cluster/") for i in ids(every))
    assert re.search(r"\d+ deselected", fast)


def test_make_test_fast_passes_the_tier_and_nothing_else():
    """The Makefile names no marker: the tier is conftest's, so the two cannot describe it differently."""
    text = (REPO / "Makefile").read_text()
    recipe = text.split("\ntest-fast:")[1].split("\n\n")[0]
    assert "--fast" in recipe and " -m " not in recipe and "not slow" not in text
    assert f"{REPORT_ENV}=reports/bench/test_fast.json" in recipe


def test_a_narrowed_run_records_nothing(tmp_path):
    """A run of some files of the tier is not the tier's time: nothing is written."""
    target = tmp_path / "reports" / "bench" / "test_fast.json"
    done = _pytest("-q", "--fast", "tests/test_io.py", env={REPORT_ENV: str(target)})
    assert done.returncode == 0, done.stdout[-2000:]
    assert not target.exists()


def test_the_record_of_a_passing_tier_renders_as_readmes_block(tmp_path):
    """The figures a passing run records, written with their manifest, render as the test-fast block with its
    stamp; the record says whether it ran as root and with a network."""
    from pipeline.publish.readme import render_block

    stats = {"passed": [1] * 1234, "skipped": [1] * 3, "deselected": [1] * 300}
    figures = tier_figures(stats, 117.25, 2, 0.5, ["slow", "data"])
    assert (figures["passed"], figures["deselected"], figures["wall_s"]) == (1234, 300, 117.2)
    assert isinstance(figures["root"], bool) and isinstance(figures["network"], bool) and figures["cores"]
    target = tmp_path / "reports" / "bench" / "test_fast.json"
    save_tier(target, figures)
    assert json.loads(target.read_text())["excluded_markers"] == ["slow", "data"]
    block = render_block("test-fast", tmp_path / "reports")
    assert block.startswith("<sub>Rendered by `make readme` from `reports/bench/test_fast.json` (commit `")
    assert "**1234 passed, 3 skipped in 117 s (1 min 57 s)** on " in block
    assert "300 tests outside the tier." in block


def test_only_the_configured_paths_unnarrowed_are_the_whole_tier():
    import pytest

    class Option:
        keyword, markexpr = "", ""

    class Config:
        args_source, option = pytest.Config.ArgsSource.TESTPATHS, Option()

    assert whole_tier(Config())
    Config.option.keyword = "io"
    assert not whole_tier(Config())
    Config.option.keyword, Config.args_source = "", pytest.Config.ArgsSource.ARGS
    assert not whole_tier(Config())


def test_network_up_reads_the_routing_tables(tmp_path):
    """Loopback's routes alone (unshare -n after `ip link set lo up`) are no network; a route through eth0 is."""
    from tier_report import network_up

    head = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    v6_lo = "00000000000000000000000000000001 80 " + "0" * 32 + " 00 " + "0" * 32 + " 00000000 00000002 00000000 80200001 lo\n"
    (tmp_path / "route").write_text(head)
    (tmp_path / "ipv6_route").write_text(v6_lo)
    assert not network_up(tmp_path)
    (tmp_path / "route").write_text(head + "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
    assert network_up(tmp_path)
    assert not network_up(tmp_path / "absent")


def test_the_tier_markers_are_pyprojects_alone():
    """Plugins register markers of their own (skipif, parametrize, xdist_group): none of them keeps a test out."""
    import tomllib

    from tier_report import tier_markers

    markers = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert tier_markers() == [m.split(":")[0] for m in markers]
    assert {"slow", "data", "browser", "local_llm", "cluster"} <= set(tier_markers())
    assert not {"parametrize", "skipif", "xdist_group", "anyio"} & set(tier_markers())

"""Shared fixtures: real WattBot data from ../shared (never copied into the repo), and the test tiers.

Tiers: each marker of pyproject's ``[tool.pytest.ini_options] markers`` says what its tests need beyond the
repo or the minute (``slow``: Snakemake runs and whole corpora; ``data``: the shared benchmark data, ../shared
or WATTBENCH_DATA; ``browser``: Chromium; ``local_llm``: the llama.cpp server build; ``cluster``: root and a real
SLURM). The fast tier (``pytest --fast``, which is all `make test-fast` passes) is every test with none of
them: it needs no root, no network, no data and no cluster. `make test` (CI) runs every tier. A test that takes
one of the data fixtures below is marked ``data`` here, so nobody has to remember to; tests that read the data
some other way carry the marker themselves. With WATTBENCH_TIER_REPORT set, a passing run of the whole fast
tier records what it measured (tests/tier_report.py; README's ``test-fast`` block).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pipeline.register_builtins  # noqa: E402, F401 - the built-in index and planner kinds, as a driver registers them
from pipeline.datasets.paths import wattbot_dir  # noqa: E402

WATTBOT = wattbot_dir()
DOCS = ("khan2025", "patterson2021", "strubell2019")  # three real documents, small and varied

# Fixtures that read ../shared: a test using any of them (directly or through another fixture) is `data`.
DATA_FIXTURES = frozenset({"wattbot_dir", "three_trees", "built_indexes", "tiny_run"})


FAST = "--fast"
BEGAN = pytest.StashKey[tuple[float, float]]()  # (monotonic seconds, 1-minute load average) at the session's start
OUTSIDE = pytest.StashKey[int]()  # tests --fast left out (each xdist worker collects them all: its count is the run's)


def pytest_addoption(parser):
    parser.addoption(FAST, action="store_true", help="only the fast tier: the tests with none of pyproject's markers")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if set(getattr(item, "fixturenames", ())) & DATA_FIXTURES:
            item.add_marker(pytest.mark.data)
    if config.getoption(FAST):
        from tier_report import tier_markers

        outside = set(tier_markers(config.rootpath))
        in_tier = [not outside & {m.name for m in i.iter_markers()} for i in items]
        config.hook.pytest_deselected(items=[i for i, fast in zip(items, in_tier) if not fast])
        items[:] = [i for i, fast in zip(items, in_tier) if fast]
        config.stash[OUTSIDE] = in_tier.count(False)


def pytest_sessionstart(session):
    session.config.stash[BEGAN] = (time.monotonic(), os.getloadavg()[0])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist's controller collects nothing: a worker's count of the tests left out comes back with it."""
    if "fast_outside" in getattr(node, "workeroutput", {}):
        node.config.stash[OUTSIDE] = node.workeroutput["fast_outside"]


def pytest_sessionfinish(session, exitstatus):
    """The fast tier's record, by the controlling process (not an xdist worker) of a passing run of the whole tier."""
    from tier_report import REPORT_ENV, save_tier, tier_figures, tier_markers, whole_tier

    config, target = session.config, os.environ.get(REPORT_ENV)
    if hasattr(config, "workerinput"):
        config.workeroutput["fast_outside"] = config.stash.get(OUTSIDE, 0)
        return
    if not target or exitstatus != 0 or not config.getoption(FAST) or not whole_tier(config):
        return
    began, load = config.stash[BEGAN]
    workers = getattr(config.option, "numprocesses", None) or 0
    stats = config.pluginmanager.get_plugin("terminalreporter").stats
    figures = tier_figures(stats, time.monotonic() - began, workers, load, tier_markers(config.rootpath))
    save_tier(Path(target), {**figures, "deselected": config.stash.get(OUTSIDE, figures["deselected"])})


@pytest.fixture(scope="session")
def wattbot_dir() -> Path:
    if not WATTBOT.exists():
        pytest.fail(f"WattBot data not found at {WATTBOT}; set WATTBENCH_DATA to the shared data folder")
    return WATTBOT


@pytest.fixture(scope="session")
def three_trees(wattbot_dir):
    from pipeline.parse.payload import load_payload

    return [load_payload(wattbot_dir / "corpus" / f"{d}.json") for d in DOCS]


@pytest.fixture(scope="session")
def encoder():
    from pipeline.embed import make_encoder

    return make_encoder({"backend": "onnx-int8", "max_tokens": 512})


@pytest.fixture(scope="session")
def built_indexes(tmp_path_factory, three_trees, encoder):
    """hier, flat and bm25 indexes over the three real documents (built once per session)."""
    from pipeline.embed import EmbeddingCache
    from pipeline.index_structures.bm25 import build_bm25_index
    from pipeline.index_structures.flat import build_chunk_index
    from pipeline.index_structures.hier import build_tree_index
    from pipeline.index_structures.store import IndexWriter

    root = tmp_path_factory.mktemp("indexes")
    cache = EmbeddingCache(root / "cache" / "embeddings.sqlite")
    embed = lambda texts: cache.encode(encoder, texts, progress=False)  # noqa: E731
    w = IndexWriter(root / "hier.sqlite", encoder.dim, {"model_id": encoder.model_id})
    counts = {"hier": build_tree_index(three_trees, embed, encoder.count_tokens, w)}
    w.close()
    w = IndexWriter(root / "flat.sqlite", encoder.dim, {"model_id": encoder.model_id})
    counts["flat"] = build_chunk_index(three_trees, embed, encoder.count_tokens, w, 512, 64)
    w.close()
    w = IndexWriter(root / "bm25.sqlite", None, {"model_id": "bm25", "levels": ["sentence", "paragraph"]})
    counts["bm25"] = build_bm25_index(three_trees, ["sentence", "paragraph"], w)
    w.close()
    return {"dir": root, "cache_dir": root / "cache", "counts": counts}


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory):
    """``plugin_site(name, modules, entry_points)``: a toy plugin distribution pip-installed into a folder of its
    own (tests/plugin_dist.py), once per session; that folder, for sys.path or a Snakemake run's PYTHONPATH."""
    from plugin_dist import install

    built: dict[str, Path] = {}

    def make(name: str, modules: list[Path], entry_points: dict[str, dict[str, str]]) -> Path:
        if name not in built:
            built[name] = install(tmp_path_factory.mktemp(name), name, modules, entry_points)
        return built[name]

    return make


@pytest.fixture(autouse=True)
def _no_run_id_left_behind():
    """A test that begins a run in-process (pipeline/run_ids.py begin_run exports WATTBENCH_RUN_ID, as onstart
    does) leaves no run id to later tests: a Snakemake started by a later test would otherwise be named
    by it and continue another test's run."""
    yield
    os.environ.pop("WATTBENCH_RUN_ID", None)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, request):
    """The tiny real grid (tests/tiny.yaml) run once through Snakemake: (workdir, configfile). Its wall
    time is kept in the session's stash (``TINY_WALL``: tests/cluster/ reports it beside the cluster's)."""
    from dag_runner import TINY_WALL, snakemake
    from pipeline.datasets.paths import REPO

    work = tmp_path_factory.mktemp("e2e")
    config = REPO / "tests" / "tiny.yaml"
    began = time.monotonic()
    done = snakemake(work, configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]
    request.config.stash[TINY_WALL] = time.monotonic() - began
    return work, config


@pytest.fixture
def standin():
    """``standin(**StandInConfig fields)``: an OpenAI-compatible provider stand-in on 127.0.0.1 (the LLM
    scale, fault and planner tests), stopped after the test."""
    from pipeline.bench.standin import StandIn, StandInConfig

    servers = []

    def make(**cfg):
        servers.append(StandIn(StandInConfig(**{"max_seconds": 120, **cfg})).start())
        return servers[-1]

    yield make
    for s in servers:
        s.stop()

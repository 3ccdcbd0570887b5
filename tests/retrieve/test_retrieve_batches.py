"""A split retrieved in batches of queries (pipeline/shards.py: query_batches) and joined by one writer: the
joined file and its manifest are the whole job's, byte for byte, whatever the cut (#45 item 3)."""

import json
import shutil

import pytest

from pipeline.cli import main
from pipeline.retrieve.batches import join_batches
from pipeline.shards import query_batches

# a dense variant, a lexical one, and a hybrid with the offline planner (acronyms mined off the index) and a rerank
VARIANTS = {
    "hier-dense": {"index": "hier", "top_k": 8},
    "bm25": {"index": "bm25", "top_k": 8},
    "hier-convex-q4": {"index": "hier", "top_k": 16, "levels": ["sentence", "paragraph"], "expand": "paragraph",
                       "hybrid": {"index": "bm25", "mode": "convex", "top_k": 16, "weight": 0.7},
                       "planner": {"kind": "offline", "n": 4}, "rerank": "combined"},
}


@pytest.fixture(scope="module")
def params():
    from pipeline import workflow as wf
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO

    cfg = load_config(REPO / "tests" / "tiny.yaml", {"retrieval": VARIANTS})
    return {rv: wf.retrieval_params(cfg, rv) for rv in VARIANTS}  # the JSON text the rule passes


def _retrieve(built_indexes, params: str, questions, out, root, *extra: str) -> None:
    """One retrieve job on ``root``'s own copy of the index build's cache (the queries' vectors computed anew)."""
    cache = root / "cache"
    if not cache.exists():
        shutil.copytree(built_indexes["cache_dir"], cache)
    main(["retrieve", "--index-dir", str(built_indexes["dir"]), "--questions", *map(str, questions),
          "--params", params, "--cache-dir", str(cache), "--out", str(out), *extra])


@pytest.mark.parametrize("rv", sorted(VARIANTS))
def test_three_batches_join_into_the_whole_jobs_bytes(built_indexes, params, wattbot_dir, rv, tmp_path):
    """WattBot's 41 training questions against the three real documents' indexes: whole, and in 3 batches
    joined (each batch its own cache), give the same retrieval file and manifest."""
    questions = wattbot_dir / "train_QA.csv"
    whole = tmp_path / "whole" / "train.jsonl"
    _retrieve(built_indexes, params[rv], [questions], whole, tmp_path / "whole")
    batches = query_batches(41, 14)
    assert [b.id for b in batches] == ["0-13", "14-27", "28-40"]
    parts = [tmp_path / "parts" / f"{b.id}.jsonl" for b in batches]
    for b, part in zip(batches, parts):
        _retrieve(built_indexes, params[rv], [questions], part, tmp_path / "parts", "--batch", b.id)
        assert json.loads(part.with_name(part.name + ".manifest.json").read_text())["batch"] == b.id
    joined = tmp_path / "joined" / "train.jsonl"
    _retrieve(built_indexes, params[rv], [questions, *parts], joined, tmp_path / "joined")
    assert len(whole.read_bytes().splitlines()) == 41
    assert joined.read_bytes() == whole.read_bytes()
    manifest = ".manifest.json"
    assert joined.with_name(joined.name + manifest).read_bytes() == whole.with_name(whole.name + manifest).read_bytes()


def test_the_join_refuses_a_missing_repeated_or_misordered_batch(tmp_path):
    parts = []
    for name, ids in (("a", ["q0", "q1"]), ("b", ["q2"])):
        part = tmp_path / f"{name}.jsonl"
        part.write_text("".join(json.dumps({"id": q, "hits": []}) + "\n" for q in ids))
        parts.append(part)
    assert join_batches(["q0", "q1", "q2"], parts) == parts[0].read_bytes() + parts[1].read_bytes()
    for bad in (parts[:1], parts[::-1], [parts[0], parts[0], parts[1]]):
        with pytest.raises(ValueError, match="not the split's 3 questions in file order"):
            join_batches(["q0", "q1", "q2"], bad)


@pytest.mark.slow
@pytest.mark.data
def test_the_dag_retrieves_a_split_in_batches_with_the_whole_jobs_bytes(tmp_path):
    """The tiny grid's HotpotQA slice (10 queries) through Snakemake: the default bound (one batch: today's single
    retrieve job) and ``shards.max_queries: 4`` (3 retrieve_batch jobs per variant, joined), the same retrieval
    files, manifests and scores."""
    from dag_runner import tiny_whole_and_cut

    outs = [f"results/hotpotqa/{f}" for rv in ("hier-dense", "bm25")
            for f in (f"retrieval/{rv}/queries.jsonl", f"scores/{rv}.json", f"scores/{rv}.per_query.csv")]
    runs = {}
    for name, work in tiny_whole_and_cut(tmp_path, outs, "max_queries: 4").items():
        parts = sorted(p.relative_to(work).as_posix() for p in work.glob("results/*/retrieval/parts/**/*.jsonl"))
        files = [*outs, *(f"{o}.manifest.json" for o in outs if not o.endswith(".per_query.csv"))]
        runs[name] = parts, {f: (work / f).read_bytes() for f in files}
    assert runs["one"][0] == []  # one batch: each retrieval whole, as before batches
    assert runs["three"][0] == [f"results/hotpotqa/retrieval/parts/{rv}/queries/{b}.jsonl"
                                for rv in ("bm25", "hier-dense") for b in ("0-3", "4-7", "8-9")]
    assert runs["three"][1] == runs["one"][1]


def _plant_exports(work, config, datasets) -> dict[str, int]:
    """``datasets``' suite exports as far as a dry run reads them: the real queries file (written from the loader
    as the export writes it), the trees and gold standing empty; each dataset's query count."""
    from pipeline import paths
    from pipeline import workflow as wf
    from pipeline.config import load_config
    from pipeline.datasets.suite import dataset_root, load_suite_tables
    from pipeline.parse.suite_export import write_queries

    cfg, counts = load_config(config), {}
    for ds in datasets:
        p = json.loads(wf.suite_export_params(cfg, ds))
        tables = load_suite_tables(ds, dataset_root(p["root"], ds), p["subset"])
        export = work / paths.export_dir(ds)
        (export / "trees").mkdir(parents=True)
        (export / "gold.jsonl").write_text("")
        write_queries(tables, export / "queries.csv")
        counts[ds] = len(tables.queries)
    return counts


@pytest.mark.slow
@pytest.mark.data
def test_the_full_suite_plans_legalbench_rags_queries_in_batches(tmp_path):
    """config.suite-full.yaml's dry run, once LegalBench-RAG's export is there: its queries file is cut into
    batches of ``shards.max_queries``, one retrieve_batch job each, which the variant's retrieve job joins; the
    datasets that fit one batch keep their single retrieve job."""
    from dag_runner import planned_jobs, snakemake

    from pipeline import paths
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO

    config = REPO / "config.suite-full.yaml"
    n = _plant_exports(tmp_path, config, ["legalbench_rag"])["legalbench_rag"]
    batches = query_batches(n, load_config(config)["shards"]["max_queries"])
    assert len(batches) > 1

    targets = [paths.retrieval("legalbench_rag", "bm25", "queries"), paths.retrieval("msmarco", "bm25", "queries")]
    plan = snakemake(tmp_path, "-n", "-p", *targets, configfile=config)
    out = plan.stdout + plan.stderr
    assert plan.returncode == 0, out[-3000:]
    assert planned_jobs(out)["retrieve_batch"] == len(batches) and planned_jobs(out)["retrieve"] == 2, out[-3000:]
    parts = [paths.retrieval_batch("legalbench_rag", "bm25", "queries", b.id) for b in batches]
    assert all(f"output: {part}" in out for part in parts)
    assert f"--questions {paths.export_split('legalbench_rag')} {' '.join(parts)} " in out



@pytest.mark.slow
@pytest.mark.data
def test_the_full_suite_plans_legalbench_rags_cross_fitted_retrieval_in_batches(tmp_path):
    """config.suite-full.yaml's dry run, once LegalBench-RAG's export is there: each cross-fitted SproutRAG
    variant's queries in batches of ``shards.max_queries``, one retrieve_crossfit_batch job each (every fold's
    index its input), joined by the variant's one retrieve_crossfit job; no plain retrieve_batch job for them."""
    from dag_runner import planned_jobs, snakemake

    from pipeline import paths
    from pipeline import workflow as wf
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO
    from pipeline.workflow.crossfit import fold_index_files

    config = REPO / "config.suite-full.yaml"
    cfg = load_config(config)
    assert "legalbench_rag" in wf.crossfit_datasets(cfg)
    rv = wf.crossfit_variants(cfg)[0]
    n = _plant_exports(tmp_path, config, ["legalbench_rag"])["legalbench_rag"]
    batches = query_batches(n, cfg["shards"]["max_queries"])
    plan = snakemake(tmp_path, "-n", "-p", paths.retrieval("legalbench_rag", rv, "queries"), configfile=config)
    out = plan.stdout + plan.stderr
    assert plan.returncode == 0, out[-3000:]
    jobs = planned_jobs(out)
    assert jobs["retrieve_crossfit_batch"] == len(batches) > 1 and jobs["retrieve_crossfit"] == 1, jobs
    assert "retrieve_batch" not in jobs and "retrieve" not in jobs, jobs
    parts = [paths.retrieval_batch("legalbench_rag", rv, "queries", b.id) for b in batches]
    assert all(f"output: {part}" in out for part in parts)
    assert f"--questions {paths.export_split('legalbench_rag')} {' '.join(parts)} " in out
    folds = fold_index_files(cfg, "legalbench_rag", rv)
    assert folds and all(f"--fold-index {name}={f}" in out for name, fs in folds.items() for f in fs)

@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("grid", ["config.yaml", "config.claims.yaml"])
def test_a_kept_run_of_the_shipped_grids_retrieves_as_before_batches(tmp_path, grid):
    """A results folder kept from before query batches, its suite exports done: every split of the default and
    claims grids fits one batch, so the dry run plans no retrieve_batch job and each suite retrieval is the job
    it was (its inputs the indexes and the questions alone, its shell text ``--questions <queries.csv>
    --params``): the rerun triggers Snakemake compares (input set, shell text, params: their hashes pinned in
    tests/test_shipped_configs.py) hold, so nothing reruns for batches (#45 item 3)."""
    from dag_runner import planned_jobs, snakemake

    from pipeline import paths
    from pipeline import workflow as wf
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO

    config = REPO / grid
    cfg = load_config(config)
    counts = _plant_exports(tmp_path, config, sorted(cfg["suite"]["datasets"]))
    assert max(counts.values()) <= cfg["shards"]["max_queries"], counts
    targets = [paths.retrieval(ds, rv, "queries") for ds in counts for rv in cfg["suite"]["retrieval"]]
    plan = snakemake(tmp_path, "-n", "-p", *targets, configfile=config)
    out = plan.stdout + plan.stderr
    assert plan.returncode == 0, out[-3000:]
    jobs = planned_jobs(out)
    assert "retrieve_batch" not in jobs and "/retrieval/parts/" not in out, out[-3000:]
    assert jobs["retrieve"] == len(targets) and "suite_export" not in jobs, jobs
    for ds in counts:
        for rv in cfg["suite"]["retrieval"]:
            inputs = [*(paths.index(ds, n) for n in wf.retrieval_indexes(cfg, rv)), paths.export_split(ds),
                      *wf.retrieval_models(cfg, rv)]  # the rule's input order: indexes, questions, model files
            assert f"input: {', '.join(inputs)}\n    output: {paths.retrieval(ds, rv, 'queries')}\n" in out
            assert f"--questions {paths.export_split(ds)} --params " in out

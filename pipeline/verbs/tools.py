"""fetch, bench and the LLM provider stand-in: the verbs outside the DAG."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.verbs.base import config_args, config_files, config_overrides, json_arg, verb


def cmd_fetch(a) -> None:
    from pipeline.datasets.fetch import fetch_pdfs

    print(json.dumps(fetch_pdfs(a.metadata, a.out_dir, a.status, timeout_s=a.timeout)))


def bench_scale(a) -> None:
    """`make bench-scale`: the scale model's figures, reports/bench/scale.json and its figure scale.{png,svg}."""
    from pipeline.bench.scale import ScaleRun, remeasure_latency, run_scale_bench
    from pipeline.publish.bench_doc import bench_path, save_bench
    from pipeline.report.render.scale_figure import draw_scale

    run = ScaleRun(
        dataset=a.dataset,
        subset=json_arg(a.subset),
        fractions=tuple(float(f) for f in a.fractions.split(",")),
        variants=tuple(a.variants.split(",")),
        queries=a.scale_queries,
        work=Path(a.work) if a.work else None,
    )
    if a.latency_only:
        kept_path = bench_path(Path(a.reports), "scale")
        kept = json.loads(kept_path.read_text(encoding="utf-8"))
        stages_commit = json.loads(Path(f"{kept_path}.manifest.json").read_text(encoding="utf-8"))["git_commit"]
        figures = remeasure_latency(kept, stages_commit, config_files(a), config_overrides(a.set), run)
    else:
        figures = run_scale_bench(config_files(a), config_overrides(a.set), run)
    params = {"config": config_files(a), "set": list(a.set), **{k: v for k, v in vars(run).items() if k != "work"}}
    path = save_bench(figures, Path(a.reports), "scale", params)
    print(json.dumps({k: figures[k] for k in ("sizes", "fits", "latency_fits", "superlinear")}, indent=1))
    print(f"wrote {path} and {', '.join(map(str, draw_scale(figures, path.with_suffix(''))))}")


def cmd_bench(a) -> None:
    if a.scale:
        bench_scale(a)
        return
    if a.llm_models:
        from pipeline.bench.llm_models import Rows, run_local_models_bench
        from pipeline.llm.speeds import ship
        from pipeline.publish.bench_doc import llm_models_table, save_bench

        names = a.llm_models.split(",")
        figures = run_local_models_bench(config_files(a), names, a.retrieval, Rows(questions=a.questions_llm))
        print(llm_models_table(figures))
        print(
            f"wrote {save_bench(figures, Path(a.reports), 'llm_models', {'config': config_files(a), 'models': names})}"
        )
        if a.ship:
            print(f"wrote {ship(figures)} (the estimate's local speeds)")
        return
    if a.llm or a.llm_local:
        from pipeline.bench.llm import run_llm_bench, run_local_servers_bench

        (run_local_servers_bench if a.llm_local else run_llm_bench)(config_files(a), a.reports)
        return
    if a.fixed_cost:
        from pipeline.bench.fixed_cost import run_fixed_cost_bench
        from pipeline.publish.bench_doc import save_bench

        figures = run_fixed_cost_bench(config_files(a), config_overrides(a.set), a.runs)
        params = {"config": config_files(a), "set": list(a.set), "runs": a.runs}
        print(f"wrote {save_bench(figures, Path(a.reports), 'fixed_cost', params)}")
        return
    from pipeline.bench.throughput import run_bench, run_sprout_bench
    from pipeline.publish.bench_doc import save_bench

    files, overrides = tuple(config_files(a)), config_overrides(a.set)
    params = {"config": config_files(a), "set": list(a.set), "docs": a.docs, "queries": a.queries}
    if a.sprout:
        figures = run_sprout_bench(files, a.docs, a.queries, overrides)
    else:
        figures = run_bench(files, a.docs, a.queries, overrides)
        if not a.no_encoders:  # the packaged / fp32-export / int8 comparison: its own file (docs/encoder.md)
            from pipeline.bench.throughput import run_encoder_comparison

            encoders = run_encoder_comparison(files, overrides, a.recall_docs)
            print(f"wrote {save_bench(encoders, Path(a.reports), 'encoder', {**params, 'recall_docs': a.recall_docs})}")
    print(f"wrote {save_bench(figures, Path(a.reports), 'sprout' if a.sprout else 'main', params)}")


def cmd_llm_choice(a) -> None:
    from pipeline.bench.llm_choice import CANDIDATES, ChoiceRun, run_choice

    chosen = [c for c in CANDIDATES if not a.candidates or c.name in a.candidates.split(",")]
    run_choice(config_files(a), ChoiceRun(a.model, a.retrieval, a.out, chosen, a.folds, a.seed, a.limit, a.replies))


def cmd_standin(a) -> None:
    from pipeline.bench.standin import StandInConfig, serve

    snapshot = serve(StandInConfig(**json_arg(a.params)), a.port_file)
    print(json.dumps({k: v for k, v in snapshot.items() if k not in ("per_key", "ok_per_key")}))


def scale_args(s) -> None:
    """The bench's ``--scale`` and what it measures (`make bench-scale`, docs/scale.md)."""
    s.add_argument(
        "--scale",
        action="store_true",
        help="the scale model: each stage's CPU-s, peak memory and output at several corpus sizes, exponents, latency",
    )
    s.add_argument("--dataset", default="legalbench_rag", help="--scale: the suite dataset (default: %(default)s)")
    s.add_argument("--subset", default='{"full": true}', help="--scale: its subset, JSON (default: %(default)s)")
    s.add_argument("--fractions", default="0.1,0.3,1", help="--scale: shares of its documents (default: %(default)s)")
    s.add_argument(
        "--variants",
        default="hier-dense,flat-dense,bm25,sprout-uniform",
        help="--scale: retrieval variants, one per index kind (default: %(default)s)",
    )
    s.add_argument("--scale-queries", type=int, default=200, help="--scale: queries asked at every size")
    s.add_argument("--work", default=None, help="--scale: keep the jobs' scratch folder here (default: removed)")
    s.add_argument(
        "--latency-only",
        action="store_true",
        help="--scale: measure the per-query latency again on the indexes of a kept bench (its --work), keeping the "
        "stages' costs of <reports>/bench/scale.json",
    )


def add_verbs(sub) -> None:
    """fetch, bench and the LLM provider stand-in: the verbs outside the DAG."""
    from pipeline.paths import reports

    s = verb(
        sub,
        "fetch",
        cmd_fetch,
        "download the WattBot PDFs (needs internet; offline it says so and exits 0)",
        "--metadata",
        "--out-dir",
        "--status",
    )
    s.add_argument("--timeout", type=float, default=30, help="seconds per download before it counts as failed")

    s = sub.add_parser(
        "bench", help="indexing and encoder throughput and retrieval latency: printed and written to reports/bench/"
    )
    config_args(s)
    s.add_argument("--docs", type=int, default=3, help="number of WattBot documents to index")
    s.add_argument("--queries", type=int, default=41, help="number of questions timed for retrieval latency")
    s.add_argument("--sprout", action="store_true", help="SproutRAG: windows/s, tree build, beam search")
    s.add_argument("--llm", action="store_true", help="LLM calls at scale through the provider stand-in")
    s.add_argument("--llm-local", action="store_true", help="the local model: one server process against two")
    s.add_argument(
        "--llm-models",
        default="",
        help="llm.local models, comma-separated: tokens/s, s and CPU-s a question at 1 and 2 threads and servers",
    )
    s.add_argument(
        "--retrieval",
        default="results/wattbot/retrieval/hier-convex/train.jsonl",
        help="--llm-models: the train questions' retrieval records the prompts show (default: %(default)s)",
    )
    s.add_argument("--questions-llm", type=int, default=8, help="--llm-models: train questions per row")
    s.add_argument("--ship", action="store_true", help="--llm-models: write the rows to pipeline/llm/local_speeds.json")
    s.add_argument(
        "--fixed-cost",
        action="store_true",
        help="CPU-s of one retrieve and one suite-evaluate job before their real work: interpreter, imports, encoder",
    )
    s.add_argument("--runs", type=int, default=5, help="--fixed-cost: processes per figure (the median is kept)")
    scale_args(s)
    s.add_argument(
        "--reports",
        default=reports.root,
        help="writes <reports>/bench/{main,sprout,encoder,llm,llm_local,llm_models,fixed_cost,scale}.json "
        "(make readme BENCH=reports: docs)",
    )
    s.add_argument(
        "--no-encoders", action="store_true", help="skip the packaged / fp32-export / int8 encoder comparison"
    )
    s.add_argument(
        "--recall-docs", type=int, default=4, help="encoder comparison: WattBot documents in its recall index"
    )
    s.set_defaults(fn=cmd_bench)

    s = verb(
        sub,
        "llm-choice",
        cmd_llm_choice,
        "a local model's context size, snippets and retry policy chosen on the train folds (#48 item 4)",
        "--out",
    )
    config_args(s)
    s.add_argument("--model", required=True, help="the model, e.g. local/qwen2.5-coder-1.5b")
    s.add_argument("--retrieval", required=True, help="the train questions' retrieval records (hier-convex's)")
    s.add_argument("--candidates", default="", help="names to run, comma-separated (default: all, in order)")
    s.add_argument("--folds", type=int, default=3, help="folds of the train questions (default: %(default)s)")
    s.add_argument("--seed", type=int, default=0, help="the folds' shuffle (default: %(default)s)")
    s.add_argument("--limit", type=int, default=None, help="the first N train questions only")
    s.add_argument("--replies", default=None, help="also write every raw reply here (the fixtures of #48 item 5)")

    s = verb(sub, "standin", cmd_standin, "an OpenAI-compatible LLM provider stand-in on 127.0.0.1 (stops by itself)")
    s.add_argument("--port-file", required=True, help="its port is written here once it listens")
    s.add_argument("--params", default="{}", help="StandInConfig fields as JSON (latency, fault shares, bounds)")

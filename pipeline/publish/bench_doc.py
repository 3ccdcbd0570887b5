"""`make bench` figures into the docs: the bench writes ``reports/bench/<name>.json`` (one flat-ish JSON
object per bench) and these renderers turn it into a table, so no speed is ever typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline import markdown
from pipeline.io import atomic_write_json
from pipeline.paths import Reports
from pipeline.provenance import write_manifest


def bench_path(reports_dir: Path, name: str) -> Path:
    """Where bench ``name`` (``main`` or ``sprout``) keeps its figures."""
    return Path(Reports.at(reports_dir).bench(name))


def save_bench(figures: dict, reports_dir: Path, name: str, config_slice: dict, inputs: tuple = ()) -> Path:
    """Write the figures atomically with a manifest (the stamp of the generated block reads it)."""
    path = bench_path(reports_dir, name)
    atomic_write_json(path, figures)
    write_manifest(path, config_slice, inputs)
    return path


def flatten(obj: dict, prefix: str = "") -> list[tuple[str, object]]:
    """Nested dicts as ``outer · inner`` keys, lists joined, in the file's (sorted) order."""
    rows: list[tuple[str, object]] = []
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            rows += flatten(v, key + " · ")
        else:
            rows.append((key, ", ".join(map(str, v)) if isinstance(v, list) else v))
    return rows


def table(reports_dir: Path, name: str) -> str:
    """A two-column markdown table, ``figure | value``, of one bench file."""
    figures = json.loads(bench_path(reports_dir, name).read_text())
    rows = ([f"{k}".replace("\n", " "), f"{v}".replace("\n", " ")] for k, v in flatten(figures))
    return markdown.table(["figure", "value"], rows) + "\n"


def render_main(reports_dir: Path) -> str:
    """`python -m pipeline bench`: indexing and encoder throughput, retrieval latency, int8 fidelity."""
    return table(reports_dir, "main")


def render_fixed_cost(reports_dir: Path) -> str:
    """`python -m pipeline bench --fixed-cost`: CPU-s of one retrieve / suite-evaluate job and its parts."""
    return table(reports_dir, "fixed_cost")


def render_sprout(reports_dir: Path) -> str:
    """`python -m pipeline bench --sprout`: windows/s, tree build, beam search, projected time for all of WattBot's documents."""
    return table(reports_dir, "sprout")


def render_sprout_speed(reports_dir: Path) -> str:
    """Markdown table of the last ``bench --sprout``: per kernel, windows/s, CPU s per window and per phase,
    the projected WattBot pass; then the fused kernel's agreement with the eager reference."""
    path = bench_path(reports_dir, "sprout")
    if not path.exists():
        return "_No measurement yet: run `python -m pipeline bench --sprout` (writes reports/bench/sprout.json)._"
    b = json.loads(path.read_text())
    if "kernels" not in b:  # written by a bench from before the per-kernel figures
        return "_The bench file has no per-kernel figures: rerun `python -m pipeline bench --sprout`._"
    threads = b["attention"]["threads"]
    lines = [
        f"{b['windows']} windows of {len(b['docs'])} WattBot documents ({', '.join(b['docs'])}), "
        f"{threads} thread{'' if threads == 1 else 's'}, {b['cpus']} CPUs, OMP_WAIT_POLICY={b.get('omp_wait_policy')}; "
        f"WattBot has {b['corpus_windows']} windows.",
        "",
    ]
    rows = (
        [
            kernel,
            f"{r['windows_per_s']}",
            f"{r['cpu_s_per_window']}",
            " / ".join(f"{r['cpu_s_by_phase'].get(phase, 0)}" for phase in ("tokenize", "encoder", "aggregate")),
            f"{r['corpus_minutes_idle_estimate']}",
        ]
        for kernel, r in b["kernels"].items()
    )
    lines += markdown.table_lines(
        [
            "kernel",
            "windows/s (wall)",
            "CPU s / window",
            "CPU s: tokenize / encoder / aggregate",
            "WattBot pass, idle estimate (min)",
        ],
        rows,
    )
    if "speedup_cpu_per_window_vs_eager" in b:
        lines += [
            "",
            f"CPU per window: {b['speedup_cpu_per_window_vs_eager']}x faster than eager; largest per-head "
            f"value difference {b['max_abs_head_value_diff_vs_eager']:.1e}; trees identical: "
            f"{'yes' if b['trees_identical_to_eager'] else 'NO'}.",
        ]
    return "\n".join(lines)


def render_llm_bench(reports_dir: Path) -> str:
    """The README/docs block ``llm-bench``: the figures of the last ``make bench-llm`` against the targets."""
    b = json.loads(bench_path(reports_dir, "llm").read_text())
    t, s = b["targets"], b["standin"]
    rows = [
        ("calls sent (distinct)", f"{b['calls']} ({b['distinct_calls']})", ""),
        ("wall time (litellm's one-off warm-up apart)", f"{b['wall_s']} s (+{b['warmup_s']} s)", ""),
        ("ideal time (distinct × mean latency / concurrency)", f"{b['ideal_s']} s", ""),
        ("ratio", f"{b['ratio']}", f"≤ {t['ratio']} {'✓' if b['ratio'] <= t['ratio'] else '✗'}"),
        ("retries", f"{b['retries']}", ""),
        ("429s (Retry-After honoured)", f"{b['rate_limited']} ({b['retry_after_honoured']})", ""),
        ("5xx / stalled / cut-off bodies", f"{b['server_errors']} / {b['stalled']} / {b['malformed']}", ""),
        (
            "calls lost",
            f"{b['calls_lost']}",
            f"= {t['calls_lost']} {'✓' if b['calls_lost'] == t['calls_lost'] else '✗'}",
        ),
        (
            "rerun from cache",
            f"{b['rerun_s']} s, {b['rerun_calls']} calls, {'identical' if b['rerun_identical'] else 'DIFFERENT'}",
            f"≤ {t['rerun_s']} s {'✓' if b['rerun_s'] <= t['rerun_s'] else '✗'}",
        ),
    ]
    if "planner_wall_s" in b:  # measured since the planner's calls run concurrently
        rows.append(
            (
                f"LLM query planner, {b['questions']} questions (ideal: questions × mean latency / concurrency)",
                f"{b['planner_wall_s']} s (ideal {b['planner_ideal_s']} s)",
                "",
            )
        )
    head = (
        f"{b['questions']} test questions × {b['samples']} samples, {b['blank_retries']} blank-retry, "
        f"concurrency {b['concurrency']}; stand-in latency lognormal mean {s['mean_latency_s']} s, "
        f"{s['share_429']:.0%} 429 (Retry-After {s['retry_after_s']:g} s), {s['share_5xx']:.0%} 5xx, "
        f"{s['share_stall']:.1%} stalls (client timeout {b['client']['timeout_s']} s); {b['cpus']} CPUs.\n\n"
    )
    return head + markdown.table(["figure", "value", "target"], rows)


def render_llm_local(reports_dir: Path) -> str:
    """The docs block ``llm-local-servers``: one local server against two, from the last measurement."""
    b = json.loads(bench_path(reports_dir, "llm_local").read_text())
    return (
        f"{b['calls']} short generations ({b['max_tokens']} tokens, {b['n_threads']} thread per server, "
        f"{b['cpus']} CPUs, load average {b['load_avg_1min']} while measured): one server, one after another "
        f"**{b['one_server_s']} s**; two servers, two at a time **{b['two_servers_s']} s** "
        f"(× {b['speedup']})."
    )


def render_llm_models(reports_dir: Path) -> str:
    """docs/llm.md's ``llm-models`` block: the LLM bench's local-model rows (`make bench-llm-models`), which the
    estimate prices local calls by (pipeline/llm/local_speeds.json)."""
    return llm_models_table(json.loads(bench_path(reports_dir, "llm_models").read_text()))


def llm_models_table(figures: dict) -> str:
    """The rows as a markdown table, with the CPU and the settings they were measured at."""
    cols = [
        ("model", "model"),
        ("threads", "threads"),
        ("servers", "servers"),
        ("prompt tok/s", "prompt_tok_s"),
        ("generated tok/s", "gen_tok_s"),
        ("s / question", "s_per_question"),
        ("CPU-s / question", "cpu_s_per_question"),
        ("prompt tokens / question", "prompt_tokens_per_question"),
        ("generated tokens / question", "completion_tokens_per_question"),
        ("load average (before, after)", "load"),
    ]
    rows = [
        [str(r["load_avg_before"]) + ", " + str(r["load_avg_after"]) if k == "load" else str(r[k]) for _, k in cols]
        for r in figures["rows"]
    ]
    head = (
        f"{figures['cpu']}, {figures['cpus']} CPUs, {figures['measured']}: the first {figures['rows'][0]['questions']} "
        f"train questions, context_k {figures['context_k']} x {figures['snippet_chars']} characters.\n\n"
        if figures["rows"]
        else ""
    )
    return head + markdown.table([c for c, _ in cols], rows)


def render_encoder(reports_dir: Path) -> str:
    """docs/encoder.md's generated block: speed, fidelity and recall per encoder from reports/bench/encoder.json."""
    path = bench_path(reports_dir, "encoder")
    if not path.exists():
        return f"(no {path} yet: run `python -m pipeline bench`)"
    r = json.loads(path.read_text())
    lines = [
        f"Speed on {r['sentences']} document sentences and {r['chunks']} 512-token chunks of "
        f"{', '.join(r['docs_for_speed'])}, {r['threads']} thread{'' if r['threads'] == 1 else 's'}, "
        f"best of {r.get('rounds', 1)} interleaved rounds; "
        "int8 dot-product instructions: "
        f"{'yes' if r['int8_dot_product'] else 'no'} (so `precision: auto` uses `{r['auto_choice']}`).",
        "",
    ]
    rows = []
    for name, e in r["encoders"].items():
        cs, cc = e.get("cosine_sentences"), e.get("cosine_chunks")
        cos = (
            [f"{cs['mean_cosine']:.4f} / {cs['min_cosine']:.4f}", f"{cc['mean_cosine']:.4f} / {cc['min_cosine']:.4f}"]
            if cs
            else ["reference", "reference"]
        )
        rows.append(
            [
                name,
                f"{e['sentences']['per_s']:.0f}",
                f"{e['sentences']['per_cpu_s']:.0f}",
                f"{e['sentence_speedup_vs_packaged']:.2f}",
                f"{e['chunks']['per_s']:.1f}",
                f"{e['chunks']['per_cpu_s']:.1f}",
                *cos,
            ]
        )
    lines += markdown.table_lines(
        [
            "encoder",
            "sentences/s",
            "sentences/CPU-s",
            "× packaged",
            "chunks/s",
            "chunks/CPU-s",
            "cosine to fp32, sentences (mean / min)",
            "chunks (mean / min)",
        ],
        rows,
    )
    rec = r["recall"]
    lines += [
        "",
        f"Doc recall@k on the {rec['questions']} WattBot train questions citing one of "
        f"{', '.join(rec['docs'])} (a hier index of those documents per encoder; "
        f"difference to fp32 torch with a paired 95% interval):",
        "",
    ]

    reference = next(n for n, e in r["encoders"].items() if not e.get("cosine_sentences"))  # measured against itself

    def cell(name: str, measured: dict) -> str:
        diff = (
            ""
            if name == reference
            else f" ({measured['diff_vs_ref']:+.3f} [{measured['lo']:+.3f}, {measured['hi']:+.3f}])"
        )
        return f"{measured['recall']:.3f}" + diff

    rows = [[name, *(cell(name, v) for v in by_k.values())] for name, by_k in rec["by_encoder"].items()]
    lines += markdown.table_lines(["encoder", *(f"recall@{k}" for k in rec["ks"])], rows)
    return "\n".join(lines)


def duration(seconds: float) -> str:
    """``4.1 s``; past a minute also in minutes: ``145 s (2 min 25 s)``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    m, s = divmod(round(seconds), 60)
    return f"{round(seconds)} s ({m} min {s} s)"


def render_cluster(reports_dir: Path) -> str:
    """docs/cluster.md's ``cluster`` block: what the last passing run of tests/cluster/ measured on a real
    SLURM cluster (tests/cluster/conftest.py writes ``reports/bench/cluster.json`` when
    WATTBENCH_CLUSTER_REPORT names it, as `make test` does)."""
    b = json.loads(bench_path(reports_dir, "cluster").read_text())
    retries = b["submissions"] - b["jobs"]
    per_job = (b["cluster_grid_s"] - b["local_grid_s"]) / b["submissions"]
    lines = [
        f"Measured by the last passing run of `tests/cluster/`, on {b['date']}: {b['cores']} cores "
        f"({b['cpu_model']}), {b['os']}; SLURM {b['slurm_version']}, snakemake-executor-plugin-slurm "
        f"{b['plugin_version']}, Snakemake {b['snakemake_version']}.",
        "",
    ]
    rows = [
        [
            f"`slurm_up.sh`: {'packages already installed' if b['packages_preinstalled'] else 'install the packages'},"
            " configure, start, wait for `sinfo` and `sacct`",
            duration(b["cluster_start_s"]),
        ],
        ["the tiny grid run locally (the reference run, just before)", duration(b["local_grid_s"])],
        [
            "the tiny grid through the cluster, with the `scancel` and its retry",
            f"{duration(b['cluster_grid_s'])}: {b['submissions']} submissions ({b['jobs']} jobs, {retries} retried)",
        ],
        ["overhead per submission (cluster less local, over the submissions)", duration(per_job)],
        *_latency_rows(b),
        *_shard_rows(b),
        [
            "the cancel reported by the run after",
            f"{duration(b['cancel_seen_s'])} (the test allows {b['cancel_limit_s']} s)",
        ],
        ["jobs the resume after the SIGKILL ran", f"{b['resumed_jobs']} of the target's {b['target_jobs']}"],
        [
            "the whole `tests/cluster/` run (cluster start and stop, local run, the cluster runs)",
            duration(b["tests_cluster_s"]),
        ],
    ]
    lines += markdown.table_lines(["figure", "value"], rows)
    return "\n".join(lines)


def _shard_rows(b: dict) -> list[list[str]]:
    """The sharded tiny grid through the cluster, each shard and query batch a job, where the run had it (#45)."""
    if "sharded_grid_s" not in b:
        return []
    return [
        [
            "the tiny grid cut into shards (dense indexes in parts, HotpotQA's queries in batches), each a job",
            f"{duration(b['sharded_grid_s'])}: {b['sharded_submissions']} jobs, {b['shard_jobs']} of them shards or batches",
        ]
    ]


def _latency_rows(b: dict) -> list[list[str]]:
    """sbatch to running per job (sacct's Submit to Start), where the run recorded it (since #45)."""
    if "submit_to_start_s" not in b:
        return []
    return [
        [
            f"sbatch to running, median of {b['submit_to_start_jobs']} jobs (the largest)",
            f"{duration(b['submit_to_start_s'])} ({duration(b['submit_to_start_max_s'])})",
        ]
    ]


def render_test_fast(reports_dir: Path) -> str:
    """README's ``test-fast`` block: what the last passing `make test-fast` measured (tests/conftest.py writes
    ``reports/bench/test_fast.json`` when WATTBENCH_TIER_REPORT names it, as the Makefile's target does). Short:
    README.md stays under its size limit."""
    b = json.loads(bench_path(reports_dir, "test_fast").read_text())
    skipped = f", {b['skipped']} skipped" if b["skipped"] else ""
    how = ["root" if b["root"] else "not root", "a network" if b["network"] else "no network"]
    how += [] if b.get("shared_data", True) else ["no shared data"]
    return (
        f"**{b['passed']} passed{skipped} in {duration(b['wall_s'])}** on {b['cores']} cores ({b['cpu_model']}): "
        f"{', '.join(how)}; load {b['load_avg_1min']}, {b['date']}; {b['deselected']} tests outside the tier."
    )


def _exponent(fit: dict | None) -> str:
    """A fitted exponent as the docs show it: its value and the points under it, flagged above the bound."""
    if not fit:
        return "no slope"
    return f"{fit['exponent']:.2f}{' **> 1.1**' if fit['superlinear'] else ''}"


def render_scale(reports_dir: Path) -> str:
    """docs/scale.md's ``scale`` block: the scale model from ``reports/bench/scale.json`` (`make bench-scale`):
    the sizes, each stage's CPU-s per size with its exponent, its memory and output at the largest size with
    theirs, per-query latency per index kind, and the stages above the bound."""
    b = json.loads(bench_path(reports_dir, "scale").read_text())
    sizes, n = b["sizes"], len(b["sizes"])
    head = (
        f"{b['dataset']} ({json.dumps(b['subset'])}), {n} nested shares of its documents; "
        f"{b['retrieval_queries']} queries asked at every size; encoder {b['encoder']}; {b['cpus']} CPUs "
        f"({b['cpu_model']}), {b['date']}. Exponents: least-squares slopes of log cost on log corpus characters "
        f"through {n} points each, a rough reading. Figure: `reports/bench/scale.png`."
    )
    size_rows = [
        [f"{s['fraction']:g}", f"{s['docs']}", f"{s['chars']:,}", f"{s['sentences']:,}", f"{s['queries']}"]
        for s in sizes
    ]
    lines = [head, ""] + markdown.table_lines(["share", "documents", "characters", "sentences", "queries"], size_rows)
    shares = [f"{s['fraction']:g}" for s in sizes]
    rows = []
    for stage, costs in b["stages"].items():
        fit, last = b["fits"][stage], costs[-1]
        rows.append(
            [
                stage,
                *(f"{c['cpu_s']:.2f}" for c in costs),
                _exponent(fit.get("cpu_s")),
                f"{last['peak_rss_mb']:.0f}",
                _exponent(fit.get("peak_rss_mb")),
                f"{last['output_bytes']:,}",
                _exponent(fit.get("output_bytes")),
            ]  # fmt: skip
        )
    head_row = ["stage", *(f"CPU-s at {s}" for s in shares), "k (CPU)", f"peak MB at {shares[-1]}", "k (memory)"]
    lines += [""] + markdown.table_lines([*head_row, f"output bytes at {shares[-1]}", "k (output)"], rows)
    lat_rows = [
        [
            f"{v} ({b['index_kinds'][v]})",
            *(f"{r['median_ms']:.2f} / {r['p95_ms']:.2f}" for r in rs),
            _exponent(b["latency_fits"][v]),
        ]  # fmt: skip
        for v, rs in b["latency"].items()
    ]
    lines += [""] + markdown.table_lines(
        ["retrieval variant (index kind)", *(f"ms per query at {s} (median / p95)" for s in shares), "k (median)"],
        lat_rows,
    )
    if again := b.get("latency_measured"):
        lines += [
            "",
            f"The latency above was measured again on {again['date']} ({again['cpus']} CPUs, {again['cpu_model']}) "
            f"on the same indexes (`--latency-only`), at this block's commit; the stages' costs are the bench's of "
            f"{b['date']} at commit `{b['stages_commit'][:12]}`.",
        ]
    flagged = ", ".join(b["superlinear"]) or "none"
    lines += ["", f"Above the bound of 1.1: {flagged}."]
    return "\n".join(lines)


def render_makespan(reports_dir: Path) -> str:
    """docs/cluster.md's ``makespan`` block: a kept run's DAG replayed on clusters of several sizes
    (`python -m pipeline makespan` writes ``reports/bench/makespan.json``), beside the run's measured 1-node
    time, naming the run, its commit and the per-job latency's source."""
    b = json.loads(bench_path(reports_dir, "makespan").read_text())
    run, lat, path = b["run"], b["latency"], b["critical_path"]
    estimated = f"; {b['unmeasured_jobs']} without a record, given their rule's mean" if b["unmeasured_jobs"] else ""
    lines = [
        f"Run `{run['id']}` (commit `{str(run['commit'])[:12]}`, {', '.join(run.get('config_files') or [])}; "
        f"{run.get('cpu')}): {b['jobs']} jobs, {duration(b['core_seconds'])} of core time{estimated}; its longest "
        f"chain {path['jobs']} jobs, {duration(path['seconds'])}. Per-job submission latency "
        f"{lat['seconds']} s: {lat['source']}.",
        "",
    ]
    rows = [
        ["1 node, measured (the run: first job's start to last job's end)", _maybe(run.get("measured_span_s"))],
        ["1 node, simulated as it ran (no submissions, Snakemake's ILP pick)", duration(b["local_1_node_s"])],
    ]
    rows += [
        [f"{n} node{'s' if n != '1' else ''} of {b['cores_per_node']} cores, predicted", duration(s)]
        for n, s in sorted(b["nodes"].items(), key=lambda kv: int(kv[0]))  # the JSON's keys sort as text
    ]
    rows.append(["no cluster beats: the longest chain, one latency per job on it", duration(path["with_latency_s"])])
    return "\n".join(lines + markdown.table_lines(["makespan", "seconds"], rows))


def _maybe(seconds: float | None) -> str:
    """A duration, or why there is none (a run kept without its time record)."""
    return duration(seconds) if seconds is not None else "not recorded"

# WattBot 2025: ingest -> trees -> (indexes -> retrieval: retrieval.smk) -> answers -> scores -> report.
# Rules only wire files to `python -m pipeline <verb>`; all logic lives in pipeline/.

R = wf.RESULTS
LLM_EXEC = wf.llm_exec_json(CFG)   # execution-only LLM settings: passed to jobs, never a rerun trigger
SPLITS = sorted(CFG["wattbot"]["splits"])
SCORE_SPLIT = CFG["wattbot"]["score_split"]

wildcard_constraints:
    doc=r"[A-Za-z0-9_.-]+",
    av=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


rule ingest:
    input:
        metadata=f"{CFG['wattbot']['dir']}/metadata.csv",
        splits=[wf.split_source(CFG, s) for s in SPLITS],
    output:
        metadata=f"{R}/ingest/metadata.csv",
        splits=expand(f"{R}/ingest/{{split}}.csv", split=SPLITS),
    params:
        split_args=" ".join(f"--split {s}={wf.split_source(CFG, s)} --out-split {s}={R}/ingest/{s}.csv" for s in SPLITS),
    log: "logs/wattbot/ingest.log"
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline ingest --metadata {input.metadata:q} --metadata-out {output.metadata:q} {params.split_args} 2>&1 | tee {log}"


rule tree:
    input: lambda w: wf.tree_source(CFG, w.doc)
    output: f"{R}/trees/{{doc}}.json"
    params: vision=lambda w: wf.tree_args(CFG, wf.tree_source(CFG, w.doc))  # heading method (PDFs) + vision model
    log: "logs/wattbot/tree/{doc}.log"
    threads: 1
    resources: mem_mb=1000, runtime=10
    shell: "python -m pipeline tree --source {input:q} --doc-id {wildcards.doc} --out {output:q} {params.vision} 2>&1 | tee {log}"


rule answer:
    input:
        retrieval=lambda w: f"{R}/retrieval/{CFG['answering'][w.av]['retrieval']}/{w.split}.jsonl",
        questions=f"{R}/ingest/{{split}}.csv",
        metadata=f"{R}/ingest/metadata.csv",
        models=lambda w: wf.answer_models(CFG, w.av),
    output:
        jsonl=f"{R}/answers/{{av}}/{{split}}.jsonl",
        csv=f"{R}/answers/{{av}}/{{split}}.csv",
    wildcard_constraints: av=wf.answer_variants(CFG, ensemble=False)
    params: cfg=lambda w: wf.answering_params(CFG, w.av)
    log: "logs/wattbot/answer/{av}/{split}.log"
    benchmark: "benchmarks/wattbot/answer/{av}/{split}.tsv"
    threads: lambda w: wf.answer_threads(CFG, w.av)   # a local LLM's servers x n_threads (pipeline/cores.py)
    # llm_api: this job's calls in flight (its model's concurrency, capped by the run's total)
    resources: mem_mb=2000, runtime=60, llm_api=lambda w: wf.llm_share(CFG, w.av, workflow.global_resources.get("llm_api")),
               cpus=lambda w, threads: threads
    shell: "python -m pipeline answer --retrieval {input.retrieval:q} --questions {input.questions:q} --metadata {input.metadata:q} --params {params.cfg:q} --llm-exec {LLM_EXEC:q} --in-flight {resources.llm_api} --cache-dir {CACHE:q} --out {output.jsonl:q} --out-csv {output.csv:q} 2>&1 | tee {log}"


rule ensemble:
    """`backend: ensemble`: the members' answers voted per question; a changed vote reruns only this."""
    input:
        members=lambda w: wf.ensemble_inputs(CFG, w.av, w.split),
        questions=f"{R}/ingest/{{split}}.csv",
        metadata=f"{R}/ingest/metadata.csv",
    output:
        jsonl=f"{R}/answers/{{av}}/{{split}}.jsonl",
        csv=f"{R}/answers/{{av}}/{{split}}.csv",
    wildcard_constraints: av=wf.answer_variants(CFG, ensemble=True)
    params:
        cfg=lambda w: wf.answering_params(CFG, w.av),
        members=lambda w: wf.ensemble_args(CFG, w.av, w.split),
    log: "logs/wattbot/ensemble/{av}/{split}.log"
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline ensemble {params.members} --questions {input.questions:q} --metadata {input.metadata:q} --params {params.cfg:q} --out {output.jsonl:q} --out-csv {output.csv:q} 2>&1 | tee {log}"


rule evaluate:
    input:
        solution=wf.split_source(CFG, SCORE_SPLIT),
        submission=f"{R}/answers/{{av}}/{SCORE_SPLIT}.csv",
        answers=f"{R}/answers/{{av}}/{SCORE_SPLIT}.jsonl",
        retrieval=lambda w: f"{R}/retrieval/{CFG['answering'][w.av]['retrieval']}/{SCORE_SPLIT}.jsonl",
    output:
        scores=f"{R}/scores/{{av}}.json",
        per_question=f"{R}/scores/{{av}}.per_question.csv",
    log: "logs/wattbot/evaluate/{av}.log"
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline evaluate --solution {input.solution:q} --submission {input.submission:q} --retrieval {input.retrieval:q} --answers {input.answers:q} --out {output.scores:q} --per-question {output.per_question:q} 2>&1 | tee {log}"


rule report:
    input:
        scores=expand(f"{R}/scores/{{av}}.json", av=sorted(CFG["answering"])),
        per_question=expand(f"{R}/scores/{{av}}.per_question.csv", av=sorted(CFG["answering"])),
        submissions=wf.answer_targets(CFG, "test") if "test" in SPLITS else [],
        retrieval=expand(f"{R}/retrieval/{{rv}}/{SCORE_SPLIT}.jsonl", rv=sorted(CFG["retrieval"])),
        gold=wf.split_source(CFG, SCORE_SPLIT),
    output:
        index="reports/index.md",
        leaderboard="reports/wattbot/leaderboard.csv",
        submission="reports/wattbot/submission.csv",
        figure="reports/wattbot/score_by_variant.png",
        retrieval="reports/wattbot/retrieval.csv",
    params: cfg=wf.report_params(CFG)
    log: "logs/report.log"
    threads: 1
    resources: mem_mb=1000, runtime=5
    shell: "python -m pipeline report --params {params.cfg:q} --scores {input.scores:q} --submissions {input.submissions:q} --retrieval {input.retrieval:q} --gold {input.gold:q} --reports reports 2>&1 | tee {log}"


rule fetch:
    """Not part of `all`: `snakemake fetch` downloads the PDFs when online (offline it says so)."""
    input: f"{CFG['wattbot']['dir']}/metadata.csv"
    output: f"{CFG['wattbot']['fetch_dir']}/fetch_status.json"
    params: out_dir=CFG["wattbot"]["fetch_dir"]
    log: "logs/wattbot/fetch.log"
    threads: 1
    resources: mem_mb=500, runtime=30
    shell: "python -m pipeline fetch --metadata {input:q} --out-dir {params.out_dir:q} --status {output:q} 2>&1 | tee {log}"

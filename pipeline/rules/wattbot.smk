# WattBot 2025: ingest -> trees -> (indexes -> retrieval: retrieval.smk) -> answers -> scores -> report.
# Rules only wire files to `python -m pipeline <verb>`; all logic lives in pipeline/.


rule ingest:
    input:
        metadata=f"{CFG['wattbot']['dir']}/metadata.csv",
        splits=[wf.split_source(CFG, s) for s in SPLITS],
    output:
        metadata=L.INGEST_METADATA,
        splits=[L.ingest_split(s) for s in SPLITS],
    params:
        split_args=" ".join(f"--split {s}={wf.split_source(CFG, s)} --out-split {s}={L.ingest_split(s)}" for s in SPLITS),
    log: L.log("wattbot/ingest")
    benchmark: L.rule_benchmark("ingest")
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline ingest --metadata {input.metadata:q} --metadata-out {output.metadata:q} {params.split_args} 2>&1 | tee {log}"


rule tree:
    input: lambda w: wf.tree_source(CFG, w.doc)
    output: L.tree()
    params: vision=lambda w: wf.parse_options(CFG, wf.tree_source(CFG, w.doc))  # heading method (PDFs) + vision model
    log: L.log("wattbot/tree/{doc}")
    benchmark: L.rule_benchmark("tree")
    threads: 1
    resources: mem_mb=1000, runtime=10
    shell: "python -m pipeline tree --source {input:q} --doc-id {wildcards.doc} --out {output:q} {params.vision} 2>&1 | tee {log}"


rule answer:
    input:
        retrieval=lambda w: L.retrieval(L.WATTBOT, CFG["answering"][w.av]["retrieval"], w.split),
        questions=L.ingest_split(),
        metadata=L.INGEST_METADATA,
        models=lambda w: wf.answer_models(CFG, w.av),
    output:
        jsonl=L.answers(),
        csv=L.answers_csv(),
    wildcard_constraints: av=wf.answer_variants(CFG, ensemble=False)
    params: cfg=lambda w: wf.answering_params(CFG, w.av)
    log: L.log("wattbot/answer/{av}/{split}")
    benchmark: L.rule_benchmark("answer")
    threads: lambda w: wf.answer_threads(CFG, w.av)   # a local LLM's servers x n_threads (pipeline/cores.py)
    # llm_api: this job's calls in flight (its model's concurrency, capped by the run's total)
    resources: mem_mb=2000, runtime=60, llm_api=lambda w: wf.llm_share(CFG, w.av, workflow.global_resources.get("llm_api")),
               cpus=lambda w, threads: threads
    shell: "python -m pipeline answer --retrieval {input.retrieval:q} --questions {input.questions:q} --metadata {input.metadata:q} --params {params.cfg:q} --llm-exec {LLM_EXEC:q} --in-flight {resources.llm_api} --cache-dir {CACHE:q} --out {output.jsonl:q} --out-csv {output.csv:q} 2>&1 | tee {log}"


rule ensemble:
    """`backend: ensemble`: the members' answers voted per question; a changed vote reruns only this."""
    input:
        members=lambda w: wf.ensemble_inputs(CFG, w.av, w.split),
        questions=L.ingest_split(),
        metadata=L.INGEST_METADATA,
    output:
        jsonl=L.answers(),
        csv=L.answers_csv(),
    wildcard_constraints: av=wf.answer_variants(CFG, ensemble=True)
    params:
        cfg=lambda w: wf.answering_params(CFG, w.av),
        members=lambda w: wf.ensemble_args(CFG, w.av, w.split),
    log: L.log("wattbot/ensemble/{av}/{split}")
    benchmark: L.rule_benchmark("ensemble")
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline ensemble {params.members} --questions {input.questions:q} --metadata {input.metadata:q} --params {params.cfg:q} --out {output.jsonl:q} --out-csv {output.csv:q} 2>&1 | tee {log}"


rule evaluate:
    input:
        solution=wf.split_source(CFG, SCORE_SPLIT),
        submission=L.answers_csv(split=SCORE_SPLIT),
        answers=L.answers(split=SCORE_SPLIT),
        retrieval=lambda w: L.retrieval(L.WATTBOT, CFG["answering"][w.av]["retrieval"], SCORE_SPLIT),
    output:
        scores=L.scores(),
        per_question=L.per_question(),
    log: L.log("wattbot/evaluate/{av}")
    benchmark: L.rule_benchmark("evaluate")
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline evaluate --solution {input.solution:q} --submission {input.submission:q} --retrieval {input.retrieval:q} --answers {input.answers:q} --out {output.scores:q} --per-question {output.per_question:q} 2>&1 | tee {log}"


REPORT_INPUTS = wf.report_inputs(CFG)


rule report:
    input:
        **wf.input_lists(REPORT_INPUTS),
        gold=wf.split_source(CFG, SCORE_SPLIT),
    output:
        index=L.reports.index_md,
        leaderboard=L.reports.leaderboard,
        submission=L.reports.submission,
        figure=L.reports.score_figure,
        retrieval=L.reports.retrieval_table,
    params: cfg=wf.report_params(CFG), files=wf.named_args(REPORT_INPUTS)
    log: L.log("report")
    benchmark: L.rule_benchmark("report")
    threads: 1
    resources: mem_mb=1000, runtime=5
    shell: "python -m pipeline report --params {params.cfg:q} {params.files} --gold {input.gold:q} --reports {L.reports.root:q} 2>&1 | tee {log}"


rule fetch:
    """Not part of `all`: `snakemake fetch` downloads the PDFs when online (offline it says so)."""
    input: f"{CFG['wattbot']['dir']}/metadata.csv"
    output: f"{CFG['wattbot']['fetch_dir']}/fetch_status.json"
    params: out_dir=CFG["wattbot"]["fetch_dir"]
    log: L.log("wattbot/fetch")
    threads: 1
    resources: mem_mb=500, runtime=30
    shell: "python -m pipeline fetch --metadata {input:q} --out-dir {params.out_dir:q} --status {output:q} 2>&1 | tee {log}"

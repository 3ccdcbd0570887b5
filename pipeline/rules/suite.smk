# The retrieval suite: real benchmarks with gold evidence -> trees -> (retrieval.smk) -> IE@k report.

SUITE_REPORT_INPUTS = wf.suite_report_inputs(CFG)


# A checkpoint: the DAG reads the number of queries off its queries file (a large split's retrieve_batch jobs).
checkpoint suite_export:
    output:
        trees=directory(paths.export_trees()),
        queries=paths.export_split(),
        gold=paths.export_gold(),
    params: cfg=lambda w: wf.suite_export_params(CFG, w.dataset)
    log: paths.log("{dataset}/export")
    benchmark: paths.rule_benchmark("suite_export")
    threads: 1
    resources: mem_mb=wf.per_attempt(4000), runtime=wf.per_attempt(20)
    # --out-dir is paths.export_dir() written out: the shell text is the rule's rerun trigger (tests/test_paths.py)
    shell: "{PY:q} -m pipeline suite-export --params {params.cfg:q} --out-dir results/{wildcards.dataset}/export 2>&1 | tee {log}"


rule suite_evaluate:
    input:
        retrieval=paths.retrieval(split="queries"),
        gold=lambda w: wf.gold_path(CFG, w.dataset, "queries", "jsonl"),   # a smoke run's: its first N queries
    output:
        scores=paths.suite_scores(),
        per_query=paths.suite_per_query(),
    params: ks=" ".join(str(k) for k in wf.suite_ks(CFG))
    log: paths.log("{dataset}/evaluate/{rv}")
    benchmark: paths.rule_benchmark("suite_evaluate")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(10)
    shell: "{PY:q} -m pipeline suite-evaluate --retrieval {input.retrieval:q} --gold {input.gold:q} --ks {params.ks} --out {output.scores:q} --per-query {output.per_query:q} 2>&1 | tee {log}"


rule suite_report:
    input: **wf.input_lists(SUITE_REPORT_INPUTS)
    output:
        metrics=paths.reports.suite_metrics,
        index=paths.reports.suite_index_md,
        figures=[paths.reports.suite_figure(d) for d in SUITE],
    params: cfg=wf.suite_report_params(CFG), files=wf.named_args(SUITE_REPORT_INPUTS)
    log: paths.log("suite_report")
    benchmark: paths.rule_benchmark("suite_report")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline suite-report --params {params.cfg:q} {params.files} --reports {paths.reports.root:q} 2>&1 | tee {log}"

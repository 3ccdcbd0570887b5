# The retrieval suite: real benchmarks with gold evidence -> trees -> (retrieval.smk) -> IE@k report.

SUITE_REPORT_INPUTS = wf.suite_report_inputs(CFG)


rule suite_export:
    output:
        trees=directory(L.export_trees()),
        queries=L.export_split(),
        gold=L.export_gold(),
    params: cfg=lambda w: wf.suite_export_params(CFG, w.dataset)
    log: L.log("{dataset}/export")
    benchmark: L.rule_benchmark("suite_export")
    threads: 1
    resources: mem_mb=wf.per_attempt(4000), runtime=wf.per_attempt(20)
    # --out-dir is L.export_dir() written out: the shell text is the rule's rerun trigger (tests/test_layout.py)
    shell: "{PY:q} -m pipeline suite-export --params {params.cfg:q} --out-dir results/{wildcards.dataset}/export 2>&1 | tee {log}"


rule suite_evaluate:
    input:
        retrieval=L.retrieval(split="queries"),
        gold=L.export_gold(),
    output:
        scores=L.suite_scores(),
        per_query=L.suite_per_query(),
    params: ks=" ".join(str(k) for k in wf.suite_ks(CFG))
    log: L.log("{dataset}/evaluate/{rv}")
    benchmark: L.rule_benchmark("suite_evaluate")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(10)
    shell: "{PY:q} -m pipeline suite-evaluate --retrieval {input.retrieval:q} --gold {input.gold:q} --ks {params.ks} --out {output.scores:q} --per-query {output.per_query:q} 2>&1 | tee {log}"


rule suite_report:
    input: **wf.input_lists(SUITE_REPORT_INPUTS)
    output:
        metrics=L.reports.suite_metrics,
        index=L.reports.suite_index_md,
        figures=[L.reports.suite_figure(d) for d in SUITE],
    params: cfg=wf.suite_report_params(CFG), files=wf.named_args(SUITE_REPORT_INPUTS)
    log: L.log("suite_report")
    benchmark: L.rule_benchmark("suite_report")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline suite-report --params {params.cfg:q} {params.files} --reports {L.reports.root:q} 2>&1 | tee {log}"

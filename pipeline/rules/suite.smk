# The retrieval suite: real benchmarks with gold evidence -> trees -> (retrieval.smk) -> IE@k report.

SUITE = wf.suite_datasets(CFG)


rule suite_export:
    output:
        trees=directory("results/{dataset}/export/trees"),
        queries="results/{dataset}/export/queries.csv",
        gold="results/{dataset}/export/gold.jsonl",
    params: cfg=lambda w: wf.suite_export_params(CFG, w.dataset)
    log: "logs/{dataset}/export.log"
    threads: 1
    resources: mem_mb=4000, runtime=20
    shell: "python -m pipeline suite-export --params {params.cfg:q} --out-dir results/{wildcards.dataset}/export 2>&1 | tee {log}"


rule suite_evaluate:
    input:
        retrieval="results/{dataset}/retrieval/{rv}/queries.jsonl",
        gold="results/{dataset}/export/gold.jsonl",
    output:
        scores="results/{dataset}/scores/{rv}.json",
        per_query="results/{dataset}/scores/{rv}.per_query.csv",
    params: ks=" ".join(str(k) for k in wf.suite_ks(CFG))
    log: "logs/{dataset}/evaluate/{rv}.log"
    threads: 1
    resources: mem_mb=1000, runtime=10
    shell: "python -m pipeline suite-evaluate --retrieval {input.retrieval:q} --gold {input.gold:q} --ks {params.ks} --out {output.scores:q} --per-query {output.per_query:q} 2>&1 | tee {log}"


rule suite_report:
    input: [f"results/{d}/scores/{rv}.json" for d in SUITE for rv in wf.suite_variants(CFG)]
    output:
        metrics="reports/retrieval/metrics.csv",
        index="reports/retrieval/index.md",
        figures=expand("reports/retrieval/{dataset}.png", dataset=SUITE),
    params: cfg=wf.suite_report_params(CFG)
    log: "logs/suite_report.log"
    threads: 1
    resources: mem_mb=1000, runtime=5
    shell: "python -m pipeline suite-report --params {params.cfg:q} --scores {input:q} --out-dir reports/retrieval 2>&1 | tee {log}"

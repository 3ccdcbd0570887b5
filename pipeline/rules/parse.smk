# The parse stage: one tree per document of an answered dataset (WattBot, each corpus), which documents
# failed (errors.csv, and a check that fails the run when parsing.strict is set) and how faithful our PDF
# trees are on real PDFs (reports/parsing/quality.csv). Logic lives in pipeline/parse/commands.py and, for
# the quality report, pipeline/report/pages/parse_quality.py. Each dataset's documents come from its registry
# entry (pipeline/workflow/datasets.py).

rule tree:
    input: lambda w: wf.dataset_tree_source(CFG, w.dataset, w.doc)
    output: paths.tree(dataset="{dataset}")
    wildcard_constraints: dataset=ANSWERED
    params: vision=lambda w: wf.parse_options(CFG, wf.dataset_tree_source(CFG, w.dataset, w.doc))  # heading method (PDFs) + vision model
    log: paths.log("{dataset}/tree/{doc}")
    benchmark: paths.dataset_benchmark("tree")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(10)
    shell: "{PY:q} -m pipeline tree --source {input:q} --doc-id {wildcards.doc} --out {output:q} {params.vision} 2>&1 | tee {log}"


rule parse_errors:
    """One per answered dataset (WattBot, each corpus): its trees' failures."""
    input: lambda w: wf.tree_files(CFG, w.dataset)
    output: paths.parse_errors("{dataset}")
    wildcard_constraints: dataset=ANSWERED
    params: trees=lambda w, input: ",".join(input)
    log: paths.log("{dataset}/parse_errors")
    benchmark: paths.dataset_benchmark("parse_errors")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline parse-errors --trees {params.trees:q} --out {output:q} 2>&1 | tee {log}"


rule parse_check:
    """Prints the failed documents; fails the run when parsing.strict is set (`onsuccess` repeats them last)."""
    input:
        errors=paths.parse_errors("{dataset}"),
    output: paths.parse_check("{dataset}")
    wildcard_constraints: dataset=ANSWERED
    params: strict="--strict" if CFG["parsing"]["strict"] else ""
    log: paths.log("{dataset}/parse_check")
    benchmark: paths.dataset_benchmark("parse_check")
    threads: 1
    resources: mem_mb=wf.per_attempt(200), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline parse-check --errors {input.errors:q} --out {output:q} {params.strict} 2>&1 | tee {log}"


rule parse_quality:
    """Heading precision/recall/F1 vs each PDF's outline, nesting, text, reading order, per document and source.
    scope "sample" (one small document per source) is in the default DAG; "all" is `make parse-quality`."""
    input:
        pdfs=lambda w: wf.parse_quality_pdfs(CFG, "sample" if w.scope else "all"),
        manifest=paths.QUALITY_PDFS_MANIFEST,
    output:
        quality=paths.reports.parse_quality(),
        sources=paths.reports.parse_quality_sources(),
        errors=paths.parse_quality_errors(),
    wildcard_constraints: scope="(sample/)?"
    params:
        pdfs=CFG["parsing"]["quality_dir"],
        scope=lambda w: "sample" if w.scope else "all",
    log: paths.log("parsing/{scope}quality")
    benchmark: paths.rule_benchmark("parse_quality")
    threads: 2
    resources: mem_mb=wf.per_attempt(3000), runtime=wf.per_attempt(20), cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline parse-quality --pdfs {params.pdfs:q} --manifest {input.manifest:q} --scope {params.scope} --jobs {threads} --out {output.quality:q} --errors {output.errors:q} 2>&1 | tee {log}"


# The parse stage beyond one tree per document: which documents failed (errors.csv, and a
# check that fails the run when parsing.strict is set) and how faithful our PDF trees are
# on real PDFs (reports/parsing/quality.csv). Logic lives in pipeline/parse/commands.py.

rule parse_errors:
    input: wf.trees_input(CFG, "wattbot")
    output: f"{R}/parse/errors.csv"
    params: trees=lambda w, input: ",".join(input)
    log: "logs/wattbot/parse_errors.log"
    threads: 1
    resources: mem_mb=500, runtime=5
    shell: "python -m pipeline parse-errors --trees {params.trees:q} --out {output:q} 2>&1 | tee {log}"


rule parse_check:
    """Prints the failed documents; fails the run when parsing.strict is set (`onsuccess` repeats them last)."""
    input:
        errors=f"{R}/parse/errors.csv",
    output: f"{R}/parse/check.json"
    params: strict="--strict" if CFG["parsing"]["strict"] else ""
    log: "logs/wattbot/parse_check.log"
    threads: 1
    resources: mem_mb=200, runtime=5
    shell: "python -m pipeline parse-check --errors {input.errors:q} --out {output:q} {params.strict} 2>&1 | tee {log}"


rule parse_quality:
    """Heading precision/recall/F1 vs each PDF's outline, nesting, text, reading order, per document and source.
    scope "sample" (one small document per source) is in the default DAG; "all" is `make parse-quality`."""
    input: lambda w: wf.parse_quality_pdfs(CFG, "sample" if w.scope else "all")
    output:
        quality="reports/parsing/{scope}quality.csv",
        sources="reports/parsing/{scope}quality_sources.csv",
        errors="results/parse-quality/{scope}errors.csv",
    wildcard_constraints: scope="(sample/)?"
    params:
        pdfs=CFG["parsing"]["quality_dir"],
        scope=lambda w: "sample" if w.scope else "all",
    log: "logs/parsing/{scope}quality.log"
    benchmark: "benchmarks/parsing/{scope}quality.tsv"
    threads: 2
    resources: mem_mb=3000, runtime=20, cpus=lambda w, threads: threads
    shell: "python -m pipeline parse-quality --pdfs {params.pdfs:q} --manifest data/parse-corpus.csv --scope {params.scope} --jobs {threads} --out {output.quality:q} --errors {output.errors:q} 2>&1 | tee {log}"


onsuccess:
    wf.report_parse_failures(f"{R}/parse/errors.csv")

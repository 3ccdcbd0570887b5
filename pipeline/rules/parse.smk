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
    input: wf.parse_quality_pdfs(CFG)
    output:
        quality="reports/parsing/quality.csv",
        errors="results/parse-quality/parse/errors.csv",
    params: pdfs=CFG["parsing"]["quality_dir"]
    log: "logs/parsing/quality.log"
    benchmark: "benchmarks/parsing/quality.tsv"
    threads: 1
    resources: mem_mb=2000, runtime=20
    shell: "python -m pipeline parse-quality --pdfs {params.pdfs:q} --out {output.quality:q} --errors {output.errors:q} 2>&1 | tee {log}"


onsuccess:
    wf.report_parse_failures(f"{R}/parse/errors.csv")

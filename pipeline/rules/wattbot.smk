# WattBot 2025's own inputs: its metadata and question splits ingested, and (outside `all`) its PDFs fetched.
# Every other rule a WattBot run uses serves every answered dataset (WattBot and each corpus: {dataset} is
# ANSWERED) and lives in the file of its stage: tree (parse.smk), answer and ensemble (answer.smk), evaluate
# (evaluate.smk), report (report.smk). Rules only wire files to `python -m pipeline <verb>`.


rule ingest:
    input:
        metadata=f"{CFG['wattbot']['dir']}/metadata.csv",
        splits=[wf.split_source(CFG, s) for s in SPLITS],
    output:
        metadata=paths.INGEST_METADATA,
        splits=[paths.ingest_split(s) for s in SPLITS],
    params:
        split_args=" ".join(f"--split {s}={wf.split_source(CFG, s)} --out-split {s}={paths.ingest_split(s)}" for s in SPLITS),
    log: paths.log("wattbot/ingest")
    benchmark: paths.rule_benchmark("ingest")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline ingest --metadata {input.metadata:q} --metadata-out {output.metadata:q} {params.split_args} 2>&1 | tee {log}"


rule fetch:
    """Not part of `all`: `snakemake fetch` downloads the PDFs when online (offline it says so)."""
    input: f"{CFG['wattbot']['dir']}/metadata.csv"
    output: f"{CFG['wattbot']['fetch_dir']}/fetch_status.json"
    params: out_dir=CFG["wattbot"]["fetch_dir"]
    log: paths.log("wattbot/fetch")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(30)
    shell: "{PY:q} -m pipeline fetch --metadata {input:q} --out-dir {params.out_dir:q} --status {output:q} 2>&1 | tee {log}"

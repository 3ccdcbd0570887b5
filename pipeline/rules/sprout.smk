# SproutRAG: one attention pass per dataset (shared by its sprout indexes), head training on
# LegalBench-RAG / HotpotQA labels (evaluated queries excluded), the beam-width report.

rule sprout_attention:
    input: lambda w: wf.trees_input(CFG, w.dataset)
    output: "results/{dataset}/sprout/attention.safetensors"
    params: cfg=wf.sprout_attention_params(CFG), trees=lambda w: wf.trees_arg(CFG, w.dataset)
    log: "logs/{dataset}/sprout_attention.log"
    benchmark: "benchmarks/{dataset}/sprout_attention.tsv"
    threads: wf.sprout_threads(CFG)
    resources: mem_mb=6000, runtime=120, encoder=1, cpus=lambda w, threads: threads
    shell: "python -m pipeline sprout-attention --trees {params.trees:q} --params {params.cfg:q} --out {output:q} 2>&1 | tee {log}"


if CFG["sprout"].get("train"):
    rule sprout_train_pairs:
        input: [f"{d}/queries.csv" for d in wf.sprout_train_excludes(CFG).values()]
        output: f"{wf.SPROUT_DIR}/train_pairs.safetensors"
        params:
            cfg=wf.sprout_train_params(CFG),
            exclude=" ".join(f"--exclude {d}={p}" for d, p in wf.sprout_train_excludes(CFG).items()),
        log: "logs/sprout/train_pairs.log"
        benchmark: "benchmarks/sprout/train_pairs.tsv"
        threads: wf.sprout_threads(CFG)
        resources: mem_mb=6000, runtime=60, encoder=1, cpus=lambda w, threads: threads
        shell: "python -m pipeline sprout-train-pairs --params {params.cfg:q} {params.exclude} --work-dir {wf.SPROUT_DIR}/train_data --out {output:q} 2>&1 | tee {log}"

    rule sprout_train:
        input: f"{wf.SPROUT_DIR}/train_pairs.safetensors"
        output: f"{wf.SPROUT_DIR}/head_weights.json"
        params: cfg=wf.sprout_train_params(CFG)
        log: "logs/sprout/train.log"
        threads: 1
        resources: mem_mb=2000, runtime=10
        shell: "python -m pipeline sprout-train --pairs {input:q} --params {params.cfg:q} --out {output:q} 2>&1 | tee {log}"


rule sprout_report:
    input:
        scores=lambda w: [f"results/{d}/scores/{v}.json" for d in json.loads(wf.sprout_report_params(CFG))["datasets"]
                          for v in CFG["sprout"].get("beam_sweep", [])],
        wattbot=[f"{wf.RESULTS}/retrieval/{v}/{CFG['wattbot']['score_split']}.jsonl" for v in CFG["sprout"].get("beam_sweep", [])],
        gold=wf.split_source(CFG, CFG["wattbot"]["score_split"]),
        index=lambda w: [f"{wf.RESULTS}/index/{CFG['retrieval'][CFG['sprout']['beam_sweep'][0]]['index']}.sqlite"],
    output:
        figure="reports/retrieval/sprout_beam.png",
        table="reports/retrieval/sprout_beam.csv",
        tree="reports/wattbot/sprout_tree.json",
        tree_png="reports/wattbot/sprout_tree.png",
        tree_svg="reports/wattbot/sprout_tree.svg",
    params: cfg=wf.sprout_report_params(CFG)
    log: "logs/sprout/report.log"
    threads: 1
    resources: mem_mb=1000, runtime=5
    shell: "python -m pipeline sprout-report --params {params.cfg:q} --scores {input.scores:q} --wattbot {input.wattbot:q} --gold {input.gold:q} --index {input.index:q} --out-dir reports 2>&1 | tee {log}"

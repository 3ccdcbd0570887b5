# Indexes and retrieval, shared by WattBot and every dataset of the retrieval suite:
#   results/{dataset}/index/{index}.sqlite, results/{dataset}/retrieval/{rv}/{split}.jsonl

CACHE = CFG["cache_dir"]

wildcard_constraints:
    dataset="|".join(["wattbot", *wf.suite_datasets(CFG)]),
    split=r"[A-Za-z0-9_]+",
    index="|".join(map(re.escape, sorted(CFG["indexes"]))),  # configured names only: no accidental matches
    rv="|".join(map(re.escape, sorted(CFG["retrieval"]))),


rule index:
    input: lambda w: wf.index_inputs(CFG, w.dataset, w.index)
    output: "results/{dataset}/index/{index}.sqlite"
    params: cfg=lambda w: wf.index_params(CFG, w.index), trees=lambda w: wf.trees_arg(CFG, w.dataset),
            extra=lambda w: wf.index_extra_args(CFG, w.dataset, w.index)
    log: "logs/{dataset}/index/{index}.log"
    benchmark: "benchmarks/{dataset}/index/{index}.tsv"
    threads: wf.encoder_threads(CFG)
    resources: mem_mb=4000, runtime=60, encoder=1, cpus=lambda w, threads: threads
    shell: "python -m pipeline index --trees {params.trees:q} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} {params.extra} 2>&1 | tee {log}"


rule retrieve:
    input:
        indexes=lambda w: [f"results/{w.dataset}/index/{n}.sqlite" for n in wf.retrieval_indexes(CFG, w.rv)],
        questions=lambda w: wf.questions_path(w.dataset, w.split),
        models=lambda w: wf.retrieval_models(CFG, w.rv),   # a local LLM planner's model file
    output: "results/{dataset}/retrieval/{rv}/{split}.jsonl"
    params: cfg=lambda w: wf.retrieval_params(CFG, w.rv)
    log: "logs/{dataset}/retrieve/{rv}/{split}.log"
    benchmark: "benchmarks/{dataset}/retrieve/{rv}/{split}.tsv"
    threads: 1
    resources: mem_mb=2000, runtime=10, encoder=1, llm_api=lambda w: wf.uses_llm_planner(CFG, w.rv), cpus=lambda w, threads: threads
    shell: "python -m pipeline retrieve --index-dir results/{wildcards.dataset}/index --questions {input.questions:q} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} 2>&1 | tee {log}"

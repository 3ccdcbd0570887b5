# Indexes and retrieval, shared by WattBot and every dataset of the retrieval suite:
#   results/{dataset}/index/{index}.sqlite, results/{dataset}/retrieval/{rv}/{split}.jsonl


# A dense index in more than one shard (pipeline/rules/shards.smk) merges its parts (--part in params.extra).
# The parts are an input of their own: while the doc_sizes checkpoint is pending, Snakemake puts its file in
# their place and the trees stay inputs, so a changed tree still reruns an index built before shards existed.
rule index:
    input:
        lambda w: wf.index_inputs(CFG, w.dataset, w.index),
        parts=lambda w: wf.index_parts(w.dataset, w.index, wf.index_shards(CFG, checkpoints, w.dataset, w.index)),
    output: paths.index()
    params: cfg=lambda w: wf.index_params(CFG, w.index), trees=lambda w: wf.tree_files_arg(CFG, w.dataset),
            extra=lambda w: wf.index_extra_args(CFG, w.dataset, w.index, wf.index_shards(CFG, checkpoints, w.dataset, w.index))
    log: paths.log("{dataset}/index/{index}")
    benchmark: paths.rule_benchmark("index")
    threads: wf.encoder_threads(CFG)
    resources: mem_mb=wf.per_attempt(4000), runtime=wf.per_attempt(60), encoder=1, cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline index --trees {params.trees:q} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} {params.extra} 2>&1 | tee {log}"


# A split larger than shards.max_queries (pipeline/workflow/query_batches.py) is retrieved in retrieve_batch jobs
# (shards.smk) and joined here: the batch files follow the questions file in {input.questions} (so this shell text,
# the rule's rerun trigger, is the whole job's) and are an input of their own (the suite_export checkpoint's file
# stands in for them while it is pending). The indexes stay inputs: the joined file's manifest hashes them.
rule retrieve:
    input:
        indexes=lambda w: [paths.index(w.dataset, n) for n in wf.retrieval_indexes(CFG, w.rv)],
        questions=lambda w: wf.retrieve_questions(CFG, checkpoints, w.dataset, w.rv, w.split),
        models=lambda w: wf.retrieval_models(CFG, w.rv),   # a local LLM planner's model file
        batches=lambda w: wf.retrieval_batches(CFG, checkpoints, w.dataset, w.rv, w.split),
    output: paths.retrieval()
    wildcard_constraints: rv=wf.retrieval_variants(CFG, llm_planner=False)
    params: cfg=lambda w: wf.retrieval_params(CFG, w.rv)
    log: paths.log("{dataset}/retrieve/{rv}/{split}")
    benchmark: paths.rule_benchmark("retrieve")
    threads: 1
    # the shell text is the rule's rerun trigger ("code"): its --index-dir stays paths.index_dir() written out
    # (tests/test_paths.py checks the two agree), so this refactoring reran no retrieval
    # no `encoder` share: a retrieval embeds only its queries on its one core (`cpus`), so two run side by side
    resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10), cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline retrieve --index-dir results/{wildcards.dataset}/index --questions {input.questions:q} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} 2>&1 | tee {log}"


# A retrieval whose query planner is an LLM: the same job, calling the planner's model as an answering job
# calls its model (its `llm_api` share: the model's concurrency; the execution-only LLM settings; a local
# model's servers x n_threads). A rule of its own so that the other retrievals' shell text, their rerun
# trigger, stays as it was.
rule retrieve_llm:
    input:
        indexes=lambda w: [paths.index(w.dataset, n) for n in wf.retrieval_indexes(CFG, w.rv)],
        questions=lambda w: wf.questions_path(w.dataset, w.split),
        models=lambda w: wf.retrieval_models(CFG, w.rv),   # a local LLM planner's model file
    output: paths.retrieval()
    wildcard_constraints: rv=wf.retrieval_variants(CFG, llm_planner=True)
    params: cfg=lambda w: wf.retrieval_params(CFG, w.rv)
    log: paths.log("{dataset}/retrieve/{rv}/{split}")
    benchmark: paths.rule_benchmark("retrieve")
    threads: lambda w: wf.planner_threads(CFG, w.rv)
    resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10), llm_api=lambda w: wf.planner_share(CFG, w.rv, workflow.global_resources.get("llm_api")),
               cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline retrieve --index-dir results/{wildcards.dataset}/index --questions {input.questions:q} --params {params.cfg:q} --llm-exec {LLM_EXEC:q} --in-flight {resources.llm_api} --cache-dir {CACHE:q} --out {output:q} 2>&1 | tee {log}"


# A smoke run (`limit: N`): every split's first N questions, in file order, cut once for every variant, and the
# labels of those N (pipeline/datasets/first_n.py); they and what they shape live under results/<dataset>/first-N/.
if wf.limit():
    rule first_questions:
        input: lambda w: wf.full_questions_path(w.dataset, w.split)
        output: paths.first_questions()
        params: limit=wf.limit()
        log: paths.log("{dataset}/first_questions/{split}")
        benchmark: paths.rule_benchmark("first_questions")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline first-questions --questions {input:q} --limit {params.limit} --out {output:q} 2>&1 | tee {log}"

    rule first_gold:
        input:
            gold=lambda w: wf.split_gold(CFG, w.dataset, w.split),
            questions=paths.first_questions(),
        output: paths.first_gold()
        wildcard_constraints: ext="csv|jsonl"
        log: paths.log("{dataset}/first_gold/{split}.{ext}")
        benchmark: paths.rule_benchmark("first_gold")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline first-gold --gold {input.gold:q} --questions {input.questions:q} --out {output:q} 2>&1 | tee {log}"

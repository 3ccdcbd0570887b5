# Per-document work in shards of whole documents (pipeline/shards.py; config `shards.max_chars`): each
# dataset's document sizes (a checkpoint: the DAG's cut is read off it), and one job per shard of a dense
# index, which the `index` rule (retrieval.smk) merges in document order. A dataset that fits one shard keeps
# its single `index` job as it was (pipeline/workflow/shards.py).


checkpoint doc_sizes:
    input: lambda w: wf.tree_files(CFG, w.dataset)
    output: paths.doc_sizes()
    params: trees=lambda w: wf.tree_files_arg(CFG, w.dataset)
    log: paths.log("{dataset}/doc_sizes")
    benchmark: paths.rule_benchmark("doc_sizes")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(10)
    shell: "{PY:q} -m pipeline doc-sizes --trees {params.trees:q} --out {output:q} 2>&1 | tee {log}"


rule index_part:
    input:
        trees=lambda w: wf.shard_tree_files(CFG, checkpoints, w.dataset, w.shard),
        sizes=paths.doc_sizes(),
        models=lambda w: wf.encoder_model_inputs(CFG, w.index),
    output: paths.index_part()
    params: cfg=lambda w: wf.index_params(CFG, w.index), trees=lambda w, input: ",".join(input.trees)
    log: paths.log("{dataset}/index_part/{index}/{shard}")
    benchmark: paths.rule_benchmark("index_part")
    threads: wf.encoder_threads(CFG)
    # a shard's texts, its vectors and its part: bounded by shards.max_chars, not by the corpus
    resources: mem_mb=wf.per_attempt(4000), runtime=wf.per_attempt(60), encoder=1, cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline index-part --trees {params.trees:q} --sizes {input.sizes:q} --shard {wildcards.shard} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} 2>&1 | tee {log}"


# SproutRAG's attention in shards: every window's pass planned once (tokenising only), each shard's documents
# run padded to their passes' shapes, and the sprout_attention rule (sprout.smk) joins the parts: the bytes of
# the whole job (pipeline/sprout/attention.py: BatchShape).
rule sprout_windows:
    input: lambda w: wf.tree_files(CFG, w.dataset)
    output: paths.sprout_windows()
    params: cfg=wf.sprout_attention_params(CFG), trees=lambda w: wf.tree_files_arg(CFG, w.dataset)
    log: paths.log("{dataset}/sprout_windows")
    benchmark: paths.rule_benchmark("sprout_windows")
    threads: 1
    resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(30)
    shell: "{PY:q} -m pipeline sprout-windows --trees {params.trees:q} --params {params.cfg:q} --out {output:q} 2>&1 | tee {log}"


rule sprout_attention_part:
    input:
        trees=lambda w: wf.shard_tree_files(CFG, checkpoints, w.dataset, w.shard),
        sizes=paths.doc_sizes(),
        windows=paths.sprout_windows(),
    output: paths.sprout_attention_part()
    params: cfg=wf.sprout_attention_params(CFG), trees=lambda w, input: ",".join(input.trees)
    log: paths.log("{dataset}/sprout_attention_part/{shard}")
    benchmark: paths.rule_benchmark("sprout_attention_part")
    threads: wf.sprout_threads(CFG)
    # a shard's windows and its part: bounded by shards.max_chars, not by the corpus
    resources: mem_mb=wf.per_attempt(6000), runtime=wf.per_attempt(120), encoder=1, cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline sprout-attention-part --trees {params.trees:q} --sizes {input.sizes:q} --shard {wildcards.shard} --windows {input.windows:q} --params {params.cfg:q} --out {output:q} 2>&1 | tee {log}"


# A large split's queries in batches (pipeline/workflow/query_batches.py; config `shards.max_queries`): one job per
# batch of consecutive queries, the whole retrieval's code on the batch's rows; the retrieve rule (retrieval.smk)
# joins them in query order. Each batch loads the whole index: BM25's statistics stay corpus-wide.
rule retrieve_batch:
    input:
        indexes=lambda w: [paths.index(w.dataset, n) for n in wf.retrieval_indexes(CFG, w.rv)],
        questions=lambda w: wf.questions_path(w.dataset, w.split),
        models=lambda w: wf.retrieval_models(CFG, w.rv),
    output: paths.retrieval_batch()
    wildcard_constraints: rv=wf.retrieval_variants(CFG, llm_planner=False)
    params: cfg=lambda w: wf.retrieval_params(CFG, w.rv)
    log: paths.log("{dataset}/retrieve_batch/{rv}/{split}/{batch}")
    benchmark: paths.rule_benchmark("retrieve_batch")
    threads: 1
    # a batch's queries and rows; the index it searches is opened whole
    resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10), cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline retrieve --index-dir results/{wildcards.dataset}/index --questions {input.questions:q} --batch {wildcards.batch} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} 2>&1 | tee {log}"

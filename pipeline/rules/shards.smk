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

# SproutRAG: one attention pass per dataset (shared by its sprout indexes), head training on
# LegalBench-RAG / HotpotQA labels (evaluated queries excluded), the beam-width report.

SPROUT_REPORT_INPUTS = wf.sprout_report_inputs(CFG)


# In more than one shard of documents (pipeline/rules/shards.smk) it joins their parts (--part in params.parts).
rule sprout_attention:
    input:
        lambda w: wf.tree_files(CFG, w.dataset),
        parts=lambda w: wf.sprout_attention_parts(w.dataset, wf.dataset_shards(CFG, checkpoints, w.dataset)),
    output: paths.sprout_attention()
    params: cfg=wf.sprout_attention_params(CFG), trees=lambda w: wf.tree_files_arg(CFG, w.dataset),
            parts=lambda w: wf.part_args(wf.sprout_attention_parts(w.dataset, wf.dataset_shards(CFG, checkpoints, w.dataset)))
    log: paths.log("{dataset}/sprout_attention")
    benchmark: paths.rule_benchmark("sprout_attention")
    threads: wf.sprout_threads(CFG)
    resources: mem_mb=wf.per_attempt(6000), runtime=wf.per_attempt(120), encoder=1, cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline sprout-attention --trees {params.trees:q} --params {params.cfg:q} --out {output:q} {params.parts} 2>&1 | tee {log}"


if CFG["sprout"].get("train"):
    rule sprout_train_pairs:
        input: [paths.export_split(d) for d in wf.sprout_train_excludes(CFG)]
        output: paths.SPROUT_TRAIN_PAIRS
        params:
            cfg=wf.sprout_train_params(CFG),
            exclude=" ".join(f"--exclude {d}={p}" for d, p in wf.sprout_train_excludes(CFG).items()),
        log: paths.log("sprout/train_pairs")
        benchmark: paths.rule_benchmark("sprout_train_pairs")
        threads: wf.sprout_threads(CFG)
        resources: mem_mb=wf.per_attempt(6000), runtime=wf.per_attempt(60), encoder=1, cpus=lambda w, threads: threads
        # {wf.SPROUT_DIR}/train_data is paths.SPROUT_TRAIN_DATA written out: the shell text is the rule's rerun trigger
        shell: "{PY:q} -m pipeline sprout-train-pairs --params {params.cfg:q} {params.exclude} --work-dir {wf.SPROUT_DIR}/train_data --out {output:q} 2>&1 | tee {log}"

    rule sprout_train:
        input: paths.SPROUT_TRAIN_PAIRS
        output: paths.SPROUT_HEAD_WEIGHTS
        params: cfg=wf.sprout_train_params(CFG)
        log: paths.log("sprout/train")
        benchmark: paths.rule_benchmark("sprout_train")
        threads: 1
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10)
        shell: "{PY:q} -m pipeline sprout-train --pairs {input:q} --params {params.cfg:q} --out {output:q} 2>&1 | tee {log}"


# Cross-fitting (sprout.train.folds; docs/sproutrag.md): the datasets the heads train on and the suite scores
# get K head files (each trained without one fold's documents and queries), K trained-head indexes (the
# `index` verb with that fold's heads) and one retrieval per variant that scores each fold with its own.
CROSSFIT = wf.crossfit_datasets(CFG)
if CROSSFIT:
    rule sprout_train_fold:
        input:
            pairs=paths.SPROUT_TRAIN_PAIRS,
            trees=paths.export_trees(),
            queries=paths.export_split(),
            gold=paths.export_gold(),
        output: paths.sprout_fold_heads()
        wildcard_constraints: dataset="|".join(map(re.escape, CROSSFIT)), fold=r"\d+"
        params: cfg=wf.sprout_train_params(CFG)
        log: paths.log("sprout/train_fold/{dataset}/{fold}")
        benchmark: paths.rule_benchmark("sprout_train_fold")
        threads: 1
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10)
        # --export-dir is paths.export_dir() written out (the shell text is the rule's rerun trigger)
        shell: "{PY:q} -m pipeline sprout-train-fold --pairs {input.pairs:q} --params {params.cfg:q} --dataset {wildcards.dataset} --fold {wildcards.fold} --export-dir results/{wildcards.dataset}/export --out {output:q} 2>&1 | tee {log}"

    rule sprout_fold_index:
        input: lambda w: wf.fold_index_inputs(CFG, w.dataset, w.index, w.fold)
        output: paths.fold_index()
        wildcard_constraints: dataset="|".join(map(re.escape, CROSSFIT)), fold=r"\d+"
        params: cfg=lambda w: wf.index_params(CFG, w.index), trees=lambda w: wf.tree_files_arg(CFG, w.dataset),
                extra=lambda w: wf.fold_index_extra_args(CFG, w.dataset, w.index, w.fold)
        log: paths.log("{dataset}/index/crossfit/{fold}/{index}")
        benchmark: paths.rule_benchmark("sprout_fold_index")
        threads: wf.encoder_threads(CFG)
        resources: mem_mb=wf.per_attempt(4000), runtime=wf.per_attempt(60), encoder=1, cpus=lambda w, threads: threads
        shell: "{PY:q} -m pipeline index --trees {params.trees:q} --params {params.cfg:q} --cache-dir {CACHE:q} --out {output:q} {params.extra} 2>&1 | tee {log}"

    ruleorder: retrieve_crossfit > retrieve
    ruleorder: retrieve_crossfit_batch > retrieve_batch

    # A split larger than shards.max_queries: one retrieve_crossfit_batch job per batch of its queries (each
    # loading every fold's index, its rows retrieved by their folds'), joined by retrieve_crossfit as the
    # retrieve rule joins retrieve_batch's (pipeline/workflow/query_batches.py); a split of one batch runs whole.
    rule retrieve_crossfit_batch:
        input:
            questions=lambda w: wf.questions_path(w.dataset, w.split),
            **wf.crossfit_rule_inputs(CFG),
        output: paths.retrieval_batch()
        wildcard_constraints: **wf.crossfit_wildcards(CFG)
        params: **wf.crossfit_rule_params(CFG)
        log: paths.log("{dataset}/retrieve_crossfit_batch/{rv}/{split}/{batch}")
        benchmark: paths.rule_benchmark("retrieve_crossfit_batch")
        threads: 1
        # a batch's queries and rows; every fold's index it searches is opened whole
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10), cpus=lambda w, threads: threads
        shell: wf.crossfit_shell(batch=True)

    # the questions, then the batches it joins (none: it retrieves whole, its shell text as before batches)
    rule retrieve_crossfit:
        input:
            questions=lambda w: wf.retrieve_questions(CFG, checkpoints, w.dataset, w.rv, w.split),
            batches=lambda w: wf.retrieval_batches(CFG, checkpoints, w.dataset, w.rv, w.split),
            **wf.crossfit_rule_inputs(CFG),
        output: paths.retrieval()
        wildcard_constraints: **wf.crossfit_wildcards(CFG)
        params: **wf.crossfit_rule_params(CFG)
        log: paths.log("{dataset}/retrieve/{rv}/{split}")
        benchmark: paths.rule_benchmark("retrieve_crossfit")
        threads: 1
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(10), cpus=lambda w, threads: threads
        shell: wf.crossfit_shell(batch=False)


rule sprout_report:
    input:
        **wf.input_lists(SPROUT_REPORT_INPUTS),
        gold=wf.gold_path(CFG, paths.WATTBOT, SCORE_SPLIT),   # the score split's labels (wattbot.solutions, else its own file; a smoke run's cut)
        index=wf.sprout_report_index(CFG),
    output:
        figure=paths.reports.sprout_beam_png,
        table=paths.reports.sprout_beam_csv,
        tree=paths.reports.sprout_tree("json"),
        tree_png=paths.reports.sprout_tree("png"),
        tree_svg=paths.reports.sprout_tree("svg"),
    params: cfg=wf.sprout_report_params(CFG), files=wf.named_args(SPROUT_REPORT_INPUTS)
    log: paths.log("sprout/report")
    benchmark: paths.rule_benchmark("sprout_report")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline sprout-report --params {params.cfg:q} {params.files} --gold {input.gold:q} --index {input.index:q} --reports {paths.reports.root:q} 2>&1 | tee {log}"

# WattBot 2025: ingest -> trees -> (indexes -> retrieval: retrieval.smk) -> answers -> scores -> report.
# The tree, answer, ensemble and evaluate rules serve the corpora too (corpora.smk: their ingest and
# report): {dataset} is `wattbot` or a corpus's name (ANSWERED), each dataset's files come from its registry
# entry (pipeline/workflow/datasets.py). WattBot's paths, params and shell text are what they were, so a
# finished WattBot run reruns nothing. Rules only wire files to `python -m pipeline <verb>`.


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


rule answer:
    input:
        retrieval=lambda w: paths.retrieval(w.dataset, CFG["answering"][w.av]["retrieval"], w.split),
        questions=lambda w: wf.answer_questions(CFG, w.av, w.dataset, w.split),   # a power_subsets group's sample, else the split
        metadata=lambda w: wf.metadata_path(w.dataset),
        models=lambda w: wf.answer_models(CFG, w.av),
    output:
        jsonl=paths.answers(dataset="{dataset}"),
        csv=paths.answers_csv(dataset="{dataset}"),
    wildcard_constraints: av=wf.answer_variants(CFG, ensemble=False), dataset=ANSWERED
    params: cfg=lambda w: wf.answering_params(CFG, w.av)
    log: paths.log("{dataset}/answer/{av}/{split}")
    benchmark: paths.dataset_benchmark("answer")
    threads: lambda w: wf.answer_threads(CFG, w.av)   # a local LLM's servers x n_threads (pipeline/cores.py)
    # llm_api: this job's calls in flight (its model's concurrency, capped by the run's total)
    resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(60), llm_api=lambda w: wf.llm_share(CFG, w.av, workflow.global_resources.get("llm_api")),
               cpus=lambda w, threads: threads
    shell: "{PY:q} -m pipeline answer --retrieval {input.retrieval:q} --questions {input.questions:q} --metadata {input.metadata:q} --params {params.cfg:q} --llm-exec {LLM_EXEC:q} --in-flight {resources.llm_api} --cache-dir {CACHE:q} --out {output.jsonl:q} --out-csv {output.csv:q} 2>&1 | tee {log}"


rule ensemble:
    """`backend: ensemble`: the members' answers voted per question; a changed vote reruns only this."""
    input:
        members=lambda w: wf.ensemble_inputs(CFG, w.av, w.split, w.dataset),
        questions=lambda w: wf.questions_path(w.dataset, w.split),
        metadata=lambda w: wf.metadata_path(w.dataset),
    output:
        jsonl=paths.answers(dataset="{dataset}"),
        csv=paths.answers_csv(dataset="{dataset}"),
    wildcard_constraints: av=wf.answer_variants(CFG, ensemble=True), dataset=ANSWERED
    params:
        cfg=lambda w: wf.answering_params(CFG, w.av),
        members=lambda w: wf.ensemble_args(CFG, w.av, w.split, w.dataset),
    log: paths.log("{dataset}/ensemble/{av}/{split}")
    benchmark: paths.dataset_benchmark("ensemble")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline ensemble {params.members} --questions {input.questions:q} --metadata {input.metadata:q} --params {params.cfg:q} --out {output.jsonl:q} --out-csv {output.csv:q} 2>&1 | tee {log}"


EVALUATE = "{PY:q} -m pipeline evaluate --solution {input.solution:q} --submission {input.submission:q} --retrieval {input.retrieval:q} --answers {input.answers:q} --out {output.scores:q} --per-question {output.per_question:q} 2>&1 | tee {log}"


rule evaluate:
    """A labelled dataset's scores: WattBot's score split, a corpus's questions that have solutions."""
    input:
        solution=lambda w: wf.solutions_path(CFG, w.dataset),
        submission=lambda w: paths.answers_csv(w.av, wf.score_split(CFG, w.dataset), w.dataset),
        answers=lambda w: paths.answers(w.av, wf.score_split(CFG, w.dataset), w.dataset),
        retrieval=lambda w: paths.retrieval(w.dataset, CFG["answering"][w.av]["retrieval"], wf.score_split(CFG, w.dataset)),
    output:
        scores=paths.scores(dataset="{dataset}"),
        per_question=paths.per_question(dataset="{dataset}"),
    wildcard_constraints: dataset=ANSWERED
    log: paths.log("{dataset}/evaluate/{av}")
    benchmark: paths.dataset_benchmark("evaluate")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
    shell: EVALUATE


rule evaluate_split:
    """WattBot's other labelled splits (`wattbot.solutions`, e.g. test): the variants that answer the split,
    scored on its labelled questions (the rest counted as unlabelled)."""
    input:
        solution=lambda w: wf.split_labels(CFG, w.av, w.split),   # wattbot.solutions[split] (a smoke run's cut; a power sample's)
        submission=paths.answers_csv(),
        answers=paths.answers(),
        retrieval=lambda w: paths.retrieval(paths.WATTBOT, CFG["answering"][w.av]["retrieval"], w.split),
    output:
        scores=paths.split_scores(),
        per_question=paths.split_per_question(),
    wildcard_constraints: split="|".join(map(re.escape, EXTRA_LABELLED)) or "(?!)"
    log: paths.log("wattbot/evaluate_split/{split}/{av}")
    benchmark: paths.rule_benchmark("evaluate_split")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
    shell: EVALUATE


# `power_subsets`: a group's variants answer a sample of a labelled split sized by power from their score-split
# scores (pipeline/report/stats/power.py), drawn from the split's labelled ids alone: no answer job reads a labels file.
if wf.power_groups(CFG):
    POWER_SPLIT = wf.power_split(CFG)

    rule labelled_ids:
        input: wf.gold_path(CFG, paths.WATTBOT, POWER_SPLIT)
        output: paths.labelled_ids(POWER_SPLIT)
        log: paths.log(f"wattbot/labelled_ids/{POWER_SPLIT}")
        benchmark: paths.rule_benchmark("labelled_ids")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline labelled-ids --gold {input:q} --out {output:q} 2>&1 | tee {log}"

    rule power_sample:
        input:
            questions=wf.questions_path(paths.WATTBOT, POWER_SPLIT),
            ids=paths.labelled_ids(POWER_SPLIT),
            pilot=lambda w: list(wf.pilot_files(CFG, w.group).values()),
        output:
            questions=paths.power_questions(split=POWER_SPLIT),
            sizes=paths.power_sizes(split=POWER_SPLIT),
        wildcard_constraints: group="|".join(map(re.escape, sorted(wf.power_groups(CFG))))
        params:
            cfg=lambda w: wf.sample_params(CFG, w.group),
            pilot=lambda w: " ".join(f"--pilot {wf.shell_arg(f'{v}={p}')}" for v, p in wf.pilot_files(CFG, w.group).items()),
        log: paths.log("wattbot/power_sample/{group}")
        benchmark: paths.rule_benchmark("power_sample")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline power-sample --questions {input.questions:q} --labelled-ids {input.ids:q} --params {params.cfg:q} {params.pilot} --out {output.questions:q} --sizes {output.sizes:q} 2>&1 | tee {log}"

    rule power_gold:
        input:
            gold=wf.gold_path(CFG, paths.WATTBOT, POWER_SPLIT),
            questions=paths.power_questions(split=POWER_SPLIT),
        output: paths.power_gold(split=POWER_SPLIT)
        wildcard_constraints: group="|".join(map(re.escape, sorted(wf.power_groups(CFG))))
        log: paths.log("wattbot/power_gold/{group}")
        benchmark: paths.rule_benchmark("power_gold")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline first-gold --gold {input.gold:q} --questions {input.questions:q} --out {output:q} 2>&1 | tee {log}"


REPORT_INPUTS = wf.report_inputs(CFG)


rule report:
    input:
        **wf.input_lists(REPORT_INPUTS),
        gold=wf.gold_path(CFG, paths.WATTBOT, SCORE_SPLIT),   # the score split's labels (wattbot.solutions, else its own file; a smoke run's cut)
    output:
        index=paths.reports.index_md,
        leaderboard=paths.reports.leaderboard,
        submission=paths.reports.submission,
        figure=paths.reports.score_figure,
        retrieval=paths.reports.retrieval_table,
        **({"by_type": wf.by_type_report(CFG)[0]} if wf.by_type_report(CFG) else {}),  # other labelled splits: question types
    params: cfg=wf.report_params(CFG), files=wf.named_args(REPORT_INPUTS)
    log: paths.log("report")
    benchmark: paths.rule_benchmark("report")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline report --params {params.cfg:q} {params.files} --gold {input.gold:q} --reports {paths.reports.root:q} 2>&1 | tee {log}"


rule fetch:
    """Not part of `all`: `snakemake fetch` downloads the PDFs when online (offline it says so)."""
    input: f"{CFG['wattbot']['dir']}/metadata.csv"
    output: f"{CFG['wattbot']['fetch_dir']}/fetch_status.json"
    params: out_dir=CFG["wattbot"]["fetch_dir"]
    log: paths.log("wattbot/fetch")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(30)
    shell: "{PY:q} -m pipeline fetch --metadata {input:q} --out-dir {params.out_dir:q} --status {output:q} 2>&1 | tee {log}"

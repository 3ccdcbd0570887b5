# Answering, for every answered dataset ({dataset}: `wattbot` or a corpus's name, ANSWERED): one job per
# answering variant and split, from its retrieval run; an ensemble variant votes its members' answers.
# Each dataset's questions and metadata come from its registry entry (pipeline/workflow/datasets.py).
# WattBot's paths, params and shell text are what they were, so a finished WattBot run reruns nothing.


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

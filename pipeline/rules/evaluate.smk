# Scoring the answers of a labelled dataset: WattBot's score split and each corpus with solutions
# (evaluate), WattBot's other labelled splits (evaluate_split, `wattbot.solutions`). Both call the
# `evaluate` verb (pipeline/score/evaluate.py).


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

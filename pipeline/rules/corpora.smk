# Your own corpora (`corpora:` in the config; docs/own-corpus.md): ingest -> trees -> indexes -> retrieval
# -> answers -> scores run through WattBot's rules over {dataset} (wattbot.smk, parse.smk, retrieval.smk);
# only the ingest of a user's files and the corpus's report are rules of their own. The inputs were
# checked when the Snakefile was parsed (wf.check_corpora), before any job.


def corpora_pattern(labelled=None):
    """Wildcard pattern of the corpora (only the labelled or unlabelled ones when ``labelled`` is set)."""
    return "|".join(map(re.escape, wf.corpus_names(CFG, labelled))) or "(?!)"


rule corpus_ingest:
    """A corpus's documents, questions (and labels: corpus_ingest_labelled) checked, then written as
    WattBot-shaped CSVs."""
    input: lambda w: wf.corpus_ingest_inputs(CFG, w.dataset)
    output:
        metadata=paths.corpus_ingest(name="metadata"),
        questions=paths.corpus_ingest(name="questions"),
    wildcard_constraints: dataset=corpora_pattern(labelled=False)
    params: files=lambda w: wf.corpus_ingest_args(CFG, w.dataset), out_dir=lambda w: paths.corpus_ingest_dir(w.dataset)
    log: paths.log("{dataset}/ingest")
    benchmark: paths.rule_benchmark("corpus_ingest")
    threads: 1
    resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline corpus-ingest --name {wildcards.dataset} {params.files} --out-dir {params.out_dir:q} 2>&1 | tee {log}"


use rule corpus_ingest as corpus_ingest_labelled with:
    output:
        metadata=paths.corpus_ingest(name="metadata"),
        questions=paths.corpus_ingest(name="questions"),
        solutions=paths.corpus_ingest(name="solutions"),
    wildcard_constraints: dataset=corpora_pattern(labelled=True)


rule corpus_report:
    """The corpus's leaderboard (labelled: the WattBot metric with bootstrap intervals and doc-level
    retrieval metrics; unlabelled: answered and blank counts), its submission (Kaggle format) and its own
    page (headline, leaderboard, figures and ablations: reports/<name>/index.html), all in pipeline/paths.py."""
    input: unpack(lambda w: wf.input_lists(wf.corpus_report_inputs(CFG, w.dataset)))
    output:
        leaderboard=paths.reports.corpus_leaderboard(),
        submission=paths.reports.corpus_submission(),
        page=paths.reports.corpus_page(),
        figures=directory(paths.reports.corpus_figures()),
    wildcard_constraints: dataset=corpora_pattern()
    params:
        cfg=lambda w: wf.corpus_report_params(CFG, w.dataset),
        files=lambda w: wf.named_args(wf.corpus_report_inputs(CFG, w.dataset)),
    log: paths.log("{dataset}/report")
    benchmark: paths.rule_benchmark("corpus_report")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline corpus-report --params {params.cfg:q} {params.files} --reports {paths.reports.root:q} 2>&1 | tee {log}"

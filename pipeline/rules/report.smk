# The report rules: `report` (WattBot's leaderboard, submission, score figure, retrieval table and
# reports/index.md) and `figures`: `snakemake figures` (or `snakemake reports/index.html`) redraws every figure,
# the statistics CSVs and the self-contained reports/index.html from the results it is passed.
# `snakemake --report report.html` collects the report()-flagged outputs with their captions.

FIG_STEMS = wf.figure_stems(CFG)
FIG_INPUTS = wf.figures_inputs(CFG)
CAPTIONS = "../report/captions"


CATEGORY = {"ablation": "Ablations", "attribution": "Attribution", "embedding": "Index", "ensemble": "Ablations"}
CAPTION = {"Ablations": "ablations", "Attribution": "attribution", "Index": "index_map", "Leaderboard": "leaderboard"}


def fig_category(stem):
    return CATEGORY.get(stem.split("-")[0], "Leaderboard")


def reported(path, caption, category, **labels):
    return report(path, caption=f"{CAPTIONS}/{caption}.rst", category=category, **labels)


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
    # params through a function: their config text (a model's package pattern "..._part{n}", an ablation's note)
    # is data, not a wildcard pattern Snakemake would expand
    params: cfg=lambda w: wf.report_params(CFG), files=wf.named_args(REPORT_INPUTS)
    log: paths.log("report")
    benchmark: paths.rule_benchmark("report")
    threads: 1
    resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
    shell: "{PY:q} -m pipeline report --params {params.cfg:q} {params.files} --gold {input.gold:q} --reports {paths.reports.root:q} 2>&1 | tee {log}"


rule figures:
    input:
        **wf.input_lists(FIG_INPUTS),
        leaderboard=paths.reports.leaderboard,
        parse_quality=wf.parse_quality_report(CFG),
        by_type=wf.by_type_report(CFG),   # the report rule's per-question-type CSV (with other labelled splits)
        gold=wf.gold_path(CFG, paths.WATTBOT, SCORE_SPLIT),   # the score split's labels (wattbot.solutions, else its own file; a smoke run's cut)
        claims=wf.claims_file(),
        registration=wf.registration_file(),
    output:
        html=reported(paths.reports.index_html, "index", "Report"),
        claims=paths.reports.claims_csv,
        claims_md=paths.reports.claims_md,
        ablations=reported(paths.reports.ablations, "ablations", "Ablations"),
        differences=paths.reports.ablation_differences,
        attribution=reported(paths.reports.attribution, "attribution", "Attribution"),
        attribution_counts=paths.reports.attribution_counts,
        attribution_by_type=paths.reports.attribution_by_type,
        cost=reported(paths.reports.cost, "cost", "Leaderboard"),
        ensemble_size=paths.reports.ensemble_size,
        pngs=[reported(paths.reports.figure(s, "png"), CAPTION[fig_category(s)], fig_category(s), labels={"figure": s})
              for s in FIG_STEMS],
        svgs=[paths.reports.figure(s, "svg") for s in FIG_STEMS],
    params: cfg=lambda w: wf.figures_params(CFG), files=wf.named_args(FIG_INPUTS)   # a function: as report's
    log: paths.log("figures")
    benchmark: paths.rule_benchmark("figures")
    threads: 1
    resources: mem_mb=wf.per_attempt(3000), runtime=wf.per_attempt(10)
    shell: "{PY:q} -m pipeline figures --params {params.cfg:q} {params.files} --leaderboard {input.leaderboard:q} --gold {input.gold:q} --reports {paths.reports.root:q} 2>&1 | tee {log}"

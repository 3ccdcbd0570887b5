# The figures rule: `snakemake figures` (or `snakemake reports/index.html`) redraws every figure,
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


rule figures:
    input:
        **wf.input_lists(FIG_INPUTS),
        leaderboard=L.reports.leaderboard,
        parse_quality=wf.parse_quality_report(CFG),
        gold=wf.split_source(CFG, SCORE_SPLIT),
        claims=wf.claims_file(),
    output:
        html=reported(L.reports.index_html, "index", "Report"),
        claims=L.reports.claims_csv,
        claims_md=L.reports.claims_md,
        ablations=reported(L.reports.ablations, "ablations", "Ablations"),
        differences=L.reports.ablation_differences,
        attribution=reported(L.reports.attribution, "attribution", "Attribution"),
        attribution_counts=L.reports.attribution_counts,
        attribution_by_type=L.reports.attribution_by_type,
        cost=reported(L.reports.cost, "cost", "Leaderboard"),
        ensemble_size=L.reports.ensemble_size,
        pngs=[reported(L.reports.figure(s, "png"), CAPTION[fig_category(s)], fig_category(s), labels={"figure": s})
              for s in FIG_STEMS],
        svgs=[L.reports.figure(s, "svg") for s in FIG_STEMS],
    params: cfg=wf.figures_params(CFG), files=wf.named_args(FIG_INPUTS)
    log: L.log("figures")
    benchmark: L.rule_benchmark("figures")
    threads: 1
    resources: mem_mb=wf.per_attempt(3000), runtime=wf.per_attempt(10)
    shell: "{PY:q} -m pipeline figures --params {params.cfg:q} {params.files} --leaderboard {input.leaderboard:q} --gold {input.gold:q} --reports {L.reports.root:q} 2>&1 | tee {log}"
